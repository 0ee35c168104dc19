//! Calibration-aware pruning (docs/API.md, "Calibration-aware pruning"): input statistics of a
//! linear map ([`hessian::Hessian`], fed by rows or by ONNX Conv inputs, [`conv`]), Wanda scores
//! ([`wanda`]), and SparseGPT's optimal-brain-surgeon reconstruction ([`sparsegpt`]) on top of
//! the Cholesky factors of [`cholesky`]. [`recon`] measures what a pruning cost on the
//! calibration inputs.

pub mod cholesky;
pub mod cholesky_blocked;
pub mod conv;
mod dims;
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
