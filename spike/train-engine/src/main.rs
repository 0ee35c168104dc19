//! Native run of the spike: the finite-difference check, then interleaved timing.

use std::time::Instant;
use train_engine_spike::net::NetSpec;
use train_engine_spike::reference::{finite_differences, max_rel_err};

fn main() {
    // 1. correctness: conv -> relu -> conv -> mean, gradients vs f64 central differences
    let tiny = NetSpec::tiny();
    let (x, ws, bs) = tiny.init(3);
    let (fw, fb) = finite_differences(&tiny, &x, &ws, &bs, 1e-6);
    #[cfg(feature = "ours")]
    {
        let (_, gw, gb) = train_engine_spike::ours_net::OursNet::new(&tiny, &x, &ws, &bs).step();
        println!("ours   grad vs FD: max rel err weights {:.2e}, biases {:.2e}", max_rel_err(&gw, &fw, 1e-3), max_rel_err(&gb, &fb, 1e-3));
    }
    #[cfg(feature = "candle")]
    {
        let (_, gw, gb) = train_engine_spike::candle_net::CandleNet::new(&tiny, &x, &ws, &bs).step();
        println!("candle grad vs FD: max rel err weights {:.2e}, biases {:.2e}", max_rel_err(&gw, &fw, 1e-3), max_rel_err(&gb, &fb, 1e-3));
    }
    // 2. speed: one training step of the det-like block, interleaved, median of reps
    let spec = train_engine_spike::bench_spec();
    let (x, ws, bs) = spec.init(7);
    let flops = spec.step_flops();
    println!("bench net: batch {:?}, {:.3} GFLOP per step", spec.input, flops / 1e9);
    let reps: usize = std::env::var("REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(15);
    #[cfg(feature = "ours")]
    let mut ours = train_engine_spike::ours_net::OursNet::new(&spec, &x, &ws, &bs);
    #[cfg(feature = "candle")]
    let cand = train_engine_spike::candle_net::CandleNet::new(&spec, &x, &ws, &bs);
    let (mut to, mut tc): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    for r in 0..reps + 2 {
        #[cfg(feature = "ours")]
        {
            let t = Instant::now();
            std::hint::black_box(ours.step());
            if r >= 2 {
                to.push(t.elapsed().as_secs_f64());
            }
        }
        #[cfg(feature = "candle")]
        {
            let t = Instant::now();
            std::hint::black_box(cand.step());
            if r >= 2 {
                tc.push(t.elapsed().as_secs_f64());
            }
        }
        let _ = r;
    }
    for (name, mut t) in [("ours", to), ("candle", tc)] {
        if t.is_empty() {
            continue;
        }
        t.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let med = t[t.len() / 2];
        println!("{name:6} step: median {:.2} ms (min {:.2}, max {:.2}, {} reps) = {:.2} GFLOP/s", med * 1e3, t[0] * 1e3, t[t.len() - 1] * 1e3, t.len(), flops / med / 1e9);
    }
}
