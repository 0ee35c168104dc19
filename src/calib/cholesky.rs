//! Cholesky factors in f64: `H = L Lᵀ`, and the upper factor `U` of the inverse
//! (`H⁻¹ = Uᵀ U`), which SparseGPT reads row by row.
//!
//! `U` comes from one Cholesky and one triangular inverse, without forming `H⁻¹`: with `P` the
//! index reversal, `P H P = L Lᵀ` gives `H⁻¹ = (P L⁻¹ P)ᵀ (P L⁻¹ P)`, and `P L⁻¹ P` is upper
//! triangular with a positive diagonal, so it is the (unique) upper factor.

use super::cholesky_blocked::{cholesky_blocked, lower_inverse_blocked};
use crate::bail;
use crate::core::alloc::try_alloc;
use crate::core::error::Result;
use crate::kernels::dot_f64::dot4;
use crate::kernels::par;

/// Lower Cholesky factor of the symmetric `n x n` matrix `a` (row-major; only the lower
/// triangle is read), in place: afterwards the lower triangle holds `L`, the upper is zero.
///
/// A pivot that is not positive, not finite, or below `n · ε · a_jj` (what rounding leaves of
/// an exactly singular matrix) means "not positive definite": `singular_hessian`.
pub fn cholesky_in_place(a: &mut [f64], n: usize) -> Result<()> {
    assert_eq!(a.len(), n * n);
    let tiny = n as f64 * f64::EPSILON;
    for j in 0..n {
        let (done, rest) = a.split_at_mut(j * n);
        let rowj = &mut rest[..n];
        // Row j of L: L_jk = (a_jk - <L_j, L_k>) / L_kk, k < j, dots over contiguous rows.
        for k in 0..j {
            let rowk = &done[k * n..k * n + k];
            let dot = dot4(&rowj[..k], rowk);
            rowj[k] = (rowj[k] - dot) / done[k * n + k];
        }
        let sq = dot4(&rowj[..j], &rowj[..j]);
        let orig = rowj[j];
        let piv = orig - sq;
        if !(piv.is_finite() && piv > tiny * orig.abs()) || piv <= 0.0 {
            bail!(
                SingularHessian,
                "the (damped) Hessian is not positive definite (pivot {piv:e} at input {j}); raise percDamp (e.g. 0.01 or 0.1) or add more calibration inputs"
            );
        }
        rowj[j] = piv.sqrt();
        rowj[j + 1..].fill(0.0);
    }
    Ok(())
}

/// Inverse of a lower-triangular `n x n` matrix with a positive diagonal, row by row:
/// row i of `X = L⁻¹` is `(e_i - Σ_{k<i} L_ik X_k) / L_ii` (contiguous row updates).
pub fn lower_inverse(l: &[f64], n: usize) -> Result<Vec<f64>> {
    let mut x = try_alloc(n * n, 0.0f64)?;
    for i in 0..n {
        let (prev, rest) = x.split_at_mut(i * n);
        let xi = &mut rest[..n];
        xi[i] = 1.0;
        for k in 0..i {
            let lik = l[i * n + k];
            if lik != 0.0 {
                for (a, b) in xi[..=k].iter_mut().zip(&prev[k * n..k * n + k + 1]) {
                    *a -= lik * b;
                }
            }
        }
        let inv = 1.0 / l[i * n + i];
        for a in &mut xi[..=i] {
            *a *= inv;
        }
    }
    Ok(x)
}

/// The upper factor `U` of `H⁻¹` (`H⁻¹ = Uᵀ U`), row-major `n x n`. `singular_hessian` when
/// `H` is not positive definite. Runs the blocked, threaded factorization and inverse of
/// [`super::cholesky_blocked`]; [`inverse_upper_factor_unblocked`] is its oracle.
pub fn inverse_upper_factor(h: &[f64], n: usize) -> Result<Vec<f64>> {
    let mut r = reversed_lower(h, n)?;
    cholesky_blocked(&mut r, n)?;
    let linv = lower_inverse_blocked(&r, n)?;
    reverse_into(&linv, &mut r, n);
    Ok(r)
}

/// [`inverse_upper_factor`] through the unblocked loops above (tests, oracle).
pub fn inverse_upper_factor_unblocked(h: &[f64], n: usize) -> Result<Vec<f64>> {
    let mut r = reversed_lower(h, n)?;
    cholesky_in_place(&mut r, n)?;
    let linv = lower_inverse(&r, n)?;
    reverse_into(&linv, &mut r, n);
    Ok(r)
}

/// `P H P`, lower triangle (the upper left zero); rows in parallel.
fn reversed_lower(h: &[f64], n: usize) -> Result<Vec<f64>> {
    let mut r = try_alloc(n * n, 0.0f64)?;
    par::map_chunks_mut(&mut r, 64 * n.max(1), |t, chunk| {
        for (da, row) in chunk.chunks_exact_mut(n).enumerate() {
            let a = t * 64 + da;
            let src = &h[(n - 1 - a) * n..][..n];
            for (v, s) in row[..=a].iter_mut().zip(src.iter().rev()) {
                *v = *s;
            }
        }
    });
    Ok(r)
}

/// `out = P x P` (rows in parallel: O(n²) strided reads).
fn reverse_into(x: &[f64], out: &mut [f64], n: usize) {
    par::map_chunks_mut(out, 64 * n, |t, chunk| {
        for (da, row) in chunk.chunks_exact_mut(n).enumerate() {
            let src = &x[(n - 1 - (t * 64 + da)) * n..][..n];
            for (v, s) in row.iter_mut().zip(src.iter().rev()) {
                *v = *s;
            }
        }
    });
}
