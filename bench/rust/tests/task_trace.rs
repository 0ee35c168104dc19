//! The bench-only task trace (cfg `sparsekit_task_trace`) on a native 2-worker pool: every task of a parallel
//! loop is recorded once, by a pool worker, with a span inside the call.
//! `RUSTFLAGS="--cfg sparsekit_task_trace" cargo test --manifest-path bench/rust/Cargo.toml --features native-threads --test task_trace`
//! (without the cfg this test compiles to nothing: scripts/test.sh runs it with the cfg set).
#![cfg(all(feature = "native-threads", sparsekit_task_trace, not(target_arch = "wasm32")))]

use sparsekit_wasm::test_support::{par, task_trace};
use std::time::Instant;

fn clock() -> f64 {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_secs_f64() * 1e3
}

#[test]
fn every_task_is_recorded_once_with_its_worker_and_span() {
    task_trace::set_clock(clock);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let mut data = vec![1.0f32; 1 << 16];
    let (spans, sums, t0, t1) = pool.install(|| {
        let n = par::tasks_for(data.len(), 1 << 10, 64);
        assert_eq!(n, 16, "8 tasks per worker on 2 workers");
        task_trace::take();
        let t0 = task_trace::now_ms();
        let sums = par::map_chunks_mut(&mut data, (1 << 16) / n, |_, c| c.iter().sum::<f32>());
        let t1 = task_trace::now_ms();
        (task_trace::take(), sums, t0, t1)
    });
    assert_eq!(sums, vec![4096.0; 16]);
    let mut tasks: Vec<u32> = spans.iter().map(|s| s.task).collect();
    tasks.sort_unstable();
    assert_eq!(tasks, (0..16).collect::<Vec<_>>());
    for s in &spans {
        assert!(s.worker < 2, "{s:?} ran outside the pool");
        assert!(t0 <= s.start_ms && s.start_ms <= s.end_ms && s.end_ms <= t1, "{s:?} outside [{t0}, {t1}]");
    }
    assert!(task_trace::take().is_empty(), "take() drains the record");
}
