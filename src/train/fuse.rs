//! Fusion of element-wise chains at graph build time. Exporters decompose activations the ONNX
//! opset lacked (PaddleOCR: HardSwish as `Add(x, 3) -> Clip(0, 6) -> Mul(x, .) -> Div(6)`) and
//! wrap them in scalar scales and shifts; run node by node, each of these is a full pass over
//! the tensor forward and backward and a stored intermediate. Here a run of such nodes becomes
//! one [`Chain`] node with the same arithmetic (see `ops/chain.rs`).
//!
//! A node joins only when it cannot change what the caller sees: its constant operands are
//! one-element float initializers (never parameters: the graph holds those constant), and every
//! value inside a chain is used by the next step alone and is not a graph output (so an
//! intermediate the caller asked for, or one read elsewhere, keeps its node). The hard
//! activations are recognised only with exactly the constants 3, 0, 6 and 6 (or 1/6).

use super::ops::chain::{Chain, Scale, Step};
use super::ops::Kernel;
use super::spec::{Attr, GraphSpec, InitSpec, NodeSpec};
use std::collections::HashMap;

/// A node of the graph as it will run: an original node or a fused chain.
pub struct Planned {
    pub op: String,
    /// The node's name (a chain's: its first node's), for errors that name the node.
    pub name: String,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    pub kernel: Box<dyn Kernel>,
}

/// One step candidate: the nodes it replaces, its input and output values, how many times it
/// reads its input, and the rank of its constants.
struct Unit {
    nodes: Vec<usize>,
    input: String,
    output: String,
    reads: usize,
    step: Step,
    rank: usize,
}

struct Ctx<'a> {
    spec: &'a GraphSpec,
    /// One-element float initializers: value and rank.
    scalars: HashMap<&'a str, (f32, usize)>,
    /// Reads of each value by nodes, plus one if it is a graph output.
    uses: HashMap<&'a str, usize>,
    /// The nodes reading each value.
    readers: HashMap<&'a str, Vec<usize>>,
}

impl<'a> Ctx<'a> {
    fn node(&self, i: usize) -> &'a NodeSpec {
        &self.spec.nodes[i]
    }

    /// The single node reading `v`, when `v` is private to it (read once, not an output).
    fn only_reader(&self, v: &str) -> Option<usize> {
        match (self.uses.get(v), self.readers.get(v).map(Vec::as_slice)) {
            (Some(1), Some([r])) => Some(*r),
            _ => None,
        }
    }

    /// `(data input, constant, constant's rank)` of a two-input node with one scalar operand.
    fn with_scalar(&self, i: usize, commutes: bool) -> Option<(&'a str, f32, usize)> {
        let n = self.node(i);
        let [a, b] = n.inputs.as_slice() else { return None };
        match (self.scalars.get(a.as_str()), self.scalars.get(b.as_str())) {
            (None, Some(&(k, r))) => Some((a, k, r)),
            (Some(&(k, r)), None) if commutes => Some((b, k, r)),
            _ => None,
        }
    }

    /// The step of a single node, if it is one.
    fn simple(&self, i: usize) -> Option<Unit> {
        let n = self.node(i);
        if n.outputs.len() != 1 {
            return None;
        }
        let (input, step, rank) = match n.op_type.as_str() {
            "Add" => self.with_scalar(i, true).map(|(x, k, r)| (x, Step::Add(k), r))?,
            "Mul" => self.with_scalar(i, true).map(|(x, k, r)| (x, Step::Mul(k), r))?,
            "Div" => self.with_scalar(i, false).map(|(x, k, r)| (x, Step::Div(k), r))?,
            "Clip" => {
                // Clip does not broadcast its bounds: the output has the input's shape
                let (lo, hi) = self.clip_bounds(n)?;
                (n.inputs.first()?.as_str(), Step::Clip(lo, hi), 0)
            }
            _ => return None,
        };
        if input.is_empty() {
            return None;
        }
        Some(Unit { nodes: vec![i], input: input.into(), output: n.outputs[0].clone(), reads: 1, step, rank })
    }

    /// A Clip's bounds when they are constants (inputs 1 and 2, else the opset-6 attributes).
    fn clip_bounds(&self, n: &NodeSpec) -> Option<(f32, f32)> {
        let get = |i: usize, attr: &str, default: f32| -> Option<f32> {
            match n.inputs.get(i).filter(|s| !s.is_empty()) {
                Some(name) => self.scalars.get(name.as_str()).map(|&(k, _)| k),
                None => match n.attrs.get(attr) {
                    None => Some(default),
                    Some(Attr::Float(v)) => Some(*v as f32),
                    Some(Attr::Int(v)) => Some(*v as f32),
                    Some(_) => None,
                },
            }
        };
        Some((get(1, "min", f32::NEG_INFINITY)?, get(2, "max", f32::INFINITY)?))
    }

    /// The scale that ends a hard activation, read by node `i` from value `v`: `v / 6` or
    /// `v * (1/6)` (either operand order of the Mul).
    fn scale_of(&self, i: usize, v: &str) -> Option<(Scale, usize)> {
        let n = self.node(i);
        let (x, k, r) = match n.op_type.as_str() {
            "Div" => self.with_scalar(i, false).filter(|&(_, k, _)| k == 6.0).map(|(x, k, r)| (x, Scale::Div(k), r))?,
            "Mul" => self.with_scalar(i, true).filter(|&(_, k, _)| k == 1.0f32 / 6.0).map(|(x, k, r)| (x, Scale::Mul(k), r))?,
            _ => return None,
        };
        (x == v).then_some((k, r))
    }

    /// A decomposed HardSwish or HardSigmoid starting at node `i` (`Add(x, 3)`).
    fn hard(&self, i: usize) -> Option<Unit> {
        let add = self.simple(i)?;
        if add.step != Step::Add(3.0) {
            return None;
        }
        let x = add.input.as_str();
        // The activation's input must be read by it alone (twice for HardSwish): a third
        // gradient term would be summed in another order than the graph's, changing bits.
        let x_uses = self.uses.get(x).copied().unwrap_or(0);
        let ci = self.only_reader(&add.output)?;
        let clip = self.simple(ci).filter(|u| u.step == Step::Clip(0.0, 6.0) && u.input == add.output)?;
        let next = self.only_reader(&clip.output)?;
        let mut rank = add.rank.max(clip.rank);
        let nn = self.node(next);
        // Mul(x, c) then the scale
        if x_uses == 2
            && nn.op_type == "Mul"
            && nn.inputs.len() == 2
            && nn.inputs.iter().any(|s| s == x)
            && nn.inputs.contains(&clip.output)
        {
            let m = &nn.outputs[0];
            let di = self.only_reader(m)?;
            let (scale, r) = self.scale_of(di, m)?;
            rank = rank.max(r);
            let step = Step::HardSwish { scale, mul_first: true };
            return Some(Unit {
                nodes: vec![i, ci, next, di],
                input: x.into(),
                output: self.node(di).outputs[0].clone(),
                reads: 2,
                step,
                rank,
            });
        }
        // the scale, then Mul(x, d) for HardSwish or nothing for HardSigmoid
        let (scale, r) = self.scale_of(next, &clip.output)?;
        rank = rank.max(r);
        let d = &self.node(next).outputs[0];
        if let Some(mi) = self.only_reader(d).filter(|_| x_uses == 2) {
            let mn = self.node(mi);
            if mn.op_type == "Mul" && mn.inputs.len() == 2 && mn.inputs.iter().any(|s| s == x) && mn.inputs.iter().any(|s| s == d) {
                let step = Step::HardSwish { scale, mul_first: false };
                return Some(Unit { nodes: vec![i, ci, next, mi], input: x.into(), output: mn.outputs[0].clone(), reads: 2, step, rank });
            }
        }
        Some(Unit { nodes: vec![i, ci, next], input: x.into(), output: d.clone(), reads: 1, step: Step::HardSigmoid(scale), rank })
    }
}

/// The nodes to run: `kernels[i]` is node `i`'s kernel (already built and checked); runs of
/// fusable nodes come back as one [`Chain`] each, the other nodes unchanged, in spec order.
pub fn plan(spec: &GraphSpec, inits: &[InitSpec], kernels: Vec<Box<dyn Kernel>>) -> Vec<Planned> {
    let mut ctx = Ctx { spec, scalars: HashMap::new(), uses: HashMap::new(), readers: HashMap::new() };
    for t in inits {
        if let Some([v]) = t.floats.as_deref() {
            ctx.scalars.insert(t.name.as_str(), (*v, t.dims.len()));
        }
    }
    for (i, n) in spec.nodes.iter().enumerate() {
        for s in n.inputs.iter().filter(|s| !s.is_empty()) {
            *ctx.uses.entry(s).or_default() += 1;
            ctx.readers.entry(s).or_default().push(i);
        }
    }
    for o in &spec.outputs {
        *ctx.uses.entry(o).or_default() += 1;
    }
    // A value computed by a node must not also be an initializer (the graph's slot is shared).
    let produced: std::collections::HashSet<&str> = spec.nodes.iter().flat_map(|n| n.outputs.iter().map(String::as_str)).collect();
    ctx.scalars.retain(|k, _| !produced.contains(k));

    // Units: hard activations first (their nodes are taken), then single steps.
    let mut taken = vec![false; spec.nodes.len()];
    let mut units: Vec<Unit> = Vec::new();
    for i in 0..spec.nodes.len() {
        if let Some(u) = ctx.hard(i).filter(|u| u.nodes.iter().all(|&j| !taken[j])) {
            u.nodes.iter().for_each(|&j| taken[j] = true);
            units.push(u);
        }
    }
    for (i, t) in taken.iter_mut().enumerate() {
        if !*t {
            if let Some(u) = ctx.simple(i) {
                *t = true;
                units.push(u);
            }
        }
    }
    // Links: unit u feeds unit v when u's output is read only by v (all of v's reads).
    let by_input: HashMap<&str, Vec<usize>> = units.iter().enumerate().fold(HashMap::new(), |mut m, (k, u)| {
        m.entry(u.input.as_str()).or_default().push(k);
        m
    });
    let mut next = vec![None; units.len()];
    let mut has_prev = vec![false; units.len()];
    for (k, u) in units.iter().enumerate() {
        if let Some([v]) = by_input.get(u.output.as_str()).map(Vec::as_slice) {
            if ctx.uses.get(u.output.as_str()) == Some(&units[*v].reads) && !spec.outputs.contains(&u.output) {
                next[k] = Some(*v);
                has_prev[*v] = true;
            }
        }
    }
    // Chains from each unit without a predecessor; a lone single-node step stays as it is.
    let mut replaced: HashMap<usize, Option<Planned>> = HashMap::new();
    for start in (0..units.len()).filter(|&k| !has_prev[k]) {
        let mut members = vec![start];
        while let Some(v) = next[*members.last().unwrap()] {
            members.push(v);
        }
        let nodes: Vec<usize> = members.iter().flat_map(|&k| units[k].nodes.iter().copied()).collect();
        if nodes.len() < 2 {
            continue;
        }
        let steps: Vec<Step> = members.iter().map(|&k| units[k].step).collect();
        let op = match steps.as_slice() {
            [Step::HardSwish { .. }] => "HardSwish",
            [Step::HardSigmoid(_)] => "HardSigmoid",
            _ => "FusedElementwise",
        };
        let rank = members.iter().map(|&k| units[k].rank).max().unwrap_or(0);
        let first = *nodes.iter().min().unwrap();
        nodes.iter().for_each(|&j| {
            replaced.insert(j, None);
        });
        let planned = Planned {
            op: op.into(),
            name: spec.nodes[first].name.clone(),
            inputs: vec![units[start].input.clone()],
            outputs: vec![units[*members.last().unwrap()].output.clone()],
            kernel: Box::new(Chain { steps, rank }),
        };
        replaced.insert(first, Some(planned));
    }
    let mut out = Vec::with_capacity(spec.nodes.len());
    for (i, (n, k)) in spec.nodes.iter().zip(kernels).enumerate() {
        match replaced.remove(&i) {
            Some(Some(p)) => out.push(p),
            Some(None) => {}
            None => out.push(Planned {
                op: n.op_type.clone(),
                name: n.name.clone(),
                inputs: n.inputs.clone(),
                outputs: n.outputs.clone(),
                kernel: k,
            }),
        }
    }
    out
}
