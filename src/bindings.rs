//! The wasm-bindgen layer: converts between JS values and the core, nothing more.
//!
//! Exported classes are `Raw*`; the package's hand-written JS layer (`pkg-template/src/`) wraps
//! them into the API of `docs/API.md` (error classes, options objects, `Map` results, live
//! `Param.data`). Every entry point validates its JS inputs and returns a typed error instead of
//! panicking: a panic in wasm would abort the instance.

mod block;
mod calib;
mod convert;
mod coupling;
mod export;
mod nm;
mod param;
mod quant;
mod runtime;
mod scope;
mod train;
mod train_control;

pub use block::*;
pub use calib::*;
pub use coupling::*;
pub use export::*;
pub use nm::*;
pub use param::*;
pub use quant::*;
pub use runtime::*;
pub use scope::*;
pub use train::*;
