//! Native (x86_64) figures for bench/: the same operations as the wasm bench (`src/ops.rs`).
//!
//! `cargo run --release --manifest-path bench/rust/Cargo.toml --features native-threads --bin native_bench -- [--quick] [--check]`
//! prints one JSON object per line: the memory-read bandwidth probe, then one line per
//! (op, size, block, variant) with the best and the median seconds of the repetitions. Variant `native-st`
//! runs on a 1-thread rayon pool (the sequential path), `native-mt` on a pool of all cores.
//! `--check` verifies that both give bit-identical outputs.

use sparsekit_bench::ops::{self, Case, BLOCKS, OPS};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// `(best, median)` seconds of `reps` runs.
fn time_op(case: &Case, op: &str, block: &str, reps: usize) -> (f64, f64) {
    let mut ts = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        std::hint::black_box(case.run(op, block));
        ts.push(t.elapsed().as_secs_f64());
        if Case::mutates(op) {
            case.restore();
        }
    }
    let best = ts.iter().copied().fold(f64::INFINITY, f64::min);
    (best, median(ts))
}

/// `install` runs its closure on a pool thread while the caller blocks: the (`Rc`-based, not
/// `Sync`) case is used by one thread at a time.
struct OneAtATime<'a>(&'a Case);
unsafe impl Send for OneAtATime<'_> {}
unsafe impl Sync for OneAtATime<'_> {}
impl OneAtATime<'_> {
    fn get(&self) -> &Case {
        self.0
    }
}

/// A rayon pool of `n` workers (without the `native-threads` feature: no pool, sequential).
#[cfg(feature = "native-threads")]
struct Pool(rayon::ThreadPool);
#[cfg(feature = "native-threads")]
impl Pool {
    fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.0.install(f)
    }
}
#[cfg(feature = "native-threads")]
fn pool(n: usize) -> Pool {
    Pool(rayon::ThreadPoolBuilder::new().num_threads(n).build().expect("pool"))
}
#[cfg(not(feature = "native-threads"))]
struct Pool;
#[cfg(not(feature = "native-threads"))]
impl Pool {
    fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        f()
    }
}
#[cfg(not(feature = "native-threads"))]
fn pool(_: usize) -> Pool {
    Pool
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let check = args.iter().any(|a| a == "--check");
    let ncores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if !cfg!(feature = "native-threads") {
        eprintln!("native_bench: built without --features native-threads; native-mt is sequential too");
    }
    let (st, mt) = (pool(1), pool(ncores));

    // Memory-read bandwidth: multi-accumulator sum over 256 MiB, best of a few.
    let n = 64 << 20;
    let a: Vec<f32> = (0..n).map(|i| (i & 1023) as f32).collect();
    let mut best = f64::MAX;
    for _ in 0..7 {
        let t = Instant::now();
        std::hint::black_box(ops::sum_multi(std::hint::black_box(&a)));
        best = best.min(t.elapsed().as_secs_f64());
    }
    drop(a);
    println!(
        "{{\"kind\":\"membw\",\"env\":\"native\",\"bytes\":{},\"seconds\":{best:.6},\"gbps\":{:.3}}}",
        n * 4,
        (n * 4) as f64 / best / 1e9
    );

    let sizes: &[(usize, usize)] = if quick { &[(768, 768), (4096, 4096)] } else { &[(768, 768), (4096, 4096), (4096, 11008)] };
    for &(r, c) in sizes {
        let case = Case::new(r, c);
        let numel = r * c;
        let reps = if numel < 1 << 20 { 15 } else { 5 };
        for op in OPS {
            let blocks: Vec<&str> = if op == "nm24" { vec!["-"] } else { BLOCKS.to_vec() };
            for block in blocks {
                // As bench/kernels/suite.mjs: the largest soft threshold for 4x4 blocks only.
                if op == "soft" && numel > 1 << 25 && block != "4x4" {
                    continue;
                }
                let reps = if op == "soft" { reps.min(3) } else { reps };
                for (variant, p) in [("native-st", &st), ("native-mt", &mt)] {
                    let cc = OneAtATime(&case);
                    let (s, m) = p.install(|| time_op(cc.get(), op, block, reps));
                    println!(
                        "{{\"kind\":\"op\",\"env\":\"native\",\"variant\":\"{variant}\",\"op\":\"{op}\",\"rows\":{r},\"cols\":{c},\"block\":\"{block}\",\"reps\":{reps},\"seconds\":{s:.6},\"median_seconds\":{m:.6}}}"
                    );
                }
                if check {
                    let cc = OneAtATime(&case);
                    let d1 = st.install(|| cc.get().digest(op, block));
                    let d2 = mt.install(|| cc.get().digest(op, block));
                    println!(
                        "{{\"kind\":\"check\",\"op\":\"{op}\",\"rows\":{r},\"cols\":{c},\"block\":\"{block}\",\"identical\":{}}}",
                        d1 == d2
                    );
                    assert_eq!(d1, d2, "threaded result differs: {op} {r}x{c} {block}");
                }
            }
        }
    }
}
