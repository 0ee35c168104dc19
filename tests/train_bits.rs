//! The data-path ops of issue 38 give the same bits in every build. One graph holds Tile, Einsum
//! (both directions of attention), GRU (bidirectional, linear_before_reset), LSTM, Expand, Where,
//! Gather, ReduceMax / ReduceMin, Max, Exp and Neg, then Erf, Gelu, Sigmoid and Softmax (the kernels'
//! exp and erf, four lanes at a time in the SIMD build); its outputs, and the Adam second moments of
//! every parameter after one backward + update (each a function of the gradient's bits), are
//! hashed (FNV-1a over the f32 bits) and compared with `tests/data/train-bits.json`, which holds
//! the graph, its initializers and the hashes of the native scalar build:
//! - this test: the native scalar build (`cargo test --release --test train_bits`), and with
//!   `--features native-threads` the same graph in a 1-thread and a 4-thread pool;
//! - tests/onnx/train-bits.test.mjs: the package's SIMD128 wasm build, through the JS Trainer.
//!
//! `SPARSEKIT_WRITE_TRAIN_BITS=1` rewrites the fixture (only after a deliberate change of the
//! arithmetic: every build must then agree with the new hashes).
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/train_fd.rs"]
mod train_fd;
use sparsekit_wasm::train::{AdamConfig, Attr, Graph, GraphSpec, InitSpec, Tensor, Trainer};
use train_fd::*;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/train-bits.json");

fn fnv(v: &[f32]) -> String {
    let h = v.iter().fold(0x811c_9dc5u32, |h, x| (h ^ x.to_bits()).wrapping_mul(16_777_619));
    format!("{h:08x}")
}

fn graph() -> (GraphSpec, Vec<InitSpec>) {
    let (t, b, i, h) = (6, 4, 8, 16);
    let mut r = Rng(41);
    let int = |n: &str, dims: &[usize], v: &[i64]| InitSpec { name: n.into(), dims: dims.to_vec(), floats: None, ints: Some(v.to_vec()) };
    let inits = vec![
        f("x", &[t, b, i], &mut r),
        f("gw", &[2, 3 * h, i], &mut r),
        f("gr", &[2, 3 * h, h], &mut r),
        f("gb", &[2, 6 * h], &mut r),
        f("lw", &[1, 4 * h, i], &mut r),
        f("lr", &[1, 4 * h, h], &mut r),
        f("lb", &[1, 8 * h], &mut r),
        f("h0", &[1, b, h], &mut r),
        f("c0", &[1, b, h], &mut r),
        f("table", &[10, h], &mut r),
        int("ids", &[t], &[3, 9, 0, -1, 3, 5]),
        int("rep", &[3], &[2, 1, 1]),
        int("full", &[4], &[t as i64, 2, b as i64, h as i64]),
        int("col", &[4], &[t as i64, 1, 1, h as i64]),
        int("mask", &[1, 1, 4, 1], &[1, 0, 1, 1]),
        int("ax", &[1], &[3]),
    ];
    let s = |v: &str| Attr::Str(v.into());
    let nodes = vec![
        node(
            "GRU",
            &["x", "gw", "gr", "gb"],
            &["y1", "yh1"],
            &[("hidden_size", Attr::Int(16)), ("direction", s("bidirectional")), ("linear_before_reset", Attr::Int(1))],
        ),
        node("LSTM", &["x", "lw", "lr", "lb", "", "h0", "c0"], &["y2", "yh2", "yc2"], &[("hidden_size", Attr::Int(16))]),
        node("Einsum", &["y1", "y1"], &["att"], &[("equation", s("tdbh,sdbh->dbts"))]),
        node("ReduceMax", &["att"], &["mx"], &[("axes", ints(&[-1]))]),
        node("Sub", &["att", "mx"], &["att0"], &[]),
        node("Exp", &["att0"], &["e"], &[]),
        node("Einsum", &["e", "y1"], &["z"], &[("equation", s("dbts,sdbh->tdbh"))]),
        node("Tile", &["yh2", "rep"], &["yt"], &[]),
        node("Expand", &["yt", "full"], &["ye"], &[]),
        node("Where", &["mask", "z", "ye"], &["w"], &[]),
        node("Gather", &["table", "ids"], &["g"], &[]),
        node("Reshape", &["g", "col"], &["g4"], &[]),
        node("Add", &["w", "g4"], &["wg"], &[]),
        node("Max", &["wg", "yc2", "y2"], &["out"], &[]),
        node("ReduceMin", &["out", "ax"], &["mn"], &[("keepdims", Attr::Int(0))]),
        node("Neg", &["mn"], &["out2"], &[]),
        // the activations on the kernels' exp and erf (four lanes in the SIMD build)
        node("Erf", &["wg"], &["er"], &[]),
        node("Gelu", &["er"], &["ge"], &[]),
        node("Sigmoid", &["ge"], &["sg"], &[]),
        node("Softmax", &["sg"], &["out3"], &[("axis", Attr::Int(-1))]),
    ];
    let spec = GraphSpec { nodes, inputs: vec![], outputs: vec!["out".into(), "out2".into(), "yh1".into(), "out3".into()], frozen: vec![] };
    (spec, inits)
}

/// The hashes of the outputs, then of each parameter's second moment after one step.
fn hashes(spec: &GraphSpec, inits: &[InitSpec], gouts: &[Vec<f32>]) -> (Vec<String>, Vec<(String, String)>) {
    let mut tr = Trainer::new(Graph::new(spec, inits.to_vec()).unwrap(), AdamConfig::default(), false).unwrap();
    let outs = tr.graph.forward(vec![]).unwrap();
    let gs = outs.iter().zip(gouts).map(|(y, g)| Tensor::new(y.shape.clone(), g.clone()).unwrap()).collect();
    tr.backward(gs).unwrap();
    tr.update().unwrap();
    let names: Vec<String> = tr.graph.params.iter().map(|p| p.name.clone()).collect();
    let moments = names.iter().map(|n| (n.clone(), fnv(tr.second_moments(n).unwrap()))).collect();
    (outs.iter().map(|y| fnv(&y.data)).collect(), moments)
}

#[test]
fn new_ops_have_the_fixture_bits() {
    let (spec, inits) = graph();
    let mut g = Graph::new(&spec, inits.clone()).unwrap();
    let mut r = Rng(42);
    let gouts: Vec<Vec<f32>> = g.forward(vec![]).unwrap().iter().map(|y| (0..y.len()).map(|_| r.away()).collect()).collect();
    let got = hashes(&spec, &inits, &gouts);
    if std::env::var_os("SPARSEKIT_WRITE_TRAIN_BITS").is_some() {
        let init_json: Vec<serde_json::Value> =
            inits.iter().map(|i| serde_json::json!({ "name": i.name, "dims": i.dims, "floats": i.floats, "ints": i.ints })).collect();
        let fixture = serde_json::json!({
            "spec": spec, "inits": init_json, "gouts": gouts,
            "outputs": got.0, "moments": got.1.iter().map(|(n, h)| serde_json::json!([n, h])).collect::<Vec<_>>(),
        });
        std::fs::write(FIXTURE, serde_json::to_string(&fixture).unwrap()).unwrap();
    }
    let want: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(FIXTURE).expect("tests/data/train-bits.json")).unwrap();
    let want_outs: Vec<String> = serde_json::from_value(want["outputs"].clone()).unwrap();
    let want_moments: Vec<(String, String)> = serde_json::from_value(want["moments"].clone()).unwrap();
    assert_eq!(got.0, want_outs, "outputs");
    assert_eq!(got.1, want_moments, "second moments (gradients)");
    assert_eq!(want_moments.len(), 10, "every float initializer is a parameter");
    #[cfg(feature = "native-threads")]
    for n in [1, 4] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap();
        assert_eq!(pool.install(|| hashes(&spec, &inits, &gouts)), got, "{n} threads");
    }
}
