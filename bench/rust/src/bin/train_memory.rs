//! Bench only: what a training step of a dumped language model allocates, by phase and node kind
//! (issue 37 item 5), natively with a counting allocator: the state (weights, Adam's moments,
//! keep-masks), then per step the activations the forward keeps (by op type), the loss's peak, and
//! the peak during each node's backward (what is live then above the step's start: activations
//! still kept, gradients in flight, the node's temporaries). The graph comes from
//! bench/train/train-dump-lm.mjs; the core records the node marks under the cfg
//! `sparsekit_train_profile` (src/train/graph.rs, `NODE_HOOK`).
//! Usage: RUSTFLAGS="--cfg sparsekit_train_profile" cargo run --release --manifest-path bench/rust/Cargo.toml
//!   --bin train_memory --features train-profile -- /work/tmp/mem37/dump/lm [seq_len] [steps]
// The node marks exist only in a core built with that cfg; without it the binary says so.
#[cfg(not(sparsekit_train_profile))]
fn main() {
    eprintln!("train_memory: build with RUSTFLAGS=\"--cfg sparsekit_train_profile\" (the core's node marks)");
    std::process::exit(2);
}

#[cfg(sparsekit_train_profile)]
fn main() {
    marked::main()
}

#[cfg(sparsekit_train_profile)]
mod marked {
    use sparsekit_bench::train_dump;
    use sparsekit_wasm::train::graph::{HOOK_BACKWARD, HOOK_FORWARD, HOOK_LOSS, NODE_HOOK};
    use sparsekit_wasm::train::{AdamConfig, Graph, GraphSpec, InitSpec, LossSpec, Tensor, Trainer};
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::Mutex;
    use std::time::Instant;

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

    /// One mark: phase, node, bytes live at the mark, peak since the previous mark.
    type Mark = (u8, usize, usize, usize);
    static MARKS: Mutex<Vec<Mark>> = Mutex::new(Vec::new());

    fn mark(phase: u8, node: usize) {
        let live = LIVE.load(SeqCst);
        let peak = PEAK.swap(live, SeqCst);
        // reserved in advance: a push never allocates while marking
        MARKS.lock().unwrap().push((phase, node, live, peak));
    }

    /// SmolLM2's vocabulary: the width of the logits and of the targets.
    const VOCAB: usize = 49_152;
    const MIB: f64 = 1024.0 * 1024.0;
    fn mib(b: usize) -> String {
        format!("{:.1}", b as f64 / MIB)
    }

    fn load(base: &str) -> (GraphSpec, Vec<InitSpec>, Vec<LossSpec>) {
        let (spec, inits, meta) = train_dump::read(base);
        let losses = meta["losses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| LossSpec::parse(l["kind"].as_str().unwrap(), l["axis"].as_i64(), None).unwrap())
            .collect();
        (spec, inits, losses)
    }

    /// A window of `s` token ids (a fixed walk over the vocabulary), its mask and positions.
    fn window(spec: &GraphSpec, s: usize) -> Vec<Tensor> {
        spec.inputs
            .iter()
            .map(|name| {
                let v: Vec<f32> = match name.as_str() {
                    "input_ids" => (0..s).map(|i| (i * 7919 % VOCAB) as f32).collect(),
                    "attention_mask" => vec![1.0; s],
                    "position_ids" => (0..s).map(|i| i as f32).collect(),
                    other => panic!("input {other}: not a language model's"),
                };
                Tensor::new(vec![1, s], v).unwrap()
            })
            .collect()
    }

    fn report(step: usize, marks: &[Mark], start: usize, ops: &[&str]) {
        let mut kept: BTreeMap<&str, (isize, usize)> = BTreeMap::new();
        let mut prev = start;
        let mut fwd_peak = 0usize;
        let mut bwd: Vec<(usize, usize, usize)> = Vec::new(); // node, peak, live after
        let (mut loss_peak, mut loss_live) = (0, 0);
        for &(phase, node, live, peak) in marks {
            match phase {
                HOOK_FORWARD => {
                    let e = kept.entry(ops[node]).or_default();
                    e.0 += live as isize - prev as isize;
                    e.1 += 1;
                    fwd_peak = fwd_peak.max(peak);
                }
                HOOK_LOSS => {
                    loss_peak = peak;
                    loss_live = live;
                }
                HOOK_BACKWARD => bwd.push((node, peak, live)),
                _ => unreachable!(),
            }
            prev = live;
        }
        let fwd_end = marks.iter().rev().find(|m| m.0 == HOOK_FORWARD).map_or(start, |m| m.2);
        println!("step {step}: live at its start {} MiB (the state and what the last step left)", mib(start));
        println!("  forward: kept {} MiB at its end, peak {} MiB above the start", mib(fwd_end - start), mib(fwd_peak - start));
        let mut rows: Vec<_> = kept.into_iter().filter(|(_, (b, _))| *b != 0).collect();
        rows.sort_by_key(|(_, (b, _))| -b);
        for (op, (b, n)) in rows.iter().take(14) {
            println!("    {op:>16} x{n:<5} {:>8} MiB", format!("{:.1}", *b as f64 / MIB));
        }
        println!("  loss: peak {} MiB above the step's start, live after {} MiB", mib(loss_peak - start), mib(loss_live - start));
        let (top, _, _) = bwd.iter().copied().max_by_key(|b| b.1).unwrap_or((0, 0, 0));
        let top_peak = bwd.iter().map(|b| b.1).max().unwrap_or(0);
        println!("  backward: peak {} MiB above the step's start at node {top} ({})", mib(top_peak - start), ops[top]);
        let mut by_peak = bwd.clone();
        by_peak.sort_by_key(|b| std::cmp::Reverse(b.1));
        for (node, peak, live) in by_peak.iter().take(8) {
            println!("    node {node:>5} {:>12}: peak {:>8} MiB, live after {:>8} MiB", ops[*node], mib(peak - start), mib(live - start));
        }
        let end = bwd.last().map_or(start, |b| b.2);
        println!("  at the step's end: {} MiB above its start", mib(end - start));
    }

    pub fn main() {
        let args: Vec<String> = std::env::args().collect();
        let base = &args[1];
        let s: usize = args.get(2).map_or(128, |v| v.parse().unwrap());
        let steps: usize = args.get(3).map_or(2, |v| v.parse().unwrap());
        MARKS.lock().unwrap().reserve(1 << 20);
        NODE_HOOK.set(mark).unwrap();
        let base_live = LIVE.load(SeqCst);
        let (spec, inits, losses) = load(base);
        let inputs = window(&spec, s);
        let g = Graph::new(&spec, inits).unwrap();
        let graph_live = LIVE.load(SeqCst);
        let mut tr = Trainer::new(g, AdamConfig { lr: 1e-5, ..AdamConfig::default() }, true).unwrap();
        tr.set_losses(losses).unwrap();
        let state_live = LIVE.load(SeqCst);
        let n_params: usize = (0..tr.graph.params.len()).map(|i| tr.graph.param(i).len()).sum();
        println!(
            "graph (weights, constants, spec) {} MiB; + Adam state and masks {} MiB; {} parameters ({} MiB of f32)",
            mib(graph_live - base_live),
            mib(state_live - graph_live),
            n_params,
            mib(n_params * 4)
        );
        // targets: uniform next-token distributions (their values do not change the allocations; not
        // the student's own, whose forward would leave its activations in the graph before step 1)
        let targets: Vec<Tensor> =
            spec.outputs.iter().map(|_| Tensor::new(vec![1, s, VOCAB], vec![1.0 / VOCAB as f32; s * VOCAB]).unwrap()).collect();
        let ops: Vec<String> = tr.graph.node_ops().iter().map(|o| o.to_string()).collect();
        let ops: Vec<&str> = ops.iter().map(|o| o.as_str()).collect();
        for step in 1..=steps {
            MARKS.lock().unwrap().clear();
            let start = LIVE.load(SeqCst);
            PEAK.store(start, SeqCst);
            let t0 = Instant::now();
            let l = tr.step(inputs.clone(), &targets).unwrap();
            let ms = t0.elapsed().as_secs_f64() * 1e3;
            let step_peak = PEAK.load(SeqCst);
            let marks = MARKS.lock().unwrap().clone();
            report(step, &marks, start, &ops);
            let overall = marks.iter().map(|m| m.3).max().unwrap_or(0).max(step_peak);
            println!(
                "  step peak {} MiB above its start ({} MiB live in all), loss {l:.6}, {ms:.0} ms",
                mib(overall - start),
                mib(overall)
            );
        }
    }
}
