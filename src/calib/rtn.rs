//! Round-to-nearest quantization (docs/API.md, "Quantization"): every weight of a 2-D view to
//! the nearest value of the grid of [`super::quant_grid`], each group's parameters from its own
//! values, no error compensation and no calibration data. The floor GPTQ is measured against,
//! and the quantizer of weights without a Hessian (embedding tables).

use super::dims::{check_finite, dims2};
use super::gptq::Quantized;
use super::quant_grid::QuantGrid;
use crate::block::View;
use crate::core::alloc::try_alloc;
use crate::core::error::Result;

/// Quantizes `w` in place (rows = outputs, cols = inputs; groups run along the columns) and
/// returns its codes and parameters in [`Quantized`]'s layout (`keep` is `None`); `full`:
/// the symmetric grid on all `2^bits` codes ([`QuantGrid`]). A refused call (bad options, a
/// non-finite weight, an aliasing view) changes no weight.
pub fn round_to_nearest(w: &View, bits: i64, group: Option<i64>, sym: bool, full: bool) -> Result<Quantized> {
    let (rows, cols, s0, s1) = dims2(w, "roundToNearest")?;
    let grid = QuantGrid::new(bits, group, sym, full, "roundToNearest")?;
    w.check_writable()?;
    check_finite(w, "roundToNearest", (rows, cols, s0, s1))?;
    let param = w.param();
    let (g, ng) = (grid.group_len(cols), grid.groups(cols));
    let mut codes = try_alloc(rows * cols, 0i8)?;
    let mut scales = try_alloc(rows * ng, 0.0f32)?;
    let mut zeros = try_alloc(if sym { 0 } else { rows * ng }, 0i8)?;
    let mut data = param.data_mut();
    for r in 0..rows {
        for k in 0..ng {
            let (c0, c1) = (k * g, ((k + 1) * g).min(cols));
            let p = grid.params((c0..c1).map(|c| data[r * s0 + c * s1]));
            scales[r * ng + k] = p.scale;
            if !sym {
                zeros[r * ng + k] = p.zero;
            }
            for c in c0..c1 {
                let (code, v) = grid.quantize(data[r * s0 + c * s1], p);
                codes[r * cols + c] = code;
                data[r * s0 + c * s1] = v;
            }
        }
    }
    Ok(Quantized { codes, scales, zeros: (!sym).then_some(zeros), group: g, keep: None })
}
