//! The calibration family (`Hessian.*`, `wanda_scores`, `sparse_gpt` ops of `obs-cases`) of the
//! conformance cases, through the Rust core, with the comparisons of that folder's README;
//! decoding and `close` are the shared `cases` module's.

use super::cases::{self, for_each_offset, i64s, num, tensor, usizes, Outcome, Tensor, Tol};
use serde_json::Value;
use sparsekit_wasm::calib::{rel_recon_error, sparse_gpt, wanda_scores, ConvGeometry, Hessian, SparseGptOptions};
use sparsekit_wasm::{BlockNode, BlockSpec, Error, Param, ScopeSpec, View};

fn f32s(t: &Value) -> Vec<f32> {
    tensor(t).f32()
}
fn u8s(t: &Value) -> Vec<u8> {
    tensor(t).u8()
}
fn ints(v: &Value) -> Vec<i64> {
    i64s(v)
}
fn shape(t: &Value) -> Vec<usize> {
    usizes(&t["shape"])
}

/// `got` against the expected tensor `exp` with the case's tolerance for quantity `key`.
fn close(case: &Value, key: &str, got: &[f32], exp: &Value) -> Result<(), String> {
    let e = tensor(exp);
    let g = Tensor { shape: e.shape.clone(), data: got.iter().map(|&x| f64::from(x)).collect() };
    if got.len() != e.data.len() {
        return Err(format!("{key}: {} values, expected {}", got.len(), e.data.len()));
    }
    match cases::compare_data(key, &e, &g, Tol::of(case, key)) {
        Some(m) => Err(m),
        None => Ok(()),
    }
}

fn kind_is(e: &Error, kind: &str, step: &str) -> Result<(), String> {
    if e.code() == kind {
        Ok(())
    } else {
        Err(format!("{step}: expected {kind}, got {} ({e})", e.code()))
    }
}

fn hessian_call(h: &mut Hessian, call: &Value) -> Result<(), Error> {
    let x = f32s(&call["x"]);
    match call["op"].as_str().unwrap() {
        "add_rows" => {
            let n = call.get("n").map_or(shape(&call["x"])[0], |v| num(v) as usize);
            h.add_rows(&x, n)
        }
        "add_conv" => {
            let c = &call["conv"];
            let opt = |k: &str| c.get(k).map(ints);
            let geo = ConvGeometry {
                kernel_shape: ints(&c["kernel_shape"]),
                strides: opt("strides"),
                pads: opt("pads"),
                dilations: opt("dilations"),
            };
            let input_shape = call.get("input_shape").map_or_else(|| ints(&call["x"]["shape"]), ints);
            h.add_conv(&x, &input_shape, &geo)
        }
        op => panic!("unknown call {op}"),
    }
}

fn weight(case: &Value) -> (Param, View) {
    let p = Param::from_slice(&f32s(&case["param"]), &shape(&case["param"])).unwrap();
    let v = match &case["view"] {
        Value::Null => View::from_param(&p),
        v => View::new(&p, &ints(&v["shape"]), &ints(&v["stride"])).unwrap(),
    };
    (p, v)
}

fn run(case: &Value) -> Result<(), String> {
    let hs = &case["hessian"];
    let mut h = Hessian::new(num(&hs["cols"]) as usize).map_err(|e| e.to_string())?;
    let calls = hs["calls"].as_array().unwrap();
    let expect = &case["expect"];
    let err_kind = expect.get("error").and_then(Value::as_str);
    let err_where = expect.get("where").and_then(Value::as_str);
    for (i, call) in calls.iter().enumerate() {
        let before = (h.count(), h.matrix().unwrap());
        match (hessian_call(&mut h, call), err_where == Some("call") && i + 1 == calls.len()) {
            (Ok(()), false) => {}
            (Err(e), true) => {
                kind_is(&e, err_kind.unwrap(), "Hessian call")?;
                if (h.count(), h.matrix().unwrap()) != before {
                    return Err("a refused Hessian call changed the Hessian".into());
                }
                return Ok(());
            }
            (Ok(()), true) => return Err(format!("Hessian call {i} succeeded, expected {}", err_kind.unwrap())),
            (Err(e), false) => return Err(format!("Hessian call {i} failed: {e}")),
        }
    }
    let op = case["op"].as_str().unwrap();
    match op {
        "Hessian.add_rows" | "Hessian.add_conv" => {
            if h.count() != num(&expect["count"]) as u64 {
                return Err(format!("count {} != {}", h.count(), expect["count"]));
            }
            close(case, "matrix", &h.matrix().unwrap(), &expect["matrix"])?;
            close(case, "input_norms", &h.input_norms(), &expect["input_norms"])
        }
        "wanda_scores" => {
            let (p, v) = weight(case);
            let scores = match (wanda_scores(&v, &h), err_kind) {
                (Err(e), Some(k)) => return kind_is(&e, k, "wandaScores"),
                (Ok(_), Some(k)) => return Err(format!("wandaScores succeeded, expected {k}")),
                (Err(e), None) => return Err(format!("wandaScores failed: {e}")),
                (Ok(s), None) => s,
            };
            close(case, "scores", &scores, &expect["scores"])?;
            let (rows, cols) = (v.shape()[0], v.shape()[1]);
            let args = &case["args"];
            if let Some(s) = args.get("sparsity") {
                // Scores scattered to param layout, then per-row top-k by the library's scopes.
                let mut values = vec![0.0f32; p.numel()];
                let mut i = 0;
                for_each_offset(v.shape(), v.stride(), |o| {
                    values[o] = scores[i];
                    i += 1;
                });
                let spec = BlockSpec::new(v.clone(), &[1, 1], None).unwrap();
                let scope = ScopeSpec::new(BlockNode::Spec(spec), &[1, -1], None).unwrap();
                let nnz = scope.sparsity_to_nnz(num(s)).unwrap();
                let vals: [&[f32]; 1] = [&values];
                let masks = scope.get_masks(nnz, Some(&vals), None).unwrap();
                if masks[0] != u8s(&expect["mask"]) {
                    return Err("wanda unstructured mask differs".into());
                }
            }
            if let Some(nm) = args.get("nm") {
                let nm = ints(nm);
                let m = sparsekit_wasm::nm::create_asp_mask(&scores, &[rows, cols], &format!("m{}n{}_1d", nm[1], nm[0])).unwrap();
                if m != u8s(&expect["nm_mask"]) {
                    return Err("wanda N:M mask differs".into());
                }
            }
            Ok(())
        }
        "sparse_gpt" => {
            let (p, v) = weight(case);
            let args = &case["args"];
            let opts = SparseGptOptions {
                sparsity: args.get("sparsity").map(num),
                nm: args.get("nm").map(|x| {
                    let v = ints(x);
                    (v[0], v[1])
                }),
                keep: args.get("keep").map(u8s),
                block_size: args.get("block_size").map(|x| num(x) as i64),
                perc_damp: args.get("perc_damp").map(num),
                refit: args.get("refit").map(|x| num(x) as i64),
            };
            let data0 = p.data().clone();
            let h0 = (h.count(), h.matrix().unwrap());
            let w0 = if v.ndim() == 2 { v.values().unwrap() } else { vec![] };
            let res = sparse_gpt(&v, &h, &opts);
            if (h.count(), h.matrix().unwrap()) != h0 {
                return Err("sparseGpt changed the Hessian".into());
            }
            let mask = match (res, err_kind) {
                (Err(e), Some(k)) => {
                    kind_is(&e, k, "sparseGpt")?;
                    let same = p.data().iter().zip(&data0).all(|(a, b)| a.to_bits() == b.to_bits());
                    return if same { Ok(()) } else { Err("a refused sparseGpt changed the weights".into()) };
                }
                (Ok(_), Some(k)) => return Err(format!("sparseGpt succeeded, expected {k}")),
                (Err(e), None) => return Err(format!("sparseGpt failed: {e}")),
                (Ok(m), None) => m,
            };
            if mask != u8s(&expect["mask"]) {
                let diff = mask.iter().zip(u8s(&expect["mask"])).filter(|(a, b)| **a != *b).count();
                return Err(format!("mask differs in {diff} places"));
            }
            let after = p.data().clone();
            close(case, "param", &after, &expect["param"])?;
            let mut covered = vec![false; after.len()];
            for_each_offset(v.shape(), v.stride(), |o| covered[o] = true);
            if (0..after.len()).any(|i| !covered[i] && after[i].to_bits() != data0[i].to_bits()) {
                return Err("an element outside the view changed".into());
            }
            let rel = rel_recon_error(&w0, &v.values().unwrap(), &h).unwrap();
            let (exp, tol) = (num(&expect["rel_recon_error"]), Tol::of(case, "rel_recon_error"));
            if cases::close(rel, exp, tol) {
                Ok(())
            } else {
                Err(format!("rel_recon_error: got {rel}, expected {exp}"))
            }
        }
        op => Err(format!("unknown op {op}")),
    }
}

/// Whether `op` belongs to this family.
pub fn handles(op: &str) -> bool {
    op.starts_with("Hessian.") || op == "wanda_scores" || op == "sparse_gpt"
}

/// One calibration case: the expected results, or the expected error at the step it names.
pub fn run_case(case: &Value) -> Outcome {
    match run(case) {
        Ok(()) => Outcome::Pass,
        Err(m) => Outcome::Fail(m),
    }
}
