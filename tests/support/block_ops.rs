//! One block-family case's call on its target, dispatched by `op`, and the check that a refusal
//! wrote nothing.

use super::block_build::{Target, P};
use super::block_inputs::{hard_by, in_place_result, node_values, norm_p, one, refs, soft_opts, values_for};
use super::cases::{f32s_json, i64s, num, opt, tensor, tensor_json, u8s_json, usizes};
use serde_json::{json, Value};
use sparsekit_wasm::{block_view_of, broadcast_block_to_element, check_grid_shape, BlockSpec, HardBy, Result};
use std::collections::BTreeMap;

pub(crate) fn run_op(case: &Value, target: &Target, params: &[P]) -> Result<BTreeMap<String, Value>> {
    let op = case["op"].as_str().unwrap();
    let method = op.split('.').nth(1).unwrap();
    let args = &case["args"];
    let arg_t = |k: &str| opt(args, k).map(tensor);
    match target {
        Target::View(view) => {
            if method == "broadcast_block_to_element" {
                let bv = arg_t("block_values").unwrap();
                let block = usizes(&args["block_shape"]);
                let (d, s) = broadcast_block_to_element(&bv.f32(), &bv.shape, &block, args["fake"].as_bool().unwrap_or(false))?;
                return Ok(one("out", f32s_json(&s, &d)));
            }
            let v = view.as_ref().expect("view");
            match method {
                "info" => Ok(BTreeMap::from([
                    ("ndim".into(), json!(v.ndim())),
                    ("numel".into(), json!(v.numel())),
                    ("cosize".into(), json!(v.cosize())),
                ])),
                "data" => Ok(one("out", f32s_json(v.shape(), &v.values()?))),
                "linear_offset" => {
                    let idx = arg_t("idx").unwrap();
                    let out = v.linear_offset(&idx.i64())?;
                    let shape = &idx.shape[..idx.shape.len().saturating_sub(1)];
                    Ok(one("out", tensor_json(shape, out.iter().map(|&x| x as f64))))
                }
                "to_param_rc" => {
                    let idx = arg_t("idx").unwrap();
                    let (r, c) = v.to_param_rc(&idx.i64())?;
                    let shape = &idx.shape[..idx.shape.len().saturating_sub(1)];
                    Ok(BTreeMap::from([
                        ("rows".into(), tensor_json(shape, r.iter().map(|&x| x as f64))),
                        ("cols".into(), tensor_json(shape, c.iter().map(|&x| x as f64))),
                    ]))
                }
                "block_view_of" => {
                    let (d, s) = block_view_of(
                        &v.values()?,
                        v.shape(),
                        &i64s(&args["block_shape"]),
                        args["reorder"].as_bool().unwrap_or(true),
                        args["merge"].as_bool().unwrap_or(false),
                    )?;
                    Ok(one("out", f32s_json(&s, &d)))
                }
                "apply_multiplier" | "apply_mask" => {
                    let block = i64s(&args["block_shape"]);
                    let grid = v.tiling(&block, "View")?.grid;
                    if method == "apply_mask" {
                        let k = arg_t("keep").unwrap();
                        check_grid_shape("keep", &grid, &k.shape)?;
                        v.apply_mask(&k.u8(), &block)?;
                    } else {
                        let m = arg_t("multiplier").unwrap();
                        check_grid_shape("multiplier", &grid, &m.shape)?;
                        v.apply_multiplier(&m.f32(), &block)?;
                    }
                    Ok(in_place_result(params))
                }
                m => panic!("unknown View method {m}"),
            }
        }
        Target::Spec(s) => {
            let grid = s.grid_shape().to_vec();
            let vals = opt(args, "values").map(|v| values_for(s, &tensor(v)));
            let vals = vals.as_deref();
            match method {
                "info" => Ok(BTreeMap::from([
                    ("block_shape".into(), json!(s.shape())),
                    ("grid_shape".into(), json!(s.grid_shape())),
                    ("grid_ndim".into(), json!(s.grid_shape().len())),
                    ("numel_per_block".into(), json!(s.numel_per_block())),
                    ("numblk".into(), json!(s.numblk())),
                    ("numel".into(), json!(s.numel())),
                ])),
                "norms" => Ok(one("out", f32s_json(&grid, &s.norms(norm_p(args)?, vals)?))),
                "min" => Ok(one("out", f32s_json(&grid, &s.min(vals)?))),
                "max" => Ok(one("out", f32s_json(&grid, &s.max(vals)?))),
                "nnz" => Ok(one("value", json!(s.nnz(opt(args, "eps").map(num).unwrap_or(1e-8))?))),
                "block_view" => {
                    let (d, sh) = s.block_view(
                        vals,
                        opt(args, "reorder").and_then(|x| x.as_bool()).unwrap_or(true),
                        opt(args, "merge").and_then(|x| x.as_bool()).unwrap_or(false),
                    )?;
                    Ok(one("out", f32s_json(&sh, &d)))
                }
                "apply_multiplier" => {
                    let m = arg_t("multiplier").unwrap();
                    check_grid_shape("multiplier", &grid, &m.shape)?;
                    s.apply_multiplier(&m.f32())?;
                    Ok(in_place_result(params))
                }
                "apply_mask" => {
                    let k = arg_t("keep").unwrap();
                    check_grid_shape("keep", &grid, &k.shape)?;
                    s.apply_mask(&k.u8())?;
                    Ok(in_place_result(params))
                }
                "get_masks" => {
                    let k = arg_t("keep").unwrap();
                    check_grid_shape("keep", &grid, &k.shape)?;
                    let m = s.get_masks(&k.u8())?;
                    Ok(one("masks", json!([u8s_json(s.view().shape(), &m)])))
                }
                "hard_threshold" => {
                    let t = arg_t("thresholds").unwrap();
                    check_grid_shape("thresholds", &grid, &t.shape)?;
                    s.hard_threshold(&t.f32(), vals)?;
                    Ok(in_place_result(params))
                }
                "soft_threshold" => {
                    let t = arg_t("block_thresholds").unwrap();
                    check_grid_shape("block_thresholds", &grid, &t.shape)?;
                    let c = opt(args, "conditioners").map(|c| values_for(s, &tensor(c)));
                    s.soft_threshold(&t.f32(), c.as_deref(), soft_opts(args))?;
                    Ok(in_place_result(params))
                }
                m => panic!("unknown BlockSpec method {m}"),
            }
        }
        Target::Coupling(c) => {
            let grid = c.grid_shape().to_vec();
            let vals = node_values(c.specs(), opt(args, "values"));
            let vr = refs(&vals);
            let vals = vr.as_deref();
            match method {
                "info" => Ok(BTreeMap::from([
                    ("block_shapes".into(), json!(c.specs().iter().map(|s| s.shape().to_vec()).collect::<Vec<_>>())),
                    ("orders".into(), json!(c.orders())),
                    ("grid_shape".into(), json!(c.grid_shape())),
                    ("grid_ndim".into(), json!(c.grid_shape().len())),
                    ("numel_per_block".into(), json!(c.numel_per_block())),
                    ("numblk".into(), json!(c.numblk())),
                    ("numel".into(), json!(c.numel())),
                ])),
                "norms" => Ok(one("out", f32s_json(&grid, &c.norms(norm_p(args)?, vals)?))),
                "min" => Ok(one("out", f32s_json(&grid, &c.min(vals)?))),
                "max" => Ok(one("out", f32s_json(&grid, &c.max(vals)?))),
                "nnz" => Ok(one("value", json!(c.nnz(opt(args, "eps").map(num).unwrap_or(1e-8))?))),
                "block_view" => {
                    let (d, sh) = c.block_view(vals)?;
                    Ok(one("out", f32s_json(&sh, &d)))
                }
                "apply_multiplier" => {
                    let m = arg_t("multiplier").unwrap();
                    check_grid_shape("multiplier", &grid, &m.shape)?;
                    c.apply_multiplier(&m.f32())?;
                    Ok(in_place_result(params))
                }
                "apply_mask" => {
                    let k = arg_t("keep").unwrap();
                    check_grid_shape("keep", &grid, &k.shape)?;
                    c.apply_mask(&k.u8())?;
                    Ok(in_place_result(params))
                }
                "get_masks" => {
                    let k = arg_t("keep").unwrap();
                    check_grid_shape("keep", &grid, &k.shape)?;
                    let ms = c.get_masks(&k.u8())?;
                    let out: Vec<Value> = ms.iter().zip(c.specs()).map(|(m, s)| u8s_json(s.view().shape(), m)).collect();
                    Ok(one("masks", Value::Array(out)))
                }
                "hard_threshold" => {
                    let t = arg_t("thresholds").unwrap();
                    check_grid_shape("thresholds", &grid, &t.shape)?;
                    c.hard_threshold(&t.f32(), vals)?;
                    Ok(in_place_result(params))
                }
                "soft_threshold" => {
                    let t = arg_t("block_thresholds").unwrap();
                    check_grid_shape("block_thresholds", &grid, &t.shape)?;
                    let conds = node_values(c.specs(), opt(args, "conditioners"));
                    let cr = refs(&conds);
                    c.soft_threshold(&t.f32(), cr.as_deref(), soft_opts(args))?;
                    Ok(in_place_result(params))
                }
                m => panic!("unknown BlockCoupling method {m}"),
            }
        }
        Target::Scope(sc) => {
            let specs = sc.block().specs().to_vec();
            let vals = node_values(&specs, opt(args, "values"));
            let vr = refs(&vals);
            let vals = vr.as_deref();
            let g = sc.grid_shape().to_vec();
            match method {
                "info" => Ok(BTreeMap::from([
                    ("grid_shape".into(), json!(sc.grid_shape())),
                    ("scope_shape".into(), json!(sc.scope_shape())),
                    ("block_grid_shape".into(), json!(sc.block_grid_shape())),
                    ("numblk_per_scope".into(), json!(sc.numblk_per_scope())),
                    ("numel_per_scope".into(), json!(sc.numel_per_scope())),
                    ("num_scopes".into(), json!(sc.num_scopes())),
                ])),
                "block_norms" => {
                    let mut shape = g.clone();
                    shape.push(sc.numblk_per_scope());
                    Ok(one("out", f32s_json(&shape, &sc.block_norms(vals)?)))
                }
                "sparsity_to_nnz" => Ok(one("value", json!(sc.sparsity_to_nnz(num(&args["sparsity"]))?))),
                "hard_threshold" => {
                    let tt = arg_t("thresholds");
                    let t = tt.as_ref().map(|t| t.f32());
                    let by = hard_by(args, &t, &tt, &g)?;
                    sc.hard_threshold(by, vals)?;
                    Ok(in_place_result(params))
                }
                "get_masks" => {
                    let k = match HardBy::from_args(None, opt(args, "nnz").map(num), None)? {
                        HardBy::Nnz(k) => k,
                        _ => unreachable!(),
                    };
                    let ms = sc.get_masks(k, vals, None)?;
                    let out: Vec<Value> = ms.iter().zip(&specs).map(|(m, s)| u8s_json(s.view().shape(), m)).collect();
                    Ok(one("masks", Value::Array(out)))
                }
                "soft_threshold" => {
                    let t = arg_t("thresholds").unwrap();
                    check_grid_shape("scope thresholds", &g, &t.shape)?;
                    let conds = node_values(&specs, opt(args, "conditioners"));
                    let cr = refs(&conds);
                    let scale = opt(args, "scale").and_then(|x| x.as_bool()).unwrap_or(false);
                    sc.soft_threshold(&t.f32(), cr.as_deref(), scale, soft_opts(args))?;
                    Ok(in_place_result(params))
                }
                m => panic!("unknown ScopeSpec method {m}"),
            }
        }
        Target::ScopeCoupling(scc) => {
            let g = scc.grid_shape().to_vec();
            // Values / conditioners: one entry per scope (a tensor, or a list for a coupled node).
            let per_scope = |k: &str| -> Result<Option<Vec<Vec<Vec<f32>>>>> {
                let Some(v) = opt(args, k) else {
                    return Ok(None);
                };
                let list = v.as_array().expect("list per scope");
                let mut out = Vec::new();
                for (i, x) in list.iter().enumerate() {
                    let specs = scc.scopes().get(i).map(|s| s.block().specs().to_vec()).unwrap_or_default();
                    out.push(node_values(&specs, Some(x)).unwrap());
                }
                Ok(Some(out))
            };
            let vals = per_scope("values")?;
            let inner: Option<Vec<Vec<&[f32]>>> =
                vals.as_ref().map(|v| v.iter().map(|s| s.iter().map(|x| x.as_slice()).collect()).collect());
            let outer: Option<Vec<&[&[f32]]>> = inner.as_ref().map(|v| v.iter().map(|s| s.as_slice()).collect());
            let vals = outer.as_deref();
            let all_specs: Vec<BlockSpec> = scc.scopes().iter().flat_map(|s| s.block().specs().to_vec()).collect();
            match method {
                "info" => Ok(BTreeMap::from([
                    ("grid_shape".into(), json!(scc.grid_shape())),
                    ("scope_shapes".into(), json!(scc.scopes().iter().map(|s| s.scope_shape().to_vec()).collect::<Vec<_>>())),
                    ("orders".into(), json!(scc.orders())),
                    ("numblk_per_scope".into(), json!(scc.numblk_per_scope())),
                    ("numel_per_scope".into(), json!(scc.numel_per_scope())),
                    ("num_scopes".into(), json!(scc.num_scopes())),
                ])),
                "block_norms" => {
                    let mut shape = g.clone();
                    shape.push(scc.numblk_per_scope());
                    Ok(one("out", f32s_json(&shape, &scc.block_norms(vals)?)))
                }
                "sparsity_to_nnz" => Ok(one("value", json!(scc.sparsity_to_nnz(num(&args["sparsity"]))?))),
                "hard_threshold" => {
                    let tt = arg_t("thresholds");
                    let t = tt.as_ref().map(|t| t.f32());
                    let by = hard_by(args, &t, &tt, &g)?;
                    scc.hard_threshold(by, vals, &mut |_, _| {})?;
                    Ok(in_place_result(params))
                }
                "get_masks" => {
                    let tt = arg_t("thresholds");
                    let t = tt.as_ref().map(|t| t.f32());
                    let by = hard_by(args, &t, &tt, &g)?;
                    let ms = scc.get_masks(by, vals, &mut |_, _| {})?;
                    let out: Vec<Value> = ms.iter().zip(&all_specs).map(|(m, s)| u8s_json(s.view().shape(), m)).collect();
                    Ok(one("masks", Value::Array(out)))
                }
                "soft_threshold" => {
                    let t = arg_t("thresholds").unwrap();
                    check_grid_shape("scope thresholds", &g, &t.shape)?;
                    let conds = per_scope("conditioners")?;
                    let ci: Option<Vec<Vec<&[f32]>>> =
                        conds.as_ref().map(|v| v.iter().map(|s| s.iter().map(|x| x.as_slice()).collect()).collect());
                    let co: Option<Vec<&[&[f32]]>> = ci.as_ref().map(|v| v.iter().map(|s| s.as_slice()).collect());
                    let scale = opt(args, "scale").and_then(|x| x.as_bool()).unwrap_or(false);
                    scc.soft_threshold(&t.f32(), co.as_deref(), scale, soft_opts(args), &mut |_, _| {})?;
                    Ok(in_place_result(params))
                }
                m => panic!("unknown ScopeCoupling method {m}"),
            }
        }
    }
}

pub(crate) fn params_unchanged(params: &[P]) -> Option<String> {
    for (i, p) in params.iter().enumerate() {
        let now = p.param.data();
        if let Some(j) = now.iter().zip(&p.before).position(|(a, b)| a.to_bits() != b.to_bits()) {
            return Some(format!("param {i} changed at flat {j}: {} -> {}", p.before[j], now[j]));
        }
    }
    None
}
