//! Bench only: a training step of a graph dumped by bench/train/train-dump.mjs (JSON spec + binary
//! initializers), timed per op type (RUSTFLAGS="--cfg sparsekit_train_profile", `--features train-profile`), natively.
//! Usage: RUSTFLAGS="--cfg sparsekit_train_profile" cargo run --release --manifest-path bench/rust/Cargo.toml --bin train_profile --features train-profile -- /tmp/t25/det 8,3,128,128 [steps]
use sparsekit_wasm::train::{AdamConfig, Graph, Tensor, Trainer};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let base = &args[1];
    let shape: Vec<usize> = args[2].split(',').map(|s| s.parse().unwrap()).collect();
    let steps: usize = args.get(3).map_or(2, |s| s.parse().unwrap());
    let (spec, inits, _) = sparsekit_bench::train_dump::read(base);
    let g = Graph::new(&spec, inits).unwrap();
    let mut tr = Trainer::new(g, AdamConfig::default(), false).unwrap();
    let n: usize = shape.iter().product();
    let x = Tensor::new(shape.clone(), (0..n).map(|i| (i as f32).sin()).collect()).unwrap();
    let t = tr.graph.forward(vec![x.clone()]).unwrap();
    for s in 0..steps {
        let t0 = Instant::now();
        tr.step(vec![x.clone()], &t).unwrap();
        eprintln!("step {s}: {:.0} ms", t0.elapsed().as_secs_f64() * 1e3);
    }
    #[cfg(sparsekit_train_profile)]
    {
        let p = tr.graph.profile.borrow();
        let mut v: Vec<_> = p.iter().collect();
        v.sort_by(|a, b| (b.1 .0 + b.1 .1).partial_cmp(&(a.1 .0 + a.1 .1)).unwrap());
        let total: f64 = v.iter().map(|(_, (f, b))| f + b).sum();
        for (op, (f, b)) in v {
            eprintln!("{op:>20}: fwd {:8.0} ms  bwd {:8.0} ms  ({:4.1}%)", f * 1e3, b * 1e3, (f + b) / total * 100.0);
        }
    }
}
