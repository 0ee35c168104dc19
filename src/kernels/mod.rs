//! Inner loops of the library, behind one small interface.
//!
//! Everything the core does to weight elements goes through these functions: per-chunk
//! reductions of a row (block norms, min/max), per-chunk scaling (masks, multipliers), the 2:4
//! mask, the training core's Adam update and its activations' `exp`, sigmoid and `erf`, and the Adam-conditioned soft threshold's kernels (the bisection's sums and steps, the
//! Newton search's sums, steps and start, the fused pass over a run of blocks). [`scalar`] is the
//! portable implementation and the test oracle; [`simd`] is the `wasm32` SIMD128 implementation
//! (selected at compile time with `+simd128`). Natively the scalar code is what runs (LLVM
//! autovectorizes it).
//!
//! The backend is chosen once, below (as hashbrown picks its SIMD group implementation): both
//! backends define the same functions (the GEMMs' register tiles too: [`gemm`] and [`gemm_f64`]
//! call `imp`), and the interface is the chosen one's, re-exported. Both stay reachable by name
//! (`scalar::*`, `simd::*`, through the crate's hidden `test_support`) so that the bit-exactness
//! tests (`tests/wasm_*.rs`) can call them side by side.
//!
//! A wasm build without `+simd128` runs the scalar kernels (the bench builds one to measure what
//! SIMD128 buys). [`par`] runs closures over chunks with rayon (features `threads` /
//! `native-threads`) or sequentially: one code path; in a bench build with the cfg
//! `sparsekit_task_trace` (set through RUSTFLAGS, never by a cargo feature) it records each
//! task's worker and span ([`task_trace`]).
//!
//! Reduction order is fixed and identical in both implementations (4 interleaved lanes per
//! contiguous chunk, combined as `(l0 + l1) + (l2 + l3)`, then added to the accumulator), so the
//! SIMD and scalar results are bit-for-bit equal.

mod block_run;
pub mod col_sums;
pub mod conv_band;
pub mod depthwise;
pub mod dot_f64;
pub mod gemm;
pub mod gemm_f64;
mod gemm_shape;
pub mod im2col;
mod lanes;
pub mod order;
pub mod par;
mod reduction;
pub mod scalar;
pub mod syrk;
#[cfg(all(sparsekit_task_trace, any(feature = "threads", feature = "native-threads")))]
pub mod task_trace;

/// The one backend switch: `$simd` is the condition under which the SIMD128 kernels are compiled
/// and used (written once, so the module, the alias and [`SIMD`] cannot disagree).
macro_rules! backend {
    ($simd:meta) => {
        #[cfg($simd)]
        pub mod simd;
        #[cfg(not($simd))]
        use scalar as imp;
        #[cfg($simd)]
        use simd as imp;
        /// True when the SIMD128 kernels are compiled in (else the scalar ones run).
        pub const SIMD: bool = cfg!($simd);
    };
}
backend!(all(target_arch = "wasm32", target_feature = "simd128"));

pub use block_run::{BlockRun, QuadSearch, QUADS_MAX};
pub use imp::{
    adam_run, adam_update, cond_sumsq, cond_sumsq_hx, erf_in_place, exp_in_place, nm24_mask, nm24_mask_uninit, prox_pack4, prox_root4,
    prox_stats4, prox_step4, prox_write, reduce_chunk, reduce_chunks, root_start4, root_sums_hx, scale_chunks, sigmoid_in_place,
};
pub use lanes::{ProxLanes, ProxStop, RootLanes, RootStart};
pub use reduction::{nan_max, nan_min, Reduction};
pub use scalar::{erf_f32, exp_f32, sigmoid_f32, AdamCoefs};
