//! `kernels::conv_band` (a convolution a band of input channels at a time) gives the bits of the
//! whole-matrix path it replaced: im2col of every channel, then one `gemm_acc_scalar` over the
//! full depth (forward), the full column gradient then col2im (dX), and `dY · colᵀ` or its
//! transpose per image (dW); the forward's sums in chunks of a few channels, closer to float64
//! than one running sum. Geometries with several bands (odd sizes, strides 1 and 2, pads,
//! dilations, rows per band not a multiple of 4, more output channels than rows) and with one.
//! On wasm32 with simd128 the same file checks the SIMD128 GEMM against the scalar oracle.

use sparsekit_wasm::test_support::conv_band::{self, band_channels};
use sparsekit_wasm::test_support::gemm::{gemm_acc_scalar, Gemm, SUM_CHUNK};
use sparsekit_wasm::test_support::im2col::{col2im_acc, im2col, transpose, ConvGeom};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::*;
#[cfg(target_arch = "wasm32")]
wasm_bindgen_test_configure!(run_in_browser);

#[path = "support/kernel_data.rs"]
mod kernel_data;
use kernel_data::{bits, data};

/// (channels, h, w, kh, kw, strides, pads [t, l, b, r], dilations, output channels)
type Case = (usize, usize, usize, usize, usize, [usize; 2], [usize; 4], [usize; 2], usize);

fn geom(&(c, h, w, kh, kw, s, p, d, _): &Case) -> ConvGeom {
    let out = |len: usize, k: usize, s: usize, d: usize, p0: usize, p1: usize| (len + p0 + p1 - ((k - 1) * d + 1)) / s + 1;
    let (oh, ow) = (out(h, kh, s[0], d[0], p[0], p[2]), out(w, kw, s[1], d[1], p[1], p[3]));
    ConvGeom { c, h, w, kh, kw, sh: s[0], sw: s[1], ph: p[0], pw: p[1], dh: d[0], dw: d[1], oh, ow }
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn banded_conv_matches_the_whole_matrix_path_bit_for_bit() {
    let cases: [Case; 8] = [
        // det's neck: 3x3, pad 1, 24 outputs (several bands of 4 channels, 36 rows)
        (40, 20, 20, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 24),
        // stride 2, odd sizes, asymmetric pads
        (19, 47, 41, 3, 3, [2, 2], [1, 0, 1, 2], [1, 1], 7),
        // 5x5 dilated, stride (1, 2): rows per channel 25 (band of 4 channels)
        (13, 21, 19, 5, 5, [1, 2], [2, 3, 1, 0], [2, 1], 5),
        // 2x4 kernel (rows per channel 8), more outputs than rows: dW not transposed
        (12, 60, 61, 2, 4, [2, 1], [0, 1, 0, 2], [1, 2], 100),
        // 1x3 (3 rows per channel), no pad
        (33, 18, 40, 1, 3, [1, 1], [0, 0, 0, 0], [1, 1], 9),
        // 1x1 with stride 2 (unfolded, not the identity)
        (200, 60, 60, 1, 1, [2, 2], [0, 0, 0, 0], [1, 1], 12),
        // 1x1 identity (one band, no columns)
        (10, 9, 7, 1, 1, [1, 1], [0, 0, 0, 0], [1, 1], 6),
        // small: one band
        (3, 11, 13, 3, 3, [2, 2], [1, 1, 1, 1], [1, 1], 16),
    ];
    let mut banded = 0;
    for (ci, case) in cases.iter().enumerate() {
        let (g, co, n) = (geom(case), case.8, 2);
        let (ckk, ohw, xin) = (g.rows(), g.cols(), g.c * g.h * g.w);
        if band_channels(&g) < g.c {
            banded += 1;
        }
        let seed = 10 * ci as u64;
        let (x, w, gy, bias) =
            (data(n * xin, seed + 1, 1.0), data(co * ckk, seed + 2, 1.0), data(n * co * ohw, seed + 3, 1.0), data(co, seed + 4, 1.0));

        let (mut want_y, mut want_dx, mut want_dw) = (vec![0.0; n * co * ohw], vec![0.0; n * xin], vec![0.0; co * ckk]);
        let (mut col, mut colt) = (vec![0.0; ckk * ohw], vec![0.0; ckk * ohw]);
        for ni in 0..n {
            let (xs, gys) = (&x[ni * xin..][..xin], &gy[ni * co * ohw..][..co * ohw]);
            im2col(&g, xs, &mut col);
            let ys = &mut want_y[ni * co * ohw..][..co * ohw];
            for (o, row) in ys.chunks_mut(ohw).enumerate() {
                row.fill(bias[o]);
            }
            let kc = conv_band::forward_chunk(&g);
            gemm_acc_scalar(&Gemm { m: co, n: ohw, k: ckk, a_rs: ckk, a_ks: 1, ldb: ohw, ldc: ohw, upper: false, kc }, &w, &col, ys);
            let mut dcol = vec![0.0; ckk * ohw];
            gemm_acc_scalar(
                &Gemm { m: ckk, n: ohw, k: co, a_rs: 1, a_ks: ckk, ldb: ohw, ldc: ohw, upper: false, kc: 0 },
                &w,
                gys,
                &mut dcol,
            );
            col2im_acc(&g, &dcol, &mut want_dx[ni * xin..][..xin]);
            transpose(&col, ckk, ohw, &mut colt);
            let bw = Gemm { m: co, n: ckk, k: ohw, a_rs: ohw, a_ks: 1, ldb: ckk, ldc: ckk, upper: false, kc: SUM_CHUNK };
            gemm_acc_scalar(&bw, gys, &colt, &mut want_dw);
        }

        let (mut y, mut dx, mut dw) = (vec![0.0; n * co * ohw], vec![0.0; n * xin], vec![0.0; co * ckk]);
        let mut acc = conv_band::WeightGrad::new(&g, co);
        for ni in 0..n {
            let (xs, gys) = (&x[ni * xin..][..xin], &gy[ni * co * ohw..][..co * ohw]);
            let ys = &mut y[ni * co * ohw..][..co * ohw];
            for (o, row) in ys.chunks_mut(ohw).enumerate() {
                row.fill(bias[o]);
            }
            conv_band::forward(&g, co, &w, xs, ys);
            conv_band::input_grad(&g, co, &w, gys, &mut dx[ni * xin..][..xin]);
            acc.add(xs, gys, &mut dw);
        }
        acc.finish(&mut dw);
        assert_eq!(bits(&y), bits(&want_y), "case {ci}: forward");
        assert_eq!(bits(&dx), bits(&want_dx), "case {ci}: dx");
        assert_eq!(bits(&dw), bits(&want_dw), "case {ci}: dw");
    }
    assert!(banded >= 6, "only {banded} cases ran in several bands");
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn bands_hold_whole_register_tiles_and_fit_the_budget() {
    for kk in [(1, 1), (1, 3), (2, 1), (3, 3), (5, 5), (2, 4), (7, 7)] {
        let g = ConvGeom {
            c: 500,
            h: 40,
            w: 40,
            kh: kk.0,
            kw: kk.1,
            sh: 1,
            sw: 1,
            ph: 0,
            pw: 0,
            dh: 1,
            dw: 1,
            oh: 40 - kk.0 + 1,
            ow: 40 - kk.1 + 1,
        };
        let cb = band_channels(&g);
        let rows = cb * kk.0 * kk.1;
        if g.is_identity() {
            assert_eq!(cb, g.c);
            continue;
        }
        assert_eq!(rows % 4, 0, "{kk:?}: {cb} channels");
        assert!(cb <= g.c && cb >= 1);
        // over the budget only when one minimal band (lcm(kh kw, 4) rows) is already over it
        let k = kk.0 * kk.1;
        let lcm = (1..=4).map(|m| m * k).find(|r| r % 4 == 0).unwrap();
        assert!(rows * g.cols() <= conv_band::BAND_FLOATS || rows == lcm, "{kk:?}: {cb} channels over budget");
    }
}

/// The forward sums each output in chunks of a few input channels' rows: on det's neck geometry
/// (3×3, 96 channels: 864 products per output, non-negative inputs as after a ReLU or HardSwish)
/// it stays within a bound of the float64 sum that one running f32 sum over the same rows, in
/// the same order, exceeds.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn forward_chunks_stay_closer_to_float64_than_a_running_sum() {
    let case: Case = (96, 20, 20, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 24);
    let (g, co) = (geom(&case), case.8);
    let (ckk, ohw) = (g.rows(), g.cols());
    assert_eq!(conv_band::forward_chunk(&g), 36, "4 channels of 9 rows");
    let x: Vec<f32> = data(g.c * g.h * g.w, 77, 1.0).iter().map(|v| v.abs()).collect();
    let w = data(co * ckk, 78, 1.0);
    let mut col = vec![0.0; ckk * ohw];
    im2col(&g, &x, &mut col);
    let exact: Vec<f64> =
        (0..co * ohw).map(|i| (0..ckk).map(|r| w[i / ohw * ckk + r] as f64 * col[r * ohw + i % ohw] as f64).sum()).collect();
    let top = exact.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let err = |y: &[f32]| y.iter().zip(&exact).fold(0.0f64, |m, (a, b)| m.max((*a as f64 - b).abs())) / top;
    let mut chunked = vec![0.0; co * ohw];
    conv_band::forward(&g, co, &w, &x, &mut chunked);
    let mut running = vec![0.0; co * ohw];
    gemm_acc_scalar(&Gemm { m: co, n: ohw, k: ckk, a_rs: ckk, a_ks: 1, ldb: ohw, ldc: ohw, upper: false, kc: 0 }, &w, &col, &mut running);
    let (ec, er) = (err(&chunked), err(&running));
    eprintln!("max |y - f64| / max |f64|: chunks {ec:.3e}, running sum {er:.3e}");
    assert!(ec <= BOUND, "chunked forward {ec:.3e} over {BOUND:.1e}");
    assert!(er > BOUND, "the running sum {er:.3e} is within {BOUND:.1e}: the case no longer tells the two apart");
}

/// Between the two on this case: about twice the chunked forward's distance, under half the
/// running sum's.
const BOUND: f64 = 4e-7;
