//! The 2-D reading of a weight view every calibration method starts from, and the check every
//! method that writes the weights makes first.

use crate::bail;
use crate::block::View;
use crate::core::error::Result;

/// `(rows, cols, row stride, col stride)` of a 2-D view (`param_not_2d` otherwise): rows are
/// the map's outputs, cols its inputs.
pub(crate) fn dims2(w: &View, what: &str) -> Result<(usize, usize, usize, usize)> {
    if w.ndim() != 2 {
        bail!(ParamNot2d, "{what} needs a 2-D weight (rows = outputs, cols = inputs), got shape {:?}; pass a 2-D View (e.g. [O, C*kh*kw] for a conv weight, the transposed view for a MatMul weight)", w.shape());
    }
    let (s, st) = (w.shape(), w.stride());
    Ok((s[0], s[1], st[0], st[1]))
}

/// Refuses a view holding a NaN or an infinity (`invalid_value`, naming the first one): the
/// solvers and the quantizers would spread it over the row, so they check before any write.
pub(crate) fn check_finite(w: &View, what: &str, (rows, cols, s0, s1): (usize, usize, usize, usize)) -> Result<()> {
    let param = w.param();
    let data = param.data();
    for r in 0..rows {
        for c in 0..cols {
            let v = data[r * s0 + c * s1];
            if !v.is_finite() {
                bail!(InvalidValue, "{what}: weight [{r}, {c}] of the view is {v}; weights must be finite");
            }
        }
    }
    Ok(())
}
