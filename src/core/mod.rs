//! The bottom layer: typed errors, fallible allocation, shape and length checks, the thread-pool
//! flag. Imports nothing else from the crate.

pub mod alloc;
pub mod error;
pub mod shape;
#[cfg(any(target_arch = "wasm32", feature = "threads", feature = "native-threads"))]
pub mod threads;
