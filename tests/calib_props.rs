//! Properties of the calibration core that the conformance cases do not pin down: a keep-all
//! mask changes nothing, SparseGPT equals sequential optimal-brain-surgeon with explicit
//! inverses, strided and transposed views give the same bits as contiguous weights, and
//! `addConv` equals `addRows` of an explicitly built im2col matrix, and the tiled reconstruction
//! error equals its definition as one quadratic form per row.

#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use sparsekit_wasm::calib::{rel_recon_error, sparse_gpt, ConvGeometry, Hessian, SparseGptOptions};
use sparsekit_wasm::{Param, View};

#[path = "support/calib_data.rs"]
mod calib_data;
use calib_data::{hessian_of, rand_vec};

fn hessian(cols: usize, n: usize, seed: u64) -> Hessian {
    hessian_of(&rand_vec(seed, n * cols), cols)
}

/// Inverse of a small SPD matrix by Gauss-Jordan (f64), the explicit reference.
fn inverse(a: &[f64], n: usize) -> Vec<f64> {
    let mut m = a.to_vec();
    let mut inv: Vec<f64> = (0..n * n).map(|i| if i / n == i % n { 1.0 } else { 0.0 }).collect();
    for c in 0..n {
        let p = m[c * n + c];
        for j in 0..n {
            m[c * n + j] /= p;
            inv[c * n + j] /= p;
        }
        for r in (0..n).filter(|&r| r != c) {
            let f = m[r * n + c];
            for j in 0..n {
                m[r * n + j] -= f * m[c * n + j];
                inv[r * n + j] -= f * inv[c * n + j];
            }
        }
    }
    inv
}

/// API.md step 5 as written: `sqrt(Σ_r d_r H d_rᵀ / Σ_r w_r H w_rᵀ)`, one row at a time, f64.
fn recon_by_definition(before: &[f32], after: &[f32], h: &Hessian) -> f64 {
    let cols = h.cols();
    let hm = h.matrix_f64().unwrap();
    let quad = |v: &[f64]| -> f64 { (0..cols).map(|a| v[a] * (0..cols).map(|b| hm[a * cols + b] * v[b]).sum::<f64>()).sum() };
    let (mut num, mut den) = (0.0, 0.0);
    for (b, a) in before.chunks_exact(cols).zip(after.chunks_exact(cols)) {
        num += quad(&b.iter().zip(a).map(|(&x, &y)| x as f64 - y as f64).collect::<Vec<_>>());
        den += quad(&b.iter().map(|&x| x as f64).collect::<Vec<_>>());
    }
    if num == 0.0 {
        0.0
    } else {
        (num / den).max(0.0).sqrt()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, .. ProptestConfig::default() })]

    /// The banded, panelled product gives the definition's value (row bands of 64 and panels of
    /// 64 inputs: the shapes cross both boundaries), and exactly 0 when nothing changed.
    #[test]
    fn recon_error_equals_its_definition(rows in 1usize..150, cols in 1usize..140, seed in 0u64..1000) {
        let h = hessian(cols, cols + 5, seed);
        let before = rand_vec(seed + 1, rows * cols);
        let mut after = before.clone();
        for (i, v) in after.iter_mut().enumerate() {
            if (i as u64 ^ seed).is_multiple_of(3) { *v = 0.0 } else if i.is_multiple_of(5) { *v *= 1.1 }
        }
        let got = rel_recon_error(&before, &after, &h).unwrap();
        let want = recon_by_definition(&before, &after, &h);
        prop_assert!((got - want).abs() <= 1e-9 * want.max(1e-12), "{got} vs {want}");
        prop_assert_eq!(rel_recon_error(&before, &before, &h).unwrap(), 0.0);
    }

    /// keep = all ones: no error to spread, so the weights keep their exact bits.
    #[test]
    fn keep_all_leaves_weights_unchanged(rows in 1usize..6, cols in 1usize..20, bs in 1i64..9, seed in 0u64..1000) {
        let h = hessian(cols, cols + 3, seed);
        let w0 = rand_vec(seed + 7, rows * cols);
        let p = Param::from_slice(&w0, &[rows, cols]).unwrap();
        let opts = SparseGptOptions { keep: Some(vec![1; rows * cols]), block_size: Some(bs), ..Default::default() };
        let m = sparse_gpt(&View::from_param(&p), &h, &opts).unwrap();
        prop_assert!(m.iter().all(|&x| x == 1));
        let same = p.data().iter().zip(&w0).all(|(a, b)| a.to_bits() == b.to_bits());
        prop_assert!(same);
    }

    /// With a given mask, every block size equals sequential OBS: at column i, with F the
    /// not-yet-processed columns, a pruned w_i moves w_F by -(w_i / [H_F⁻¹]_ii) [H_F⁻¹]_{i,F}.
    #[test]
    fn equals_sequential_obs_with_explicit_inverses(rows in 1usize..4, cols in 2usize..12, bs in 1i64..6, seed in 0u64..1000) {
        let h = hessian(cols, 2 * cols + 1, seed);
        let w0 = rand_vec(seed + 1, rows * cols);
        let keep: Vec<u8> = rand_vec(seed + 2, rows * cols).iter().map(|&x| (x > 0.0) as u8).collect();
        let p = Param::from_slice(&w0, &[rows, cols]).unwrap();
        let opts = SparseGptOptions { keep: Some(keep.clone()), block_size: Some(bs), perc_damp: Some(0.05), ..Default::default() };
        sparse_gpt(&View::from_param(&p), &h, &opts).unwrap();
        let mut hm = h.matrix_f64().unwrap();
        let damp = 0.05 * (0..cols).map(|j| hm[j * cols + j]).sum::<f64>() / cols as f64;
        for j in 0..cols { hm[j * cols + j] += damp; }
        let scale = w0.iter().fold(0.0f32, |a, b| a.max(b.abs())) as f64;
        for r in 0..rows {
            let mut w: Vec<f64> = w0[r * cols..(r + 1) * cols].iter().map(|&x| x as f64).collect();
            for i in 0..cols {
                let f: Vec<usize> = (i..cols).collect();
                let sub: Vec<f64> = f.iter().flat_map(|&a| f.iter().map(move |&b| (a, b))).map(|(a, b)| hm[a * cols + b]).collect();
                let hinv = inverse(&sub, f.len());
                if keep[r * cols + i] == 0 {
                    let k = w[i] / hinv[0];
                    for (t, &j) in f.iter().enumerate() { w[j] -= k * hinv[t]; }
                    w[i] = 0.0;
                }
            }
            for (c, &want) in w.iter().enumerate().take(cols) {
                let got = p.data()[r * cols + c] as f64;
                prop_assert!((got - want).abs() <= 1e-4 * scale.max(want.abs()), "row {} col {}: {} vs {}", r, c, got, want);
            }
        }
    }

    /// A transposed view (MatMul layout, gathered tiles) and an every-other-row view give the
    /// same bits and mask as the contiguous weight.
    #[test]
    fn strided_views_match_contiguous(rows in 1usize..7, cols in 1usize..24, bs in 1i64..10, s in 0.0f64..1.0, seed in 0u64..1000) {
        let h = hessian(cols, cols + 2, seed);
        let w0 = rand_vec(seed + 3, rows * cols);
        let opts = SparseGptOptions { sparsity: Some(s), block_size: Some(bs), ..Default::default() };
        let p = Param::from_slice(&w0, &[rows, cols]).unwrap();
        let m = sparse_gpt(&View::from_param(&p), &h, &opts).unwrap();
        // Transposed storage (cols, rows) seen as [rows, cols] with stride [1, rows].
        let t: Vec<f32> = (0..cols * rows).map(|i| w0[(i % rows) * cols + i / rows]).collect();
        let pt = Param::from_slice(&t, &[cols, rows]).unwrap();
        let mt = sparse_gpt(&View::new(&pt, &[rows as i64, cols as i64], &[1, rows as i64]).unwrap(), &h, &opts).unwrap();
        prop_assert_eq!(&m, &mt);
        for r in 0..rows { for c in 0..cols {
            prop_assert_eq!(p.data()[r * cols + c].to_bits(), pt.data()[c * rows + r].to_bits());
        } }
        // Every other row of a (2 rows, cols) storage, odd rows untouched.
        let mut e = vec![7.5f32; 2 * rows * cols];
        for r in 0..rows { e[2 * r * cols..(2 * r + 1) * cols].copy_from_slice(&w0[r * cols..(r + 1) * cols]); }
        let pe = Param::from_slice(&e, &[2 * rows, cols]).unwrap();
        let me = sparse_gpt(&View::new(&pe, &[rows as i64, cols as i64], &[2 * cols as i64, 1]).unwrap(), &h, &opts).unwrap();
        prop_assert_eq!(&m, &me);
        for r in 0..rows { for c in 0..cols {
            prop_assert_eq!(p.data()[r * cols + c].to_bits(), pe.data()[2 * r * cols + c].to_bits());
            prop_assert_eq!(pe.data()[(2 * r + 1) * cols + c], 7.5);
        } }
    }

    /// addConv equals addRows of the im2col matrix built naively (ONNX Conv semantics).
    #[test]
    fn add_conv_equals_explicit_im2col(n in 1usize..3, c in 1usize..3, hgt in 1usize..7, wid in 1usize..7,
                                       kh in 1usize..4, kw in 1usize..4, sh in 1usize..3, sw in 1usize..3,
                                       dh in 1usize..3, dw in 1usize..3, pads in proptest::collection::vec(0usize..3, 4), seed in 0u64..1000) {
        let (top, left, bottom, right) = (pads[0], pads[1], pads[2], pads[3]);
        let span_h = (kh - 1) * dh + 1;
        let span_w = (kw - 1) * dw + 1;
        prop_assume!(hgt + top + bottom >= span_h && wid + left + right >= span_w);
        let oh = (hgt + top + bottom - span_h) / sh + 1;
        let ow = (wid + left + right - span_w) / sw + 1;
        let x = rand_vec(seed, n * c * hgt * wid);
        let cols = c * kh * kw;
        let mut rows = Vec::new();
        for b in 0..n { for y in 0..oh { for z in 0..ow { for ch in 0..c { for i in 0..kh { for j in 0..kw {
            let yy = (y * sh + i * dh) as i64 - top as i64;
            let zz = (z * sw + j * dw) as i64 - left as i64;
            let inside = yy >= 0 && zz >= 0 && (yy as usize) < hgt && (zz as usize) < wid;
            rows.push(if inside { x[((b * c + ch) * hgt + yy as usize) * wid + zz as usize] } else { 0.0 });
        } } } } } }
        let mut a = Hessian::new(cols).unwrap();
        a.add_rows(&rows, n * oh * ow).unwrap();
        let mut b = Hessian::new(cols).unwrap();
        let geo = ConvGeometry {
            kernel_shape: vec![kh as i64, kw as i64],
            strides: Some(vec![sh as i64, sw as i64]),
            pads: Some(pads.iter().map(|&p| p as i64).collect()),
            dilations: Some(vec![dh as i64, dw as i64]),
        };
        b.add_conv(&x, &[n as i64, c as i64, hgt as i64, wid as i64], &geo).unwrap();
        prop_assert_eq!(a.count(), b.count());
        // Same vectors in the same order and chunks: the same bits.
        prop_assert_eq!(a.matrix().unwrap(), b.matrix().unwrap());
    }
}

/// Hessian: more vectors than one chunk, compared with an f64 sum of products.
#[test]
fn hessian_matches_f64_reference_across_chunks() {
    let (cols, n) = (13, 300);
    let x = rand_vec(5, n * cols);
    let mut h = Hessian::new(cols).unwrap();
    h.add_rows(&x[..7 * cols], 7).unwrap();
    h.add_rows(&x[7 * cols..], n - 7).unwrap();
    let m = h.matrix_f64().unwrap();
    for a in 0..cols {
        for b in 0..cols {
            let exact: f64 = (0..n).map(|r| x[r * cols + a] as f64 * x[r * cols + b] as f64).sum::<f64>() / n as f64;
            let bound = 65.0 * 2f64.powi(-24) * (m[a * cols + a] * m[b * cols + b]).sqrt() + 1e-12;
            assert!((m[a * cols + b] - exact).abs() <= bound, "H[{a},{b}] = {} vs {exact}", m[a * cols + b]);
        }
    }
}

/// A Cholesky failure is reported before any write, and the weights keep their bits.
#[test]
fn singular_hessian_writes_nothing() {
    let mut h = Hessian::new(3).unwrap();
    h.add_rows(&[1.0, -2.0, 1.0, -1.0, 2.0, -1.0], 2).unwrap();
    let w0 = [0.5f32, -1.0, 2.0, 0.25, 3.0, -0.75];
    let p = Param::from_slice(&w0, &[2, 3]).unwrap();
    let opts = SparseGptOptions { sparsity: Some(0.5), perc_damp: Some(0.0), ..Default::default() };
    let e = sparse_gpt(&View::from_param(&p), &h, &opts).unwrap_err();
    assert_eq!(e.code(), "singular_hessian");
    assert_eq!(p.data().as_slice(), &w0);
}

/// A damped Gram matrix `XᵀX / rows + damp·mean(diag)·I` in f64, as SparseGPT factors it.
fn damped_gram(n: usize, rows: usize, damp: f64, seed: u64) -> Vec<f64> {
    let x = rand_vec(seed, rows * n);
    let mut h = vec![0.0f64; n * n];
    for r in 0..rows {
        let xr = &x[r * n..(r + 1) * n];
        for a in 0..n {
            for b in 0..n {
                h[a * n + b] += xr[a] as f64 * xr[b] as f64;
            }
        }
    }
    let mean = (0..n).map(|j| h[j * n + j]).sum::<f64>() / n as f64;
    for j in 0..n {
        h[j * n + j] += damp * mean;
    }
    h
}

/// The blocked, threaded `U` agrees with the unblocked oracle to `64 · n · ε · max|U|` on damped
/// Gram matrices (observed: below `0.2 · n · ε`, also at n = 3072), and is an upper factor of
/// H⁻¹: `Uᵀ U H ≈ I`.
#[test]
fn blocked_upper_factor_matches_unblocked() {
    use sparsekit_wasm::calib::cholesky::{inverse_upper_factor, inverse_upper_factor_unblocked};
    for &(n, rows, damp, seed) in
        &[(1, 3, 0.01, 1), (5, 9, 0.01, 2), (63, 40, 0.01, 3), (64, 80, 0.0, 4), (65, 70, 0.01, 5), (130, 90, 0.05, 6), (300, 200, 0.01, 7)]
    {
        let h = damped_gram(n, rows, damp, seed);
        let ub = inverse_upper_factor(&h, n).unwrap();
        let uu = inverse_upper_factor_unblocked(&h, n).unwrap();
        let scale = uu.iter().fold(0.0f64, |a, b| a.max(b.abs()));
        let diff = ub.iter().zip(&uu).fold(0.0f64, |a, (x, y)| a.max((x - y).abs()));
        assert!(diff <= 64.0 * n as f64 * f64::EPSILON * scale, "n {n}: max diff {diff:e}, scale {scale:e}");
        for a in 0..n {
            for b in 0..a {
                assert_eq!(ub[a * n + b], 0.0, "n {n}: U[{a},{b}] below the diagonal");
            }
            assert!(ub[a * n + a] > 0.0);
        }
        if n <= 130 {
            // (Uᵀ U) H = I.
            let mut hinv = vec![0.0f64; n * n];
            for a in 0..n {
                for b in 0..n {
                    for k in 0..n {
                        hinv[a * n + b] += ub[k * n + a] * ub[k * n + b];
                    }
                }
            }
            for a in 0..n {
                for b in 0..n {
                    let v: f64 = (0..n).map(|k| hinv[a * n + k] * h[k * n + b]).sum();
                    let want = if a == b { 1.0 } else { 0.0 };
                    assert!((v - want).abs() < 1e-6, "n {n}: (UᵀU H)[{a},{b}] = {v}");
                }
            }
        }
    }
}

/// Up to the first panel the blocked code is the unblocked one: the same bits.
#[test]
fn blocked_equals_unblocked_within_one_panel() {
    use sparsekit_wasm::calib::cholesky::{inverse_upper_factor, inverse_upper_factor_unblocked};
    use sparsekit_wasm::calib::cholesky_blocked::NB;
    for n in [1, 7, 33, NB] {
        let h = damped_gram(n, n + 5, 0.01, n as u64);
        let ub = inverse_upper_factor(&h, n).unwrap();
        let uu = inverse_upper_factor_unblocked(&h, n).unwrap();
        assert!(ub.iter().zip(&uu).all(|(a, b)| a.to_bits() == b.to_bits()), "n {n}");
    }
}

/// Singular matrices (rank below n, pivots failing in a later panel, a negative diagonal)
/// refuse with `singular_hessian` in both forms.
#[test]
fn blocked_singular_hessian_as_unblocked() {
    use sparsekit_wasm::calib::cholesky::{inverse_upper_factor, inverse_upper_factor_unblocked};
    for &(n, rows) in &[(100, 90), (200, 150), (70, 3)] {
        let h = damped_gram(n, rows, 0.0, n as u64);
        assert_eq!(inverse_upper_factor(&h, n).unwrap_err().code(), "singular_hessian", "n {n}");
        assert_eq!(inverse_upper_factor_unblocked(&h, n).unwrap_err().code(), "singular_hessian", "n {n}");
    }
    let mut h = damped_gram(150, 200, 0.01, 9);
    h[10 * 150 + 10] = -1.0; // reversed: index 139, in the third panel
    assert_eq!(inverse_upper_factor(&h, 150).unwrap_err().code(), "singular_hessian");
    assert_eq!(inverse_upper_factor_unblocked(&h, 150).unwrap_err().code(), "singular_hessian");
}

/// The tiled f64 update equals its one-element oracle bit for bit, every remainder and both
/// shapes.
#[test]
fn sub_mul_tiles_equal_oracle() {
    use sparsekit_wasm::test_support::gemm_f64::{sub_mul, sub_mul_scalar, SubMul};
    for &(m, n, k, lower) in
        &[(1, 1, 1, false), (5, 7, 3, false), (13, 13, 9, true), (70, 300, 64, false), (301, 301, 17, true), (260, 520, 5, true)]
    {
        let (lda, ldb, ldc) = (k + 3, n + 1, n + 2);
        let a: Vec<f64> = rand_vec(m as u64, m * lda).iter().map(|&v| v as f64 * 1.1).collect();
        let b: Vec<f64> = rand_vec(n as u64 + 99, k * ldb).iter().map(|&v| v as f64 * 0.9).collect();
        let c0: Vec<f64> = rand_vec(k as u64 + 7, m * ldc).iter().map(|&v| v as f64).collect();
        let g = SubMul { m, n, k, lda, ldb, ldc, lower };
        let mut x = c0.clone();
        sub_mul_scalar(&g, &a, &b, &mut x);
        let mut y = c0.clone();
        unsafe { sub_mul(&g, a.as_ptr(), b.as_ptr(), y.as_mut_ptr()) };
        assert!(x.iter().zip(&y).all(|(p, q)| p.to_bits() == q.to_bits()), "{m}x{n}x{k} lower {lower}");
    }
}

/// With threads, the blocked `U` and SparseGPT give the same bits on 1, 2 and 3 workers.
#[cfg(feature = "native-threads")]
#[test]
fn blocked_and_sparse_gpt_bits_independent_of_threads() {
    use sparsekit_wasm::calib::cholesky::inverse_upper_factor;
    let pool = |t| rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap();
    let n = 333;
    let h = damped_gram(n, 300, 0.01, 11);
    let us: Vec<Vec<u64>> =
        [1, 2, 3].iter().map(|&t| pool(t).install(|| inverse_upper_factor(&h, n).unwrap().iter().map(|v| v.to_bits()).collect())).collect();
    assert_eq!(us[0], us[1]);
    assert_eq!(us[0], us[2]);
    // The second shape's blocks (600 x 128) take the histogram selection.
    for (rows, cols, bs) in [(37usize, 200usize, 32i64), (600, 130, 128)] {
        let hs = hessian(cols, 260, 12);
        let w0 = rand_vec(13, rows * cols);
        let runs: Vec<(Vec<u8>, Vec<u32>)> = [1, 2, 3]
            .iter()
            .map(|&t| {
                pool(t).install(|| {
                    let p = Param::from_slice(&w0, &[rows, cols]).unwrap();
                    let opts = SparseGptOptions { sparsity: Some(0.5), block_size: Some(bs), ..Default::default() };
                    let m = sparse_gpt(&View::from_param(&p), &hs, &opts).unwrap();
                    let bits = p.data().iter().map(|v| v.to_bits()).collect();
                    (m, bits)
                })
            })
            .collect();
        assert_eq!(runs[0], runs[1], "{rows}x{cols}");
        assert_eq!(runs[0], runs[2], "{rows}x{cols}");
    }
}
