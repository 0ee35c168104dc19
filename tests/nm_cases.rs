//! Runs every public N:M conformance case (`pub-*-nm.*.json` of the shared sparsekit cases)
//! through `sparsekit_wasm::nm` and compares exactly (`nm.fill` with the case's tolerance).
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/oracles.rs"]
mod oracles;
use serde_json::Value;
use sparsekit_wasm::Error;
use sparsekit_wasm::nm;
use std::path::{Path, PathBuf};

const CASES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/testdata/sparsekit-cases"
);

/// A float32/int/bool tensor of a case: shape and flat row-major data.
struct Tensor {
    shape: Vec<usize>,
    data: Vec<f64>,
}

/// Float32 entries are cast to f32 (the JSON holds their shortest round-trip decimals).
fn tensor(v: &Value) -> Tensor {
    let is_f32 = v["dtype"].as_str() == Some("float32");
    let shape = v["shape"]
        .as_array()
        .expect("tensor shape")
        .iter()
        .map(as_usize)
        .collect();
    let data = v["data"]
        .as_array()
        .expect("tensor data")
        .iter()
        .map(|x| match x {
            Value::Bool(b) => f64::from(u8::from(*b)),
            x => x.as_f64().expect("numeric tensor entry"),
        })
        .map(|x| if is_f32 { f64::from(x as f32) } else { x })
        .collect();
    Tensor { shape, data }
}

fn as_usize(v: &Value) -> usize {
    v.as_u64().expect("non-negative integer") as usize
}

fn f32s(t: &Tensor) -> Vec<f32> {
    t.data.iter().map(|&x| x as f32).collect()
}

fn matrix(args: &Value) -> (Vec<f32>, usize, usize) {
    let t = tensor(&args["matrix"]);
    assert_eq!(t.shape.len(), 2, "nm matrices are 2-D");
    (f32s(&t), t.shape[0], t.shape[1])
}

/// What a call produced, in the shape the case's `expect` uses.
enum Got {
    Out(Vec<usize>, Vec<f64>),
    Reshape(Vec<usize>, Vec<f64>, Vec<usize>),
    Info(bool, usize, usize),
    Fill(f64),
    Mismatch(String),
}

fn mask_out(shape: Vec<usize>, mask: Vec<u8>) -> Got {
    Got::Out(shape, mask.into_iter().map(f64::from).collect())
}

fn run(op: &str, args: &Value) -> Result<Got, Error> {
    Ok(match op {
        "nm.get_nmprune_info" => {
            let (ok, m, n) = nm::get_nmprune_info(args["pattern"].as_str().expect("pattern"));
            Got::Info(ok, m, n)
        }
        "nm.compute_valid_1d_patterns" => {
            let (m, n) = (as_usize(&args["m"]), as_usize(&args["n"]));
            let p = nm::compute_valid_1d_patterns(m, n)?;
            mask_out(vec![p.len() / m, m], p)
        }
        "nm.reshape_1d" => {
            let (v, rows, cols) = matrix(args);
            let (g, gs, ps) = nm::reshape_1d(&v, rows, cols, as_usize(&args["m"]))?;
            Got::Reshape(
                gs.to_vec(),
                g.into_iter().map(f64::from).collect(),
                ps.to_vec(),
            )
        }
        "nm.mn_1d_best" => {
            let (v, rows, cols) = matrix(args);
            let (m, n) = (as_usize(&args["m"]), as_usize(&args["n"]));
            let mask = nm::mn_1d_best(&v, rows, cols, m, n)?;
            // The brute-force oracle must agree too.
            if oracles::mn_1d_best_enumerate(&v, rows, cols, m, n)? != mask {
                return Ok(Got::Mismatch(
                    "mn_1d_best differs from mn_1d_best_enumerate".into(),
                ));
            }
            mask_out(vec![rows, cols], mask)
        }
        "nm.m4n2_1d" => {
            let (v, rows, cols) = matrix(args);
            mask_out(vec![rows, cols], nm::m4n2_1d(&v, rows, cols)?)
        }
        "nm.create_asp_mask" => {
            let t = tensor(&args["tensor"]);
            let pattern = args["pattern"].as_str().unwrap_or("m4n2_1d");
            let mask = nm::create_asp_mask(&f32s(&t), &t.shape, pattern)?;
            mask_out(t.shape, mask)
        }
        "nm.fill" => Got::Fill(nm::fill(&f32s(&tensor(&args["x"])))),
        other => panic!("unknown nm op {other}"),
    })
}

fn close(got: f64, exp: f64, tol: &Value) -> bool {
    let rtol = tol["rtol"].as_f64().unwrap_or(0.0);
    let atol = tol["atol"].as_f64().unwrap_or(0.0);
    (got - exp).abs() <= atol + rtol * exp.abs()
}

/// `Ok(())` when the call matches `expect`, else what differed.
fn check(case: &Value) -> Result<(), String> {
    let (op, expect, tol) = (
        case["op"].as_str().unwrap_or(""),
        &case["expect"],
        &case["tol"],
    );
    let got = run(op, &case["args"]);
    if let Some(kind) = expect.get("error").and_then(Value::as_str) {
        return match got {
            Err(e) if e.code() == kind => Ok(()),
            Err(e) => Err(format!(
                "expected error {kind}, got {} ({})",
                e.code(),
                e.message()
            )),
            Ok(_) => Err(format!("expected error {kind}, got a result")),
        };
    }
    let got = got.map_err(|e| format!("unexpected error {e}"))?;
    let same_tensor = |shape: &[usize], data: &[f64], exp: &Value| -> Result<(), String> {
        let exp = tensor(exp);
        if shape != exp.shape.as_slice() {
            return Err(format!("shape {shape:?} != expected {:?}", exp.shape));
        }
        match data
            .iter()
            .zip(&exp.data)
            .position(|(&g, &e)| !close(g, e, tol))
        {
            Some(i) => Err(format!(
                "element {i}: got {}, expected {}",
                data[i], exp.data[i]
            )),
            None => Ok(()),
        }
    };
    match got {
        Got::Out(shape, data) => same_tensor(&shape, &data, &expect["out"]),
        Got::Reshape(shape, data, padded) => {
            same_tensor(&shape, &data, &expect["out"])?;
            let exp: Vec<usize> = expect["padded_shape"]
                .as_array()
                .expect("padded_shape")
                .iter()
                .map(as_usize)
                .collect();
            if padded == exp {
                Ok(())
            } else {
                Err(format!("padded shape {padded:?} != {exp:?}"))
            }
        }
        Got::Info(ok, m, n) => {
            let e = &expect["value"];
            let exp = (
                e[0].as_bool(),
                e[1].as_u64().map(|x| x as usize),
                e[2].as_u64().map(|x| x as usize),
            );
            if exp == (Some(ok), Some(m), Some(n)) {
                Ok(())
            } else {
                Err(format!("got {:?}, expected {e}", (ok, m, n)))
            }
        }
        Got::Mismatch(why) => Err(why),
        Got::Fill(v) => {
            let exp = expect["value"].as_f64().ok_or("expected value")?;
            if close(v, exp, tol) {
                Ok(())
            } else {
                Err(format!("fill {v} != {exp}"))
            }
        }
    }
}

fn case_files(dir: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("conformance cases not found at {}: {e}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("pub-") && name.contains("-nm.") && name.ends_with(".json")
        })
        .collect();
    files.sort();
    files
}

#[test]
fn public_nm_cases() {
    let files = case_files(Path::new(CASES));
    assert!(!files.is_empty(), "no pub-*-nm.*.json case in {CASES}");
    let mut failures = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable case");
        let case: Value = serde_json::from_str(&text).expect("valid JSON case");
        if let Err(why) = check(&case) {
            failures.push(format!("{}: {why}", case["id"].as_str().unwrap_or("?")));
        }
    }
    println!(
        "nm cases: {} of {} passed",
        files.len() - failures.len(),
        files.len()
    );
    assert!(
        failures.is_empty(),
        "failed nm cases:\n{}",
        failures.join("\n")
    );
}
