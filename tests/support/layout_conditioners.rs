//! The one coupling case whose error stems only from its conditioners being in param layout
//! (pub-0583): the JS API accepts param layout, so the call must succeed and agree with the float64
//! oracle (`coupling_prox_oracle`) and with the same call in view layout.

use super::block_build::orders;
use super::cases::{self, contiguous_strides, for_each_offset, i64s, num, opt, tensor, tensor_json, usizes, Outcome, Tol};
use super::coupling_prox_oracle::{coupling_adam_prox, OracleSpec};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use Outcome::{Fail, Pass};

/// A coupling's conditioner given in param layout where the cases' reference requires view layout
/// (tests/data/sparsekit-cases/README.md): the case's
/// `shape_mismatch` stems from the layout alone when the same call with the conditioners gathered
/// into view layout succeeds. Our API accepts param layout, so there the call must succeed.
pub(crate) fn param_layout_conditioners_only(case: &Value) -> Option<Value> {
    let target = case["target"].as_str()?;
    if !matches!(target, "BlockCoupling" | "ScopeSpec[BlockCoupling]") || !case["op"].as_str()?.ends_with("soft_threshold") {
        return None;
    }
    if case["expect"]["error"].as_str() != Some("shape_mismatch") {
        return None;
    }
    let conds = case["args"]["conditioners"].as_array()?;
    let specs = case["specs"].as_array()?;
    if conds.len() != specs.len() {
        return None;
    }
    let mut changed = false;
    let mut new_conds = Vec::new();
    for (c, s) in conds.iter().zip(specs) {
        let t = tensor(c);
        let pshape = usizes(&s["param"]["shape"]);
        let (vshape, vstride) = match opt(s, "view") {
            Some(v) => (usizes(&v["shape"]), usizes(&v["stride"])),
            None => (pshape.clone(), contiguous_strides(&pshape)),
        };
        if t.shape == pshape && t.shape != vshape {
            let mut g = Vec::new();
            for_each_offset(&vshape, &vstride, |o| g.push(t.data[o]));
            new_conds.push(json!({"layout": "view", "dtype": "float32", "shape": vshape, "data": g}));
            changed = true;
        } else {
            new_conds.push(c.clone());
        }
    }
    if !changed {
        return None;
    }
    let mut alt = case.clone();
    alt["args"]["conditioners"] = Value::Array(new_conds);
    Some(alt)
}

/// Tolerance against the float64 oracle: the case itself has none (it expects an error), so the
/// one of every other coupling soft-threshold case of the folder.
pub(crate) const ORACLE_TOL: Tol = Tol { rtol: 1e-3, atol: 1e-5 };

/// The params after a param-layout coupling soft threshold against `coupling_adam_prox` on the
/// same inputs; the view-layout call (`alt_out`) must give the same numbers too.
/// The float64 oracle's params for a coupling soft-threshold case (conditioners in view or
/// param layout).
pub(crate) fn prox_oracle_params(case: &Value) -> Vec<Vec<f64>> {
    let args = &case["args"];
    let specs: Vec<OracleSpec> = case["specs"]
        .as_array()
        .expect("specs")
        .iter()
        .map(|s| {
            let param = tensor(&s["param"]);
            let (view_shape, view_stride) = match opt(s, "view") {
                Some(v) => (usizes(&v["shape"]), usizes(&v["stride"])),
                None => (param.shape.clone(), contiguous_strides(&param.shape)),
            };
            OracleSpec { param: param.data, view_shape, view_stride, block_shape: i64s(&s["block_shape"]) }
        })
        .collect();
    let conds: Vec<Vec<f64>> = args["conditioners"]
        .as_array()
        .expect("conditioners")
        .iter()
        .zip(&specs)
        .map(|(c, s)| {
            let t = tensor(c);
            if t.shape == s.view_shape {
                let mut out = vec![0.0; s.param.len()];
                let mut i = 0;
                for_each_offset(&s.view_shape, &s.view_stride, |o| {
                    out[o] = t.data[i];
                    i += 1;
                });
                out
            } else {
                t.data
            }
        })
        .collect();
    let ords: Vec<Vec<usize>> = orders(&case["orders"]).iter().map(|o| o.iter().map(|&k| k as usize).collect()).collect();
    coupling_adam_prox(
        &specs,
        &ords,
        &tensor(&args["block_thresholds"]).data,
        &conds,
        opt(args, "max_iter").map_or(20, |m| num(m) as usize),
        opt(args, "atol").map_or(1e-8, num),
        opt(args, "eps").map_or(f64::from(f32::EPSILON), num),
    )
}

pub(crate) fn compare_with_prox_oracle(case: &Value, out: &BTreeMap<String, Value>, alt_out: &BTreeMap<String, Value>) -> Outcome {
    let want = prox_oracle_params(case);
    let Some(Value::Array(got)) = out.get("params") else {
        return Fail("no params after the call".into());
    };
    if got.len() != want.len() {
        return Fail(format!("{} params, expected {}", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let exp = tensor_json(&usizes(&g["shape"]), w.iter().copied());
        if let Some(m) = cases::compare(&format!("params[{i}] vs float64 oracle"), &exp, g, ORACLE_TOL) {
            return Fail(m);
        }
    }
    match cases::compare("params (param vs view layout)", &alt_out["params"], &out["params"], Tol::EXACT) {
        Some(m) => Fail(m),
        None => Pass,
    }
}
