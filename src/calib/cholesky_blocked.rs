//! Blocked, threaded forms of the two O(n³) steps behind SparseGPT's `U`: the Cholesky factor
//! `L` (right-looking: factor a panel of [`NB`] columns, then subtract its product from the
//! trailing lower triangle) and the lower-triangular inverse `L⁻¹` (block forward substitution,
//! each finished block row subtracted from all later rows). Both trailing updates are the
//! tiled [`sub_mul`] kernel, which holds nearly all the flops; the unblocked loops of
//! [`super::cholesky`] remain the oracle they are tested against.
//!
//! Every element's operations run in an order fixed by the block boundaries alone, so any
//! number of threads gives the same bits. The pivot rule is the oracle's (`singular_hessian`).

use crate::bail;
use crate::core::alloc::try_alloc;
use crate::core::error::Result;
use crate::kernels::dot_f64::dot4;
use crate::kernels::gemm_f64::{sub_mul, SubMul, MR};
use crate::kernels::par::{self, SharedMut};

/// Panel width: the `k` of the trailing updates (a multiple of `MR`).
pub const NB: usize = 64;

/// Rows (or columns) per task of the panel-sized steps.
const BAND: usize = 32;

/// Lower Cholesky factor of the symmetric `n x n` row-major `a` (lower triangle read), in
/// place: afterwards the lower triangle holds `L`, the upper is zero. `singular_hessian` when a
/// pivot is not positive, not finite, or below `n · ε · a_jj` (`a_jj` as given).
pub fn cholesky_blocked(a: &mut [f64], n: usize) -> Result<()> {
    assert_eq!(a.len(), n * n);
    let tiny = n as f64 * f64::EPSILON;
    let diag: Vec<f64> = (0..n).map(|j| a[j * n + j]).collect();
    let mut pt = try_alloc(NB * n, 0.0f64)?;
    let mut k0 = 0;
    while k0 < n {
        let k1 = (k0 + NB).min(n);
        let w = k1 - k0;
        // Diagonal block: the unblocked factorization over this panel's columns.
        for j in k0..k1 {
            let (done, rest) = a.split_at_mut(j * n);
            let rowj = &mut rest[..n];
            for k in k0..j {
                let dot = dot4(&rowj[k0..k], &done[k * n + k0..k * n + k]);
                rowj[k] = (rowj[k] - dot) / done[k * n + k];
            }
            let piv = rowj[j] - dot4(&rowj[k0..j], &rowj[k0..j]);
            if !(piv.is_finite() && piv > tiny * diag[j].abs()) || piv <= 0.0 {
                bail!(
                    SingularHessian,
                    "the (damped) Hessian is not positive definite (pivot {piv:e} at input {j}); raise percDamp (e.g. 0.01 or 0.1) or add more calibration inputs"
                );
            }
            rowj[j] = piv.sqrt();
            rowj[j + 1..].fill(0.0);
        }
        if k1 == n {
            break;
        }
        // Panel below the diagonal block: L_ik for i >= k1, rows independent.
        {
            let (done, rest) = a.split_at_mut(k1 * n);
            let done = &*done;
            par::map_chunks_mut(rest, BAND * n, |_, chunk| {
                for rowi in chunk.chunks_exact_mut(n) {
                    for k in k0..k1 {
                        let dot = dot4(&rowi[k0..k], &done[k * n + k0..k * n + k]);
                        rowi[k] = (rowi[k] - dot) / done[k * n + k];
                    }
                }
            });
        }
        // Panel transposed (w x (n - k1)), so the update reads B with contiguous columns.
        let m = n - k1;
        for (i, row) in a[k1 * n..].chunks_exact(n).enumerate() {
            for p in 0..w {
                pt[p * m + i] = row[k0 + p];
            }
        }
        let g = SubMul { m, n: m, k: w, lda: n, ldb: m, ldc: n, lower: true };
        let base = a.as_mut_ptr();
        // SAFETY: A is columns k0..k1 and C columns k1.. of rows k1.. of `a` (disjoint); B is `pt`.
        unsafe { sub_mul(&g, base.add(k1 * n + k0), pt.as_ptr(), base.add(k1 * n + k1)) };
        k0 = k1;
    }
    Ok(())
}

/// Inverse of a lower-triangular `n x n` `l` with a positive diagonal (row-major; the upper
/// triangle of the result is zero).
pub fn lower_inverse_blocked(l: &[f64], n: usize) -> Result<Vec<f64>> {
    assert_eq!(l.len(), n * n);
    // Rows of X start as the identity's; each holds E_i - Σ L_ik X_k over the finished blocks.
    let mut x = try_alloc(n * n, 0.0f64)?;
    for i in 0..n {
        x[i * n + i] = 1.0;
    }
    let mut k0 = 0;
    while k0 < n {
        let k1 = (k0 + NB).min(n);
        // Forward substitution inside the block, columns 0..k1 split into independent tasks.
        let xp = SharedMut(x.as_mut_ptr());
        par::for_each_index(k1.div_ceil(BAND * MR), |t| {
            let c0 = t * BAND * MR;
            let c1 = (c0 + BAND * MR).min(k1);
            for i in k0..k1 {
                let ce = c1.min(i + 1);
                if c0 >= ce {
                    continue;
                }
                // SAFETY: this task alone touches columns c0..c1 of rows k0..k1; row i is
                // written, rows k < i only read.
                let xi = unsafe { std::slice::from_raw_parts_mut(xp.get().add(i * n + c0), ce - c0) };
                for k in k0..i {
                    let lik = l[i * n + k];
                    let kend = c1.min(k + 1);
                    if kend <= c0 {
                        continue;
                    }
                    let xk = unsafe { std::slice::from_raw_parts(xp.get().add(k * n + c0), kend - c0) };
                    for (v, &u) in xi.iter_mut().zip(xk) {
                        *v -= lik * u;
                    }
                }
                let inv = 1.0 / l[i * n + i];
                for v in xi.iter_mut() {
                    *v *= inv;
                }
            }
        });
        if k1 == n {
            break;
        }
        let g = SubMul { m: n - k1, n: k1, k: k1 - k0, lda: n, ldb: n, ldc: n, lower: false };
        let base = x.as_mut_ptr();
        // SAFETY: C is rows k1.. of `x`, B rows k0..k1 of `x` (disjoint); A is `l`.
        unsafe { sub_mul(&g, l.as_ptr().add(k1 * n + k0), base.add(k0 * n), base.add(k1 * n)) };
        k0 = k1;
    }
    Ok(x)
}
