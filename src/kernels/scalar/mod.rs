//! Portable kernels: the reference that the SIMD kernels must reproduce bit for bit. Natively
//! they are what runs (LLVM autovectorizes the sums); in wasm they run without `+simd128`.
//!
//! One file per concept, the same files as [`super::simd`] where there is a SIMD version. Besides
//! the interface re-exported by `kernels`, the one-block helpers (`prox_scaled`, `hx_moments`,
//! `root_start_mu`, `root_step_lane`, `certified_root`, `bisection_iterate`, ...) are used by the
//! general path of the Adam step on every backend: the SIMD quad kernels reproduce them per lane.

mod adam_run;
mod adam_update;
mod bisection;
mod certify;
pub(crate) mod erf;
pub(crate) mod exp;
mod gemm;
mod gemm_f64;
mod newton;
mod nm24;
mod pack;
mod read_off;
mod reduce;
mod scale;
mod start;
mod syrk;
mod write;

pub use adam_run::adam_run;
pub use adam_update::{adam_update, AdamCoefs};
pub use bisection::{cond_sumsq, cond_sumsq_hx, prox_step4};
pub use certify::certified_root;
pub use erf::{erf_f32, erf_in_place};
pub use exp::{exp_f32, exp_in_place, sigmoid_f32, sigmoid_in_place};
pub use gemm::{gemm_acc_panel, gemm_acc_serial};
pub use gemm_f64::{sub_mul_tile, sub_mul_tile_of};
pub use newton::{prox_root4, root_step_lane, root_sums_hx};
pub use nm24::{nm24_group, nm24_mask, nm24_mask_uninit};
pub use pack::{hx_moments, prox_pack4, prox_stats4};
pub use read_off::bisection_iterate;
pub use reduce::{reduce_chunk, reduce_chunks};
pub use scale::scale_chunks;
pub use start::{root_start4, root_start_lane, root_start_mu, zeroed_mu};
pub use syrk::syrk_tile;
pub use write::{prox_scaled, prox_write};
