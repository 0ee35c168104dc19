//! The training core: a graph of ONNX operators built from a [`spec::GraphSpec`], run forward
//! and backward on `f32` NCHW tensors (a reverse-mode tape: the node order), with the heavy
//! loops (convolutions, matrix products) on the kernels layer, and a masked Adam
//! ([`adam`]) that keeps a pruned model's zeros at zero. See docs/training-engine.md.

pub mod adam;
pub mod fold;
pub mod fuse;
pub mod gather;
pub mod graph;
pub mod grid;
pub mod loss;
pub mod ops;
pub mod prox;
pub mod spec;
pub mod state;
pub mod tensor;
pub mod trainer;

pub use adam::{AdamConfig, AdamState};
pub use graph::Graph;
pub use loss::{LossKind, LossSpec};
pub use prox::{ProxReport, ProxTarget};
pub use spec::{Attr, GraphSpec, InitSpec, NodeSpec, TensorAttr};
pub use tensor::{ITensor, Tensor, Value};
pub use trainer::Trainer;
