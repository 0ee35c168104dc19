//! SparseGPT's mask-fixed refit (`refit` steps): the mask is the solver's, pruned weights stay
//! exactly 0, each row's damped objective never rises, and enough steps reach the exact
//! least-squares solution of every row for that mask (solved here by Gauss-Jordan on the kept
//! inputs, f64).

#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use sparsekit_wasm::calib::{sparse_gpt, sparse_gpt_refitted, Hessian, SparseGptOptions};
use sparsekit_wasm::{Param, View};

#[path = "support/calib_data.rs"]
mod calib_data;
use calib_data::{hessian_of, rand_vec};

/// Inputs with scales spread over three orders of magnitude and a shared component, as
/// activations are (the case a diagonal preconditioner is for).
fn skewed_hessian(cols: usize, n: usize, seed: u64) -> Hessian {
    let mut x = rand_vec(seed, n * cols);
    let common = rand_vec(seed + 7, n);
    for r in 0..n {
        for c in 0..cols {
            let scale = 10f32.powf((c % 7) as f32 / 2.0 - 1.0);
            x[r * cols + c] = (x[r * cols + c] + 0.5 * common[r]) * scale;
        }
    }
    hessian_of(&x, cols)
}

/// `H + percDamp·mean(diag H)·I` in f64, dead inputs' diagonal set to 1 first (as the solver).
fn damped(h: &Hessian, pd: f64) -> Vec<f64> {
    let n = h.cols();
    let mut m = h.matrix_f64().unwrap();
    for j in 0..n {
        if m[j * n + j] == 0.0 {
            m[j * n + j] = 1.0;
        }
    }
    let mean = (0..n).map(|j| m[j * n + j]).sum::<f64>() / n as f64;
    for j in 0..n {
        m[j * n + j] += pd * mean;
    }
    m
}

/// `(w - w0) H (w - w0)ᵀ` of one row.
fn objective(w: &[f32], w0: &[f32], hd: &[f64]) -> f64 {
    let n = w.len();
    let d: Vec<f64> = w.iter().zip(w0).map(|(&a, &b)| a as f64 - b as f64).collect();
    (0..n).map(|a| d[a] * (0..n).map(|b| hd[a * n + b] * d[b]).sum::<f64>()).sum()
}

/// The exact minimiser of one row's objective with the weights outside `keep` at 0:
/// `H_SS w_S = (H w0)_S`, by Gauss-Jordan with partial pivoting.
fn exact_row(w0: &[f32], keep: &[u8], hd: &[f64]) -> Vec<f64> {
    let n = w0.len();
    let s: Vec<usize> = (0..n).filter(|&j| keep[j] != 0).collect();
    let k = s.len();
    let hw0: Vec<f64> = (0..n).map(|a| (0..n).map(|b| hd[a * n + b] * w0[b] as f64).sum()).collect();
    let mut m: Vec<f64> = vec![0.0; k * (k + 1)];
    for (i, &a) in s.iter().enumerate() {
        for (j, &b) in s.iter().enumerate() {
            m[i * (k + 1) + j] = hd[a * n + b];
        }
        m[i * (k + 1) + k] = hw0[a];
    }
    for c in 0..k {
        let p = (c..k).max_by(|&a, &b| m[a * (k + 1) + c].abs().total_cmp(&m[b * (k + 1) + c].abs())).unwrap();
        for j in 0..=k {
            m.swap(c * (k + 1) + j, p * (k + 1) + j);
        }
        let piv = m[c * (k + 1) + c];
        for j in 0..=k {
            m[c * (k + 1) + j] /= piv;
        }
        for r in (0..k).filter(|&r| r != c) {
            let f = m[r * (k + 1) + c];
            for j in 0..=k {
                m[r * (k + 1) + j] -= f * m[c * (k + 1) + j];
            }
        }
    }
    let mut out = vec![0.0; n];
    for (i, &a) in s.iter().enumerate() {
        out[a] = m[i * (k + 1) + k];
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Same mask as SparseGPT alone, zeros kept, no row worse, and the layer's objective lower.
    #[test]
    fn refit_keeps_mask_and_never_raises_a_row(rows in 1usize..40, cols in 2usize..70, steps in 1i64..12, seed in 0u64..500) {
        let h = skewed_hessian(cols, 3 * cols + 8, seed);
        let w0 = rand_vec(seed + 1, rows * cols);
        let plain = Param::from_slice(&w0, &[rows, cols]).unwrap();
        let opts = SparseGptOptions { sparsity: Some(0.5), block_size: Some(16), ..Default::default() };
        let mask_plain = sparse_gpt(&View::from_param(&plain), &h, &opts).unwrap();
        let refitted = Param::from_slice(&w0, &[rows, cols]).unwrap();
        let (mask, done) = sparse_gpt_refitted(&View::from_param(&refitted), &h, &SparseGptOptions { refit: Some(steps), ..opts.clone() }).unwrap();
        prop_assert_eq!(&mask, &mask_plain);
        let done = done.unwrap();
        prop_assert!(done.after <= done.before);
        let hd = damped(&h, 0.01);
        let (a, b) = (plain.data().clone(), refitted.data().clone());
        for r in 0..rows {
            let s = r * cols..(r + 1) * cols;
            for c in 0..cols {
                if mask[r * cols + c] == 0 { prop_assert_eq!(b[r * cols + c], 0.0); }
            }
            let (fa, fb) = (objective(&a[s.clone()], &w0[s.clone()], &hd), objective(&b[s.clone()], &w0[s.clone()], &hd));
            prop_assert!(fb <= fa * (1.0 + 1e-5) + 1e-12, "row {r}: {fb} > {fa}");
        }
    }
}

/// Enough steps give every row the exact least-squares weights for the mask; SparseGPT's own
/// column loop stays measurably above that optimum on these inputs.
#[test]
fn refit_reaches_the_least_squares_optimum() {
    let (rows, cols) = (12, 48);
    let h = skewed_hessian(cols, 200, 3);
    let w0 = rand_vec(4, rows * cols);
    let hd = damped(&h, 0.01);
    let plain = Param::from_slice(&w0, &[rows, cols]).unwrap();
    let opts = SparseGptOptions { sparsity: Some(0.5), block_size: Some(16), ..Default::default() };
    sparse_gpt(&View::from_param(&plain), &h, &opts).unwrap();
    let p = Param::from_slice(&w0, &[rows, cols]).unwrap();
    let (mask, done) = sparse_gpt_refitted(&View::from_param(&p), &h, &SparseGptOptions { refit: Some(400), ..opts }).unwrap();
    assert!(done.unwrap().after < done.unwrap().before);
    let (got, plain) = (p.data().clone(), plain.data().clone());
    let (mut f_plain, mut f_exact) = (0.0, 0.0);
    for r in 0..rows {
        let s = r * cols..(r + 1) * cols;
        let want = exact_row(&w0[s.clone()], &mask[s.clone()], &hd);
        let fe = objective(&want.iter().map(|&v| v as f32).collect::<Vec<_>>(), &w0[s.clone()], &hd);
        let fg = objective(&got[s.clone()], &w0[s.clone()], &hd);
        assert!(fg <= fe * (1.0 + 1e-3) + 1e-9, "row {r}: refit {fg} vs optimum {fe}");
        f_plain += objective(&plain[s.clone()], &w0[s.clone()], &hd);
        f_exact += fe;
    }
    assert!(f_plain > 1.01 * f_exact, "SparseGPT alone {f_plain} vs optimum {f_exact}: the case does not test the refit");
}

/// A transposed view (a MatMul weight (K, N) seen as [N, K]) is refitted where it lives, with
/// the bits of the contiguous case.
#[test]
fn refit_through_a_transposed_view_matches_contiguous() {
    let (rows, cols) = (9, 20);
    let h = skewed_hessian(cols, 90, 11);
    let w = rand_vec(12, rows * cols);
    let mut wt = vec![0.0f32; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            wt[c * rows + r] = w[r * cols + c];
        }
    }
    let opts = SparseGptOptions { sparsity: Some(0.5), refit: Some(8), ..Default::default() };
    let a = Param::from_slice(&w, &[rows, cols]).unwrap();
    sparse_gpt(&View::from_param(&a), &h, &opts).unwrap();
    let b = Param::from_slice(&wt, &[cols, rows]).unwrap();
    sparse_gpt(&View::new(&b, &[rows as i64, cols as i64], &[1, rows as i64]).unwrap(), &h, &opts).unwrap();
    let (a, b) = (a.data().clone(), b.data().clone());
    for r in 0..rows {
        for c in 0..cols {
            assert_eq!(a[r * cols + c].to_bits(), b[c * rows + r].to_bits());
        }
    }
}

/// Out-of-range step counts are refused before any write.
#[test]
fn refit_out_of_range_is_refused() {
    let h = skewed_hessian(4, 20, 1);
    let w0 = [1.0f32, -2.0, 0.5, 3.0];
    let p = Param::from_slice(&w0, &[1, 4]).unwrap();
    let e = sparse_gpt(&View::from_param(&p), &h, &SparseGptOptions { sparsity: Some(0.5), refit: Some(-1), ..Default::default() })
        .unwrap_err();
    assert_eq!(e.code(), "invalid_arguments");
    assert_eq!(p.data().as_slice(), &w0);
}
