//! Calibration-aware pruning (docs/API.md, "Calibration-aware pruning"): input statistics of a
//! linear map ([`hessian::Hessian`], fed by rows or by ONNX Conv inputs, [`conv`]), Wanda scores
//! ([`wanda`]), and SparseGPT's optimal-brain-surgeon reconstruction ([`sparsegpt`]) on top of
//! the Cholesky factors of [`cholesky`]. [`gptq`] quantizes with the same solver
//! ([`obs_solver`], shared with SparseGPT and their joint mode) to the grid of [`quant_grid`];
//! [`refit`] re-solves a pruned layer's kept weights for its mask;
//! [`rtn`] is round-to-nearest without compensation; [`scale_search`] is GPTQ's optional search
//! of a group's scale. [`recon`] measures what a pruning or a
//! quantization cost on the calibration inputs.

pub mod cholesky;
pub mod cholesky_blocked;
pub mod conv;
mod dims;
pub mod gptq;
pub mod hessian;
mod obs_solver;
pub mod quant_grid;
pub mod recon;
mod refit;
pub mod rtn;
mod scale_search;
mod select_top;
mod selection;
pub mod sparsegpt;
pub mod wanda;

pub use conv::ConvGeometry;
pub use gptq::{gptq, GptqOptions, Quantized};
pub use hessian::Hessian;
pub use quant_grid::QuantGrid;
pub use recon::rel_recon_error;
pub use rtn::round_to_nearest;
pub use sparsegpt::{sparse_gpt, sparse_gpt_refitted, Refitted, SparseGptOptions};
pub use wanda::wanda_scores;
