//! `wasm32` SIMD128 kernels. Same lane order as [`super::scalar`], hence the same bits; each
//! public function computes what the scalar function of the same name defines.
//!
//! `min`/`max` use `f32x4.min/max` only for NaN propagation and pick the operand with a compare,
//! so signed zeros resolve exactly as [`super::nan_max`]/[`super::nan_min`] do (`max(-0, +0)` is
//! the first operand), not as wasm's `f32x4.max` does.

mod adam_run;
mod adam_update;
mod bisection;
mod certify;
mod erf;
mod exp;
mod gemm;
mod gemm_f64;
mod newton;
mod nm24;
mod pack;
mod pin;
mod read_off;
mod reduce;
mod scale;
mod start;
mod syrk;
mod vec;
mod write;

pub use adam_run::adam_run;
pub use adam_update::adam_update;
pub use bisection::{cond_sumsq, cond_sumsq_hx, prox_step4};
pub use erf::erf_in_place;
pub use exp::{exp_in_place, sigmoid_in_place};
pub use gemm::{gemm_acc_panel, gemm_acc_serial};
pub use gemm_f64::sub_mul_tile;
pub use newton::{prox_root4, root_sums_hx};
pub use nm24::{nm24_mask, nm24_mask_uninit};
pub use pack::{prox_pack4, prox_stats4};
pub use reduce::{reduce_chunk, reduce_chunks};
pub use scale::scale_chunks;
pub use start::root_start4;
pub use syrk::syrk_tile;
pub use write::prox_write;
