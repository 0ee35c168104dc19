//! Whether parallel loops may use the rayon pool.
//!
//! Natively rayon's global pool is always there. In the threaded wasm build the pool exists
//! only after JS has started its workers (`initThreadPool`); before that, and in the
//! single-threaded build, every loop runs sequentially (touching rayon's global pool without
//! workers would try to spawn OS threads, which wasm cannot).

use std::sync::atomic::{AtomicBool, Ordering};

static POOL_READY: AtomicBool = AtomicBool::new(false);

/// Called once the wasm worker pool is running.
#[cfg(target_arch = "wasm32")]
pub fn set_pool_ready() {
    POOL_READY.store(true, Ordering::Release);
}

/// True when parallel loops may run on rayon.
#[cfg(any(feature = "threads", feature = "native-threads"))]
pub fn pool_ready() -> bool {
    if cfg!(all(feature = "native-threads", not(target_arch = "wasm32"))) {
        return true;
    }
    cfg!(feature = "threads") && POOL_READY.load(Ordering::Acquire)
}

/// How many workers parallel loops run on: rayon's count once the pool is usable, else 1.
#[cfg(target_arch = "wasm32")]
pub fn worker_count() -> usize {
    #[cfg(any(feature = "threads", feature = "native-threads"))]
    if pool_ready() {
        return rayon::current_num_threads();
    }
    1
}
