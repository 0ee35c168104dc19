//! The GEMMs (f32 `C += A·B` of calibration and training, f64 `C -= A·B` of the blocked
//! factorizations) and the Hessian update's register tile: SIMD128 against the scalar oracle,
//! bit for bit.
//! Only meaningful on wasm32 with simd128 (run by scripts/test.sh with `wasm-pack test`, see
//! `tests/wasm_kernels.rs`).
#![cfg(all(target_arch = "wasm32", target_feature = "simd128"))]

#[path = "support/wasm_inputs.rs"]
mod wasm_inputs;

use wasm_bindgen_test::*;
use wasm_inputs::{inputs, same};

wasm_bindgen_test_configure!(run_in_browser);

/// The calibration GEMM (`C += A·B`): SIMD128 against the scalar oracle for every remainder
/// of the 4x8 register tile, strided `A` (the Hessian's `Xᵀ`), `upper` mode and NaN/∞ inputs,
/// one running sum and chunked sums (chunks shorter than, equal to and longer than `k`), and
/// the row-band split used by threads (`gemm_acc`) against one serial call; from 16 rows `B` (and a
/// transposed `A`) are read through packed copies, in panels of columns when `k` is deep.
#[wasm_bindgen_test]
fn gemm_bit_exact() {
    use sparsekit_wasm::test_support::gemm::{gemm_acc, gemm_acc_scalar, Gemm};
    use sparsekit_wasm::test_support::simd::gemm_acc_serial as gemm_acc_simd;
    for (seed, m, n, k) in [
        (1u64, 1, 1, 1),
        (2, 4, 8, 3),
        (3, 5, 13, 7),
        (4, 9, 17, 64),
        (5, 16, 16, 16),
        (6, 3, 2, 5),
        (7, 33, 70, 9),
        (8, 12, 1, 4),
        // deep enough that B is packed in several panels of strips (the last one short), the rest in place
        (9, 21, 70, 2100),
        (10, 24, 24, 3000),
    ] {
        for transposed_a in [false, true] {
            for (upper, kc) in [false, true].into_iter().flat_map(|u| [0, 3, 16, 100].map(move |kc| (u, kc))) {
                if upper && m != n {
                    continue;
                }
                let (a_rs, a_ks) = if transposed_a { (1, m) } else { (k, 1) };
                let a = inputs(m * k, seed);
                let b = inputs(k * (n + 3), seed + 11);
                let ldc = n + 2;
                let c0 = inputs(m * ldc, seed + 23);
                let g = Gemm { m, n, k, a_rs, a_ks, ldb: n + 3, ldc, upper, kc };
                let (mut x, mut y, mut z) = (c0.clone(), c0.clone(), c0.clone());
                gemm_acc_scalar(&g, &a, &b, &mut x);
                gemm_acc_simd(&g, &a, &b, &mut y);
                gemm_acc(&g, &a, &b, &mut z);
                for i in 0..x.len() {
                    assert!(
                        same(x[i], y[i]) && same(x[i], z[i]),
                        "m{m} n{n} k{k} kc{kc} upper {upper} c[{i}]: scalar {:?} simd {:?} dispatched {:?}",
                        x[i],
                        y[i],
                        z[i]
                    );
                }
            }
        }
    }
}

/// A packed panel of `B` (what each thread's band of rows runs over, `gemm_acc` packing it once):
/// the SIMD128 panel against the scalar one, bit for bit, for bands shorter than the 16 rows from
/// which the serial path packs, remainders of the 4-row tile, a transposed `A`, and chunked sums.
#[wasm_bindgen_test]
fn gemm_panel_bit_exact() {
    use sparsekit_wasm::test_support::gemm::Gemm;
    use sparsekit_wasm::test_support::scalar::gemm_acc_panel as panel_scalar;
    use sparsekit_wasm::test_support::simd::gemm_acc_panel as panel_simd;
    for (seed, m, n, k, j0, j1) in [(1u64, 1, 8, 3, 0, 8), (2, 5, 24, 7, 8, 24), (3, 9, 19, 300, 0, 16), (4, 16, 40, 33, 16, 40)] {
        for transposed_a in [false, true] {
            for kc in [0, 3, 100] {
                let (a_rs, a_ks) = if transposed_a { (1, m) } else { (k, 1) };
                let ldb = n + 3;
                let a = inputs(m * k, seed);
                let b = inputs(k * ldb, seed + 11);
                // the layout Gemm::pack_panel writes: strip s of the panel as k rows of its 8 columns
                let mut pack = Vec::with_capacity((j1 - j0) * k);
                for j in (j0..j1).step_by(8) {
                    for p in 0..k {
                        pack.extend_from_slice(&b[p * ldb + j..p * ldb + j + 8]);
                    }
                }
                let ldc = n + 2;
                let c0 = inputs(m * ldc, seed + 23);
                let g = Gemm { m, n, k, a_rs, a_ks, ldb, ldc, upper: false, kc };
                let (mut x, mut y) = (c0.clone(), c0);
                panel_scalar(&g, &a, &pack, j0, j1, &mut x);
                panel_simd(&g, &a, &pack, j0, j1, &mut y);
                for i in 0..x.len() {
                    assert!(same(x[i], y[i]), "m{m} n{n} k{k} kc{kc} panel {j0}..{j1} c[{i}]: scalar {:?} simd {:?}", x[i], y[i]);
                }
            }
        }
    }
}

/// The f64 update of the blocked Cholesky and triangular inverse (`C -= A·B`): the tiled,
/// dispatched kernel (f64x2 register tiles) against its one-element oracle, every remainder,
/// both shapes.
#[wasm_bindgen_test]
fn sub_mul_f64_bit_exact() {
    use sparsekit_wasm::test_support::gemm_f64::{sub_mul, sub_mul_scalar, SubMul};
    for (seed, m, n, k, lower) in
        [(1u64, 1, 1, 1, false), (2, 5, 7, 3, false), (3, 13, 13, 9, true), (4, 70, 300, 64, false), (5, 261, 261, 17, true)]
    {
        let (lda, ldb, ldc) = (k + 3, n + 1, n + 2);
        let a: Vec<f64> = inputs(m * lda, seed).iter().map(|&v| v as f64 * 1.1).collect();
        let b: Vec<f64> = inputs(k * ldb, seed + 11).iter().map(|&v| v as f64 * 0.9).collect();
        let c0: Vec<f64> = inputs(m * ldc, seed + 23).iter().map(|&v| v as f64).collect();
        let g = SubMul { m, n, k, lda, ldb, ldc, lower };
        let (mut x, mut y) = (c0.clone(), c0);
        sub_mul_scalar(&g, &a, &b, &mut x);
        // SAFETY: the buffers cover the shape; C is its own buffer.
        unsafe { sub_mul(&g, a.as_ptr(), b.as_ptr(), y.as_mut_ptr()) };
        for i in 0..x.len() {
            assert!(
                x[i].to_bits() == y[i].to_bits() || (x[i].is_nan() && y[i].is_nan()),
                "m{m} n{n} k{k} lower {lower} c[{i}]: {} vs {}",
                x[i],
                y[i]
            );
        }
    }
}

/// The Hessian update's register tile (4 x 8 f32 sums of up to one chunk of packed rows, each
/// widened and added to f64): SIMD128 against the scalar oracle, bit for bit, for odd and even
/// row counts (the SIMD loop takes two rows per trip) up to a whole chunk, NaN/∞ inputs included.
#[wasm_bindgen_test]
fn syrk_tile_bit_exact() {
    use sparsekit_wasm::test_support::scalar::syrk_tile as tile_scalar;
    use sparsekit_wasm::test_support::simd::syrk_tile as tile_simd;
    use sparsekit_wasm::test_support::syrk::{CHUNK, PANEL, STRIP};
    for (seed, k) in [(1u64, 1usize), (2, 2), (3, 3), (4, 17), (5, CHUNK - 1), (6, CHUNK)] {
        // `a` starts at the second half of its panel, as the odd strips of a tile do.
        let a = inputs(k * PANEL + STRIP, seed);
        let b = inputs(k * PANEL, seed + 11);
        let ldh = PANEL + 3;
        let h0: Vec<f64> = inputs(STRIP * ldh, seed + 23).iter().map(|&v| v as f64 * 1.5).collect();
        let (mut x, mut y) = (h0.clone(), h0);
        // SAFETY: `a` covers k rows of PANEL from offset STRIP, `b` k rows, `h` STRIP rows of ldh.
        unsafe {
            tile_scalar(a.as_ptr().add(STRIP), b.as_ptr(), k, x.as_mut_ptr(), ldh);
            tile_simd(a.as_ptr().add(STRIP), b.as_ptr(), k, y.as_mut_ptr(), ldh);
        }
        for i in 0..x.len() {
            assert!(x[i].to_bits() == y[i].to_bits() || (x[i].is_nan() && y[i].is_nan()), "k{k} h[{i}]: {} vs {}", x[i], y[i]);
        }
    }
}
