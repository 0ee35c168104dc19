//! Bench-only exports (prefixed `bench_`) over the shared operations of `bench/ops.rs`.
//! The library's own bindings (including `initThreadPool` in the threaded build) are linked in
//! too, as the library is a dependency.

#[path = "../../ops.rs"]
mod ops;

use ops::Case;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

thread_local! {
    static CASE: RefCell<Option<Case>> = const { RefCell::new(None) };
    static BW: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// `simd`/`scalar` kernels and whether threads are compiled in.
#[wasm_bindgen]
pub fn bench_info() -> String {
    format!(
        "{{\"simd\":{},\"threads\":{},\"nthreads\":{}}}",
        sparsekit_wasm::kernels::SIMD,
        cfg!(feature = "threads"),
        sparsekit_wasm::kernels::par::threads()
    )
}

/// Allocates a `rows x cols` case (weights, their backup, conditioners) in wasm memory.
#[wasm_bindgen]
pub fn bench_prepare(rows: usize, cols: usize) {
    CASE.with(|c| {
        *c.borrow_mut() = None;
        *c.borrow_mut() = Some(Case::new(rows, cols));
    });
}

#[wasm_bindgen]
pub fn bench_free() {
    CASE.with(|c| *c.borrow_mut() = None);
}

/// Runs one operation once (the caller times it); returns a checksum.
#[wasm_bindgen]
pub fn bench_run(op: &str, block: &str) -> f64 {
    CASE.with(|c| c.borrow().as_ref().expect("bench_prepare first").run(op, block))
}

/// Restores the weights after an in-place operation.
#[wasm_bindgen]
pub fn bench_restore() {
    CASE.with(|c| c.borrow().as_ref().expect("bench_prepare first").restore());
}

/// Bit digest of an op's result (compare variants).
#[wasm_bindgen]
pub fn bench_digest(op: &str, block: &str) -> String {
    CASE.with(|c| format!("{:016x}", c.borrow().as_ref().expect("bench_prepare first").digest(op, block)))
}

/// Memory-read bandwidth probe: `n` floats, summed with 16 accumulators by `bench_bw_sum`.
#[wasm_bindgen]
pub fn bench_bw_prepare(n: usize) {
    BW.with(|b| *b.borrow_mut() = (0..n).map(|i| (i & 1023) as f32).collect());
}

#[wasm_bindgen]
pub fn bench_bw_sum() -> f32 {
    BW.with(|b| ops::sum_multi(&b.borrow()))
}

#[wasm_bindgen]
pub fn bench_bw_free() {
    BW.with(|b| *b.borrow_mut() = Vec::new());
}

// ---------------------------------------------------------------- calibration (bench/calib.rs)

#[path = "../../calib.rs"]
mod calib;

thread_local! {
    static CALIB: RefCell<Option<calib::CalibCase>> = const { RefCell::new(None) };
}

/// Allocates a calibration case: a `rows x cols` weight, `nvec` input vectors, their Hessian.
#[wasm_bindgen]
pub fn bench_calib_prepare(rows: usize, cols: usize, nvec: usize) {
    CALIB.with(|c| {
        *c.borrow_mut() = None;
        *c.borrow_mut() = Some(calib::CalibCase::new(rows, cols, nvec));
    });
}

/// `hessian` (accumulate nvec vectors) or `sparsegpt` (in place; restore after); a checksum.
#[wasm_bindgen]
pub fn bench_calib_run(op: &str) -> f64 {
    CALIB.with(|c| {
        let b = c.borrow();
        let case = b.as_ref().expect("bench_calib_prepare first");
        match op {
            "hessian" => case.hessian(),
            "sparsegpt" => case.sparse_gpt(),
            _ => panic!("unknown calib op {op}"),
        }
    })
}

#[wasm_bindgen]
pub fn bench_calib_restore() {
    CALIB.with(|c| c.borrow().as_ref().expect("bench_calib_prepare first").restore());
}

/// Bit digest of the Hessian and of the SparseGPT result (identical across variants).
#[wasm_bindgen]
pub fn bench_calib_digest() -> String {
    CALIB.with(|c| format!("{:016x}", c.borrow().as_ref().expect("bench_calib_prepare first").digest()))
}

#[wasm_bindgen]
pub fn bench_calib_free() {
    CALIB.with(|c| *c.borrow_mut() = None);
}
