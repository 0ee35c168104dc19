//! The forward lets go of the values no backward reads (issue 37 item 5: a language model's
//! activations), and a MatMul whose second operand is wide computes `g · Wᵀ` transposed instead
//! of copying `Wᵀ`: the steps are the same, bit for bit. A small decoder block with the ops of an
//! exported SmolLM2 (Gather of a frozen table, RMSNorm decomposed into Pow / ReduceMean / Add /
//! Sqrt / Div / Mul, projections, heads by Reshape / Transpose, a causal Softmax, a SiLU MLP,
//! Slice / Neg / Concat of a rotation, a wide head and a Softmax over its vocabulary) trains for
//! several steps with the release and with every value kept: the same losses and parameters.
//! The MatMul's transposed product is checked against the GEMM contract's running sums.

#[path = "support/train_init.rs"]
mod train_init;
use sparsekit_wasm::train::{AdamConfig, Attr, Graph, GraphSpec, InitSpec, LossSpec, NodeSpec, Tensor, Trainer};
use train_init::*;

fn ints(name: &str, v: &[i64]) -> InitSpec {
    InitSpec { name: name.into(), dims: vec![v.len()], floats: None, ints: Some(v.to_vec()) }
}

fn n(op: &str, i: &[&str], o: &[&str]) -> NodeSpec {
    NodeSpec::new(op, i, o, &[])
}

const S: usize = 6;
const D: usize = 8;
const H: usize = 2;
const V: usize = 40;

/// One decoder block and a head; `ids` [1, S] (token ids as floats) -> `probs` [1, S, V].
fn decoder(keep_all: bool) -> Trainer {
    let hd = (D / H) as i64;
    let nodes = vec![
        NodeSpec::new("Gather", &["table", "ids"], &["e"], &[("axis", Attr::Int(0))]),
        // RMSNorm
        n("Pow", &["e", "two"], &["sq"]),
        NodeSpec::new("ReduceMean", &["sq"], &["ms"], &[("axes", Attr::Ints(vec![-1])), ("keepdims", Attr::Int(1))]),
        n("Add", &["ms", "eps"], &["mse"]),
        n("Sqrt", &["mse"], &["rms"]),
        n("Div", &["e", "rms"], &["nrm"]),
        n("Mul", &["nrm", "gamma"], &["h"]),
        // attention: q, k, v; heads; the rotation's half swap on q
        n("MatMul", &["h", "wq"], &["q"]),
        n("MatMul", &["h", "wk"], &["k"]),
        n("MatMul", &["h", "wv"], &["v"]),
        n("Reshape", &["q", "heads"], &["q4"]),
        NodeSpec::new("Transpose", &["q4"], &["qt"], &[("perm", Attr::Ints(vec![0, 2, 1, 3]))]),
        n("Slice", &["qt", "half_lo", "half_mid", "axis3"], &["q1"]),
        n("Slice", &["qt", "half_mid", "half_hi", "axis3"], &["q2"]),
        n("Neg", &["q2"], &["nq2"]),
        NodeSpec::new("Concat", &["nq2", "q1"], &["qr"], &[("axis", Attr::Int(-1))]),
        n("Add", &["qt", "qr"], &["qq"]),
        n("Reshape", &["k", "heads"], &["k4"]),
        NodeSpec::new("Transpose", &["k4"], &["kt"], &[("perm", Attr::Ints(vec![0, 2, 3, 1]))]),
        n("Reshape", &["v", "heads"], &["v4"]),
        NodeSpec::new("Transpose", &["v4"], &["vt"], &[("perm", Attr::Ints(vec![0, 2, 1, 3]))]),
        n("MatMul", &["qq", "kt"], &["sc"]),
        n("Mul", &["sc", "scale"], &["scs"]),
        n("Add", &["scs", "causal"], &["scm"]),
        NodeSpec::new("Softmax", &["scm"], &["att"], &[("axis", Attr::Int(-1))]),
        n("MatMul", &["att", "vt"], &["ctx"]),
        NodeSpec::new("Transpose", &["ctx"], &["ctxt"], &[("perm", Attr::Ints(vec![0, 2, 1, 3]))]),
        n("Reshape", &["ctxt", "flat"], &["c2"]),
        n("MatMul", &["c2", "wo"], &["o"]),
        n("Add", &["e", "o"], &["r1"]),
        // SiLU MLP
        n("MatMul", &["r1", "wg"], &["gate"]),
        n("Sigmoid", &["gate"], &["sg"]),
        n("Mul", &["gate", "sg"], &["silu"]),
        n("MatMul", &["r1", "wu"], &["up"]),
        n("Mul", &["silu", "up"], &["mlp"]),
        n("MatMul", &["mlp", "wd"], &["down"]),
        n("Add", &["r1", "down"], &["r2"]),
        // the head (D x V: wide) and the distribution over the vocabulary
        n("MatMul", &["r2", "head"], &["logits"]),
        NodeSpec::new("Softmax", &["logits"], &["probs"], &[("axis", Attr::Int(-1))]),
    ];
    let mut causal = vec![0.0f32; S * S];
    for i in 0..S {
        for j in i + 1..S {
            causal[i * S + j] = -1e4;
        }
    }
    let inits = vec![
        init("table", &[V, D], 1, 1.0),
        InitSpec { name: "two".into(), dims: vec![], floats: Some(vec![2.0]), ints: None },
        InitSpec { name: "eps".into(), dims: vec![], floats: Some(vec![1e-5]), ints: None },
        InitSpec { name: "scale".into(), dims: vec![], floats: Some(vec![0.5]), ints: None },
        InitSpec { name: "gamma".into(), dims: vec![D], floats: Some(lcg(2, D, 0.2).iter().map(|v| 1.0 + v).collect()), ints: None },
        init("wq", &[D, D], 3, 0.4),
        init("wk", &[D, D], 4, 0.4),
        init("wv", &[D, D], 5, 0.4),
        init("wo", &[D, D], 6, 0.4),
        init("wg", &[D, 2 * D], 7, 0.4),
        init("wu", &[D, 2 * D], 8, 0.4),
        init("wd", &[2 * D, D], 9, 0.4),
        init("head", &[D, V], 10, 0.4),
        InitSpec { name: "causal".into(), dims: vec![1, 1, S, S], floats: Some(causal), ints: None },
        ints("heads", &[1, S as i64, H as i64, hd]),
        ints("flat", &[1, S as i64, D as i64]),
        ints("half_lo", &[0]),
        ints("half_mid", &[hd / 2]),
        ints("half_hi", &[hd]),
        ints("axis3", &[3]),
    ];
    let spec = GraphSpec { nodes, inputs: vec!["ids".into()], outputs: vec!["probs".into()], frozen: vec!["table".into(), "gamma".into()] };
    let mut g = Graph::new(&spec, inits).unwrap();
    g.keep_all_values(keep_all);
    let mut t = Trainer::new(g, AdamConfig { lr: 1e-2, ..AdamConfig::default() }, true).unwrap();
    t.set_losses(vec![LossSpec::parse("kl", Some(-1), None).unwrap()]).unwrap();
    t
}

fn ids(seed: u64) -> Tensor {
    Tensor::new(vec![1, S], lcg(seed, S, 1.0).iter().map(|v| ((v + 1.0) * 0.5 * (V - 1) as f32).round()).collect()).unwrap()
}

fn bits(t: &Trainer) -> Vec<Vec<u32>> {
    (0..t.graph.params.len()).map(|i| t.graph.param(i).data.iter().map(|v| v.to_bits()).collect()).collect()
}

#[test]
fn released_values_train_bit_for_bit_as_kept_ones() {
    let (mut kept, mut released) = (decoder(true), decoder(false));
    // the targets: the kept model's own distributions on other windows
    let targets: Vec<Tensor> = (0..4).map(|s| kept.graph.forward(vec![ids(100 + s)]).unwrap().remove(0)).collect();
    for step in 0..8u64 {
        let (x, t) = (ids(step % 4), &targets[step as usize % 4]);
        let (a, b) =
            (kept.step(vec![x.clone()], std::slice::from_ref(t)).unwrap(), released.step(vec![x], std::slice::from_ref(t)).unwrap());
        assert_eq!(a.to_bits(), b.to_bits(), "step {step}: loss {a} kept, {b} released");
        assert_eq!(bits(&kept), bits(&released), "step {step}: parameters differ");
    }
    // what was let go: activations no backward reads (the logits beside their Softmax, the
    // heads' reshapes and transposes, the rotation's halves, RMSNorm's mean of squares), while
    // what a backward reads stays (a Softmax's output, a projection's input)
    for name in ["logits", "q4", "qr", "ctx", "ctxt", "sq", "ms"] {
        assert!(released.graph.value(name).is_none(), "{name} is still held");
        assert!(kept.graph.value(name).is_some(), "{name} kept");
    }
    for name in ["probs", "att", "h", "r1", "r2", "c2", "sg", "mlp"] {
        assert!(released.graph.value(name).is_some(), "{name}: a backward reads it");
    }
}

/// `dA = g · Wᵀ` of a MatMul whose weight is wide (`k·n` > `m·k + m·n`, computed transposed
/// without a copy of `Wᵀ`) is the GEMM contract's running sum `0 + g_p w_p` in `p` order.
#[test]
fn a_wide_weights_input_gradient_is_the_running_sum() {
    let (m, k, v) = (3, 5, 64);
    let spec =
        GraphSpec { nodes: vec![n("MatMul", &["x", "w"], &["y"])], inputs: vec!["x".into()], outputs: vec!["y".into()], frozen: vec![] };
    // x computed from a parameter, so that its gradient is needed: x = a + 0
    let mut nodes = vec![n("Add", &["x", "a"], &["xa"])];
    nodes.push(n("MatMul", &["xa", "w"], &["y"]));
    let spec = GraphSpec { nodes, ..spec };
    let mut g = Graph::new(&spec, vec![init("a", &[m, k], 1, 0.0), init("w", &[k, v], 2, 1.0)]).unwrap();
    let x = Tensor::new(vec![m, k], lcg(3, m * k, 1.0)).unwrap();
    g.forward(vec![x]).unwrap();
    let gy = Tensor::new(vec![m, v], lcg(4, m * v, 1.0)).unwrap();
    let grads = g.backward(vec![gy.clone()]).unwrap();
    let a_at = g.params.iter().position(|p| p.name == "a").unwrap();
    let w = g.param(g.params.iter().position(|p| p.name == "w").unwrap()).clone();
    for i in 0..m {
        for j in 0..k {
            let mut c = 0.0f32;
            for p in 0..v {
                c += gy.data[i * v + p] * w.data[j * v + p];
            }
            assert_eq!(grads[a_at].data[i * k + j].to_bits(), c.to_bits(), "dA[{i}][{j}]");
        }
    }
}
