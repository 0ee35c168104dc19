//! Wanda scores: `|W_ij| · ‖X_j‖`, the weight magnitude scaled by the RMS of the input it
//! multiplies, so that a small weight on a loud input is not pruned before a large weight on a
//! silent one. Selection reuses the library's masks (per-row scopes, N:M), see docs/API.md.

use super::dims::dims2;
use super::hessian::Hessian;
use crate::bail;
use crate::block::View;
use crate::core::alloc::try_alloc;
use crate::core::error::Result;

/// View-shaped (rows x cols, row-major) scores of the 2-D view `w` against `h`.
pub fn wanda_scores(w: &View, h: &Hessian) -> Result<Vec<f32>> {
    let (rows, cols, s0, s1) = dims2(w, "wandaScores")?;
    if h.cols() != cols {
        bail!(
            ShapeMismatch,
            "wandaScores: the Hessian has {} inputs but the weight view {:?} has {cols} columns (rows = outputs, cols = inputs)",
            h.cols(),
            w.shape()
        );
    }
    let norms: Vec<f64> = h.diag_f64().into_iter().map(f64::sqrt).collect();
    let data = w.param().data();
    let mut out = try_alloc(rows * cols, 0.0f32)?;
    for r in 0..rows {
        for c in 0..cols {
            out[r * cols + c] = ((data[r * s0 + c * s1] as f64).abs() * norms[c]) as f32;
        }
    }
    Ok(out)
}
