//! Relative reconstruction error of a pruning on the calibration inputs (docs/API.md, SparseGPT step 5):
//! `sqrt(tr((W-Ŵ) H (W-Ŵ)ᵀ) / tr(W H Wᵀ))` with the undamped `H`, i.e. the RMS change of the
//! layer's output over the calibration set relative to the output's RMS.

use super::hessian::Hessian;
use crate::bail;
use crate::core::error::Result;

/// `before` and `after` are the view's values (rows x cols, row-major) before and after the
/// pruning; computed in f64. 0 when both sides are 0 (nothing to lose).
pub fn rel_recon_error(before: &[f32], after: &[f32], h: &Hessian) -> Result<f64> {
    let cols = h.cols();
    if before.len() != after.len() || !before.len().is_multiple_of(cols) {
        bail!(
            ShapeMismatch,
            "relReconError: before ({}) and after ({}) must both be rows x {cols} (the Hessian's cols)",
            before.len(),
            after.len()
        );
    }
    let hm = h.matrix_f64()?;
    let quad = |v: &[f64]| -> f64 {
        let mut s = 0.0;
        for (a, &va) in v.iter().enumerate() {
            if va != 0.0 {
                let row = &hm[a * cols..(a + 1) * cols];
                s += va * row.iter().zip(v).map(|(x, y)| x * y).sum::<f64>();
            }
        }
        s
    };
    let (mut num, mut den) = (0.0, 0.0);
    for (b, a) in before.chunks_exact(cols).zip(after.chunks_exact(cols)) {
        let w0: Vec<f64> = b.iter().map(|&x| x as f64).collect();
        let diff: Vec<f64> = b.iter().zip(a).map(|(&x, &y)| x as f64 - y as f64).collect();
        num += quad(&diff);
        den += quad(&w0);
    }
    if num == 0.0 {
        return Ok(0.0);
    }
    Ok((num / den).max(0.0).sqrt())
}
