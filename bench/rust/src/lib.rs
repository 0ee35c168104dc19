//! The operations the bench times, shared by the native bench (`src/bin/native_bench.rs`,
//! `src/bin/adam_profile.rs`) and the wasm bench module (`bench/wasm`), so that every runtime
//! times exactly the same core calls.

pub mod calib;
pub mod ops;
/// The dumped training graphs the native training profiles read (JSON: the `train-profile` feature).
#[cfg(feature = "train-profile")]
pub mod train_dump;
