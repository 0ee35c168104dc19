//! sparsekit-wasm: block-structured and N:M pruning of neural-network weights, in place.
//!
//! Layers, dependencies pointing down (see `docs/ARCHITECTURE.md`):
//! `core` (errors, allocation, shapes) → `kernels` (scalar oracle + SIMD128 inner loops, the
//! floor of the numeric code) → `layout` (strided walks and block tilings) → the domain:
//! `block` (Param, View, BlockSpec, BlockCoupling), `scope` (ScopeSpec, ScopeCoupling), `nm`
//! (N:M after NVIDIA ASP), `export` (CSR/BSR/2:4) → `bindings` (wasm-bindgen, conversion only).
//! Masks are keep-masks everywhere: 1 keeps, 0 prunes.

mod core;
mod kernels;
mod layout;

pub mod block;
pub mod calib;
pub mod export;
pub mod nm;
pub mod scope;
pub mod train;

// Public only so that tests/web.rs can drive the exported classes in Chromium.
#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod bindings;

/// Not part of the API: the kernels by name, for the tests that hold the SIMD128 kernels to the
/// scalar oracle bit for bit and test the GEMMs, the thread split and the training kernels on
/// their own (`tests/`), and for the bench crates' thread-pool probes and per-task trace
/// (`bench/rust`, `bench/wasm`). One hidden path, so that no user import reaches a kernel by
/// accident and every such use is found by searching for `test_support`.
#[doc(hidden)]
pub mod test_support {
    pub use crate::kernels::*;
}

pub use crate::core::error::{Error, ErrorKind, Result};
pub use crate::core::shape::check_grid_shape;
pub use block::{block_view_of, broadcast_block_to_element, BlockCoupling, BlockSpec, Method, Norm, Param, SoftOptions, View};
pub use scope::{BlockNode, HardBy, ScopeCoupling, ScopeSpec};
