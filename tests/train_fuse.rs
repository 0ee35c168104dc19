//! Fusion of element-wise chains (src/train/fuse.rs): which nodes fuse, which must not, and a
//! fused graph's forward and gradients equal, bit for bit, those of the same graph run node by
//! node. The node-by-node reference is the same graph with every scalar constant passed through
//! an Identity node (a computed value is not a constant, so nothing fuses there).
//! The gradients of the fused path against finite differences are in tests/train_grad.rs.

use sparsekit_wasm::train::{Attr, Graph, GraphSpec, InitSpec, NodeSpec, Tensor};

#[path = "support/kernel_data.rs"]
mod kernel_data;
use kernel_data::data;

fn fl(name: &str, dims: &[usize], v: Vec<f32>) -> InitSpec {
    InitSpec { name: name.into(), dims: dims.to_vec(), floats: Some(v), ints: None }
}

fn node(op: &str, ins: &[&str], outs: &[&str], attrs: &[(&str, Attr)]) -> NodeSpec {
    NodeSpec::new(op, ins, outs, attrs)
}

fn bits(t: &Tensor) -> Vec<u32> {
    t.data.iter().map(|v| v.to_bits()).collect()
}

/// The scalar constants of the blocks below, and the tensors: `x` (values up to ±5, so both
/// sides of ±3 are hit) and a weight `w` of the same shape.
fn inits(scalars: &[(&str, f32)]) -> Vec<InitSpec> {
    let mut v = vec![fl("x", &[2, 3, 5, 5], data(150, 7, 5.0)), fl("w", &[2, 3, 5, 5], data(150, 9, 1.5))];
    v.extend(scalars.iter().map(|&(n, k)| fl(n, &[1], vec![k])));
    v
}

/// The reference: every one-element initializer read through an Identity node.
fn unfused(nodes: &[NodeSpec], inits: &[InitSpec]) -> Vec<NodeSpec> {
    let scalars: Vec<&str> = inits.iter().filter(|t| t.floats.as_ref().is_some_and(|f| f.len() == 1)).map(|t| t.name.as_str()).collect();
    let mut out: Vec<NodeSpec> = scalars.iter().map(|s| node("Identity", &[s], &[&format!("{s}#id")], &[])).collect();
    for n in nodes {
        let mut n = n.clone();
        n.inputs.iter_mut().filter(|i| scalars.contains(&i.as_str())).for_each(|i| *i = format!("{i}#id"));
        out.push(n);
    }
    out
}

/// Forward and gradients of the graph (output gradients from a fixed sequence) and its ops.
fn run(nodes: Vec<NodeSpec>, inits: Vec<InitSpec>, outputs: &[&str]) -> (Vec<Tensor>, Vec<Tensor>, Vec<String>) {
    let spec = GraphSpec { nodes, inputs: vec![], outputs: outputs.iter().map(|s| s.to_string()).collect(), frozen: vec![] };
    let mut g = Graph::new(&spec, inits).expect("graph builds");
    let ys = g.forward(vec![]).expect("forward");
    let gys = ys.iter().enumerate().map(|(i, y)| Tensor { shape: y.shape.clone(), data: data(y.len(), 100 + i as u64, 1.0) }).collect();
    let grads = g.backward(gys).expect("backward");
    let ops = g.node_ops().iter().map(|s| s.to_string()).collect();
    (ys, grads, ops)
}

/// Runs `nodes` fused and node by node; asserts equal bits; returns the fused graph's ops.
fn same_bits(nodes: Vec<NodeSpec>, init: Vec<InitSpec>, outputs: &[&str]) -> Vec<String> {
    let (ys, gs, ops) = run(nodes.clone(), init.clone(), outputs);
    let (yr, gr, ops_r) = run(unfused(&nodes, &init), init, outputs);
    assert!(ops_r.iter().all(|o| !o.contains("Hard") && o != "FusedElementwise"), "reference fused: {ops_r:?}");
    for (a, b) in ys.iter().zip(&yr) {
        assert_eq!(a.shape, b.shape);
        assert_eq!(bits(a), bits(b), "forward differs ({ops:?})");
    }
    assert_eq!(gs.len(), gr.len());
    for (a, b) in gs.iter().zip(&gr) {
        assert_eq!(bits(a), bits(b), "gradients differ ({ops:?})");
    }
    ops
}

/// PaddleOCR's block: scale and shift, `x * Clip(x + 3, 0, 6) / 6`, scale and shift.
fn paddle_block(x: &str, y: &str) -> Vec<NodeSpec> {
    vec![
        node("Mul", &["s0", x], &["m0"], &[]),
        node("Add", &["m0", "b0"], &["h"], &[]),
        node("Add", &["h", "three"], &["a"], &[]),
        node("Clip", &["a", "zero", "six"], &["c"], &[]),
        node("Mul", &["h", "c"], &["m"], &[]),
        node("Div", &["m", "six"], &["hs"], &[]),
        node("Mul", &["s1", "hs"], &["m1"], &[]),
        node("Add", &["m1", "b1"], &[y], &[]),
    ]
}

const SCALARS: &[(&str, f32)] =
    &[("s0", 1.3), ("b0", -0.4), ("s1", 0.8), ("b1", 0.25), ("three", 3.0), ("zero", 0.0), ("six", 6.0), ("sixth", 1.0 / 6.0)];

#[test]
fn paddle_hardswish_block_fuses_into_one_node_with_the_same_bits() {
    let ops = same_bits(paddle_block("x", "y"), inits(SCALARS), &["y"]);
    assert_eq!(ops, ["FusedElementwise"]);
}

#[test]
fn hardswish_forms_and_hardsigmoid_fuse_with_the_same_bits() {
    let xw = node("Mul", &["x", "w"], &["u"], &[]);
    // x * (Clip(x + 3) * (1/6)), Clip bounds as opset-6 attributes, operands swapped
    let scale_first = vec![
        xw.clone(),
        node("Add", &["three", "u"], &["a"], &[]),
        node("Clip", &["a"], &["c"], &[("min", Attr::Float(0.0)), ("max", Attr::Float(6.0))]),
        node("Mul", &["sixth", "c"], &["d"], &[]),
        node("Mul", &["d", "u"], &["y"], &[]),
    ];
    assert_eq!(same_bits(scale_first, inits(SCALARS), &["y"]), ["Mul", "HardSwish"]);
    // (u * Clip(u + 3)) * (1/6)
    let mul_first = vec![
        xw.clone(),
        node("Add", &["u", "three"], &["a"], &[]),
        node("Clip", &["a", "zero", "six"], &["c"], &[]),
        node("Mul", &["c", "u"], &["m"], &[]),
        node("Mul", &["m", "sixth"], &["y"], &[]),
    ];
    assert_eq!(same_bits(mul_first, inits(SCALARS), &["y"]), ["Mul", "HardSwish"]);
    // an SE gate: x * HardSigmoid(u) written as Clip(u + 3, 0, 6) / 6 (u is read twice, but
    // only once by the gate: it stays a graph value)
    let gate = vec![
        xw,
        node("Add", &["u", "three"], &["a"], &[]),
        node("Clip", &["a", "zero", "six"], &["c"], &[]),
        node("Div", &["c", "six"], &["d"], &[]),
        node("Mul", &["x", "d"], &["y"], &[]),
        node("Add", &["u", "y"], &["z"], &[]),
    ];
    assert_eq!(same_bits(gate, inits(SCALARS), &["z"]), ["Mul", "HardSigmoid", "Mul", "Add"]);
}

#[test]
fn chains_that_must_not_fuse_keep_their_nodes_and_bits() {
    let has = |ops: &[String], op: &str| ops.iter().any(|o| o == op);
    // the Clip's output is read twice: no HardSwish (Add + Clip still fuse, Mul and Div stay)
    let mut two_readers = paddle_block("x", "y");
    two_readers.push(node("Add", &["c", "y"], &["z"], &[]));
    let ops = same_bits(two_readers, inits(SCALARS), &["z"]);
    assert!(!has(&ops, "HardSwish") && has(&ops, "Mul"), "{ops:?}");

    // an intermediate is a requested output: the nodes around it stay
    let ops = same_bits(paddle_block("x", "y"), inits(SCALARS), &["y", "m"]);
    assert!(!has(&ops, "HardSwish") && has(&ops, "Mul"), "{ops:?}");
    // the activation's input is an output too: its gradient has a third term, so the
    // activation stays decomposed (the sum keeps the graph's order)
    let ops = same_bits(paddle_block("x", "y"), inits(SCALARS), &["y", "h"]);
    assert!(has(&ops, "Mul") && ops.iter().filter(|o| *o == "FusedElementwise").count() == 3, "{ops:?}");

    // not exactly 3, 0, 6: no hard activation (the scalar steps still fuse)
    for (k, v) in [("three", 3.5), ("six", 6.5), ("zero", -0.5)] {
        let mut s = SCALARS.to_vec();
        s.iter_mut().filter(|p| p.0 == k).for_each(|p| p.1 = v);
        let ops = same_bits(paddle_block("x", "y"), inits(&s), &["y"]);
        assert!(has(&ops, "Mul") && !has(&ops, "HardSwish"), "{k}={v}: {ops:?}");
    }

    // a multi-element (trainable) operand is not a constant: nothing fuses
    let mut init = inits(SCALARS);
    init.push(fl("vec3", &[5], vec![3.0; 5]));
    let nodes = vec![node("Add", &["x", "vec3"], &["a"], &[]), node("Clip", &["a", "zero", "six"], &["y"], &[])];
    let (_, _, ops) = run(nodes, init, &["y"]);
    assert_eq!(ops, ["Add", "Clip"]);
}

#[test]
fn a_scalar_input_keeps_the_constants_broadcast_rank() {
    // x of shape [] times a [1] constant plus a [1, 1] one is [1, 1], fused or not (x is
    // computed: a one-element initializer would itself be a constant)
    let init = vec![fl("x0", &[], vec![0.7]), fl("k", &[1], vec![2.0]), fl("b", &[1, 1], vec![0.5])];
    let nodes = vec![node("Identity", &["x0"], &["x"], &[]), node("Mul", &["x", "k"], &["m"], &[]), node("Add", &["m", "b"], &["y"], &[])];
    let (ys, _, ops) = run(nodes.clone(), init.clone(), &["y"]);
    assert_eq!(ops, ["Identity", "FusedElementwise"]);
    assert_eq!(ys[0].shape, [1, 1]);
    let (yr, _, _) = run(unfused(&nodes, &init), init, &["y"]);
    assert_eq!(yr[0].shape, ys[0].shape);
}
