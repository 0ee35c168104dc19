//! LayerNormalization and Softmax of the training core over workers (src/train/ops/norm.rs): runs
//! of rows go to the workers and the scale / bias gradients are partial sums over fixed parts of
//! rows, so forward values and every gradient keep their bits on 1, 2 and 3 workers; the parts'
//! sum is the plain sum over all rows (a part dropped or counted twice fails).
//! `cargo test --release --features native-threads --test norm_threads`
#![cfg(all(feature = "native-threads", not(target_arch = "wasm32")))]

#[path = "support/train_init.rs"]
mod train_init;
use sparsekit_wasm::train::{Attr, Graph, GraphSpec, NodeSpec, Tensor};
use train_init::*;

/// x [rows, d] · w (per feature) -> LayerNormalization (s, b) -> y -> Softmax -> p; outputs y, p.
fn graph(d: usize) -> Graph {
    let nodes = vec![
        NodeSpec::new("Mul", &["x", "w"], &["z"], &[]),
        NodeSpec::new("LayerNormalization", &["z", "s", "b"], &["y"], &[("axis", Attr::Int(-1))]),
        NodeSpec::new("Softmax", &["y"], &["p"], &[("axis", Attr::Int(-1))]),
    ];
    let spec = GraphSpec { nodes, inputs: vec!["x".into()], outputs: vec!["y".into(), "p".into()], frozen: vec![] };
    Graph::new(&spec, vec![init("w", &[d], 1, 1.5), init("s", &[d], 2, 1.0), init("b", &[d], 3, 0.5)]).unwrap()
}

fn bits(ts: &[Tensor]) -> Vec<Vec<u32>> {
    ts.iter().map(|t| t.data.iter().map(|v| v.to_bits()).collect()).collect()
}

#[test]
fn rows_over_workers_keep_their_bits() {
    // 700 rows of 384 (a batch of token rows: many runs and 22 parts, the last one short), and 9 rows
    for (rows, d) in [(700usize, 384usize), (9, 384), (130, 50)] {
        let x = Tensor::new(vec![rows, d], lcg(7, rows * d, 2.0)).unwrap();
        let gy = Tensor::new(vec![rows, d], lcg(8, rows * d, 1.0)).unwrap();
        let gp = Tensor::new(vec![rows, d], lcg(9, rows * d, 1.0)).unwrap();
        let mut runs = Vec::new();
        for workers in [1usize, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(workers).build().unwrap();
            let (outs, grads) = pool.install(|| {
                let mut g = graph(d);
                let outs = g.forward(vec![x.clone()]).unwrap();
                let grads = g.backward(vec![gy.clone(), gp.clone()]).unwrap();
                (outs, grads)
            });
            runs.push((workers, bits(&outs), bits(&grads)));
        }
        let (_, o1, g1) = &runs[0];
        for (w, o, g) in &runs[1..] {
            assert!(o == o1, "{rows}x{d}: outputs on {w} workers differ from 1");
            assert!(g == g1, "{rows}x{d}: gradients on {w} workers differ from 1");
        }
    }
}

#[test]
fn the_bias_gradient_is_the_sum_over_every_row() {
    // LayerNormalization alone: d bias = the output gradient summed over rows
    let (rows, d) = (700usize, 64usize);
    let nodes = vec![NodeSpec::new("LayerNormalization", &["x", "s", "b"], &["y"], &[("axis", Attr::Int(-1))])];
    let spec = GraphSpec { nodes, inputs: vec!["x".into()], outputs: vec!["y".into()], frozen: vec![] };
    let mut g = Graph::new(&spec, vec![init("s", &[d], 2, 1.0), init("b", &[d], 3, 0.5)]).unwrap();
    let x = Tensor::new(vec![rows, d], lcg(7, rows * d, 2.0)).unwrap();
    let gy = Tensor::new(vec![rows, d], lcg(8, rows * d, 1.0)).unwrap();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let grads = pool.install(|| {
        g.forward(vec![x]).unwrap();
        g.backward(vec![gy.clone()]).unwrap()
    });
    for i in 0..d {
        let want = (0..rows).map(|r| gy.data[r * d + i] as f64).sum::<f64>();
        let got = grads[1].data[i] as f64;
        assert!((got - want).abs() <= 1e-6 * want.abs().max(1.0), "d b[{i}]: {got} against {want}");
    }
}
