//! Finite-difference checks of the training core's backward pass, shared by the per-op test
//! files: every input is an initializer, so the graph's parameters cover the data input too; the
//! loss is `sum(y * r)` for a fixed random `r` (all output gradients exercised), accumulated in
//! f64.
#![allow(dead_code)]

use sparsekit_wasm::train::{Attr, Graph, GraphSpec, InitSpec, NodeSpec, Tensor};

pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) as f32
    }
    /// Uniform in ±[0.1, 1] (away from 0, the kink of most activations).
    pub fn away(&mut self) -> f32 {
        let m = 0.1 + 0.9 * self.next();
        if self.next() < 0.5 {
            -m
        } else {
            m
        }
    }
}

pub fn f(name: &str, dims: &[usize], rng: &mut Rng) -> InitSpec {
    let n = dims.iter().product();
    InitSpec { name: name.into(), dims: dims.to_vec(), floats: Some((0..n).map(|_| rng.away()).collect()), ints: None }
}

pub fn fpos(name: &str, dims: &[usize], rng: &mut Rng) -> InitSpec {
    let mut t = f(name, dims, rng);
    t.floats.as_mut().unwrap().iter_mut().for_each(|v| *v = v.abs() + 0.5);
    t
}

pub fn i64s(name: &str, v: &[i64]) -> InitSpec {
    InitSpec { name: name.into(), dims: vec![v.len()], floats: None, ints: Some(v.to_vec()) }
}

pub fn ints(v: &[i64]) -> Attr {
    Attr::Ints(v.to_vec())
}

/// Checks every parameter's gradient (up to 40 sampled elements each) against central
/// differences with step `eps`, relative error <= `tol` (floor 1e-2 on the magnitude).
pub fn check(nodes: Vec<NodeSpec>, inits: Vec<InitSpec>, outputs: &[&str], eps: f32, tol: f64) {
    check_frozen(nodes, inits, outputs, &[], eps, tol)
}

/// [`check`] with some float initializers held constant (`frozen`).
pub fn check_frozen(nodes: Vec<NodeSpec>, inits: Vec<InitSpec>, outputs: &[&str], frozen: &[&str], eps: f32, tol: f64) {
    let what = format!("{:?}", nodes.iter().map(|n| (&n.op_type, &n.attrs)).collect::<Vec<_>>());
    let spec = GraphSpec {
        nodes,
        inputs: vec![],
        outputs: outputs.iter().map(|s| s.to_string()).collect(),
        frozen: frozen.iter().map(|s| s.to_string()).collect(),
    };
    let mut g = Graph::new(&spec, inits).expect("graph builds");
    let outs = g.forward(vec![]).expect("forward");
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let rs: Vec<Tensor> =
        outs.iter().map(|y| Tensor { shape: y.shape.clone(), data: (0..y.len()).map(|_| rng.next() * 2.0 - 1.0).collect() }).collect();
    let loss = |g: &mut Graph| -> f64 {
        let outs = g.forward(vec![]).unwrap();
        outs.iter().zip(&rs).map(|(y, r)| y.data.iter().zip(&r.data).map(|(a, b)| *a as f64 * *b as f64).sum::<f64>()).sum()
    };
    let grads = g.backward(rs.clone()).expect("backward");
    assert!(!g.params.is_empty());
    for (pi, gr) in grads.iter().enumerate() {
        let n = gr.len();
        let step = (n / 40).max(1);
        for i in (0..n).step_by(step) {
            let v = g.param(pi).data[i];
            g.param_mut(pi).data[i] = v + eps;
            let lp = loss(&mut g);
            g.param_mut(pi).data[i] = v - eps;
            let lm = loss(&mut g);
            g.param_mut(pi).data[i] = v;
            let fd = (lp - lm) / (2.0 * eps as f64);
            let an = gr.data[i] as f64;
            let err = (an - fd).abs() / fd.abs().max(an.abs()).max(1e-2);
            assert!(err <= tol, "{what}: param {} [{i}]: analytic {an}, finite differences {fd} (rel err {err:.2e})", g.params[pi].name);
        }
    }
}

pub fn node(op: &str, ins: &[&str], outs: &[&str], attrs: &[(&str, Attr)]) -> NodeSpec {
    NodeSpec::new(op, ins, outs, attrs)
}

pub const EPS: f32 = 1e-2;
pub const TOL: f64 = 2e-2;
