//! Browser tests (`wasm-pack test --headless --chrome`): the bindings and the core compiled to
//! wasm32 with SIMD128, running in Chromium.
#![cfg(target_arch = "wasm32")]

use js_sys::{Float32Array, Reflect};
use sparsekit_wasm::bindings::*;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn code_of(e: &JsValue) -> String {
    Reflect::get(e, &"code".into()).ok().and_then(|c| c.as_string()).unwrap_or_default()
}

fn name_of(e: &JsValue) -> String {
    Reflect::get(e, &"name".into()).ok().and_then(|c| c.as_string()).unwrap_or_default()
}

/// 33x40 with 11x8 blocks: a 3x5 grid; norms against a direct sum.
#[wasm_bindgen_test]
fn odd_shape_block_norms_and_threshold() {
    let data: Vec<f32> = (0..33 * 40).map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0).collect();
    let p = RawParam::new(&data, &[33.0, 40.0]).unwrap();
    let v = RawView::from_param(&p);
    let b = RawBlockSpec::new(&v, &[11.0, 8.0], None).unwrap();
    let norms = b.norms(Some(2.0), JsValue::UNDEFINED).unwrap();
    assert_eq!(norms.len(), 15);
    for (g, n) in norms.iter().enumerate() {
        let (gr, gc) = (g / 5, g % 5);
        let mut s = 0.0f64;
        for r in 0..11 {
            for c in 0..8 {
                let x = data[(gr * 11 + r) * 40 + gc * 8 + c] as f64;
                s += x * x;
            }
        }
        assert!((*n as f64 - s.sqrt()).abs() <= 1e-4 * s.sqrt(), "block {g}: {n} vs {}", s.sqrt());
    }
    // prune the blocks below the median norm
    let mut sorted = norms.clone();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let t = vec![sorted[7]; 15];
    b.hard_threshold(&t, JsValue::UNDEFINED).unwrap();
    let after = b.norms(Some(2.0), JsValue::UNDEFINED).unwrap();
    for (n0, n1) in norms.iter().zip(&after) {
        if *n0 < sorted[7] {
            assert_eq!(*n1, 0.0);
        } else {
            assert_eq!(n0, n1);
        }
    }
}

/// A transposed view writes through to the param; elements outside a sub-view stay untouched.
#[wasm_bindgen_test]
fn transposed_view_write_through() {
    let data: Vec<f32> = (1..=24).map(|i| i as f32).collect();
    let p = RawParam::new(&data, &[4.0, 6.0]).unwrap();
    // first 3 columns, transposed: shape (3, 4), strides (1, 6)
    let v = RawView::new(&p, &[3.0, 4.0], &[1.0, 6.0]).unwrap();
    v.apply_multiplier(&[2.0, 0.0, 10.0], &[1.0, 4.0]).unwrap();
    let out = p.to_array().to_vec();
    for r in 0..4 {
        for c in 0..6 {
            let x = data[r * 6 + c];
            let want = match c {
                0 => 2.0 * x,
                1 => 0.0,
                2 => 10.0 * x,
                _ => x,
            };
            assert_eq!(out[r * 6 + c], want, "({r},{c})");
        }
    }
}

/// Published value: conditioned H = 2, x = [3, 4], λ = 1 -> [2.7, 3.6].
#[wasm_bindgen_test]
fn adam_conditioned_soft_threshold() {
    let p = RawParam::new(&[3.0, 4.0], &[1.0, 2.0]).unwrap();
    let b = RawBlockSpec::new(&RawView::from_param(&p), &[-1.0, -1.0], None).unwrap();
    let h: JsValue = Float32Array::from(&[2.0f32, 2.0][..]).into();
    b.soft_threshold(&[1.0], h, JsValue::UNDEFINED).unwrap();
    let out = p.to_array().to_vec();
    assert!((out[0] - 2.7).abs() < 1e-4 && (out[1] - 3.6).abs() < 1e-4, "{out:?}");
}

/// Errors arrive as JS errors carrying the class name and stable code; nothing is written.
#[wasm_bindgen_test]
fn typed_errors_and_no_partial_write() {
    let p = RawParam::new(&[1.0, 2.0, 3.0, 4.0], &[2.0, 2.0]).unwrap();
    let e = RawView::new(&p, &[3.0, 2.0], &[2.0, 1.0]).err().expect("out of bounds");
    assert_eq!(code_of(&e), "view_out_of_bounds");
    assert!(e.is_instance_of::<js_sys::Error>());
    let b = RawBlockSpec::new(&RawView::from_param(&p), &[1.0, 1.0], None).unwrap();
    let e = b.hard_threshold(&[1.0, 2.0], JsValue::UNDEFINED).err().expect("wrong length");
    assert_eq!((code_of(&e).as_str(), name_of(&e).as_str()), ("shape_mismatch", "ShapeMismatchError"));
    let e = b.soft_threshold(&[1.0; 4], JsValue::UNDEFINED, serde_wasm_bindgen_opts("{\"eps\": -1}")).err().expect("eps");
    assert_eq!(code_of(&e), "invalid_eps");
    assert_eq!(p.to_array().to_vec(), vec![1.0, 2.0, 3.0, 4.0]);
}

fn serde_wasm_bindgen_opts(json: &str) -> JsValue {
    js_sys::JSON::parse(json).unwrap()
}

/// Scope top-k with ties to the lower index, through a coupling with a transposing order.
#[wasm_bindgen_test]
fn scope_topk_over_coupling() {
    let a = RawParam::new(&[1.0, 5.0, 5.0, 2.0], &[2.0, 2.0]).unwrap();
    let bp = RawParam::new(&[0.0, 0.0, 0.0, 0.0], &[2.0, 2.0]).unwrap();
    let sa = RawBlockSpec::new(&RawView::from_param(&a), &[1.0, 1.0], None).unwrap();
    let sb = RawBlockSpec::new(&RawView::from_param(&bp), &[1.0, 1.0], None).unwrap();
    let mut builder = RawCouplingBuilder::new();
    builder.add_spec(&sa);
    builder.add_spec(&sb);
    let orders = js_sys::JSON::parse("[[0,1],[1,0]]").unwrap();
    let c = builder.build_block_coupling(orders, None).unwrap();
    let s = RawScopeSpec::from_coupling(&c, &[], None).unwrap();
    s.hard_threshold(serde_wasm_bindgen_opts("{\"nnz\": 2}"), None, JsValue::UNDEFINED).unwrap();
    // norms 1,5,5,2: the two 5s survive (ties irrelevant here), 1 and 2 pruned
    assert_eq!(a.to_array().to_vec(), vec![0.0, 5.0, 5.0, 0.0]);
    let e = s.hard_threshold(serde_wasm_bindgen_opts("{\"nnz\": 5}"), None, JsValue::UNDEFINED).err().unwrap();
    assert_eq!(code_of(&e), "invalid_nnz");
    let e = s.hard_threshold(serde_wasm_bindgen_opts("{\"nnz\": 1, \"sparsity\": 0.5}"), None, JsValue::UNDEFINED).err().unwrap();
    assert_eq!(code_of(&e), "invalid_arguments");
}

/// 2:4 along input channels of a conv weight (K, C, R, S).
#[wasm_bindgen_test]
fn asp_mask_conv_weight() {
    let (k, c, r, s) = (2usize, 8usize, 3usize, 3usize);
    let w: Vec<f32> = (0..k * c * r * s).map(|i| ((i * 7919 % 97) as f32) - 48.0).collect();
    let mask = create_asp_mask(&w, &[k as f64, c as f64, r as f64, s as f64], None).unwrap();
    assert_eq!(mask.len(), w.len());
    // every group of 4 consecutive input channels at a fixed (k, r, s) keeps exactly 2
    for kk in 0..k {
        for rr in 0..r {
            for ss in 0..s {
                for g in 0..c / 4 {
                    let kept: u8 = (0..4).map(|j| mask[((kk * c + g * 4 + j) * r + rr) * s + ss]).sum();
                    assert_eq!(kept, 2);
                }
            }
        }
    }
    assert!(simd_compiled(), "the browser tests run the SIMD128 build");
}
