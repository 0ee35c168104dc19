//! The data-path ops of today's exports (issue 38) against finite differences, their masks and
//! generators by value, and the folding of shape subgraphs once per input shape.

#[path = "support/train_fd.rs"]
mod train_fd;
use sparsekit_wasm::train::{Attr, Graph, GraphSpec, InitSpec, NodeSpec, Tensor, TensorAttr};
use train_fd::*;

fn spec(nodes: Vec<NodeSpec>, inputs: &[&str], outputs: &[&str]) -> GraphSpec {
    GraphSpec {
        nodes,
        inputs: inputs.iter().map(|s| s.to_string()).collect(),
        outputs: outputs.iter().map(|s| s.to_string()).collect(),
        frozen: vec![],
    }
}

fn int_init(name: &str, dims: &[usize], v: &[i64]) -> InitSpec {
    InitSpec { name: name.into(), dims: dims.to_vec(), floats: None, ints: Some(v.to_vec()) }
}

fn tensor_attr(v: f64, int: bool) -> Attr {
    Attr::Tensor(TensorAttr { dims: vec![1], values: vec![v], int })
}

#[test]
fn expand_and_where_gradients() {
    let mut r = Rng(21);
    let inits = vec![f("x", &[3, 1], &mut r), i64s("sh", &[2, 3, 4])];
    check(vec![node("Expand", &["x", "sh"], &["y"], &[])], inits, &["y"], 1e-3, TOL);
    // a condition broadcast over rows, x broadcast over columns, y full
    let inits = vec![int_init("c", &[1, 4], &[1, 0, 0, 1]), f("a", &[3, 1], &mut r), f("b", &[3, 4], &mut r)];
    check(vec![node("Where", &["c", "a", "b"], &["y"], &[])], inits, &["y"], 1e-3, TOL);
    // the mask computed from the data: min(a, b) as Where(Less(a, b), a, b)
    let inits = vec![f("a", &[2, 5], &mut r), f("b", &[1, 5], &mut r)];
    let nodes = vec![node("Less", &["a", "b"], &["m"], &[]), node("Where", &["m", "a", "b"], &["y"], &[])];
    check(nodes, inits, &["y"], 1e-3, TOL);
}

#[test]
fn elementwise_gradients() {
    let mut r = Rng(22);
    for op in ["Neg", "Exp"] {
        check(vec![node(op, &["x"], &["y"], &[])], vec![f("x", &[3, 4], &mut r)], &["y"], 1e-3, TOL);
    }
    for op in ["Log", "Reciprocal"] {
        check(vec![node(op, &["x"], &["y"], &[])], vec![fpos("x", &[3, 4], &mut r)], &["y"], 1e-3, TOL);
    }
    // its own generator: the draws of the cases below stay as they were
    let mut rope = Rng(25);
    for op in ["Cos", "Sin"] {
        check(vec![node(op, &["x"], &["y"], &[])], vec![f("x", &[3, 4], &mut rope)], &["y"], 1e-3, TOL);
    }
    for op in ["Max", "Min"] {
        let inits = vec![f("a", &[2, 3, 4], &mut r), f("b", &[3, 1], &mut r), f("c", &[4], &mut r)];
        check(vec![node(op, &["a", "b", "c"], &["y"], &[])], inits, &["y"], 1e-3, TOL);
    }
    for op in ["ReduceMax", "ReduceMin"] {
        for (axes, keep) in [(vec![1], 1), (vec![0, 2], 0)] {
            let attrs = [("axes", ints(&axes)), ("keepdims", Attr::Int(keep))];
            check(vec![node(op, &["x"], &["y"], &attrs)], vec![f("x", &[3, 4, 5], &mut r)], &["y"], 1e-3, TOL);
        }
    }
}

/// sentence-transformers' Normalize as torch exports it: x / Expand(Clip(ReduceL2(x, axes=[1]), eps)),
/// and a ReduceL2 over two axes without keepdims; both against finite differences.
#[test]
fn reduce_l2_gradients() {
    let mut r = Rng(27);
    let nodes = vec![
        node("ReduceL2", &["x"], &["n"], &[("axes", ints(&[1])), ("keepdims", Attr::Int(1))]),
        node("Clip", &["n", "eps"], &["nc"], &[]),
        node("Shape", &["x"], &["sh"], &[]),
        node("Expand", &["nc", "sh"], &["ne"], &[]),
        node("Div", &["x", "ne"], &["y"], &[]),
    ];
    let eps = InitSpec { name: "eps".into(), dims: vec![], floats: Some(vec![1e-12]), ints: None };
    check(nodes, vec![f("x", &[3, 5], &mut r), eps], &["y"], 1e-3, TOL);
    let attrs = [("axes", ints(&[0, 2])), ("keepdims", Attr::Int(0))];
    check(vec![node("ReduceL2", &["x"], &["y"], &attrs)], vec![f("x", &[2, 3, 4], &mut r)], &["y"], 1e-3, TOL);
    // by value, and a zero row: norm 0 and a zero gradient (not NaN)
    let x = InitSpec { name: "x".into(), dims: vec![2, 2], floats: Some(vec![3.0, 4.0, 0.0, 0.0]), ints: None };
    let nd = node("ReduceL2", &["x"], &["y"], &[("axes", ints(&[1])), ("keepdims", Attr::Int(0))]);
    let mut g = Graph::new(&spec(vec![nd], &[], &["y"]), vec![x]).unwrap();
    assert_eq!(g.forward(vec![]).unwrap()[0].data, vec![5.0, 0.0]);
    let gx = &g.backward(vec![Tensor::new(vec![2], vec![1.0, 1.0]).unwrap()]).unwrap()[0];
    assert_eq!(gx.data, vec![0.6, 0.8, 0.0, 0.0]);
}

/// torch's scaled_dot_product_attention export: Where(IsNaN(Softmax(s)), 0, Softmax(s)); the mask
/// by value (a NaN row zeroed), and the gradient through the Where of a finite Softmax.
#[test]
fn isnan_masks_a_softmax() {
    let x = InitSpec { name: "x".into(), dims: vec![4], floats: Some(vec![1.0, f32::NAN, -0.0, f32::INFINITY]), ints: None };
    let zero = InitSpec { name: "zero".into(), dims: vec![], floats: Some(vec![0.0]), ints: None };
    let nodes = vec![
        node("IsNaN", &["x"], &["m"], &[]),
        node("Cast", &["m"], &["y"], &[("to", Attr::Int(1))]),
        node("Where", &["m", "zero", "x"], &["z"], &[]),
    ];
    let mut g = Graph::new(&spec(nodes, &[], &["y", "z"]), vec![x, zero]).unwrap();
    let outs = g.forward(vec![]).unwrap();
    assert_eq!(outs[0].data, vec![0.0, 1.0, 0.0, 0.0]);
    assert_eq!(outs[1].data, vec![1.0, 0.0, 0.0, f32::INFINITY]);
    let mut r = Rng(28);
    let zero = InitSpec { name: "zero".into(), dims: vec![], floats: Some(vec![0.0]), ints: None };
    let nodes = vec![
        node("Softmax", &["s"], &["p"], &[("axis", Attr::Int(-1))]),
        node("IsNaN", &["p"], &["m"], &[]),
        node("Where", &["m", "zero", "p"], &["y"], &[]),
    ];
    check(nodes, vec![f("s", &[2, 3, 4], &mut r), zero], &["y"], 1e-3, TOL);
}

#[test]
fn gather_embedding_rows_and_axis() {
    let mut r = Rng(23);
    // token ids with a repeat and a negative index: the table's gradient sums both reads
    let inits = vec![f("table", &[10, 4], &mut r), int_init("ids", &[2, 3], &[1, 7, 1, 0, -1, 3])];
    check(vec![node("Gather", &["table", "ids"], &["y"], &[])], inits, &["y"], 1e-3, TOL);
    let inits = vec![f("x", &[2, 5, 3], &mut r), int_init("i", &[2], &[4, 0])];
    check(vec![node("Gather", &["x", "i"], &["y"], &[("axis", Attr::Int(1))])], inits, &["y"], 1e-3, TOL);
    let inits = vec![f("x", &[3, 4], &mut r), int_init("i", &[2, 4], &[2, 0, 1, -1, 0, 0, 2, 1])];
    check(vec![node("GatherElements", &["x", "i"], &["y"], &[])], inits, &["y"], 1e-3, TOL);
    let inits = vec![f("x", &[3, 4], &mut r), int_init("i", &[3, 2], &[3, 0, 1, 1, 2, 0])];
    check(vec![node("GatherElements", &["x", "i"], &["y"], &[("axis", Attr::Int(1))])], inits, &["y"], 1e-3, TOL);
    // rows no id reads get an exact zero gradient
    let inits = vec![f("table", &[6, 2], &mut r), int_init("ids", &[3], &[2, 2, 5])];
    let mut g = Graph::new(&spec(vec![node("Gather", &["table", "ids"], &["y"], &[])], &[], &["y"]), inits).unwrap();
    let y = g.forward(vec![]).unwrap();
    let gy = Tensor { shape: y[0].shape.clone(), data: vec![1.0; y[0].len()] };
    let gt = &g.backward(vec![gy]).unwrap()[0];
    assert_eq!(gt.data, vec![0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0]);
}

#[test]
fn gather_out_of_range_names_the_node_and_the_range() {
    let mut r = Rng(24);
    let mut nd = node("Gather", &["table", "ids"], &["y"], &[]);
    nd.name = "embed_tokens".into();
    let mut g = Graph::new(&spec(vec![nd], &["ids"], &["y"]), vec![f("table", &[160, 2], &mut r)]).unwrap();
    let e = g.forward(vec![Tensor::new(vec![2], vec![3.0, 996.0]).unwrap()]).expect_err("refused");
    assert_eq!(e.code(), "invalid_arguments");
    assert!(e.message().contains("Gather 'embed_tokens'") && e.message().contains("[-160, 159]"), "{}", e.message());
}

#[test]
fn attention_as_exports_write_it() {
    // scores = q kᵀ · 1/√d, masked with Where(mask, scores, -1e4), Softmax, times v
    let mut r = Rng(25);
    let inits = vec![
        f("q", &[2, 3, 4], &mut r),
        f("k", &[2, 3, 4], &mut r),
        f("v", &[2, 3, 4], &mut r),
        InitSpec { name: "scale".into(), dims: vec![], floats: Some(vec![0.5]), ints: None },
        InitSpec { name: "neg".into(), dims: vec![], floats: Some(vec![-1e4]), ints: None },
        int_init("mask", &[2, 1, 3], &[1, 1, 0, 1, 0, 1]),
    ];
    let nodes = vec![
        node("Transpose", &["k"], &["kt"], &[("perm", ints(&[0, 2, 1]))]),
        node("MatMul", &["q", "kt"], &["s"], &[]),
        node("Mul", &["s", "scale"], &["ss"], &[]),
        node("Where", &["mask", "ss", "neg"], &["sm"], &[]),
        node("Softmax", &["sm"], &["p"], &[("axis", Attr::Int(-1))]),
        node("MatMul", &["p", "v"], &["y"], &[]),
    ];
    check(nodes, inits, &["y"], 1e-3, TOL);
}

#[test]
fn masks_and_generators_by_value() {
    let a = InitSpec { name: "a".into(), dims: vec![4], floats: Some(vec![1.0, 2.0, 3.0, 0.0]), ints: None };
    let b = InitSpec { name: "b".into(), dims: vec![], floats: Some(vec![2.0]), ints: None };
    let nodes = vec![
        node("Equal", &["a", "b"], &["eq"], &[]),
        node("Greater", &["a", "b"], &["gt"], &[]),
        node("Not", &["gt"], &["ngt"], &[]),
        node("Cast", &["ngt"], &["y"], &[("to", Attr::Int(1))]),
        node("Cast", &["eq"], &["z"], &[("to", Attr::Int(1))]),
        node("Shape", &["a"], &["sh"], &[]),
        node("ConstantOfShape", &["sh"], &["ones"], &[("value", tensor_attr(7.0, true))]),
        node("Cast", &["ones"], &["o"], &[("to", Attr::Int(1))]),
        node("Range", &["r0", "r1", "r2"], &["rg"], &[]),
        node("ConstantOfShape", &["sh"], &["zeros"], &[]),
    ];
    let r = |n: &str, v: f32| InitSpec { name: n.into(), dims: vec![], floats: Some(vec![v]), ints: None };
    let inits = vec![a, b, r("r0", 0.5), r("r1", 2.0), r("r2", 0.3)];
    let mut g = Graph::new(&spec(nodes, &[], &["y", "z", "o", "rg", "zeros"]), inits).unwrap();
    let outs = g.forward(vec![]).unwrap();
    assert_eq!(outs[0].data, vec![1.0, 1.0, 0.0, 1.0]);
    assert_eq!(outs[1].data, vec![0.0, 1.0, 0.0, 0.0]);
    assert_eq!(outs[2].data, vec![7.0; 4]);
    // 0.5, 0.8, 1.1, 1.4, 1.7: ceil(1.5 / 0.3) = 5 elements, each the previous + 0.3 in f32
    let mut want = vec![0.5f32];
    for k in 1..5 {
        want.push(want[k - 1] + 0.3);
    }
    assert_eq!(outs[3].data, want);
    assert_eq!(outs[4].data, vec![0.0; 4]);
    // integer shape arithmetic divides as ONNX does (truncated)
    let nodes = vec![node("Div", &["n", "d"], &["q"], &[]), node("Cast", &["q"], &["y"], &[("to", Attr::Int(1))])];
    let mut g = Graph::new(&spec(nodes, &[], &["y"]), vec![int_init("n", &[3], &[7, -7, 64]), int_init("d", &[], &[2])]).unwrap();
    assert_eq!(g.forward(vec![]).unwrap()[0].data, vec![3.0, -3.0, 32.0]);
    // a ConstantOfShape value that is not one element is refused by name
    let bad = Attr::Tensor(TensorAttr { dims: vec![2], values: vec![1.0, 2.0], int: false });
    let e = Graph::new(&spec(vec![node("ConstantOfShape", &["sh"], &["y"], &[("value", bad)])], &["sh"], &["y"]), vec![]).err().unwrap();
    assert_eq!(e.code(), "unsupported_op");
}

/// A torch-like export: the batch and sequence sizes read off the input, a position table
/// gathered with Range, a mask built by ConstantOfShape / Equal / Where and Expanded to the
/// activations, and a Reshape whose target is a Concat of computed sizes.
fn torch_like() -> (GraphSpec, Vec<InitSpec>) {
    let mut r = Rng(26);
    let nodes = vec![
        node("Shape", &["x"], &["sh"], &[]),
        node("Gather", &["sh", "i0"], &["n"], &[]),
        node("Gather", &["sh", "i1"], &["t"], &[]),
        node("Range", &["zero", "t", "one"], &["pos"], &[]),
        node("Gather", &["ptab", "pos"], &["pe"], &[]),
        node("Unsqueeze", &["n", "ax0"], &["n1"], &[]),
        node("Unsqueeze", &["t", "ax0"], &["t1"], &[]),
        node("Concat", &["n1", "t1"], &["nt"], &[("axis", Attr::Int(0))]),
        node("Shape", &["nt"], &["rank"], &[]),
        node("ConstantOfShape", &["rank"], &["ones"], &[("value", tensor_attr(1.0, true))]),
        node("Equal", &["nt", "minus1"], &["eqm"], &[]),
        node("Where", &["eqm", "ones", "nt"], &["w"], &[]),
        node("Concat", &["w", "hid"], &["nth"], &[("axis", Attr::Int(0))]),
        node("Add", &["x", "pe"], &["h"], &[]),
        node("MatMul", &["h", "w1"], &["h1"], &[]),
        node("Expand", &["b1", "nth"], &["b1e"], &[]),
        node("Add", &["h1", "b1e"], &["h2"], &[]),
        node("Relu", &["h2"], &["h3"], &[]),
        node("Concat", &["n1", "flat"], &["shp"], &[("axis", Attr::Int(0))]),
        node("Reshape", &["h3", "shp"], &["y"], &[]),
    ];
    let i = |n: &str, v: &[i64]| int_init(n, &[v.len()], v);
    let inits = vec![
        int_init("i0", &[], &[0]),
        int_init("i1", &[], &[1]),
        int_init("zero", &[], &[0]),
        int_init("one", &[], &[1]),
        int_init("minus1", &[], &[-1]),
        i("ax0", &[0]),
        i("hid", &[3]),
        i("flat", &[-1]),
        f("ptab", &[8, 4], &mut r),
        f("w1", &[4, 3], &mut r),
        f("b1", &[3], &mut r),
    ];
    (spec(nodes, &["x"], &["y"]), inits)
}

#[test]
fn shape_subgraph_folds_once_per_input_shape() {
    let (sp, inits) = torch_like();
    let mut g = Graph::new(&sp, inits.clone()).unwrap();
    let data = g.data_path_ops();
    assert_eq!(data, vec!["Gather", "Add", "MatMul", "Expand", "Add", "Relu", "Reshape"], "{:?}", g.node_ops());
    let mut r = Rng(27);
    let x = |n: usize, t: usize, r: &mut Rng| Tensor::new(vec![n, t, 4], (0..n * t * 4).map(|_| r.away()).collect()).unwrap();
    let (xa, xb) = (x(2, 5, &mut r), x(3, 2, &mut r));
    // each shape against a fresh graph (which folds on its first forward), in an order that
    // leaves the cache, comes back to it and runs from it
    for xs in [&xa, &xb, &xa, &xb, &xa] {
        let got = g.forward(vec![xs.clone()]).unwrap();
        let want = Graph::new(&sp, inits.clone()).unwrap().forward(vec![xs.clone()]).unwrap();
        assert_eq!(got, want);
        assert_eq!(got[0].shape, vec![xs.shape[0], xs.shape[1] * 3]);
    }
    // the parameters still train: the position table's used rows and the weights get gradients
    let y = g.forward(vec![xa.clone()]).unwrap();
    let grads = g.backward(vec![Tensor { shape: y[0].shape.clone(), data: vec![1.0; y[0].len()] }]).unwrap();
    let names: Vec<&str> = g.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, vec!["ptab", "w1", "b1"]);
    let ptab = &grads[0];
    assert!(ptab.data[..5 * 4].iter().any(|&v| v != 0.0) && ptab.data[5 * 4..].iter().all(|&v| v == 0.0));
}

#[test]
fn every_registered_op_builds() {
    // the one table: every name it lists reaches its own builder (which may still ask for a
    // required attribute), and a name outside it is refused as not an operator of the core
    let ops: Vec<&str> = sparsekit_wasm::train::ops::supported_ops().collect();
    assert!(ops.len() >= 60, "{}", ops.len());
    for op in ops {
        let n = NodeSpec::new(op, &["x"], &["y"], &[]);
        if let Err(e) = sparsekit_wasm::train::ops::build(&n) {
            assert!(!e.message().contains("is not an operator"), "{op}: {}", e.message());
        }
    }
    let e = sparsekit_wasm::train::ops::build(&NodeSpec::new("NonZero", &["x"], &["y"], &[])).err().unwrap();
    assert!(e.message().contains("NonZero: is not an operator"), "{}", e.message());
}
