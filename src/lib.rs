//! sparsekit-wasm: block-structured and N:M pruning of neural-network weights, in place.
//!
//! Layers, dependencies pointing down (see `docs/ARCHITECTURE.md`):
//! `core` (errors, allocation, shapes) → `kernels` (scalar oracle + SIMD128 inner loops, the
//! floor of the numeric code) → `layout` (strided walks and block tilings) → the domain:
//! `block` (Param, View, BlockSpec, BlockCoupling), `scope` (ScopeSpec, ScopeCoupling), `nm`
//! (N:M after NVIDIA ASP), `export` (CSR/BSR/2:4) → `bindings` (wasm-bindgen, conversion only).
//! Masks are keep-masks everywhere: 1 keeps, 0 prunes.

mod core;
// Public for the bit-exactness tests of the kernels (tests/wasm_kernels.rs) and the bench; not
// part of the API.
#[doc(hidden)]
pub mod kernels;
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

pub use crate::core::error::{Error, ErrorKind, Result};
pub use crate::core::shape::check_grid_shape;
pub use block::{block_view_of, broadcast_block_to_element, BlockCoupling, BlockSpec, Method, Norm, Param, SoftOptions, View};
pub use scope::{BlockNode, HardBy, ScopeCoupling, ScopeSpec};
