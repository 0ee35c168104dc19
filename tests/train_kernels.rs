//! The training core's convolutions and matrix products on the kernels layer are bit-identical
//! to the scalar oracle: a Conv / ConvTranspose / MatMul forward and backward equal, bit for
//! bit, the same im2col + `gemm_acc_scalar` arithmetic written out here. Natively this pins the
//! op's own order of operations; on wasm32 with simd128 (the `gemm` SIMD128 path) it is the
//! SIMD-vs-scalar check of tests/wasm_gemm.rs:
//! `RUSTC_BOOTSTRAP=1 RUSTFLAGS="-C target-feature=+simd128" CARGO_UNSTABLE_BUILD_STD=std,panic_abort \
//!   wasm-pack test --headless --chrome --mode no-install -- --test train_kernels`

use sparsekit_wasm::test_support::conv_band;
use sparsekit_wasm::test_support::gemm::{gemm_acc_scalar, Gemm, SUM_CHUNK};
use sparsekit_wasm::test_support::im2col::{col2im_acc, im2col, transpose, ConvGeom};
use sparsekit_wasm::train::{Attr, Graph, GraphSpec, InitSpec, NodeSpec, Tensor};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::*;
#[cfg(target_arch = "wasm32")]
wasm_bindgen_test_configure!(run_in_browser);

#[path = "support/kernel_data.rs"]
mod kernel_data;
use kernel_data::{bits, data};

/// Forward and parameter gradients (x, w) of a one-node graph, with output gradient `gy`.
fn run(node: NodeSpec, x: (&[usize], &[f32]), w: (&[usize], &[f32]), gy_seed: u64) -> (Tensor, Vec<Tensor>) {
    let inits = vec![
        InitSpec { name: "x".into(), dims: x.0.to_vec(), floats: Some(x.1.to_vec()), ints: None },
        InitSpec { name: "w".into(), dims: w.0.to_vec(), floats: Some(w.1.to_vec()), ints: None },
    ];
    let spec = GraphSpec { nodes: vec![node], inputs: vec![], outputs: vec!["y".into()], frozen: vec![] };
    let mut g = Graph::new(&spec, inits).unwrap();
    let y = g.forward(vec![]).unwrap().remove(0);
    let gy = Tensor { shape: y.shape.clone(), data: data(y.len(), gy_seed, 1.0) };
    let grads = g.backward(vec![gy]).unwrap();
    (y, grads)
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn conv_matches_the_scalar_oracle_bit_for_bit() {
    // grouped, strided, padded, dilated: 2 images, 2 groups of 3 -> 4 channels
    let (n, c, h, w, co, g) = (2, 6, 9, 11, 8, 2);
    let gm = ConvGeom { c: c / g, h, w, kh: 3, kw: 3, sh: 2, sw: 1, ph: 1, pw: 2, dh: 1, dw: 2, oh: 0, ow: 0 };
    let gm = ConvGeom { oh: (h + 1 + 1 - 3) / 2 + 1, ow: (w + 2 + 2 - 5) + 1, ..gm };
    let x = data(n * c * h * w, 1, 1.0);
    let wt = data(co * (c / g) * 9, 2, 1.0);
    let attrs = [
        ("group", Attr::Int(g as i64)),
        ("strides", Attr::Ints(vec![2, 1])),
        ("pads", Attr::Ints(vec![1, 2, 1, 2])),
        ("dilations", Attr::Ints(vec![1, 2])),
    ];
    let (y, grads) = run(NodeSpec::new("Conv", &["x", "w"], &["y"], &attrs), (&[n, c, h, w], &x), (&[co, c / g, 3, 3], &wt), 3);
    let gy = data(y.len(), 3, 1.0);

    let (cg, og, ckk, ohw, xin) = (c / g, co / g, gm.rows(), gm.cols(), (c / g) * h * w);
    assert_eq!(y.shape, vec![n, co, gm.oh, gm.ow]);
    let (mut want_y, mut want_dx, mut want_dw) = (vec![0.0; y.len()], vec![0.0; x.len()], vec![0.0; wt.len()]);
    let mut col = vec![0.0; ckk * ohw];
    let mut colt = vec![0.0; ckk * ohw];
    for gi in 0..g {
        for ni in 0..n {
            let xs = &x[(ni * g + gi) * xin..][..xin];
            let ws = &wt[gi * og * ckk..][..og * ckk];
            im2col(&gm, xs, &mut col);
            // the forward's sums in chunks of a few input channels' rows (conv_band::forward_chunk)
            let f = Gemm { m: og, n: ohw, k: ckk, a_rs: ckk, a_ks: 1, ldb: ohw, ldc: ohw, upper: false, kc: conv_band::forward_chunk(&gm) };
            gemm_acc_scalar(&f, ws, &col, &mut want_y[(ni * g + gi) * og * ohw..][..og * ohw]);
            let gys = &gy[(ni * g + gi) * og * ohw..][..og * ohw];
            let mut dcol = vec![0.0; ckk * ohw];
            let bx = Gemm { m: ckk, n: ohw, k: og, a_rs: 1, a_ks: ckk, ldb: ohw, ldc: ohw, upper: false, kc: 0 };
            gemm_acc_scalar(&bx, ws, gys, &mut dcol);
            col2im_acc(&gm, &dcol, &mut want_dx[(ni * g + gi) * xin..][..xin]);
            transpose(&col, ckk, ohw, &mut colt);
            let bw = Gemm { m: og, n: ckk, k: ohw, a_rs: ohw, a_ks: 1, ldb: ckk, ldc: ckk, upper: false, kc: SUM_CHUNK };
            gemm_acc_scalar(&bw, gys, &colt, &mut want_dw[gi * og * ckk..][..og * ckk]);
        }
    }
    let _ = cg;
    assert_eq!(bits(&y.data), bits(&want_y), "forward");
    assert_eq!(bits(&grads[0].data), bits(&want_dx), "dx");
    assert_eq!(bits(&grads[1].data), bits(&want_dw), "dw");
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn matmul_matches_the_scalar_oracle_bit_for_bit() {
    // m past SUM_CHUNK: dB (a sum over the rows) in two chunks; the forward and dA one running sum
    let (m, k, nn) = (150, 260, 21);
    let a = data(m * k, 4, 1.0);
    let b = data(k * nn, 5, 1.0);
    let (y, grads) = run(NodeSpec::new("MatMul", &["x", "w"], &["y"], &[]), (&[m, k], &a), (&[k, nn], &b), 6);
    let gy = data(m * nn, 6, 1.0);
    let mut want = vec![0.0; m * nn];
    gemm_acc_scalar(&Gemm { m, n: nn, k, a_rs: k, a_ks: 1, ldb: nn, ldc: nn, upper: false, kc: 0 }, &a, &b, &mut want);
    assert_eq!(bits(&y.data), bits(&want));
    // dA = gy · Bᵀ, dB = Aᵀ · gy
    let mut bt = vec![0.0; k * nn];
    transpose(&b, k, nn, &mut bt);
    let mut da = vec![0.0; m * k];
    gemm_acc_scalar(&Gemm { m, n: k, k: nn, a_rs: nn, a_ks: 1, ldb: k, ldc: k, upper: false, kc: 0 }, &gy, &bt, &mut da);
    let mut db = vec![0.0; k * nn];
    gemm_acc_scalar(&Gemm { m: k, n: nn, k: m, a_rs: 1, a_ks: k, ldb: nn, ldc: nn, upper: false, kc: SUM_CHUNK }, &a, &gy, &mut db);
    assert_eq!(bits(&grads[0].data), bits(&da), "dA");
    assert_eq!(bits(&grads[1].data), bits(&db), "dB");
    // The same rows as activations `[batch.., rows, k]` against the one weight matrix (a
    // transformer's `[sentences, tokens, features]`, `B` as `[k, n]` or `[1, k, n]`): one product
    // over every row, the bits of the 2-D one — dB included, summed over all rows in chunks.
    for (xs, ws) in [(vec![3, 50, k], vec![k, nn]), (vec![2, 3, 25, k], vec![k, nn]), (vec![3, 50, k], vec![1, k, nn])] {
        let (y3, g3) = run(NodeSpec::new("MatMul", &["x", "w"], &["y"], &[]), (&xs, &a), (&ws, &b), 6);
        let mut ys = xs[..xs.len() - 1].to_vec();
        ys.push(nn);
        assert_eq!(y3.shape, ys, "{xs:?} x {ws:?}");
        assert_eq!(bits(&y3.data), bits(&want), "forward {xs:?} x {ws:?}");
        assert_eq!(bits(&g3[0].data), bits(&da), "dA {xs:?} x {ws:?}");
        assert_eq!(bits(&g3[1].data), bits(&db), "dB {xs:?} x {ws:?}");
    }
}

/// Depthwise convolutions take the direct path (`kernels::depthwise`, no column matrix); its
/// forward, dX and dW must still be the im2col + GEMM oracle's bits: strides, asymmetric pads,
/// dilations, kernels wider than four columns, a bias, trailing pads the output never reaches.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn depthwise_conv_matches_the_im2col_oracle_bit_for_bit() {
    // (channels, h, w, kh, kw, strides, pads [t, l, b, r], dilations)
    let cases = [
        (4, 9, 11, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1]),
        (3, 10, 9, 3, 3, [2, 2], [1, 1, 1, 1], [1, 1]),
        (2, 12, 13, 5, 5, [1, 2], [2, 0, 1, 3], [1, 1]),
        (3, 11, 14, 3, 7, [2, 1], [0, 3, 2, 3], [2, 1]),
        (2, 9, 10, 3, 3, [1, 1], [2, 2, 2, 2], [2, 3]),
        (2, 7, 8, 2, 2, [2, 2], [0, 0, 1, 1], [1, 1]),
        // a plane of 20 rows of 23 outputs: dW sums it a row at a time
        (2, 20, 23, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1]),
    ];
    for (ci, &(c, h, w, kh, kw, s, pads, d)) in cases.iter().enumerate() {
        let n = 2;
        let out = |len: usize, k: usize, s: usize, d: usize, p0: usize, p1: usize| (len + p0 + p1 - ((k - 1) * d + 1)) / s + 1;
        let (oh, ow) = (out(h, kh, s[0], d[0], pads[0], pads[2]), out(w, kw, s[1], d[1], pads[1], pads[3]));
        let gm = ConvGeom { c: 1, h, w, kh, kw, sh: s[0], sw: s[1], ph: pads[0], pw: pads[1], dh: d[0], dw: d[1], oh, ow };
        let seed = 10 * ci as u64;
        let (x, wt, bias) = (data(n * c * h * w, seed + 1, 1.0), data(c * kh * kw, seed + 2, 1.0), data(c, seed + 3, 1.0));
        let attrs = [
            ("group", Attr::Int(c as i64)),
            ("strides", Attr::Ints(s.iter().map(|&v| v as i64).collect())),
            ("pads", Attr::Ints(pads.iter().map(|&v| v as i64).collect())),
            ("dilations", Attr::Ints(d.iter().map(|&v| v as i64).collect())),
        ];
        let inits = vec![
            InitSpec { name: "x".into(), dims: vec![n, c, h, w], floats: Some(x.clone()), ints: None },
            InitSpec { name: "w".into(), dims: vec![c, 1, kh, kw], floats: Some(wt.clone()), ints: None },
            InitSpec { name: "b".into(), dims: vec![c], floats: Some(bias.clone()), ints: None },
        ];
        let spec = GraphSpec {
            nodes: vec![NodeSpec::new("Conv", &["x", "w", "b"], &["y"], &attrs)],
            inputs: vec![],
            outputs: vec!["y".into()],
            frozen: vec![],
        };
        let mut g = Graph::new(&spec, inits).unwrap();
        let y = g.forward(vec![]).unwrap().remove(0);
        assert_eq!(y.shape, vec![n, c, oh, ow], "case {ci}");
        let gy = data(y.len(), seed + 4, 1.0);
        let grads = g.backward(vec![Tensor { shape: y.shape.clone(), data: gy.clone() }]).unwrap();

        let (kk, ohw, hw) = (kh * kw, oh * ow, h * w);
        let (mut want_y, mut want_dx, mut want_dw) = (vec![0.0; y.len()], vec![0.0; x.len()], vec![0.0; wt.len()]);
        let (mut col, mut colt) = (vec![0.0; kk * ohw], vec![0.0; kk * ohw]);
        for ch in 0..c {
            for ni in 0..n {
                let t = ni * c + ch;
                let (xs, ws, gys) = (&x[t * hw..][..hw], &wt[ch * kk..][..kk], &gy[t * ohw..][..ohw]);
                im2col(&gm, xs, &mut col);
                let ys = &mut want_y[t * ohw..][..ohw];
                ys.fill(bias[ch]);
                gemm_acc_scalar(&Gemm { m: 1, n: ohw, k: kk, a_rs: kk, a_ks: 1, ldb: ohw, ldc: ohw, upper: false, kc: 0 }, ws, &col, ys);
                let mut dcol = vec![0.0; kk * ohw];
                gemm_acc_scalar(
                    &Gemm { m: kk, n: ohw, k: 1, a_rs: 1, a_ks: kk, ldb: ohw, ldc: ohw, upper: false, kc: SUM_CHUNK },
                    ws,
                    gys,
                    &mut dcol,
                );
                col2im_acc(&gm, &dcol, &mut want_dx[t * hw..][..hw]);
                transpose(&col, kk, ohw, &mut colt);
                let bw = Gemm { m: 1, n: kk, k: ohw, a_rs: ohw, a_ks: 1, ldb: kk, ldc: kk, upper: false, kc: ow };
                gemm_acc_scalar(&bw, gys, &colt, &mut want_dw[ch * kk..][..kk]);
            }
        }
        assert_eq!(bits(&y.data), bits(&want_y), "case {ci}: forward");
        let names: Vec<&str> = g.params.iter().map(|p| p.name.as_str()).collect();
        let at = |nm: &str| &grads[names.iter().position(|p| *p == nm).unwrap()].data;
        assert_eq!(bits(at("x")), bits(&want_dx), "case {ci}: dx");
        assert_eq!(bits(at("w")), bits(&want_dw), "case {ci}: dw");
    }
}

/// The chunked GEMM (`kc > 0`) is its definition element by element: each chunk of `kc`
/// products summed from zero in order, the chunk sums added to `c` in order. On a sum as long as
/// a weight gradient's it is closer to the exact value than one running sum.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn chunked_gemm_is_its_definition_and_more_precise() {
    let (m, n, k, kc) = (5, 7, 20_000, SUM_CHUNK);
    let (a, b, c0) = (data(m * k, 7, 1.0), data(k * n, 8, 1.0), data(m * n, 9, 1.0));
    let g = Gemm { m, n, k, a_rs: k, a_ks: 1, ldb: n, ldc: n, upper: false, kc };
    let (mut got, mut run) = (c0.clone(), c0.clone());
    gemm_acc_scalar(&g, &a, &b, &mut got);
    gemm_acc_scalar(&Gemm { kc: 0, ..g }, &a, &b, &mut run);
    let (mut err_chunked, mut err_running) = (0.0f64, 0.0f64);
    for i in 0..m {
        for j in 0..n {
            let mut want = c0[i * n + j];
            for p0 in (0..k).step_by(kc) {
                let mut s = 0.0f32;
                for p in p0..(p0 + kc).min(k) {
                    s += a[i * k + p] * b[p * n + j];
                }
                want += s;
            }
            assert_eq!(got[i * n + j].to_bits(), want.to_bits(), "c[{i}][{j}]");
            let exact = c0[i * n + j] as f64 + (0..k).map(|p| a[i * k + p] as f64 * b[p * n + j] as f64).sum::<f64>();
            err_chunked += (got[i * n + j] as f64 - exact).powi(2);
            err_running += (run[i * n + j] as f64 - exact).powi(2);
        }
    }
    assert!(err_chunked * 4.0 < err_running, "squared error chunked {err_chunked:e}, running {err_running:e}");
}
