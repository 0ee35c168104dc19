//! Calibration-aware pruning (API.md, "Calibration-aware pruning"): input statistics of a
//! linear map ([`hessian::Hessian`], fed by rows or by ONNX Conv inputs, [`conv`]), Wanda scores
//! ([`wanda`]), and SparseGPT's optimal-brain-surgeon reconstruction ([`sparsegpt`]) on top of
//! the Cholesky factors of [`cholesky`]. [`recon`] measures what a pruning cost on the
//! calibration inputs.

pub mod cholesky;
pub mod cholesky_blocked;
pub mod conv;
pub mod hessian;
pub mod recon;
mod select_top;
pub mod sparsegpt;
pub mod wanda;

pub use conv::ConvGeometry;
pub use hessian::Hessian;
pub use recon::rel_recon_error;
pub use sparsegpt::{sparse_gpt, SparseGptOptions};
pub use wanda::wanda_scores;

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
