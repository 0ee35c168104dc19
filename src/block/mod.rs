//! Weights and their block grids: a [`Param`] owns a tensor, a [`View`] is a strided window over
//! it (write-through), a [`BlockSpec`] sees a view as a grid of blocks, a [`BlockCoupling`]
//! aligns several grids by axis orders; `prox` is the Adam-conditioned soft-threshold step, `root` its
//! root finders.

mod align;
mod coupling;
mod param;
mod prox;
mod root;
mod spec;
mod view;

pub(crate) use align::Alignment;
pub use coupling::BlockCoupling;
pub use param::Param;
pub use root::Method;
pub(crate) use spec::{check_not_nan, keep_to_factors, threshold_keep};
pub use spec::{BlockSpec, Norm, SoftOptions, F32_EPS};
pub use view::{block_view_of, broadcast_block_to_element, View};
