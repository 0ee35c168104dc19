//! Module-level exports: panic hook, error-code list, memory, build variant and thread pool.

use crate::core::error::ErrorKind;
#[allow(unused_imports)]
use js_sys::{Array, Float32Array, Function, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// Every stable error code the library can throw, from the core's one list (`ErrorKind::ALL`).
#[wasm_bindgen(js_name = errorCodes)]
pub fn error_codes() -> Vec<String> {
    ErrorKind::ALL.iter().map(|k| k.code().to_string()).collect()
}

/// The wasm memory (for zero-copy `Float32Array` views of params).
#[wasm_bindgen(js_name = wasmMemory)]
pub fn wasm_memory() -> JsValue {
    wasm_bindgen::memory()
}

/// True in the threaded build.
#[wasm_bindgen(js_name = threadsCompiled)]
pub fn threads_compiled() -> bool {
    cfg!(feature = "threads")
}

/// True when the module was compiled with SIMD128.
#[wasm_bindgen(js_name = simdCompiled)]
pub fn simd_compiled() -> bool {
    cfg!(target_feature = "simd128")
}

#[cfg(feature = "threads")]
pub use wasm_bindgen_rayon::init_thread_pool;

/// Marks the worker pool as started (JS calls it when `initThreadPool` resolves).
#[wasm_bindgen(js_name = markThreadPoolReady)]
pub fn mark_thread_pool_ready() {
    crate::core::threads::set_pool_ready();
}

/// Number of rayon workers (1 in the single-threaded build or before the pool is started).
#[wasm_bindgen(js_name = numThreads)]
pub fn num_threads() -> usize {
    crate::core::threads::worker_count()
}

/// Runs `n` tasks on the pool and returns how many distinct workers ran them (a check that
/// the pool really is parallel).
#[wasm_bindgen(js_name = probeThreads)]
pub fn probe_threads(n: usize) -> usize {
    #[cfg(feature = "threads")]
    if crate::core::threads::pool_ready() {
        use rayon::prelude::*;
        let ids: std::collections::BTreeSet<usize> = (0..n)
            .into_par_iter()
            .map(|i| {
                // a little work so that tasks spread over the workers
                let mut x = i as f64;
                for _ in 0..20000 {
                    x = (x * 1.000001).sin().abs();
                }
                std::hint::black_box(x);
                rayon::current_thread_index().unwrap_or(usize::MAX)
            })
            .collect();
        return ids.len();
    }
    let _ = n;
    1
}

/// Refuses a `{data, shape}` grid input whose shape is not the grid's (the one shape check of
/// grid inputs, in the core; the JS layer calls it before flattening).
#[wasm_bindgen(js_name = checkGridShape)]
pub fn check_grid_shape(what: &str, grid: &[f64], given: &[f64]) -> Result<(), JsValue> {
    let grid = super::convert::sizes(grid, "grid shape").map_err(super::convert::to_js)?;
    let given = super::convert::sizes(given, what).map_err(super::convert::to_js)?;
    crate::core::shape::check_grid_shape(what, &grid, &given).map_err(super::convert::to_js)
}
