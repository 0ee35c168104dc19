//! Comparing a result with a case's expectation: one infinity-aware `close` with relative and
//! absolute tolerances, applied element by element through nested JSON.

use super::{flatten, is_float, num, tensor, usizes, Outcome, Tensor};
use serde_json::Value;
use std::collections::BTreeMap;

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

#[cfg(test)]
mod close_rules {
    use super::super::{is_case_file, tensor_json};
    use super::*;
    use serde_json::json;

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
