//! sparsekit-wasm: block-structured and N:M pruning of neural-network weights, in place.
//!
//! The core (everything but [`bindings`]) is plain Rust: it builds and is tested natively.
//! Concepts follow the sparsekit seeds: a [`view::View`] is a strided window over a
//! [`param::Param`]; a [`block::BlockSpec`] sees it as a grid of blocks; a
//! [`coupling::BlockCoupling`] aligns several block grids; a [`scope::ScopeSpec`] groups blocks
//! that compete, and a [`scope::ScopeCoupling`] lets several scopes compete together.
//! Masks are keep-masks everywhere: 1 keeps, 0 prunes.

pub mod error;
pub mod kernels;
pub mod layout;
pub mod param;
pub mod view;
pub mod block;
pub mod prox;
pub mod coupling;
pub mod select;
pub mod scope;
pub mod threads;
pub mod nm;
pub mod nm2d;
pub mod permute;
pub mod export;
pub mod magnitude;
pub mod calib;

#[cfg(target_arch = "wasm32")]
pub mod bindings;

pub use block::{BlockSpec, Norm, SoftOptions};
pub use coupling::BlockCoupling;
pub use error::{Error, ErrorKind, Result};
pub use param::Param;
pub use scope::{BlockNode, HardBy, ScopeCoupling, ScopeSpec};
pub use view::View;
