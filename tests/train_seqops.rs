//! Tile, Einsum, GRU and LSTM (issue 38) against finite differences, and what each refuses: an
//! Einsum equation outside the batched-matmul / transpose / reduction forms, a recurrent cell
//! with other activations, clip, layout 1 or peepholes, all typed and named.

#[path = "support/train_fd.rs"]
mod train_fd;
use sparsekit_wasm::train::{Attr, Graph, GraphSpec, InitSpec, NodeSpec};
use train_fd::*;

fn eq(e: &str) -> (&'static str, Attr) {
    ("equation", Attr::Str(e.into()))
}

#[test]
fn tile_gradients() {
    let mut r = Rng(31);
    check(vec![node("Tile", &["x", "rep"], &["y"], &[])], vec![f("x", &[2, 3], &mut r), i64s("rep", &[2, 3])], &["y"], 1e-3, TOL);
    check(vec![node("Tile", &["x", "rep"], &["y"], &[])], vec![f("x", &[3, 1, 2], &mut r), i64s("rep", &[1, 4, 1])], &["y"], 1e-3, TOL);
}

#[test]
fn einsum_gradients() {
    let mut r = Rng(32);
    let cases: &[(&str, &[usize], &[usize])] = &[
        ("bhid,bhjd->bhij", &[2, 2, 3, 4], &[2, 2, 5, 4]),
        ("bhij,bhjd->bhid", &[2, 2, 3, 5], &[2, 2, 5, 4]),
        ("bij,bjk->bik", &[2, 3, 4], &[2, 4, 5]),
        ("ik,jk->ij", &[3, 4], &[5, 4]),
        // implicit output (the letters seen once, alphabetically: "ik")
        ("ij,jk", &[3, 4], &[4, 2]),
        // a letter only the first operand has and the output lacks is summed away first
        ("ijk,jl->li", &[3, 4, 2], &[4, 5]),
        ("bn,bnd->bd", &[2, 3], &[2, 3, 4]),
    ];
    for &(e, a, b) in cases {
        check(vec![node("Einsum", &["a", "b"], &["y"], &[eq(e)])], vec![f("a", a, &mut r), f("b", b, &mut r)], &["y"], 1e-3, TOL);
    }
    for e in ["ij->ji", "bij->bj", "bij->", "abc->cab"] {
        check(
            vec![node("Einsum", &["a"], &["y"], &[eq(e)])],
            vec![f("a", &[2, 3, 4][3 - e.split("->").next().unwrap().len()..], &mut r)],
            &["y"],
            1e-3,
            TOL,
        );
    }
}

#[test]
fn einsum_refuses_what_it_does_not_run_naming_the_equation() {
    for e in ["ii->i", "...ij,...jk->...ik", "ij,jk,kl->il", "ij->iz", "i1->i"] {
        let err =
            sparsekit_wasm::train::ops::build(&node("Einsum", &["a", "b"], &["y"], &[eq(e)])).err().unwrap_or_else(|| panic!("{e} built"));
        assert_eq!(err.code(), "unsupported_op", "{e}");
        assert!(err.message().contains(&format!("'{e}'")), "{}", err.message());
    }
    // letters of different sizes (broadcasting) are a shape mismatch at run time, typed
    let mut r = Rng(33);
    let spec = GraphSpec {
        nodes: vec![node("Einsum", &["a", "b"], &["y"], &[eq("ij,jk->ik")])],
        inputs: vec![],
        outputs: vec!["y".into()],
        frozen: vec![],
    };
    let e = Graph::new(&spec, vec![f("a", &[2, 3], &mut r), f("b", &[4, 2], &mut r)]).unwrap().forward(vec![]).expect_err("refused");
    assert_eq!(e.code(), "shape_mismatch");
    assert!(e.message().contains("'ij,jk->ik'") && e.message().contains("letter 'j'"), "{}", e.message());
}

/// A recurrent node's initializers: X [T, B, I], W, R, B and the initial states, `dirs` directions.
fn rnn_inits(gates: usize, dirs: usize, cell: bool, r: &mut Rng) -> (Vec<InitSpec>, Vec<&'static str>) {
    let (t, b, i, h) = (3, 2, 3, 4);
    let mut inits = vec![
        f("x", &[t, b, i], r),
        f("w", &[dirs, gates * h, i], r),
        f("r", &[dirs, gates * h, h], r),
        f("b", &[dirs, 2 * gates * h], r),
        f("h0", &[dirs, b, h], r),
    ];
    let mut ins = vec!["x", "w", "r", "b", "", "h0"];
    if cell {
        inits.push(f("c0", &[dirs, b, h], r));
        ins.push("c0");
    }
    (inits, ins)
}

#[test]
fn gru_gradients() {
    let mut r = Rng(34);
    for (dir, dirs) in [("forward", 1), ("reverse", 1), ("bidirectional", 2)] {
        for lbr in [0, 1] {
            let (inits, ins) = rnn_inits(3, dirs, false, &mut r);
            let attrs = [("hidden_size", Attr::Int(4)), ("direction", Attr::Str(dir.into())), ("linear_before_reset", Attr::Int(lbr))];
            check(vec![node("GRU", &ins, &["y", "yh"], &attrs)], inits, &["y", "yh"], 1e-3, TOL);
        }
    }
    // without B and an initial state, only Y_h used
    let (mut inits, _) = rnn_inits(3, 1, false, &mut r);
    inits.truncate(3);
    check(vec![node("GRU", &["x", "w", "r"], &["", "yh"], &[("linear_before_reset", Attr::Int(1))])], inits, &["yh"], 1e-3, TOL);
}

#[test]
fn lstm_gradients() {
    let mut r = Rng(35);
    for (dir, dirs) in [("forward", 1), ("reverse", 1), ("bidirectional", 2)] {
        let (inits, ins) = rnn_inits(4, dirs, true, &mut r);
        let attrs = [("hidden_size", Attr::Int(4)), ("direction", Attr::Str(dir.into()))];
        check(vec![node("LSTM", &ins, &["y", "yh", "yc"], &attrs)], inits, &["y", "yh", "yc"], 1e-3, TOL);
    }
}

#[test]
fn recurrent_cells_refuse_what_they_do_not_run() {
    let strs = |v: &[&str]| Attr::Strs(v.iter().map(|s| s.to_string()).collect());
    let refused = |op: &str, attrs: &[(&str, Attr)], what: &str| {
        let e = sparsekit_wasm::train::ops::build(&NodeSpec::new(op, &["x", "w", "r"], &["y"], attrs)).err().unwrap();
        assert_eq!(e.code(), "unsupported_op");
        assert!(e.message().contains(op) && e.message().contains(what), "{}", e.message());
    };
    refused("GRU", &[("activations", strs(&["Relu", "Tanh"]))], "activations");
    refused("LSTM", &[("clip", Attr::Float(3.0))], "clip");
    refused("LSTM", &[("layout", Attr::Int(1))], "layout 1");
    refused("GRU", &[("direction", Attr::Str("sideways".into()))], "direction sideways");
    refused("LSTM", &[("input_forget", Attr::Int(1))], "input_forget");
    // the default activations, spelled out, are accepted
    assert!(sparsekit_wasm::train::ops::build(&NodeSpec::new(
        "LSTM",
        &["x"],
        &["y"],
        &[("activations", strs(&["Sigmoid", "Tanh", "Tanh"]))]
    ))
    .is_ok());
    // peepholes and short sequences are refused when the node runs
    let mut r = Rng(36);
    let (mut inits, mut ins) = rnn_inits(4, 1, true, &mut r);
    inits.push(f("p", &[1, 12], &mut r));
    ins.push("p");
    let spec = GraphSpec { nodes: vec![node("LSTM", &ins, &["y"], &[])], inputs: vec![], outputs: vec!["y".into()], frozen: vec![] };
    let e = Graph::new(&spec, inits).unwrap().forward(vec![]).expect_err("refused");
    assert!(e.code() == "unsupported_op" && e.message().contains("peepholes"), "{}", e.message());
    let (mut inits, mut ins) = rnn_inits(3, 1, false, &mut r);
    inits.push(i64s("sl", &[3, 2]));
    ins[4] = "sl";
    let spec = GraphSpec { nodes: vec![node("GRU", &ins, &["y"], &[])], inputs: vec![], outputs: vec!["y".into()], frozen: vec![] };
    let e = Graph::new(&spec, inits).unwrap().forward(vec![]).expect_err("refused");
    assert!(e.code() == "unsupported_op" && e.message().contains("sequence_lens"), "{}", e.message());
}
