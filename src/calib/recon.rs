//! Relative reconstruction error of a pruning on the calibration inputs (docs/API.md, SparseGPT step 5):
//! `sqrt(tr((W-Ŵ) H (W-Ŵ)ᵀ) / tr(W H Wᵀ))` with the undamped `H`, i.e. the RMS change of the
//! layer's output over the calibration set relative to the output's RMS.
//!
//! Both traces are `Σ_r v_r H v_rᵀ` over rows `v_r`, which is a product `V · H` followed by an
//! element-wise dot with `V`: the rows of `W-Ŵ` and of `W` are stacked into one `V` and multiplied
//! by the cache-tiled f64 kernel of the blocked factorizations, in bands of rows (the working
//! memory stays `O(band x cols)` whatever the layer's rows) and panels of `H`'s rows (so a tile
//! of `H` stays cached while the band streams over it). One quadratic form per row read `H`
//! whole from memory each time, which made this report figure cost several times the solve.

use super::hessian::Hessian;
use crate::bail;
use crate::core::alloc::try_alloc;
use crate::core::error::Result;
use crate::kernels::gemm_f64::{sub_mul, SubMul};

/// Weight rows per band (each band stacks its `W-Ŵ` and `W` rows: twice this many rows of `V`).
const BAND: usize = 64;
/// Rows of `H` per panel: the `k` of one kernel call.
const PANEL: usize = 64;

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
    let rows = before.len() / cols;
    if rows == 0 {
        return Ok(0.0);
    }
    let hm = h.matrix_f64()?;
    let band = BAND.min(rows);
    let mut v = try_alloc(2 * band * cols, 0.0f64)?;
    let mut c = try_alloc(2 * band * cols, 0.0f64)?;
    let (mut num, mut den) = (0.0, 0.0);
    for r0 in (0..rows).step_by(band) {
        let nr = band.min(rows - r0);
        let n = nr * cols;
        let (b, a) = (&before[r0 * cols..r0 * cols + n], &after[r0 * cols..r0 * cols + n]);
        for (i, (&x, &y)) in b.iter().zip(a).enumerate() {
            v[i] = x as f64 - y as f64;
            v[n + i] = x as f64;
        }
        c[..2 * n].fill(0.0);
        // C -= V · H, one panel of H's rows (V's columns) at a time.
        for k0 in (0..cols).step_by(PANEL) {
            let k = PANEL.min(cols - k0);
            let g = SubMul { m: 2 * nr, n: cols, k, lda: cols, ldb: cols, ldc: cols, lower: false };
            // SAFETY: V is 2·nr x cols (read from column k0), H cols x cols (read from row k0),
            // C 2·nr x cols: three separate buffers covering the shape.
            unsafe { sub_mul(&g, v.as_ptr().add(k0), hm.as_ptr().add(k0 * cols), c.as_mut_ptr()) };
        }
        num -= v[..n].iter().zip(&c[..n]).map(|(x, y)| x * y).sum::<f64>();
        den -= v[n..2 * n].iter().zip(&c[n..2 * n]).map(|(x, y)| x * y).sum::<f64>();
    }
    if num == 0.0 {
        return Ok(0.0);
    }
    Ok((num / den).max(0.0).sqrt())
}
