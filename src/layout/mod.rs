//! Strided layouts and their block tilings: the index arithmetic shared by views, block specs
//! and couplings.
//!
//! A [`Strided`] layout maps a row-major index `i` of `shape` to the storage offset
//! `sum_d i_d * stride_d` (storage offset 0, strides in elements, all non-negative), like
//! `torch.as_strided` and `ndarray`'s raw views. A [`Tiling`] cuts that layout into a grid of
//! equal blocks. Every element loop of the library is one of the walks defined here, so the
//! hot paths see contiguous runs whenever the layout has any.

mod block_shape;
mod strided;
mod tiling;

pub use block_shape::normalize_block_shape;
pub use strided::{for_each_offset, Strided};
pub use tiling::Tiling;
