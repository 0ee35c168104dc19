//! The trainer's API for recovery: per-output losses (kl, bce against finite differences of
//! their values, weights), intermediate tensors as outputs, the step in parts (backward from
//! the caller's gradients + update = step, bit for bit), the proximal step (= BlockSpec's soft
//! threshold with Adam's conditioners), parameter values and the state bytes (a resumed
//! trainer continues bit for bit); bad input gets typed errors and changes nothing.

#[path = "support/train_init.rs"]
mod train_init;
use sparsekit_wasm::train::{AdamConfig, Attr, Graph, GraphSpec, LossKind, LossSpec, NodeSpec, ProxTarget, Tensor, Trainer};
use sparsekit_wasm::{BlockSpec, ErrorKind, Param, SoftOptions, View};
use train_init::*;

/// x [2,3,5,5] -> Conv 3x3 (w1, b1) -> Relu (r) -> Conv 1x1 (w2) -> z, then Softmax over channels
/// (p) and Sigmoid (s): outputs `outs`.
fn net(outs: &[&str], masked: bool) -> Trainer {
    let nodes = vec![
        NodeSpec::new("Conv", &["x", "w1", "b1"], &["c"], &[("pads", Attr::Ints(vec![1, 1, 1, 1]))]),
        NodeSpec::new("Relu", &["c"], &["r"], &[]),
        NodeSpec::new("Conv", &["r", "w2"], &["z"], &[]),
        NodeSpec::new("Softmax", &["z"], &["p"], &[("axis", Attr::Int(1))]),
        NodeSpec::new("Sigmoid", &["z"], &["s"], &[]),
    ];
    let spec = GraphSpec { nodes, inputs: vec!["x".into()], outputs: outs.iter().map(|s| s.to_string()).collect(), frozen: vec![] };
    let mut w1 = init("w1", &[8, 3, 3, 3], 1, 0.4);
    if masked {
        w1.floats.as_mut().unwrap().iter_mut().step_by(3).for_each(|v| *v = 0.0);
    }
    let inits = vec![w1, init("b1", &[8], 2, 0.1), init("w2", &[4, 8, 1, 1], 3, 0.5)];
    Trainer::new(Graph::new(&spec, inits).unwrap(), AdamConfig { lr: 1e-2, ..AdamConfig::default() }, masked).unwrap()
}

fn x(seed: u64) -> Tensor {
    Tensor::new(vec![2, 3, 5, 5], lcg(seed, 150, 1.0)).unwrap()
}

/// Probabilities of the same shapes from another input through another net (a "teacher").
fn teacher_targets(outs: &[&str]) -> Vec<Tensor> {
    let mut t = net(outs, false);
    for (i, w) in [(0, 0.3f32), (2, -0.2)] {
        let name = t.graph.params[i].name.clone();
        let v: Vec<f32> = t.graph.param(i).data.iter().map(|a| a + w * a.abs()).collect();
        t.set_param(&name, &v).unwrap();
    }
    t.graph.forward(vec![x(7)]).unwrap()
}

/// Gradients of every parameter (via backward) against central differences of the loss.
fn check_loss_gradient(outs: &[&str], losses: Vec<LossSpec>) {
    let targets = teacher_targets(outs);
    let mut tr = net(outs, false);
    tr.set_losses(losses.clone()).unwrap();
    let l0 = tr.eval(vec![x(5)], &targets).unwrap();
    assert!(l0.is_finite() && l0 > 0.0);
    let outs_now = tr.graph.forward(vec![x(5)]).unwrap();
    let gouts: Vec<Tensor> = outs_now.iter().zip(&targets).zip(&losses).map(|((y, t), l)| l.eval(y, t).unwrap().1.unwrap()).collect();
    let grads = tr.graph.backward(gouts).unwrap();
    for (pi, g) in grads.iter().enumerate() {
        for i in (0..g.len()).step_by((g.len() / 25).max(1)) {
            let v = tr.graph.param(pi).data[i];
            let e = 1e-3f32;
            tr.graph.param_mut(pi).data[i] = v + e;
            let lp = tr.eval(vec![x(5)], &targets).unwrap();
            tr.graph.param_mut(pi).data[i] = v - e;
            let lm = tr.eval(vec![x(5)], &targets).unwrap();
            tr.graph.param_mut(pi).data[i] = v;
            let fd = (lp - lm) / (2.0 * e as f64);
            let err = (fd - g.data[i] as f64).abs() / fd.abs().max(g.data[i].abs() as f64).max(1e-2);
            assert!(err < 2e-2, "{losses:?} param {pi}[{i}]: backward {} vs finite difference {fd}", g.data[i]);
        }
    }
}

#[test]
fn kl_on_softmax_matches_finite_differences() {
    check_loss_gradient(&["p"], vec![LossSpec { kind: LossKind::Kl { axis: 1 }, weight: 1.0 }]);
}

#[test]
fn bce_on_sigmoid_and_weighted_sum_match_finite_differences() {
    let bce = LossSpec { kind: LossKind::Bce, weight: 0.5 };
    let kl = LossSpec { kind: LossKind::Kl { axis: 1 }, weight: 2.0 };
    check_loss_gradient(&["s", "p"], vec![bce, kl]);
}

#[test]
fn cosine_matches_finite_differences_and_ignores_the_targets_norm() {
    let cos = LossSpec::parse("cosine", None, None).unwrap();
    check_loss_gradient(&["z"], vec![cos]);
    let mut tr = net(&["z"], false);
    tr.set_losses(vec![cos]).unwrap();
    let t = tr.graph.forward(vec![x(5)]).unwrap();
    assert!(tr.eval(vec![x(5)], &t).unwrap().abs() < 1e-6, "1 - cos is 0 at the target");
    let far = teacher_targets(&["z"]);
    let a = tr.eval(vec![x(5)], &far).unwrap();
    let scaled: Vec<Tensor> = far.iter().map(|f| Tensor::new(f.shape.clone(), f.data.iter().map(|v| v * 3.0).collect()).unwrap()).collect();
    let b = tr.eval(vec![x(5)], &scaled).unwrap();
    assert!(a > 1e-3 && (a - b).abs() < 1e-6 * a, "the norm of the target does not count: {a} vs {b}");
}

#[test]
fn kl_is_zero_at_the_target_and_weights_scale() {
    let mut tr = net(&["p", "s"], false);
    let t = tr.graph.forward(vec![x(5)]).unwrap();
    tr.set_losses(vec![LossSpec::parse("kl", Some(1), Some(3.0)).unwrap(), LossSpec::parse("mse", None, Some(0.0)).unwrap()]).unwrap();
    assert!(tr.eval(vec![x(5)], &t).unwrap().abs() < 1e-6);
    let t2 = teacher_targets(&["p", "s"]);
    tr.eval(vec![x(5)], &t2).unwrap();
    let (a, b) = (tr.last_losses()[0], tr.last_losses()[1]);
    tr.set_losses(vec![LossSpec::parse("kl", Some(1), None).unwrap(), LossSpec::default()]).unwrap();
    tr.eval(vec![x(5)], &t2).unwrap();
    assert!((a - 3.0 * tr.last_losses()[0]).abs() < 1e-9 * a.abs().max(1.0));
    assert_eq!(b, 0.0);
    // typed refusals
    assert_eq!(LossSpec::parse("hinge", None, None).unwrap_err().kind(), ErrorKind::InvalidArguments);
    assert_eq!(LossSpec::parse("mse", Some(1), None).unwrap_err().kind(), ErrorKind::InvalidArguments);
    assert_eq!(LossSpec::parse("kl", None, Some(-1.0)).unwrap_err().kind(), ErrorKind::InvalidValue);
    assert_eq!(tr.set_losses(vec![LossSpec::default()]).unwrap_err().kind(), ErrorKind::InvalidArguments);
    // a probability loss on an output that is not a probability
    let mut raw = net(&["z"], false);
    raw.set_losses(vec![LossSpec::parse("bce", None, None).unwrap()]).unwrap();
    let tz = raw.graph.forward(vec![x(5)]).unwrap();
    assert_eq!(raw.eval(vec![x(5)], &tz).unwrap_err().kind(), ErrorKind::InvalidValue);
}

#[test]
fn an_intermediate_output_back_propagates_like_the_sub_graph() {
    // outputs [s, r]: the gradient given at r alone equals the sub-graph's whose output is r
    let mut both = net(&["s", "r"], false);
    let mut sub = net(&["r"], false);
    let ys = both.graph.forward(vec![x(5)]).unwrap();
    let yr = sub.graph.forward(vec![x(5)]).unwrap();
    assert_eq!(ys[1], yr[0]);
    let gr = Tensor::new(yr[0].shape.clone(), lcg(9, yr[0].len(), 1.0)).unwrap();
    let g1 = both.graph.backward(vec![Tensor::zeros(&ys[0].shape).unwrap(), gr.clone()]).unwrap();
    let g2 = sub.graph.backward(vec![gr]).unwrap();
    assert_eq!(g1[0], g2[0]);
    assert_eq!(g1[1], g2[1]);
    assert!(g1[2].data.iter().all(|&v| v == 0.0), "w2 is after r: no gradient");
}

#[test]
fn backward_then_update_equals_step() {
    let t = teacher_targets(&["s"]);
    let mut a = net(&["s"], true);
    let mut b = net(&["s"], true);
    for k in 0..3 {
        a.step(vec![x(5 + k)], &t).unwrap();
        let y = b.graph.forward(vec![x(5 + k)]).unwrap();
        let (_, g) = LossSpec::default().eval(&y[0], &t[0]).unwrap();
        b.backward(vec![g.unwrap()]).unwrap();
        b.update().unwrap();
    }
    for i in 0..a.graph.params.len() {
        assert_eq!(a.graph.param(i), b.graph.param(i));
    }
    assert_eq!(b.steps(), 3);
    assert_eq!(b.update().unwrap_err().kind(), ErrorKind::InvalidArguments, "no gradients left");
    assert_eq!(b.backward(vec![]).unwrap_err().kind(), ErrorKind::InvalidArguments);
    let nan = Tensor::new(t[0].shape.clone(), vec![f32::NAN; t[0].len()]).unwrap();
    assert_eq!(b.backward(vec![nan]).unwrap_err().kind(), ErrorKind::InvalidValue);
    let mut fresh = net(&["s"], false);
    assert_eq!(fresh.graph.backward(vec![t[0].clone()]).unwrap_err().kind(), ErrorKind::InvalidArguments, "no forward yet");
}

#[test]
fn prox_is_the_block_soft_threshold_with_adam_conditioners() {
    let t = teacher_targets(&["s"]);
    let mut tr = net(&["s"], false);
    let target = ProxTarget { view: Some(vec![8, 27]), block: vec![4, 9] };
    assert_eq!(tr.prox("w1", &target, 1.0, SoftOptions::default()).unwrap_err().kind(), ErrorKind::InvalidArguments, "no step yet");
    tr.step(vec![x(5)], &t).unwrap();
    tr.step(vec![x(6)], &t).unwrap();
    // the reference: BlockSpec.soft_threshold on a copy, H = sqrt(v / (1 - b2^t)) + eps, t = lr * lambda
    let (w, v) = (tr.graph.param(0).data.clone(), tr.second_moments("w1").unwrap().to_vec());
    let cfg = tr.adam;
    let h: Vec<f32> = v.iter().map(|&v| (v / (1.0 - cfg.beta2.powi(2))).sqrt() + cfg.eps).collect();
    let p = Param::new(w, &[8, 27]).unwrap();
    let spec = BlockSpec::new(View::from_param(&p), &[4, 9], None).unwrap();
    let lambda = 0.02;
    spec.soft_threshold(&[cfg.lr * lambda; 6], Some(&h), SoftOptions::default()).unwrap();
    let r = tr.prox("w1", &target, lambda, SoftOptions::default()).unwrap();
    assert_eq!(tr.graph.param(0).data, *p.data());
    assert_eq!(r.blocks, 6);
    // a large threshold zeroes every block
    let r = tr.prox("w1", &target, 1e6, SoftOptions::default()).unwrap();
    assert_eq!((r.zero_blocks, r.blocks), (6, 6));
    assert!(tr.graph.param(0).data.iter().all(|&v| v == 0.0));
    // typed refusals, nothing written
    let w2 = tr.graph.param(2).data.clone();
    let bad_block = ProxTarget { view: None, block: vec![3, 1, 1, 1] };
    assert_eq!(tr.prox("w2", &bad_block, 0.1, SoftOptions::default()).unwrap_err().kind(), ErrorKind::InvalidBlockShape);
    let bad_view = ProxTarget { view: Some(vec![5, 5]), block: vec![1, 1] };
    assert_eq!(tr.prox("w2", &bad_view, 0.1, SoftOptions::default()).unwrap_err().kind(), ErrorKind::ShapeMismatch);
    assert_eq!(tr.prox("w2", &ProxTarget::default(), f32::NAN, SoftOptions::default()).unwrap_err().kind(), ErrorKind::InvalidValue);
    assert_eq!(tr.prox("nope", &ProxTarget::default(), 0.1, SoftOptions::default()).unwrap_err().kind(), ErrorKind::InvalidArguments);
    assert_eq!(tr.graph.param(2).data, w2);
}

#[test]
fn state_round_trips_and_resumes_bit_for_bit() {
    let t = teacher_targets(&["s"]);
    let mut a = net(&["s"], true);
    for k in 0..2 {
        a.step(vec![x(5 + k)], &t).unwrap();
    }
    let bytes = a.save_state();
    assert_eq!(bytes.len(), a.state_bytes());
    // 12 bytes per weight + 1 per masked weight, plus headers
    let n: usize = (0..3).map(|i| a.graph.param(i).len()).sum();
    assert!(bytes.len() >= 13 * n && bytes.len() < 13 * n + 200, "{} bytes for {n} weights", bytes.len());
    let mut b = net(&["s"], true);
    let before: Vec<Tensor> = (0..3).map(|i| b.graph.param(i).clone()).collect();
    for cut in [0, 7, 20, bytes.len() - 1] {
        assert_eq!(b.load_state(&bytes[..cut]).unwrap_err().kind(), ErrorKind::InvalidArguments);
    }
    let mut trailing = bytes.clone();
    trailing.push(0);
    assert!(b.load_state(&trailing).is_err());
    let other = net(&["s", "p"], false);
    assert!(Trainer::new(
        Graph::new(&GraphSpec { nodes: vec![], inputs: vec![], outputs: vec![], frozen: vec![] }, vec![]).unwrap(),
        AdamConfig::default(),
        false
    )
    .unwrap()
    .load_state(&other.save_state())
    .is_err());
    for (i, p) in before.iter().enumerate() {
        assert_eq!(b.graph.param(i), p, "a refused state changes nothing");
    }
    b.load_state(&bytes).unwrap();
    assert_eq!(b.steps(), 2);
    a.step(vec![x(9)], &t).unwrap();
    b.step(vec![x(9)], &t).unwrap();
    for i in 0..3 {
        assert_eq!(a.graph.param(i), b.graph.param(i));
    }
    // set_param: count checked
    assert_eq!(b.set_param("w2", &[1.0]).unwrap_err().kind(), ErrorKind::ShapeMismatch);
    b.set_param("w2", &[0.5; 32]).unwrap();
    assert!(b.graph.param(2).data.iter().all(|&v| v == 0.5));
}

#[test]
fn probability_losses_read_a_rounded_sigmoid_as_a_probability() {
    // onnxruntime's approximate Sigmoid returns 1.0000001 for large logits: such a teacher map is
    // still a map of probabilities (read as 1); a value clearly outside [0, 1] is refused.
    use sparsekit_wasm::train::loss::bce;
    let y = Tensor::new(vec![3], vec![0.2, 0.9, 0.999]).unwrap();
    let rounded = Tensor::new(vec![3], vec![0.0, 1.000_000_1, 1.0]).unwrap();
    let exact = Tensor::new(vec![3], vec![0.0, 1.0, 1.0]).unwrap();
    let (a, ga) = bce(&y, &rounded).unwrap();
    let (b, gb) = bce(&y, &exact).unwrap();
    assert_eq!(a, b);
    assert_eq!(ga, gb);
    let far = Tensor::new(vec![3], vec![0.0, 1.01, 1.0]).unwrap();
    assert_eq!(bce(&y, &far).unwrap_err().kind(), ErrorKind::InvalidValue);
    let negative = Tensor::new(vec![3], vec![-0.001, 1.0, 1.0]).unwrap();
    assert_eq!(bce(&y, &negative).unwrap_err().kind(), ErrorKind::InvalidValue);
}

#[test]
fn set_lr_scales_the_next_updates_and_keeps_the_moments() {
    // Two trainers in step, then one at half the lr: with the same weights, gradients and moments,
    // its next update is half the other's (Adam's step is lr times a factor the lr does not enter).
    let t = teacher_targets(&["s"]);
    let (mut a, mut b) = (net(&["s"], true), net(&["s"], true));
    a.step(vec![x(5)], &t).unwrap();
    b.step(vec![x(5)], &t).unwrap();
    let before: Vec<Tensor> = (0..3).map(|i| b.graph.param(i).clone()).collect();
    b.set_lr(5e-3).unwrap();
    assert_eq!(b.adam.lr, 5e-3);
    a.step(vec![x(6)], &t).unwrap();
    b.step(vec![x(6)], &t).unwrap();
    let mut moved = 0;
    for (i, w0) in before.iter().enumerate() {
        for (k, &w) in w0.data.iter().enumerate() {
            let (da, db) = ((a.graph.param(i).data[k] - w) as f64, (b.graph.param(i).data[k] - w) as f64);
            // f32 rounding of w − step: a few ulps of w
            let tol = 4.0 * f32::EPSILON as f64 * (w.abs() as f64).max(1e-3);
            assert!((db - 0.5 * da).abs() <= tol, "param {i}[{k}]: {db} vs half of {da}");
            moved += (da != 0.0) as usize;
        }
    }
    assert!(moved > 100, "only {moved} weights moved");
    // lr 0: a step that counts but moves nothing; the masked zeros stay zero
    b.set_lr(0.0).unwrap();
    let held: Vec<Tensor> = (0..3).map(|i| b.graph.param(i).clone()).collect();
    b.step(vec![x(7)], &t).unwrap();
    assert_eq!(b.steps(), 3);
    for (i, w) in held.iter().enumerate() {
        assert_eq!(b.graph.param(i), w);
    }
    // refused, typed, and the lr stays what it was
    for lr in [f32::NAN, -1e-3, f32::INFINITY] {
        assert_eq!(b.set_lr(lr).unwrap_err().kind(), ErrorKind::InvalidValue, "lr {lr}");
        assert_eq!(b.adam.lr, 0.0);
    }
}
