//! Bench-only exports (prefixed `bench_`) over the shared operations of `bench/rust/src/ops.rs`.
//! The library's own bindings (including `initThreadPool` in the threaded build) are linked in
//! too, as the library is a dependency.

use sparsekit_bench::ops::{self, Case};
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
        sparsekit_wasm::test_support::SIMD,
        cfg!(feature = "threads"),
        sparsekit_wasm::test_support::par::threads()
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

/// The same probe split into one slice per worker (all of them reading at once): the
/// bandwidth ceiling of the threaded build, to compare threaded kernels against.
#[wasm_bindgen]
pub fn bench_bw_sum_par() -> f32 {
    use sparsekit_wasm::test_support::par;
    BW.with(|b| {
        let mut v = b.borrow_mut();
        let chunk = v.len().div_ceil(par::threads()).max(1);
        par::map_chunks_mut(&mut v, chunk, |_, c| ops::sum_multi(c)).iter().sum()
    })
}

/// `n` empty parallel regions of one task per worker: the pool's wake-up and join cost
/// (time it and divide by `n`).
#[wasm_bindgen]
pub fn bench_par_empty(n: u32) -> u32 {
    use sparsekit_wasm::test_support::par;
    let hits = std::sync::atomic::AtomicU32::new(0);
    for _ in 0..n {
        par::for_each_index(par::threads(), |_| {
            hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        });
    }
    hits.into_inner()
}

/// `tasks` tasks of pure arithmetic (`iters` steps of a dependent integer recurrence each), on
/// the workers when threads are up, else one after the other: timed in both builds in the
/// same run, the ratio is what 2 workers can gain on this machine at that moment (shared
/// cores), the ceiling for the threaded kernels' ratios.
#[wasm_bindgen]
pub fn bench_spin(tasks: u32, iters: u32) -> u32 {
    use sparsekit_wasm::test_support::par;
    let acc = std::sync::atomic::AtomicU32::new(0);
    par::for_each_index(tasks as usize, |i| {
        let mut x = i as u32;
        for _ in 0..iters {
            x = std::hint::black_box(x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223));
        }
        acc.fetch_xor(x, std::sync::atomic::Ordering::Relaxed);
    });
    acc.into_inner()
}

/// `tasks` tasks of floating-point throughput (`iters` rounds of eight independent SIMD
/// multiply-add chains each). Two vCPUs that are the two hyperthreads of one host core run
/// [`bench_spin`]'s dependent chain side by side at full speed, but share the floating-point
/// pipes that the kernels need: this ceiling sees that, the integer one does not.
#[wasm_bindgen]
pub fn bench_spin_fp(tasks: u32, iters: u32) -> f32 {
    use sparsekit_wasm::test_support::par;
    let acc = std::sync::Mutex::new(0.0f32);
    par::for_each_index(tasks as usize, |i| {
        let s = fp_chains(i as f32, iters);
        *acc.lock().unwrap_or_else(|e| e.into_inner()) += s;
    });
    acc.into_inner().unwrap_or_else(|e| e.into_inner())
}

#[cfg(target_feature = "simd128")]
fn fp_chains(seed: f32, iters: u32) -> f32 {
    use std::arch::wasm32::*;
    let (a, b) = (f32x4_splat(0.999_9), f32x4_splat(1e-4 * seed));
    let mut v = [f32x4_splat(1.0); 8];
    for _ in 0..iters {
        for x in v.iter_mut() {
            *x = f32x4_add(f32x4_mul(*x, a), b);
        }
    }
    std::hint::black_box(v).iter().map(|x| f32x4_extract_lane::<0>(*x)).sum()
}

#[cfg(not(target_feature = "simd128"))]
fn fp_chains(seed: f32, iters: u32) -> f32 {
    let mut v = [1.0f32; 32];
    for _ in 0..iters {
        for x in v.iter_mut() {
            *x = *x * 0.999_9 + 1e-4 * seed;
        }
    }
    std::hint::black_box(v).iter().sum()
}

/// Runs one operation once with every parallel task timed (the `mttrace` variant only):
/// `{"call_ms": .., "spans": [[task, worker, start_ms, end_ms], ..]}`, times from the call's
/// start, on a clock all workers share (`performance.timeOrigin + performance.now()`).
#[cfg(sparsekit_task_trace)]
#[wasm_bindgen]
pub fn bench_trace(op: &str, block: &str) -> String {
    use sparsekit_wasm::test_support::task_trace;
    task_trace::set_clock(shared_clock_ms);
    task_trace::take();
    let t0 = task_trace::now_ms();
    bench_run(op, block);
    let call_ms = task_trace::now_ms() - t0;
    let spans: Vec<String> =
        task_trace::take().iter().map(|s| format!("[{},{},{:.4},{:.4}]", s.task, s.worker, s.start_ms - t0, s.end_ms - t0)).collect();
    format!("{{\"call_ms\":{call_ms:.4},\"spans\":[{}]}}", spans.join(","))
}

/// Milliseconds on a clock every Web Worker of the page shares: each worker's
/// `performance.now()` counts from its own `timeOrigin`.
#[cfg(sparsekit_task_trace)]
fn shared_clock_ms() -> f64 {
    use js_sys::{Function, Reflect};
    thread_local! {
        static PERF: (wasm_bindgen::JsValue, Function, f64) = {
            let perf = Reflect::get(&js_sys::global(), &"performance".into()).expect("performance");
            let now: Function = Reflect::get(&perf, &"now".into()).expect("performance.now").into();
            let origin = Reflect::get(&perf, &"timeOrigin".into()).ok().and_then(|o| o.as_f64()).unwrap_or(0.0);
            (perf, now, origin)
        };
    }
    PERF.with(|(perf, now, origin)| origin + now.call0(perf).ok().and_then(|v| v.as_f64()).unwrap_or(0.0))
}

#[wasm_bindgen]
pub fn bench_bw_free() {
    BW.with(|b| *b.borrow_mut() = Vec::new());
}

// ---------------------------------------------------------------- calibration (bench/rust/src/calib.rs)

use sparsekit_bench::calib;

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

/// `hessian` (accumulate nvec vectors), `sparsegpt` or `gptq` (in place; restore after); a checksum.
#[wasm_bindgen]
pub fn bench_calib_run(op: &str) -> f64 {
    CALIB.with(|c| {
        let b = c.borrow();
        let case = b.as_ref().expect("bench_calib_prepare first");
        match op {
            "hessian" => case.hessian(),
            "sparsegpt" => case.sparse_gpt(),
            "gptq" => case.gptq(),
            _ => panic!("unknown calib op {op}"),
        }
    })
}

#[wasm_bindgen]
pub fn bench_calib_restore() {
    CALIB.with(|c| c.borrow().as_ref().expect("bench_calib_prepare first").restore());
}

/// Bit digest of the Hessian and of the SparseGPT and GPTQ results (identical across variants).
#[wasm_bindgen]
pub fn bench_calib_digest() -> String {
    CALIB.with(|c| format!("{:016x}", c.borrow().as_ref().expect("bench_calib_prepare first").digest()))
}

#[wasm_bindgen]
pub fn bench_calib_free() {
    CALIB.with(|c| *c.borrow_mut() = None);
}
