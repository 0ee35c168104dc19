//! What a training step holds beside the trainer's state (issue 37 item 5: a 135 M-parameter
//! student's gradients were all held at once, 0.5 GB, and so was the gradient of every activation
//! until the backward pass ended). Measured with a counting global allocator: the bytes a step
//! allocates above what was live before it, on two graphs where each old hold would show:
//! - a chain of MatMuls whose weights are large beside their activations: a step holds about one
//!   weight's gradient (each parameter is updated once its gradient is complete), not all;
//! - a chain of element-wise ops on a large activation with small parameters: a step holds a few
//!   activations' gradients (each let go once passed on), not one per activation.
//!
//! - a chain of Adds on a large activation (whose backward reads no value): the forward lets each
//!   sum go after the next has read it, so a step leaves the output and not every sum held;
//! - a MatMul with a wide weight (a language model's head): its input's gradient `g · Wᵀ` is
//!   computed transposed, not through a copy of `Wᵀ` as large as the weight.
//!
//! The step's bits are those of backward + update (tests/train_api.rs,
//! `backward_then_update_equals_step`) and of a forward that keeps every value
//! (tests/train_release.rs). One test function: the counter is process-wide.
#![cfg(not(target_arch = "wasm32"))]

use sparsekit_wasm::train::{AdamConfig, Graph, GraphSpec, InitSpec, NodeSpec, Tensor, Trainer};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), SeqCst) + l.size();
            PEAK.fetch_max(now, SeqCst);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        LIVE.fetch_sub(l.size(), SeqCst);
    }
}

#[global_allocator]
static A: Counting = Counting;

/// Bytes allocated by `f` at its peak above what was live when it started.
fn held_by(f: impl FnOnce()) -> usize {
    let base = LIVE.load(SeqCst);
    PEAK.store(base, SeqCst);
    f();
    PEAK.load(SeqCst) - base
}

fn vals(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 9) as f32 / (1u32 << 23) as f32 - 0.5
        })
        .collect()
}

fn init(name: &str, dims: &[usize], seed: u32) -> InitSpec {
    InitSpec { name: name.into(), dims: dims.to_vec(), floats: Some(vals(dims.iter().product(), seed)), ints: None }
}

fn trainer(nodes: Vec<NodeSpec>, out: &str, inits: Vec<InitSpec>) -> Trainer {
    let spec = GraphSpec { nodes, inputs: vec!["x".into()], outputs: vec![out.into()], frozen: vec![] };
    Trainer::new(Graph::new(&spec, inits).unwrap(), AdamConfig::default(), true).unwrap()
}

/// The bytes the second step holds above what is live before it (the first step's activations
/// stay between steps and are replaced one by one by the next forward).
fn second_step(t: &mut Trainer, x: &Tensor, target: &Tensor) -> usize {
    t.step(vec![x.clone()], std::slice::from_ref(target)).unwrap();
    held_by(|| {
        t.step(vec![x.clone()], std::slice::from_ref(target)).unwrap();
    })
}

#[test]
fn a_step_holds_one_parameters_gradient_and_a_few_activations_gradients() {
    // 8 MatMuls of 256 x 256 weights (256 KiB each, 2 MiB in all) on one row of 256 values
    let (d, layers) = (256, 8);
    let names: Vec<String> = (0..=layers).map(|i| format!("h{i}")).collect();
    let nodes = (0..layers)
        .map(|i| NodeSpec::new("MatMul", &[if i == 0 { "x" } else { &names[i] }, &format!("w{i}")], &[&names[i + 1]], &[]))
        .collect();
    let inits = (0..layers).map(|i| init(&format!("w{i}"), &[d, d], i as u32 + 1)).collect();
    let mut t = trainer(nodes, &names[layers], inits);
    let (x, target) = (Tensor::new(vec![1, d], vals(d, 91)).unwrap(), Tensor::new(vec![1, d], vals(d, 92)).unwrap());
    let weight = d * d * 4;
    let held = second_step(&mut t, &x, &target);
    // one weight's gradient and what the MatMul's backward allocates for it (a transposed weight)
    assert!(
        held < 3 * weight,
        "a step held {held} B beside the state: more than one weight's gradient and its work ({weight} B each) of {} B",
        layers * weight
    );

    // 12 element-wise nodes (Add of a 256-value bias, then Relu, 6 times) on 256 x 256 activations
    // (256 KiB each, 3 MiB in all), parameters of 1 KiB each
    let n = 6;
    let mut nodes = Vec::new();
    let mut last = "x".to_string();
    for i in 0..n {
        nodes.push(NodeSpec::new("Add", &[&last, &format!("b{i}")], &[&format!("a{i}")], &[]));
        nodes.push(NodeSpec::new("Relu", &[&format!("a{i}")], &[&format!("r{i}")], &[]));
        last = format!("r{i}");
    }
    let inits = (0..n).map(|i| init(&format!("b{i}"), &[d], 40 + i as u32)).collect();
    let mut t = trainer(nodes, &last, inits);
    let (x, target) = (Tensor::new(vec![d, d], vals(d * d, 93)).unwrap(), Tensor::new(vec![d, d], vals(d * d, 94)).unwrap());
    let act = d * d * 4;
    let held = second_step(&mut t, &x, &target);
    assert!(
        held < 5 * act,
        "a step held {held} B beside the state and the activations: more than a few activations' gradients ({act} B each) of {}",
        2 * n * act
    );

    // 8 Adds of a 256-value bias on a 256 x 256 activation: what stays held after a step (beside
    // the target) is the input and the output, not the 7 sums between them
    let n = 8;
    let sums: Vec<String> = (0..=n).map(|i| if i == 0 { "x".into() } else { format!("s{i}") }).collect();
    let nodes = (0..n).map(|i| NodeSpec::new("Add", &[&sums[i], &format!("b{i}")], &[&sums[i + 1]], &[])).collect();
    let inits = (0..n).map(|i| init(&format!("b{i}"), &[d], 60 + i as u32)).collect();
    let mut t = trainer(nodes, &sums[n], inits);
    let before = LIVE.load(SeqCst);
    t.step(vec![x.clone()], std::slice::from_ref(&target)).unwrap();
    let after = LIVE.load(SeqCst) - before;
    assert!(after < 3 * act, "a step left {after} B of activations held ({act} B each: the input, the output; {n} sums computed)");

    // a head: 2 rows of 64 features into 4096 outputs (a 1 MiB weight), its input computed from
    // a parameter (so its gradient is needed): a step holds the weight's gradient, not also a
    // transposed copy of the weight
    let (rows, k, v) = (2, 64, 4096);
    let nodes = vec![NodeSpec::new("Add", &["x", "a"], &["xa"], &[]), NodeSpec::new("MatMul", &["xa", "head"], &["y"], &[])];
    let mut t = trainer(nodes, "y", vec![init("a", &[rows, k], 71), init("head", &[k, v], 72)]);
    let (x, target) = (Tensor::new(vec![rows, k], vals(rows * k, 73)).unwrap(), Tensor::new(vec![rows, v], vals(rows * v, 74)).unwrap());
    let weight = k * v * 4;
    let held = second_step(&mut t, &x, &target);
    assert!(held < weight * 3 / 2, "a step of a head held {held} B: more than the weight's gradient ({weight} B) and a little work");
}
