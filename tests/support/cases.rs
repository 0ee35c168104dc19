//! The Rust side of the one conformance harness: finds every case folder (`tests/data/*-cases`,
//! or the folder `SPARSEKIT_TESTDATA` names) and every case in it, decodes tensors and numbers,
//! compares results with one infinity-aware `close`, and prints one line per folder plus the
//! closing `conformance: N passed, M failed`. The JS twin is `tests/support/cases.mjs`; both apply
//! the same file filter and the same comparison rule, so a new folder runs everywhere.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the case folders live: `tests/data` of the repository, unless `SPARSEKIT_TESTDATA`
/// names another folder of the same layout (how the cases kept outside run against the core).
pub fn testdata() -> PathBuf {
    match std::env::var_os("SPARSEKIT_TESTDATA") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data"),
    }
}

// ---------------------------------------------------------------------------------------------
// Decoding

/// A case tensor: shape and flat row-major data (float32 entries already rounded to f32).
#[derive(Debug, Clone)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: Vec<f64>,
}

impl Tensor {
    pub fn f32(&self) -> Vec<f32> {
        self.data.iter().map(|&x| x as f32).collect()
    }
    pub fn u8(&self) -> Vec<u8> {
        self.data.iter().map(|&x| u8::from(x != 0.0)).collect()
    }
    pub fn i64(&self) -> Vec<i64> {
        self.data.iter().map(|&x| x as i64).collect()
    }
}

/// A JSON scalar as a number: booleans are 0/1, and the strings `NaN`, `Infinity`, `-Infinity`
/// (and the short `inf` / `-inf`) are the non-finite values the cases spell as text.
pub fn num(v: &Value) -> f64 {
    match v {
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => n.as_f64().expect("number"),
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "nan" => f64::NAN,
            "inf" | "infinity" | "+inf" | "+infinity" => f64::INFINITY,
            "-inf" | "-infinity" => f64::NEG_INFINITY,
            _ => panic!("not a number: {s:?}"),
        },
        other => panic!("not a number: {other}"),
    }
}

fn flatten(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| flatten(x, out)),
        x => out.push(num(x)),
    }
}

/// Whether a tensor's entries are float32 (the default when no dtype is given).
pub fn is_float(v: &Value) -> bool {
    v.get("dtype").and_then(Value::as_str).is_none_or(|d| d.starts_with("float"))
}

/// `{dtype, shape, data}` -> Tensor; float entries are rounded to f32, so their bits are the case's.
pub fn tensor(v: &Value) -> Tensor {
    let shape = usizes(&v["shape"]);
    let mut data = Vec::new();
    flatten(&v["data"], &mut data);
    if is_float(v) {
        data.iter_mut().for_each(|x| *x = f64::from(*x as f32));
    }
    Tensor { shape, data }
}

pub fn usizes(v: &Value) -> Vec<usize> {
    v.as_array()
        .map(|a| a.iter().map(|x| usize::try_from(x.as_u64().expect("non-negative integer")).expect("usize")).collect())
        .unwrap_or_default()
}

pub fn i64s(v: &Value) -> Vec<i64> {
    v.as_array().map(|a| a.iter().map(|x| x.as_i64().expect("integer")).collect()).unwrap_or_default()
}

/// `args[k]` unless absent or `null`.
pub fn opt<'a>(args: &'a Value, k: &str) -> Option<&'a Value> {
    args.get(k).filter(|v| !v.is_null())
}

/// A tensor result as JSON, in the cases' own encoding (non-finite values as strings).
pub fn tensor_json(shape: &[usize], data: impl IntoIterator<Item = f64>) -> Value {
    let data: Vec<Value> = data.into_iter().map(f64_json).collect();
    json!({ "shape": shape, "data": data })
}

pub fn f64_json(x: f64) -> Value {
    if x.is_nan() {
        json!("NaN")
    } else if x.is_infinite() {
        json!(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        json!(x)
    }
}

pub fn f32s_json(shape: &[usize], d: &[f32]) -> Value {
    tensor_json(shape, d.iter().map(|&x| f64::from(x)))
}

pub fn u8s_json(shape: &[usize], d: &[u8]) -> Value {
    tensor_json(shape, d.iter().map(|&x| f64::from(x)))
}

/// Row-major strides of a contiguous shape.
pub fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
    let mut st = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        st[d] = st[d + 1] * shape[d + 1];
    }
    st
}

/// Calls `f` with the storage offset of every view element, in row-major view order.
pub fn for_each_offset(shape: &[usize], stride: &[usize], mut f: impl FnMut(usize)) {
    let n: usize = shape.iter().product();
    let mut idx = vec![0usize; shape.len()];
    for flat in 0..n {
        let mut r = flat;
        for d in (0..shape.len()).rev() {
            idx[d] = r % shape[d];
            r /= shape[d];
        }
        f(idx.iter().zip(stride).map(|(i, s)| i * s).sum());
    }
}

// ---------------------------------------------------------------------------------------------
// Comparison

#[derive(Debug, Clone, Copy)]
pub struct Tol {
    pub rtol: f64,
    pub atol: f64,
}

impl Tol {
    pub const EXACT: Tol = Tol { rtol: 0.0, atol: 0.0 };

    /// The tolerance of the expected quantity `key`: a case's `tol` is either one `{rtol, atol}`
    /// for every quantity, or a map from quantity to `{rtol, atol}`.
    pub fn of(case: &Value, key: &str) -> Tol {
        let t = &case["tol"];
        let t = if t.get(key).is_some_and(Value::is_object) { &t[key] } else { t };
        let get = |k: &str| t.get(k).map_or(0.0, num);
        Tol { rtol: get("rtol"), atol: get("atol") }
    }
}

/// `|got - exp| <= atol + rtol*|exp|`, where infinities must be equal (`+Inf == +Inf`), `-0 == 0`,
/// and NaN passes only where the case expects NaN.
pub fn close(got: f64, exp: f64, tol: Tol) -> bool {
    if exp.is_nan() {
        return got.is_nan();
    }
    if got.is_nan() {
        return false;
    }
    if exp.is_infinite() || got.is_infinite() {
        return got == exp;
    }
    (got - exp).abs() <= tol.atol + tol.rtol * exp.abs()
}

/// First difference between the expectation `exp` (case JSON) and the result `got` (same
/// encoding), or `None`. Tensors: same shape, every element `close` (exact for non-float dtypes);
/// lists: element-wise; numbers: `close`; booleans also match 0/1.
pub fn compare(path: &str, exp: &Value, got: &Value, tol: Tol) -> Option<String> {
    if exp.is_object() && exp.get("data").is_some() {
        let t = if is_float(exp) { tol } else { Tol::EXACT };
        let e = tensor(exp);
        let g = match got {
            Value::Object(_) => {
                let mut data = Vec::new();
                flatten(&got["data"], &mut data);
                Tensor { shape: usizes(&got["shape"]), data }
            }
            other => return Some(format!("{path}: got {other}, expected a tensor")),
        };
        return compare_data(path, &e, &g, t);
    }
    match (exp, got) {
        (Value::Array(ea), Value::Array(ga)) => {
            if ea.len() != ga.len() {
                return Some(format!("{path}: {} entries, expected {}", ga.len(), ea.len()));
            }
            ea.iter().zip(ga).enumerate().find_map(|(i, (e, g))| compare(&format!("{path}[{i}]"), e, g, tol))
        }
        (Value::Bool(e), g) => {
            let gb = match g {
                Value::Bool(b) => *b,
                Value::Number(n) => n.as_f64() != Some(0.0),
                _ => return Some(format!("{path}: got {g}, expected {e}")),
            };
            (gb != *e).then(|| format!("{path}: got {gb}, expected {e}"))
        }
        (Value::Number(_) | Value::String(_), Value::Number(_) | Value::String(_)) if !is_text(exp) && !is_text(got) => {
            let (e, g) = (num(exp), num(got));
            (!close(g, e, tol)).then(|| format!("{path}: got {g}, expected {e}"))
        }
        (e, g) => (e != g).then(|| format!("{path}: got {g}, expected {e}")),
    }
}

/// A string that is not one of the non-finite spellings.
fn is_text(v: &Value) -> bool {
    v.as_str().is_some_and(|s| {
        !matches!(s.to_ascii_lowercase().as_str(), "nan" | "inf" | "infinity" | "+inf" | "+infinity" | "-inf" | "-infinity")
    })
}

/// Element-wise comparison of two decoded tensors, naming the first differing n-d index.
pub fn compare_data(path: &str, exp: &Tensor, got: &Tensor, tol: Tol) -> Option<String> {
    if exp.shape != got.shape {
        return Some(format!("{path}: shape {:?}, expected {:?}", got.shape, exp.shape));
    }
    if exp.data.len() != got.data.len() {
        return Some(format!("{path}: {} elements, expected {}", got.data.len(), exp.data.len()));
    }
    let bad: Vec<usize> = (0..exp.data.len()).filter(|&i| !close(got.data[i], exp.data[i], tol)).collect();
    let &first = bad.first()?;
    let mut idx = vec![0; exp.shape.len()];
    let mut r = first;
    for d in (0..exp.shape.len()).rev() {
        idx[d] = r % exp.shape[d].max(1);
        r /= exp.shape[d].max(1);
    }
    Some(format!(
        "{path}{idx:?}: got {}, expected {} ({} of {} elements differ)",
        got.data[first],
        exp.data[first],
        bad.len(),
        exp.data.len()
    ))
}

/// Every expected key of a successful case against the results a runner produced.
pub fn check_expect(case: &Value, got: &BTreeMap<String, Value>) -> Outcome {
    for (k, v) in case["expect"].as_object().expect("expect object") {
        let Some(g) = got.get(k) else {
            return Outcome::Fail(format!("no result for expected key {k}"));
        };
        if let Some(m) = compare(k, v, g, Tol::of(case, k)) {
            return Outcome::Fail(m);
        }
    }
    Outcome::Pass
}

// ---------------------------------------------------------------------------------------------
// Discovery and the driver

pub enum Outcome {
    Pass,
    Fail(String),
}

/// Every case folder: each directory `*-cases` under the case root, sorted.
pub fn case_folders() -> Vec<PathBuf> {
    let root = testdata();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", root.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.is_dir() && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with("-cases")))
        .collect();
    dirs.sort();
    dirs
}

/// The file filter (the same as `isCaseFile` in cases.mjs): every `.json` file except `index.json`.
pub fn is_case_file(name: &str) -> bool {
    name.ends_with(".json") && name != "index.json"
}

/// The case files of a folder, sorted; they must be exactly the ids its `index.json` lists (a
/// stray or missing file is a fault of the folder, reported rather than skipped).
pub fn case_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(is_case_file))
        .collect();
    files.sort();
    files
}

fn index_ids(dir: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(dir.join("index.json")).ok()?;
    let idx: Value = serde_json::from_str(&text).ok()?;
    let mut ids: Vec<String> = idx.as_array()?.iter().filter_map(|e| e["id"].as_str().map(String::from)).collect();
    ids.sort();
    Some(ids)
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

/// Runs every case of every folder through `dispatch`, which returns `None` for an op it does not
/// know (counted as a failure, never skipped). Prints the per-folder lines, the failures and the
/// closing line; returns `(passed, failed)`.
pub fn run_all(dispatch: impl Fn(&Value) -> Option<Outcome>) -> (usize, usize) {
    let folders = case_folders();
    assert!(!folders.is_empty(), "no *-cases folder in {}", testdata().display());
    let (mut passed, mut failed) = (0, 0);
    let mut failures = Vec::new();
    for dir in &folders {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let files = case_files(dir);
        let (mut p, mut f) = (0, 0);
        let ids: Vec<String> = files.iter().map(|f| f.file_stem().unwrap().to_string_lossy().to_string()).collect();
        if index_ids(dir).as_ref() != Some(&ids) {
            f += 1;
            failures.push(format!("{name}/index.json does not list exactly the {} case files", ids.len()));
        }
        for file in &files {
            let text = std::fs::read_to_string(file).expect("readable case");
            let case: Value = match serde_json::from_str(&text) {
                Ok(c) => c,
                Err(e) => {
                    f += 1;
                    failures.push(format!("{name}/{}: not JSON: {e}", file.display()));
                    continue;
                }
            };
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(&case)))
                .unwrap_or_else(|p| Some(Outcome::Fail(format!("panicked: {}", panic_text(&*p)))))
                .unwrap_or_else(|| Outcome::Fail(format!("no runner knows op {}", case["op"])));
            match outcome {
                Outcome::Pass => p += 1,
                Outcome::Fail(m) => {
                    f += 1;
                    failures.push(format!("{name}/{}: {m}", case["id"].as_str().unwrap_or("?")));
                }
            }
        }
        println!("{name}: {p} passed, {f} failed, of {} cases", files.len());
        passed += p;
        failed += f;
    }
    for m in &failures {
        println!("FAIL {m}");
    }
    println!("conformance: {passed} passed, {failed} failed");
    (passed, failed)
}

#[cfg(test)]
mod close_rules {
    use super::*;

    const T: Tol = Tol { rtol: 1e-3, atol: 1e-5 };

    #[test]
    fn infinities_must_be_equal() {
        assert!(close(f64::INFINITY, f64::INFINITY, T));
        assert!(close(f64::NEG_INFINITY, f64::NEG_INFINITY, T));
        assert!(!close(1e30, f64::INFINITY, T), "a finite value never matches +Inf, whatever rtol");
        assert!(!close(f64::INFINITY, 1e30, T));
        assert!(!close(f64::NEG_INFINITY, f64::INFINITY, T));
    }

    #[test]
    fn nan_only_where_expected() {
        assert!(close(f64::NAN, f64::NAN, T));
        assert!(!close(f64::NAN, 0.0, T));
        assert!(!close(0.0, f64::NAN, T));
        assert!(!close(f64::NAN, 1.0, Tol { rtol: f64::INFINITY, atol: f64::INFINITY }));
    }

    #[test]
    fn signed_zero_and_tolerance() {
        assert!(close(-0.0, 0.0, Tol::EXACT));
        assert!(close(1.0009, 1.0, T));
        assert!(!close(1.002, 1.0, T));
    }

    #[test]
    fn decoder_reads_non_finite_strings() {
        let t = tensor(&json!({"dtype": "float32", "shape": [3], "data": ["NaN", "Infinity", "-Infinity"]}));
        assert!(t.data[0].is_nan() && t.data[1] == f64::INFINITY && t.data[2] == f64::NEG_INFINITY);
        let e = json!({"dtype": "float32", "shape": [2], "data": [1.0, "Infinity"]});
        assert!(compare("x", &e, &tensor_json(&[2], [1.0, f64::INFINITY]), T).is_none());
        assert!(compare("x", &e, &tensor_json(&[2], [1.0, 3e38]), T).is_some());
        assert!(compare("x", &e, &tensor_json(&[1, 2], [1.0, f64::INFINITY]), T).is_some(), "shape differs");
    }

    #[test]
    fn file_filter() {
        assert!(is_case_file("pub-0001-View.info.json"));
        assert!(!is_case_file("index.json") && !is_case_file("README.md"));
    }
}
