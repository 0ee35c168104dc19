//! Scopes: groups of blocks that compete (keep the top k per scope). A [`ScopeSpec`] groups the
//! blocks of one spec or coupling; a [`ScopeCoupling`] lets several scopes compete together.

mod coupling;
mod select;
mod spec;

pub use coupling::{CouplingValues, ScopeCoupling};
pub use select::{kth_best, top_k};
pub use spec::{nnz_from_f64, sparsity_to_nnz, BlockNode, HardBy, NodeValues, ScopeSpec};
