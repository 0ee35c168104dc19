//! Per-task timings of the parallel loops (bench builds only: compiled with the cfg
//! `sparsekit_task_trace`, which the bench sets through RUSTFLAGS; no cargo feature turns it on).
//!
//! A threaded call's time is start-up (waking the pool), the tasks, the wait for the last task,
//! and the return to the caller. Wall-clock figures cannot tell a worker that started late from
//! one that was descheduled mid-task or from tasks that were simply slower; recording which
//! worker ran each task of a [`super::par`] loop, and from when to when, can. The bench's threads
//! probe reads these spans (`bench/threads/task-trace.mjs`).
//!
//! The clock comes from the embedder ([`set_clock`]): in wasm the bench passes
//! `performance.timeOrigin + performance.now()`, because each Web Worker's `performance.now()`
//! counts from its own origin. Recording takes a lock per task, a few microseconds per call at
//! the task sizes [`super::par::tasks_for`] picks; the traced build is a separate bench variant,
//! never the one whose ratios are reported.

use std::sync::{Mutex, OnceLock};

/// One task of a parallel loop: its index in the loop, the rayon worker that ran it
/// (`u32::MAX` for a thread outside the pool) and its start and end on the embedder's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TaskSpan {
    pub task: u32,
    pub worker: u32,
    pub start_ms: f64,
    pub end_ms: f64,
}

static CLOCK: OnceLock<fn() -> f64> = OnceLock::new();
static SPANS: Mutex<Vec<TaskSpan>> = Mutex::new(Vec::new());

/// Sets the clock (milliseconds, shared by every thread); the first call wins.
pub fn set_clock(clock: fn() -> f64) {
    let _ = CLOCK.set(clock);
}

/// The clock's reading, or 0 before [`set_clock`].
pub fn now_ms() -> f64 {
    CLOCK.get().map_or(0.0, |clock| clock())
}

/// The spans recorded since the last call, in the order the tasks ended.
pub fn take() -> Vec<TaskSpan> {
    std::mem::take(&mut *SPANS.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Runs task `task` and records its span.
pub(super) fn timed<R>(task: usize, f: impl FnOnce() -> R) -> R {
    let start_ms = now_ms();
    let out = f();
    let end_ms = now_ms();
    let worker = rayon::current_thread_index().map_or(u32::MAX, |w| u32::try_from(w).unwrap_or(u32::MAX));
    let task = u32::try_from(task).unwrap_or(u32::MAX);
    SPANS.lock().unwrap_or_else(|e| e.into_inner()).push(TaskSpan { task, worker, start_ms, end_ms });
    out
}
