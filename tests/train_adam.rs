//! Masked Adam: a step equals the hand computation of Kingma & Ba's update, a pruned weight
//! (zero at the start) stays exactly zero however large its gradient, and a distillation-style
//! run (a pruned student fitted to its dense teacher's outputs) lowers the loss while keeping
//! every zero.

#[path = "support/train_init.rs"]
mod train_init;
use sparsekit_wasm::train::{AdamConfig, AdamState, Attr, Graph, GraphSpec, InitSpec, NodeSpec, Tensor, Trainer};
use train_init::*;

#[test]
fn adam_step_matches_hand_computation() {
    let cfg = AdamConfig { lr: 0.1, beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.0 };
    let mut w = Tensor::new(vec![3], vec![1.0, -2.0, 0.5]).unwrap();
    let mut s = AdamState::new(&w, false);
    let g1 = Tensor::new(vec![3], vec![0.5, -1.0, 2.0]).unwrap();
    cfg.step(1, &mut w, &g1, &mut s);
    // step 1: m = 0.1 g, v = 0.001 g², m̂ = g, v̂ = g², update = lr * g / (|g| + eps) = ±0.1
    let want1 = [1.0 - 0.1 * 0.5 / (0.5 + 1e-8), -2.0 + 0.1 * 1.0 / (1.0 + 1e-8), 0.5 - 0.1 * 2.0 / (2.0 + 1e-8)];
    for (i, want) in want1.iter().enumerate() {
        assert!((w.data[i] as f64 - want).abs() < 1e-6, "step 1 [{i}]: {} vs {want}", w.data[i]);
    }
    let g2 = Tensor::new(vec![3], vec![-0.5, 0.25, 2.0]).unwrap();
    cfg.step(2, &mut w, &g2, &mut s);
    for (i, w1) in want1.iter().enumerate() {
        let (a, b) = (g1.data[i] as f64, g2.data[i] as f64);
        let m = 0.9 * 0.1 * a + 0.1 * b;
        let v = 0.999 * 0.001 * a * a + 0.001 * b * b;
        let (mh, vh) = (m / (1.0 - 0.9f64.powi(2)), v / (1.0 - 0.999f64.powi(2)));
        let want = w1 - 0.1 * mh / (vh.sqrt() + 1e-8);
        assert!((w.data[i] as f64 - want).abs() < 1e-5, "step 2 [{i}]: {} vs {want}", w.data[i]);
    }
}

#[test]
fn masked_weights_stay_zero() {
    let cfg = AdamConfig { lr: 0.5, ..AdamConfig::default() };
    let mut w = Tensor::new(vec![4], vec![0.0, 1.0, 0.0, -1.0]).unwrap();
    let mut s = AdamState::new(&w, true);
    for t in 1..=20 {
        let g = Tensor::new(vec![4], vec![100.0, 0.3, -7.0, 0.2]).unwrap();
        cfg.step(t, &mut w, &g, &mut s);
    }
    assert_eq!(w.data[0].to_bits(), 0.0f32.to_bits());
    assert_eq!(w.data[2].to_bits(), 0.0f32.to_bits());
    assert!(w.data[1] != 1.0 && w.data[3] != -1.0, "kept weights train");
    assert!(AdamConfig { eps: 0.0, ..cfg }.check().is_err());
    assert!(AdamConfig { lr: f32::NAN, ..cfg }.check().is_err());
}

/// conv(3x3) -> relu -> conv(1x1): the students' and teachers' graph, and its weights w1, b1, w2.
fn two_convs() -> (GraphSpec, Vec<f32>, Vec<f32>, Vec<f32>) {
    let nodes = vec![
        NodeSpec::new("Conv", &["x", "w1", "b1"], &["c1"], &[("pads", Attr::Ints(vec![1, 1, 1, 1]))]),
        NodeSpec::new("Relu", &["c1"], &["r1"], &[]),
        NodeSpec::new("Conv", &["r1", "w2"], &["y"], &[]),
    ];
    let spec = GraphSpec { nodes, inputs: vec!["x".into()], outputs: vec!["y".into()], frozen: vec![] };
    (spec, lcg(1, 8 * 3 * 9, 0.3), lcg(2, 8, 0.1), lcg(3, 4 * 8, 0.3))
}

/// The initializers of [`two_convs`].
fn two_conv_inits(w1: &[f32], b1: &[f32], w2: &[f32]) -> Vec<InitSpec> {
    vec![
        InitSpec { name: "w1".into(), dims: vec![8, 3, 3, 3], floats: Some(w1.to_vec()), ints: None },
        InitSpec { name: "b1".into(), dims: vec![8], floats: Some(b1.to_vec()), ints: None },
        InitSpec { name: "w2".into(), dims: vec![4, 8, 1, 1], floats: Some(w2.to_vec()), ints: None },
    ]
}

/// [`two_convs`]: a teacher with dense weights and a student with half of
/// them zeroed: Adam on the student's MSE to the teacher's outputs.
#[test]
fn pruned_student_distils_and_keeps_its_zeros() {
    let (spec, w1, b1, w2) = two_convs();
    let init = |w1: &[f32], w2: &[f32]| two_conv_inits(w1, &b1, w2);
    let mut teacher = Graph::new(&spec, init(&w1, &w2)).unwrap();
    // magnitude-prune half of w1 (the smaller half)
    let mut order: Vec<usize> = (0..w1.len()).collect();
    order.sort_by(|&a, &b| w1[a].abs().partial_cmp(&w1[b].abs()).unwrap());
    let mut pw1 = w1.clone();
    order[..w1.len() / 2].iter().for_each(|&i| pw1[i] = 0.0);
    let student = Graph::new(&spec, init(&pw1, &w2)).unwrap();
    let mut tr = Trainer::new(student, AdamConfig { lr: 3e-3, ..AdamConfig::default() }, true).unwrap();
    let batches: Vec<Tensor> = (0..4).map(|b| Tensor::new(vec![2, 3, 6, 6], lcg(10 + b, 2 * 3 * 36, 1.0)).unwrap()).collect();
    let targets: Vec<Vec<Tensor>> = batches.iter().map(|x| teacher.forward(vec![x.clone()]).unwrap()).collect();
    let eval = |tr: &mut Trainer| -> f64 { batches.iter().zip(&targets).map(|(x, t)| tr.eval(vec![x.clone()], t).unwrap()).sum::<f64>() };
    let before = eval(&mut tr);
    for epoch in 0..30 {
        for (x, t) in batches.iter().zip(&targets) {
            tr.step(vec![x.clone()], t).unwrap();
        }
        let _ = epoch;
    }
    let after = eval(&mut tr);
    assert!(after < 0.5 * before, "distillation loss {before} -> {after}");
    let w = tr.graph.param(0);
    for (i, (&p, &q)) in pw1.iter().zip(&w.data).enumerate() {
        if p == 0.0 {
            assert_eq!(q.to_bits(), 0, "pruned weight {i} moved to {q}");
        }
    }
}

/// A student held on a 4-bit grid per output channel (quantization-aware distillation): the loss
/// falls, every trained value is a code times its scale, the zeros stay zero, steps smaller than
/// half a grid step add up in the master (a weight moves only once the master crosses a rounding
/// boundary), and a saved state carries the master to a new trainer.
#[test]
fn held_grid_student_distils_on_its_grid() {
    let (spec, w1, b1, w2) = two_convs();
    let init = |w1: &[f32]| two_conv_inits(w1, &b1, &w2);
    let mut teacher = Graph::new(&spec, init(&w1)).unwrap();
    let mut pw1 = w1.clone();
    pw1.iter_mut().step_by(3).for_each(|x| *x = 0.0);
    // one scale per output channel: the row's largest |w| on code 7
    let scale: Vec<f32> =
        (0..w1.len()).map(|i| pw1[i / 27 * 27..(i / 27 + 1) * 27].iter().fold(0f32, |a, x| a.max(x.abs())) / 7.0).collect();
    let on_grid = |w: &[f32]| {
        w.iter().zip(&scale).all(|(&x, &s)| ((x / s).round() * s + 0.0).to_bits() == x.to_bits() && (x / s).round().abs() <= 8.0)
    };
    let batches: Vec<Tensor> = (0..4).map(|b| Tensor::new(vec![2, 3, 6, 6], lcg(10 + b, 2 * 3 * 36, 1.0)).unwrap()).collect();
    let targets: Vec<Vec<Tensor>> = batches.iter().map(|x| teacher.forward(vec![x.clone()]).unwrap()).collect();
    let make = |lr: f32| {
        let mut tr = Trainer::new(Graph::new(&spec, init(&pw1)).unwrap(), AdamConfig { lr, ..AdamConfig::default() }, true).unwrap();
        tr.hold_grid("w1", scale.clone(), -8.0, 7.0).unwrap();
        tr
    };
    // a step far below half a grid step: the weight stays, the master moves
    let mut tiny = make(1e-6);
    let held = tiny.graph.param(0).data.clone();
    assert!(on_grid(&held));
    tiny.step(vec![batches[0].clone()], &targets[0]).unwrap();
    assert_eq!(tiny.graph.param(0).data, held, "a tiny step left the grid");
    // its state holds the master: read by a trainer without the grid, it is not the held values
    let mut plain = Trainer::new(Graph::new(&spec, init(&pw1)).unwrap(), AdamConfig::default(), true).unwrap();
    plain.load_state(&tiny.save_state()).unwrap();
    let master = plain.graph.param(0).data.clone();
    assert!(
        master != held && master.iter().zip(&held).all(|(m, h)| (m - h).abs() <= 0.5 * 0.3 / 7.0 + 1e-5),
        "the master did not take the step"
    );

    let mut tr = make(3e-3);
    let eval = |tr: &mut Trainer| -> f64 { batches.iter().zip(&targets).map(|(x, t)| tr.eval(vec![x.clone()], t).unwrap()).sum::<f64>() };
    let before = eval(&mut tr);
    for _ in 0..30 {
        for (x, t) in batches.iter().zip(&targets) {
            tr.step(vec![x.clone()], t).unwrap();
        }
    }
    let after = eval(&mut tr);
    assert!(after < 0.7 * before, "held-grid distillation loss {before} -> {after}");
    let w = tr.graph.param(0).data.clone();
    assert!(on_grid(&w), "trained values left the grid");
    assert!(w != held, "the held weights never moved");
    pw1.iter()
        .zip(&w)
        .enumerate()
        .filter(|(_, (&p, _))| p == 0.0)
        .for_each(|(i, (_, &q))| assert_eq!(q.to_bits(), 0, "pruned weight {i} moved to {q}"));
    // the state holds the master, which a fresh trainer with the grid rounds to the same values
    let mut again = make(3e-3);
    again.load_state(&tr.save_state()).unwrap();
    assert_eq!(again.graph.param(0).data, w);
    for (x, t) in batches.iter().zip(&targets) {
        assert_eq!(tr.step(vec![x.clone()], t).unwrap().to_bits(), again.step(vec![x.clone()], t).unwrap().to_bits());
    }
    assert_eq!(again.graph.param(0).data, tr.graph.param(0).data, "resumed training diverged");
    // a student built from the rounded values (a job's codes): every zero it starts from — pruned,
    // or a weight its grid put on code 0 — is held there, so the file's zeros are the ones it trains around
    let rounded: Vec<f32> = pw1.iter().zip(&scale).map(|(&x, &s)| (x / s).round().clamp(-8.0, 7.0) * s + 0.0).collect();
    assert!((0..rounded.len()).any(|i| rounded[i] == 0.0 && pw1[i] != 0.0));
    let mut qat = Trainer::new(Graph::new(&spec, init(&rounded)).unwrap(), AdamConfig { lr: 3e-3, ..AdamConfig::default() }, true).unwrap();
    qat.hold_grid("w1", scale.clone(), -8.0, 7.0).unwrap();
    assert!(qat.hold_grid("w2", vec![0.1; 31], -8.0, 7.0).is_err());
    for _ in 0..30 {
        for (x, t) in batches.iter().zip(&targets) {
            qat.step(vec![x.clone()], t).unwrap();
        }
    }
    let q = &qat.graph.param(0).data;
    assert!(on_grid(q) && q != &rounded, "the rounded student did not train on its grid");
    assert!(rounded.iter().zip(q).all(|(&r, &x)| r != 0.0 || x.to_bits() == 0), "a zero it started from moved");
    assert!(tr.prox("w1", &sparsekit_wasm::train::ProxTarget { view: None, block: vec![1, 1] }, 0.1, Default::default()).is_err());
}
