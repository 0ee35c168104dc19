//! Native timing of the Adam-conditioned soft threshold at one size and block shape (default
//! 4096², 4×4), next to one norm pass: where the step's time goes, for bench/README.md.
//!
//! `cargo run --release --manifest-path bench/rust/Cargo.toml --bin adam_profile -- [rows cols bh bw reps]` prints best-of times of
//! norms, Newton, bisection and `maxIter: 0` (the part shared by both methods); `ADAM_ONLY=newton`
//! (or `bisection`, `maxIter0`) runs one of them, for `perf record`. Natively the prox kernels are
//! the portable scalar ones (the SIMD128 ones exist only in wasm), so the split differs from the
//! wasm one: profile the bench module in Node for that (bench/README.md).

use sparsekit_bench::ops::Case;
use sparsekit_wasm::{Method, Norm, SoftOptions};
use std::time::Instant;

fn best(reps: usize, case: &Case, mut f: impl FnMut()) -> f64 {
    let mut b = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        f();
        b = b.min(t.elapsed().as_secs_f64());
        case.restore();
    }
    b
}

fn main() {
    let a: Vec<usize> = std::env::args().skip(1).map(|s| s.parse().expect("number")).collect();
    let get = |i: usize, d: usize| a.get(i).copied().unwrap_or(d);
    let (rows, cols, bh, bw, reps) = (get(0, 4096), get(1, 4096), get(2, 4), get(3, 4), get(4, 7));
    let case = Case::new(rows, cols);
    let block = format!("{bh}x{bw}");
    let spec = case.spec(&block);
    let t = vec![0.3 * (spec.numel_per_block() as f32 / 3.0).sqrt(); spec.numblk()];
    let norms = best(reps, &case, || {
        std::hint::black_box(spec.norms(Norm::L2, None).unwrap());
    });
    println!("norms      {:8.2} ms", norms * 1e3);
    let only = std::env::var("ADAM_ONLY").ok();
    for (name, method, max_iter) in [("newton", Method::Newton, 20), ("bisection", Method::Bisection, 20), ("maxIter0", Method::Newton, 0)]
    {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let opts = SoftOptions { max_iter, atol: 0.0, method, ..SoftOptions::default() };
        let s = best(reps, &case, || spec.soft_threshold(&t, Some(&case.cond), opts).unwrap());
        println!("{name:10} {:8.2} ms  = {:5.1} norm passes", s * 1e3, s / norms);
    }
}
