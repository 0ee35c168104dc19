//! A block-family case's inputs handed to the core as the JS API receives them: `values` /
//! `conditioners` resolved by shape, grid-shaped inputs with their n-d shape, the soft-threshold
//! options and the root finder the cases run with.

use super::block_build::P;
use super::cases::{f32s_json, for_each_offset, num, opt, tensor, Tensor};
use serde_json::Value;
use sparsekit_wasm::{check_grid_shape, BlockSpec, HardBy, Method, Norm, Result, SoftOptions};
use std::collections::BTreeMap;

/// `values` / `conditioners` for one spec, resolved by shape: view-shaped -> scattered into a
/// param-length array; anything else is passed flat in param layout (the core refuses a wrong
/// length).
pub(crate) fn values_for(spec: &BlockSpec, t: &Tensor) -> Vec<f32> {
    let view = spec.view();
    if t.shape == view.shape() {
        let mut out = vec![0.0f32; view.param().numel()];
        let src = t.f32();
        let mut i = 0;
        for_each_offset(view.shape(), view.stride(), |o| {
            out[o] = src[i];
            i += 1;
        });
        out
    } else {
        t.f32()
    }
}

/// Per-spec arrays of a node's `values` (a tensor for a spec, a list for a coupling).
pub(crate) fn node_values(specs: &[BlockSpec], v: Option<&Value>) -> Option<Vec<Vec<f32>>> {
    let v = v?;
    let list: Vec<&Value> = match v {
        Value::Array(a) => a.iter().collect(),
        x => vec![x],
    };
    if list.len() != specs.len() {
        // Let the core refuse the count; pass what we have.
        return Some(list.iter().map(|x| tensor(x).f32()).collect());
    }
    Some(list.iter().zip(specs).map(|(x, s)| values_for(s, &tensor(x))).collect())
}

pub(crate) fn refs(v: &Option<Vec<Vec<f32>>>) -> Option<Vec<&[f32]>> {
    v.as_ref().map(|x| x.iter().map(|y| y.as_slice()).collect())
}

thread_local! {
    /// The root finder the soft-threshold cases run with (the default: Newton).
    pub(crate) static METHOD: std::cell::Cell<Method> = const { std::cell::Cell::new(Method::Newton) };
}

pub(crate) fn soft_opts(args: &Value) -> SoftOptions {
    let mut o = SoftOptions { method: METHOD.with(|m| m.get()), ..SoftOptions::default() };
    if let Some(m) = opt(args, "max_iter") {
        o.max_iter = num(m) as usize;
    }
    if let Some(a) = opt(args, "atol") {
        o.atol = num(a) as f32;
    }
    o.eps = opt(args, "eps").map(|e| num(e) as f32);
    o
}

pub(crate) fn norm_p(args: &Value) -> Result<Norm> {
    match opt(args, "p") {
        None => Ok(Norm::L2),
        Some(Value::String(s)) if s == "inf" || s == "Infinity" => Ok(Norm::Inf),
        Some(p) => Norm::from_p(num(p)),
    }
}

pub(crate) fn all_params(params: &[P]) -> Vec<Value> {
    params.iter().map(|p| f32s_json(p.param.shape(), &p.param.data())).collect()
}

pub(crate) fn in_place_result(params: &[P]) -> BTreeMap<String, Value> {
    let ps = all_params(params);
    let mut m = BTreeMap::new();
    if ps.len() == 1 {
        m.insert("param".into(), ps[0].clone());
    }
    m.insert("params".into(), Value::Array(ps));
    m
}

pub(crate) fn one(k: &str, v: Value) -> BTreeMap<String, Value> {
    BTreeMap::from([(k.to_string(), v)])
}

/// The HardBy of a scope call (`nnz` / `sparsity` / `thresholds`), with the grid check.
pub(crate) fn hard_by<'a>(args: &Value, t: &'a Option<Vec<f32>>, tt: &Option<Tensor>, grid: &[usize]) -> Result<HardBy<'a>> {
    if let Some(tt) = tt {
        check_grid_shape("scope thresholds", grid, &tt.shape)?;
    }
    HardBy::from_args(t.as_deref(), opt(args, "nnz").map(num), opt(args, "sparsity").map(num))
}
