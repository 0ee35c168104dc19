//! Bench only: the share of a model's nodes the training core runs per batch after folding, and
//! its forward against onnxruntime (issue 38). Reads the JSON that `bench/train/train-exports.py` writes
//! (the graph as `trainGraph` would give it, inputs, onnxruntime's outputs); prints one markdown
//! row per file: ONNX nodes, nodes as the core runs them (after fusion), folded once per input
//! shape, data path, the relative error (max |ours - ort| / max |ort|) of the worst output.
//!   cargo run --release --example train_exports -- bench/out/*.json
use serde::Deserialize;
use sparsekit_wasm::train::{Graph, GraphSpec, InitSpec, Tensor};

#[derive(Deserialize)]
struct Init {
    name: String,
    dims: Vec<usize>,
    floats: Option<Vec<f32>>,
    ints: Option<Vec<i64>>,
}

#[derive(Deserialize)]
struct T {
    dims: Vec<usize>,
    data: Vec<f32>,
}

#[derive(Deserialize)]
struct Dump {
    spec: GraphSpec,
    inits: Vec<Init>,
    feeds: Vec<T>,
    want: Vec<T>,
}

fn main() {
    println!("| model | ONNX nodes | as the core runs them (fused) | folded per input shape | data path per batch | forward vs onnxruntime (rel.) |");
    println!("|---|---:|---:|---:|---:|---:|");
    for p in std::env::args().skip(1) {
        let d: Dump = serde_json::from_str(&std::fs::read_to_string(&p).expect("readable")).expect("a train-exports.py dump");
        let onnx_nodes = d.spec.nodes.len();
        let name = std::path::Path::new(&p).file_stem().and_then(|s| s.to_str()).unwrap_or(&p).to_string();
        let inits = d.inits.into_iter().map(|i| InitSpec { name: i.name, dims: i.dims, floats: i.floats, ints: i.ints }).collect();
        let mut g = match Graph::new(&d.spec, inits) {
            Ok(g) => g,
            Err(e) => {
                println!("| {name} | {onnx_nodes} | refused: {} | | | |", e.message());
                continue;
            }
        };
        let feeds: Vec<Tensor> = d.feeds.into_iter().map(|t| Tensor::new(t.dims, t.data).expect("feed")).collect();
        let err = match g.forward(feeds) {
            Ok(outs) => outs
                .iter()
                .zip(&d.want)
                .map(|(o, w)| {
                    assert_eq!(o.shape, w.dims, "{name}: output shape");
                    let num = o.data.iter().zip(&w.data).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
                    num / w.data.iter().map(|b| b.abs()).fold(0f32, f32::max).max(f32::MIN_POSITIVE)
                })
                .fold(0f32, f32::max)
                .to_string(),
            Err(e) => format!("forward failed: {}", e.message()),
        };
        let (all, data) = (g.node_ops().len(), g.data_path_ops().len());
        println!("| {name} | {onnx_nodes} | {all} | {} | {data} | {err} |", all - data);
    }
}
