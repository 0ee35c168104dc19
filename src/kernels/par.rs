//! One code path for sequential and parallel loops: with the feature `threads` (wasm,
//! wasm-bindgen-rayon) or `native-threads` these run on rayon once the pool is up
//! ([`crate::core::threads::pool_ready`]), else sequentially in order. Callers give every task disjoint
//! outputs, so results do not depend on the thread count.

#[cfg(any(feature = "threads", feature = "native-threads"))]
use rayon::prelude::*;

/// True when loops may go to rayon. In the threaded wasm build the pool exists only after JS
/// started its workers: touching rayon before that would try to spawn OS threads and trap.
#[cfg(any(feature = "threads", feature = "native-threads"))]
#[inline]
fn parallel() -> bool {
    crate::core::threads::pool_ready()
}

/// Workers available (1 without threads or before the pool is started).
#[inline]
pub fn threads() -> usize {
    #[cfg(any(feature = "threads", feature = "native-threads"))]
    if parallel() {
        return rayon::current_num_threads().max(1);
    }
    1
}

/// Tasks per worker at most. The cores are shared (other processes, the browser's own
/// threads): a worker that loses its core for a while leaves its remaining tasks to the others
/// to steal, so the tail at the end of a call is at most one task, 1/16 of the work on 2
/// workers; a task costs a few microseconds to hand out, well below 1% at the sizes that split.
const TASKS_PER_WORKER: usize = 8;

/// How many tasks to cut `work` units into: 1 without threads or for small work, else as many
/// as the work allows with at least `min_per_task` units each, up to [`TASKS_PER_WORKER`] per
/// worker and `max_tasks`.
pub fn tasks_for(work: usize, min_per_task: usize, max_tasks: usize) -> usize {
    let t = threads();
    if t <= 1 {
        return 1;
    }
    (work / min_per_task.max(1)).clamp(1, (TASKS_PER_WORKER * t).min(max_tasks.max(1)))
}

/// The length of the runs that `n` independent items (an element-wise pass) are cut into: at
/// least `min_per_task` each, as many as [`tasks_for`] allows; `n` (or 1) without threads.
pub fn run_len(n: usize, min_per_task: usize) -> usize {
    n.div_ceil(tasks_for(n, min_per_task, n)).max(1)
}

/// Calls `f(i)` for `i in 0..n`.
pub fn for_each_index<F: Fn(usize) + Sync + Send>(n: usize, f: F) {
    #[cfg(any(feature = "threads", feature = "native-threads"))]
    {
        if n > 1 && parallel() {
            #[cfg(sparsekit_task_trace)]
            let f = |i: usize| super::task_trace::timed(i, || f(i));
            (0..n).into_par_iter().for_each(f);
            return;
        }
    }
    (0..n).for_each(f)
}

/// `f(chunk_index, chunk)` over `items.chunks_mut(chunk)`, collecting the results in order.
pub fn map_chunks_mut<T: Send, R: Send, F>(items: &mut [T], chunk: usize, f: F) -> Vec<R>
where
    F: Fn(usize, &mut [T]) -> R + Sync + Send,
{
    let chunk = chunk.max(1);
    #[cfg(any(feature = "threads", feature = "native-threads"))]
    {
        if items.len() > chunk && parallel() {
            #[cfg(sparsekit_task_trace)]
            let f = |i: usize, c: &mut [T]| super::task_trace::timed(i, || f(i, c));
            return items.par_chunks_mut(chunk).enumerate().map(|(i, c)| f(i, c)).collect();
        }
    }
    items.chunks_mut(chunk).enumerate().map(|(i, c)| f(i, c)).collect()
}

/// `f(chunk_index, a_chunk, b_chunk)` over `a.chunks(ca)` zipped with `b.chunks_mut(cb)`.
pub fn zip_chunks<A: Sync, B: Send, F>(a: &[A], ca: usize, b: &mut [B], cb: usize, f: F)
where
    F: Fn(usize, &[A], &mut [B]) + Sync + Send,
{
    let (ca, cb) = (ca.max(1), cb.max(1));
    #[cfg(any(feature = "threads", feature = "native-threads"))]
    {
        if a.len() > ca && parallel() {
            #[cfg(sparsekit_task_trace)]
            let f = |i: usize, x: &[A], y: &mut [B]| super::task_trace::timed(i, || f(i, x, y));
            a.par_chunks(ca).zip(b.par_chunks_mut(cb)).enumerate().for_each(|(i, (x, y))| f(i, x, y));
            return;
        }
    }
    a.chunks(ca).zip(b.chunks_mut(cb)).enumerate().for_each(|(i, (x, y))| f(i, x, y))
}

/// A raw pointer that tasks may share: each task writes only elements no other task touches.
#[derive(Clone, Copy)]
pub struct SharedMut<T>(pub *mut T);
unsafe impl<T: Send> Send for SharedMut<T> {}
unsafe impl<T: Send> Sync for SharedMut<T> {}

impl<T> SharedMut<T> {
    /// The pointer (a method, so that closures capture the whole `Send` wrapper).
    #[inline(always)]
    pub fn get(&self) -> *mut T {
        self.0
    }
}
