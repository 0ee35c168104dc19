//! The N:M family (`nm.*` ops) of the conformance cases, run through `sparsekit_wasm::nm` and
//! decoded/compared with the shared `cases` module. `mn_1d_best` must also agree with the
//! brute-force enumeration over every pattern.

use super::cases::{self, f32s_json, opt, tensor, u8s_json, Outcome};
use serde_json::{json, Value};
use sparsekit_wasm::nm;
use sparsekit_wasm::Result;
use std::collections::BTreeMap;

fn matrix(args: &Value) -> (Vec<f32>, usize, usize) {
    let t = tensor(&args["matrix"]);
    assert_eq!(t.shape.len(), 2, "nm matrices in the cases are 2-D");
    (t.f32(), t.shape[0], t.shape[1])
}

fn count(args: &Value, k: &str) -> usize {
    usize::try_from(args[k].as_u64().unwrap_or_else(|| panic!("{k}: non-negative integer"))).expect("usize")
}

fn out(v: Value) -> BTreeMap<String, Value> {
    BTreeMap::from([("out".to_string(), v)])
}

/// The results of one call, keyed as the case's `expect`; `Err` is the library's refusal.
fn run(op: &str, args: &Value) -> Result<std::result::Result<BTreeMap<String, Value>, String>> {
    Ok(Ok(match op {
        "nm.get_nmprune_info" => {
            let (ok, m, n) = nm::get_nmprune_info(args["pattern"].as_str().expect("pattern"));
            BTreeMap::from([("value".to_string(), json!([ok, m, n]))])
        }
        "nm.compute_valid_1d_patterns" => {
            let (m, n) = (count(args, "m"), count(args, "n"));
            let p = nm::compute_valid_1d_patterns(m, n)?;
            out(u8s_json(&[p.len() / m.max(1), m], &p))
        }
        "nm.reshape_1d" => {
            let (v, rows, cols) = matrix(args);
            let (g, gs, ps) = nm::reshape_1d(&v, rows, cols, count(args, "m"))?;
            BTreeMap::from([("out".to_string(), f32s_json(&gs, &g)), ("padded_shape".to_string(), json!(ps))])
        }
        "nm.mn_1d_best" => {
            let (v, rows, cols) = matrix(args);
            let (m, n) = (count(args, "m"), count(args, "n"));
            let mask = nm::mn_1d_best(&v, rows, cols, m, n)?;
            if super::oracles::mn_1d_best_enumerate(&v, rows, cols, m, n)? != mask {
                return Ok(Err("mn_1d_best differs from the brute-force enumeration".into()));
            }
            out(u8s_json(&[rows, cols], &mask))
        }
        "nm.m4n2_1d" => {
            let (v, rows, cols) = matrix(args);
            out(u8s_json(&[rows, cols], &nm::m4n2_1d(&v, rows, cols)?))
        }
        "nm.create_asp_mask" => {
            let t = tensor(&args["tensor"]);
            let pattern = opt(args, "pattern").and_then(Value::as_str).unwrap_or("m4n2_1d");
            out(u8s_json(&t.shape, &nm::create_asp_mask(&t.f32(), &t.shape, pattern)?))
        }
        "nm.fill" => BTreeMap::from([("value".to_string(), json!(nm::fill(&tensor(&args["x"]).f32())))]),
        other => panic!("no N:M runner for op {other}"),
    }))
}

/// One `nm.*` case: the expected results, or the expected error code.
pub fn run_case(case: &Value) -> Outcome {
    let op = case["op"].as_str().unwrap_or("");
    let expect = &case["expect"];
    match (run(op, &case["args"]), expect.get("error").and_then(Value::as_str)) {
        (Ok(Err(why)), _) => Outcome::Fail(why),
        (Ok(Ok(_)), Some(kind)) => Outcome::Fail(format!("expected error {kind}, got a result")),
        (Err(e), Some(kind)) if e.code() == kind => Outcome::Pass,
        (Err(e), Some(kind)) => Outcome::Fail(format!("expected error {kind}, got {} ({e})", e.code())),
        (Err(e), None) => Outcome::Fail(format!("unexpected error {} ({e})", e.code())),
        (Ok(Ok(got)), None) => cases::check_expect(case, &got),
    }
}
