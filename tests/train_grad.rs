//! The training core's backward pass against central finite differences, per operator, on
//! small shapes. Every input is an initializer, so the graph's parameters cover the data input
//! too; the loss is `sum(y * r)` for a fixed random `r` (all output gradients exercised),
//! accumulated in f64. Inputs stay away from kinks (ReLU at 0, pooling ties, clip bounds), where
//! a finite difference is not a derivative.

#[path = "support/train_fd.rs"]
mod train_fd;
use sparsekit_wasm::train::{Attr, Graph, GraphSpec, InitSpec};
use train_fd::*;

#[test]
fn conv_grouped_strided_padded_dilated() {
    let mut r = Rng(1);
    for (g, cin, cout, s, d, pads) in
        [(1, 3, 4, 1, 1, [1, 1, 1, 1]), (2, 4, 6, 2, 1, [0, 1, 2, 1]), (4, 4, 4, 1, 2, [2, 2, 2, 2]), (1, 2, 3, 2, 1, [0, 0, 0, 0])]
    {
        let attrs = [("group", Attr::Int(g)), ("strides", ints(&[s, s])), ("dilations", ints(&[d, d])), ("pads", ints(&pads))];
        let inits = vec![f("x", &[2, cin, 6, 5], &mut r), f("w", &[cout, cin / g as usize, 3, 3], &mut r), f("b", &[cout], &mut r)];
        check(vec![node("Conv", &["x", "w", "b"], &["y"], &attrs)], inits, &["y"], EPS, TOL);
    }
    // depthwise (the direct path): stride 2 with a 5x5 kernel, and 3x3 with asymmetric pads
    for (k, s, pads) in [(5, 2, [2, 1, 2, 2]), (3, 1, [0, 1, 1, 0])] {
        let attrs = [("group", Attr::Int(3)), ("strides", ints(&[s, s])), ("pads", ints(&pads))];
        let inits = vec![f("x", &[2, 3, 7, 6], &mut r), f("w", &[3, 1, k, k], &mut r), f("b", &[3], &mut r)];
        check(vec![node("Conv", &["x", "w", "b"], &["y"], &attrs)], inits, &["y"], EPS, TOL);
    }
    // 1x1 (the GEMM-only path)
    let inits = vec![f("x", &[2, 3, 4, 4], &mut r), f("w", &[5, 3, 1, 1], &mut r)];
    check(vec![node("Conv", &["x", "w"], &["y"], &[])], inits, &["y"], EPS, TOL);
}

#[test]
fn conv_relu_conv_mean_chain() {
    let mut r = Rng(2);
    let inits = vec![f("x", &[2, 2, 6, 6], &mut r), f("w1", &[3, 2, 3, 3], &mut r), f("b1", &[3], &mut r), f("w2", &[2, 3, 3, 3], &mut r)];
    let nodes = vec![
        node("Conv", &["x", "w1", "b1"], &["c1"], &[("pads", ints(&[1, 1, 1, 1]))]),
        node("Relu", &["c1"], &["r1"], &[]),
        node("Conv", &["r1", "w2"], &["c2"], &[("strides", ints(&[2, 2]))]),
        node("GlobalAveragePool", &["c2"], &["y"], &[]),
    ];
    check(nodes, inits, &["y"], 1e-3, TOL);
}

#[test]
fn conv_transpose() {
    let mut r = Rng(3);
    for (g, s, pads, op) in [(1, 2, [0, 0, 0, 0], [0, 0]), (2, 2, [1, 1, 1, 1], [1, 1]), (1, 1, [1, 0, 1, 0], [0, 0])] {
        let attrs = [("group", Attr::Int(g)), ("strides", ints(&[s, s])), ("pads", ints(&pads)), ("output_padding", ints(&op))];
        let inits = vec![f("x", &[2, 4, 3, 4], &mut r), f("w", &[4, 3, 2, 3], &mut r), f("b", &[3 * g as usize], &mut r)];
        check(vec![node("ConvTranspose", &["x", "w", "b"], &["y"], &attrs)], inits, &["y"], EPS, TOL);
    }
}

#[test]
fn gemm_and_matmul() {
    let mut r = Rng(4);
    for (ta, tb) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        let a = if ta == 1 { [4, 3] } else { [3, 4] };
        let b = if tb == 1 { [5, 4] } else { [4, 5] };
        let attrs = [("transA", Attr::Int(ta)), ("transB", Attr::Int(tb)), ("alpha", Attr::Float(0.7)), ("beta", Attr::Float(1.3))];
        let inits = vec![f("a", &a, &mut r), f("b", &b, &mut r), f("c", &[5], &mut r)];
        check(vec![node("Gemm", &["a", "b", "c"], &["y"], &attrs)], inits, &["y"], EPS, TOL);
    }
    let inits = vec![f("a", &[2, 1, 3, 4], &mut r), f("b", &[3, 4, 2], &mut r)];
    check(vec![node("MatMul", &["a", "b"], &["y"], &[])], inits, &["y"], EPS, TOL);
    // one matrix for every batch of A (one product over all of A's rows), and a vector
    for b in [vec![4, 2], vec![1, 1, 4, 2], vec![4]] {
        let inits = vec![f("a", &[2, 3, 3, 4], &mut r), f("b", &b, &mut r)];
        check(vec![node("MatMul", &["a", "b"], &["y"], &[])], inits, &["y"], EPS, TOL);
    }
}

#[test]
fn activations() {
    for (op, attrs) in [
        ("Relu", vec![]),
        ("LeakyRelu", vec![("alpha", Attr::Float(0.1))]),
        ("Sigmoid", vec![]),
        ("HardSigmoid", vec![("alpha", Attr::Float(0.3)), ("beta", Attr::Float(0.4))]),
        ("HardSwish", vec![]),
        ("Tanh", vec![]),
        ("Erf", vec![]),
        ("Gelu", vec![]),
        ("Gelu", vec![("approximate", Attr::Str("tanh".into()))]),
        ("Clip", vec![("min", Attr::Float(-0.55)), ("max", Attr::Float(0.65))]),
        ("Identity", vec![]),
    ] {
        let mut r = Rng(5);
        let mut x = f("x", &[2, 3, 4], &mut r);
        // scale into the interesting ranges (HardSwish/HardSigmoid kinks at ±3 and their own)
        x.floats.as_mut().unwrap().iter_mut().for_each(|v| {
            *v *= 2.3;
            // step off the kinks (HardSwish ±3, HardSigmoid 2 and -4/3, Clip bounds)
            for k in [3.0, -3.0, 2.0, -4.0 / 3.0, -0.55, 0.65] {
                if (*v - k).abs() < 0.02 {
                    *v += 0.05;
                }
            }
        });
        check(vec![node(op, &["x"], &["y"], &attrs)], vec![x], &["y"], 1e-3, TOL);
    }
}

#[test]
fn binary_broadcast() {
    let mut r = Rng(6);
    for op in ["Add", "Sub", "Mul", "Div"] {
        for (a, b) in
            [(vec![2, 3, 4], vec![2, 3, 4]), (vec![2, 3, 4, 5], vec![1, 3, 1, 1]), (vec![4], vec![2, 3, 4]), (vec![2, 1, 4], vec![3, 1])]
        {
            let inits = vec![f("a", &a, &mut r), fpos("b", &b, &mut r)];
            check(vec![node(op, &["a", "b"], &["y"], &[])], inits, &["y"], 1e-3, TOL);
        }
    }
}

#[test]
fn pooling() {
    let mut r = Rng(7);
    for (op, attrs) in [
        ("MaxPool", vec![("kernel_shape", ints(&[3, 3])), ("strides", ints(&[2, 2])), ("pads", ints(&[1, 1, 1, 1]))]),
        ("MaxPool", vec![("kernel_shape", ints(&[2, 2])), ("strides", ints(&[2, 2])), ("ceil_mode", Attr::Int(1))]),
        ("AveragePool", vec![("kernel_shape", ints(&[3, 3])), ("strides", ints(&[2, 2])), ("pads", ints(&[1, 1, 1, 1]))]),
        ("AveragePool", vec![("kernel_shape", ints(&[3, 2])), ("pads", ints(&[1, 0, 1, 1])), ("count_include_pad", Attr::Int(1))]),
        ("GlobalAveragePool", vec![]),
        ("GlobalMaxPool", vec![]),
    ] {
        // distinct values 0.013 apart: no two taps of a max window within a finite-difference step
        let mut x = f("x", &[2, 2, 5, 7], &mut r);
        x.floats.as_mut().unwrap().iter_mut().enumerate().for_each(|(i, v)| *v = ((i * 37) % 140) as f32 * 0.013 - 0.9);
        let inits = vec![x];
        check(vec![node(op, &["x"], &["y"], &attrs)], inits, &["y"], 1e-3, TOL);
    }
}

#[test]
fn norms_and_softmax() {
    let mut r = Rng(8);
    let inits =
        vec![f("x", &[2, 3, 4, 2], &mut r), f("s", &[3], &mut r), f("b", &[3], &mut r), f("m", &[3], &mut r), fpos("v", &[3], &mut r)];
    check(vec![node("BatchNormalization", &["x", "s", "b", "m", "v"], &["y"], &[])], inits, &["y"], 1e-3, TOL);
    let inits = vec![f("x", &[2, 3, 6], &mut r), f("s", &[6], &mut r), f("b", &[6], &mut r)];
    check(vec![node("LayerNormalization", &["x", "s", "b"], &["y"], &[])], inits, &["y"], 1e-3, TOL);
    let inits = vec![f("x", &[2, 3, 2, 3], &mut r), f("s", &[2, 3], &mut r)];
    check(vec![node("LayerNormalization", &["x", "s"], &["y"], &[("axis", Attr::Int(2))])], inits, &["y"], 1e-3, TOL);
    for axis in [-1, 1] {
        let inits = vec![f("x", &[2, 3, 4], &mut r)];
        check(vec![node("Softmax", &["x"], &["y"], &[("axis", Attr::Int(axis))])], inits, &["y"], 1e-3, TOL);
    }
}

#[test]
fn resize_nearest_and_linear() {
    let mut r = Rng(9);
    for (mode, coord) in [
        ("nearest", "asymmetric"),
        ("nearest", "half_pixel"),
        ("linear", "half_pixel"),
        ("linear", "align_corners"),
        ("linear", "pytorch_half_pixel"),
    ] {
        let inits = vec![
            f("x", &[1, 2, 3, 4], &mut r),
            InitSpec { name: "sc".into(), dims: vec![4], floats: Some(vec![1.0, 1.0, 2.0, 1.5]), ints: None },
        ];
        let attrs = [("mode", Attr::Str(mode.into())), ("coordinate_transformation_mode", Attr::Str(coord.into()))];
        check(vec![node("Resize", &["x", "", "sc"], &["y"], &attrs)], inits, &["y"], 1e-3, TOL);
    }
    let inits = vec![f("x", &[1, 2, 3, 4], &mut r), i64s("sz", &[1, 2, 5, 7])];
    check(vec![node("Resize", &["x", "", "", "sz"], &["y"], &[("mode", Attr::Str("linear".into()))])], inits, &["y"], 1e-3, TOL);
}

#[test]
fn shape_ops() {
    let mut r = Rng(10);
    let inits = vec![f("a", &[2, 3, 2], &mut r), f("b", &[2, 1, 2], &mut r)];
    check(vec![node("Concat", &["a", "b"], &["y"], &[("axis", Attr::Int(1))])], inits, &["y"], 1e-3, TOL);
    let inits = vec![f("x", &[2, 5, 2], &mut r), i64s("sp", &[2, 3])];
    check(vec![node("Split", &["x", "sp"], &["y0", "y1"], &[("axis", Attr::Int(1))])], inits, &["y0", "y1"], 1e-3, TOL);
    let inits = vec![f("x", &[3, 6, 4], &mut r), i64s("st", &[1, -1]), i64s("en", &[6, 0]), i64s("ax", &[1, 2]), i64s("sp", &[2, -2])];
    check(vec![node("Slice", &["x", "st", "en", "ax", "sp"], &["y"], &[])], inits, &["y"], 1e-3, TOL);
    let inits = vec![f("x", &[2, 3, 4], &mut r), i64s("sh", &[0, -1])];
    check(vec![node("Reshape", &["x", "sh"], &["t"], &[]), node("Tanh", &["t"], &["y"], &[])], inits, &["y"], 1e-3, TOL);
    let inits = vec![f("x", &[2, 3, 4], &mut r)];
    check(vec![node("Transpose", &["x"], &["y"], &[("perm", ints(&[2, 0, 1]))])], inits, &["y"], 1e-3, TOL);
    let inits = vec![f("x", &[2, 3, 1, 4], &mut r), i64s("ax", &[0, 3])];
    let nodes = vec![
        node("Squeeze", &["x"], &["s"], &[("axes", ints(&[2]))]),
        node("Unsqueeze", &["s", "ax"], &["u"], &[]),
        node("Flatten", &["u"], &["y"], &[("axis", Attr::Int(2))]),
    ];
    check(nodes, inits, &["y"], 1e-3, TOL);
    for mode in ["constant", "reflect", "edge"] {
        let inits = vec![f("x", &[1, 2, 3, 4], &mut r), i64s("p", &[0, 0, 1, 2, 0, 1, 2, -1])];
        check(vec![node("Pad", &["x", "p"], &["y"], &[("mode", Attr::Str(mode.into()))])], inits, &["y"], 1e-3, TOL);
    }
}

#[test]
fn unsupported_op_refused_by_name_before_running() {
    let mut r = Rng(11);
    let spec = GraphSpec {
        nodes: vec![node("Relu", &["x"], &["a"], &[]), node("NonMaxSuppression", &["a"], &["y"], &[])],
        inputs: vec![],
        outputs: vec!["y".into()],
        frozen: vec![],
    };
    let e = Graph::new(&spec, vec![f("x", &[2, 2], &mut r)]).err().expect("refused");
    assert_eq!(e.code(), "unsupported_op");
    assert!(e.message().contains("NonMaxSuppression"), "{}", e.message());
    // an unsupported attribute value is refused by name too
    let spec = GraphSpec {
        nodes: vec![node("Resize", &["x"], &["y"], &[("mode", Attr::Str("cubic".into()))])],
        inputs: vec![],
        outputs: vec!["y".into()],
        frozen: vec![],
    };
    let e = Graph::new(&spec, vec![f("x", &[2, 2], &mut r)]).err().expect("refused");
    assert_eq!(e.code(), "unsupported_op");
    assert!(e.message().contains("Resize") && e.message().contains("cubic"), "{}", e.message());
}

#[test]
fn layer_norm_decomposed_reduce_pow_sqrt_cast() {
    // the LayerNorm of exported rec models: ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div
    let mut r = Rng(12);
    let inits = vec![
        f("x", &[2, 3, 5], &mut r),
        InitSpec { name: "two".into(), dims: vec![], floats: Some(vec![2.0]), ints: None },
        fpos("eps", &[1], &mut r),
    ];
    let nodes = vec![
        node("ReduceMean", &["x"], &["m"], &[("axes", ints(&[-1]))]),
        node("Sub", &["x", "m"], &["d"], &[]),
        node("Pow", &["d", "two"], &["d2"], &[]),
        node("ReduceMean", &["d2"], &["v"], &[("axes", ints(&[-1]))]),
        node("Add", &["v", "eps"], &["ve"], &[]),
        node("Sqrt", &["ve"], &["s"], &[]),
        node("Div", &["d", "s"], &["n"], &[]),
        node("Cast", &["n"], &["y"], &[("to", Attr::Int(1))]),
    ];
    // the exponent is a constant: x^2 has no derivative in the exponent where x < 0
    check_frozen(nodes, inits, &["y"], &["two"], 1e-3, TOL);
    let inits = vec![f("x", &[2, 3, 4], &mut r), fpos("p", &[1], &mut r)];
    let nodes = vec![
        node("Mul", &["x", "x"], &["a"], &[]),
        node("Add", &["a", "p"], &["b"], &[]),
        node("Pow", &["b", "p"], &["c"], &[]),
        node("ReduceSum", &["c"], &["y"], &[("axes", ints(&[0, 2])), ("keepdims", Attr::Int(0))]),
    ];
    check(nodes, inits, &["y"], 1e-3, TOL);
}

#[test]
fn shape_arithmetic_on_integers() {
    // Shape -> Slice -> Concat(with a constant) -> Reshape, as exported models compute shapes
    let mut r = Rng(13);
    let inits = vec![f("x", &[2, 3, 4], &mut r), i64s("s0", &[0]), i64s("s1", &[1]), i64s("m1", &[-1])];
    let nodes = vec![
        node("Shape", &["x"], &["sh"], &[]),
        node("Slice", &["sh", "s0", "s1"], &["n"], &[]),
        node("Concat", &["n", "m1"], &["target"], &[("axis", Attr::Int(0))]),
        node("Reshape", &["x", "target"], &["y0"], &[]),
        node("Sigmoid", &["y0"], &["y"], &[]),
    ];
    let spec = GraphSpec { nodes: nodes.clone(), inputs: vec![], outputs: vec!["y".into()], frozen: vec![] };
    let mut g = Graph::new(&spec, inits.clone()).unwrap();
    assert_eq!(g.forward(vec![]).unwrap()[0].shape, vec![2, 12]);
    check(nodes, inits, &["y"], 1e-3, TOL);
}

/// The fused element-wise chains (src/train/fuse.rs): PaddleOCR's decomposed HardSwish between
/// scalar scales and shifts, x * HardSigmoid written as Clip(x + 3, 0, 6) * (1/6), and the same
/// HardSwish with its Clip output read twice (not fused), after a Conv so that the gradient
/// reaches weights through the chain.
#[test]
fn fused_and_unfused_hard_activation_chains() {
    let scalar = |n: &str, v: f32| InitSpec { name: n.into(), dims: vec![1], floats: Some(vec![v]), ints: None };
    for two_readers in [false, true] {
        let mut r = Rng(12);
        let mut x = f("x", &[2, 2, 5, 5], &mut r);
        x.floats.as_mut().unwrap().iter_mut().for_each(|v| *v *= 2.0);
        let mut inits = vec![x, f("w", &[3, 2, 3, 3], &mut r), f("b", &[3], &mut r)];
        inits.extend([scalar("s0", 1.7), scalar("b0", 0.3), scalar("three", 3.0), scalar("zero", 0.0), scalar("six", 6.0)]);
        inits.extend([scalar("s1", 0.9), scalar("b1", -0.2), scalar("sixth", 1.0 / 6.0)]);
        let mut nodes = vec![
            node("Conv", &["x", "w", "b"], &["cv"], &[("pads", ints(&[1, 1, 1, 1]))]),
            node("Mul", &["s0", "cv"], &["m0"], &[]),
            node("Add", &["m0", "b0"], &["h"], &[]),
            node("Add", &["h", "three"], &["a"], &[]),
            node("Clip", &["a", "zero", "six"], &["c"], &[]),
            node("Mul", &["h", "c"], &["m"], &[]),
            node("Div", &["m", "six"], &["hs"], &[]),
            node("Mul", &["s1", "hs"], &["m1"], &[]),
            node("Add", &["m1", "b1"], &["y"], &[]),
            // a gate on y: y * Clip(y + 3, 0, 6) * (1/6)
            node("Add", &["three", "y"], &["ga"], &[]),
            node("Clip", &["ga"], &["gc"], &[("min", Attr::Float(0.0)), ("max", Attr::Float(6.0))]),
            node("Mul", &["gc", "sixth"], &["gd"], &[]),
            node("Mul", &["y", "gd"], &["z"], &[]),
        ];
        if two_readers {
            nodes.push(node("Add", &["z", "c"], &["z2"], &[]));
        }
        let out = if two_readers { "z2" } else { "z" };
        // the conv's outputs are spread over ±5: some land near the kinks at ±3; a 1e-3 step
        // crosses one only rarely, and the tolerance of the other cases covers the rest
        let spec = GraphSpec { nodes: nodes.clone(), inputs: vec![], outputs: vec![out.into()], frozen: vec![] };
        let ops = Graph::new(&spec, inits.clone()).unwrap().node_ops().iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(ops.iter().any(|o| o == "FusedElementwise" || o == "HardSwish"), "{ops:?}");
        assert!(!ops.iter().any(|o| o == "Clip"), "{ops:?}");
        check(nodes, inits, &[out], 1e-3, TOL);
    }
}
