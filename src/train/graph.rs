//! A compiled training graph: the nodes in a runnable order, value slots, parameters. The
//! forward pass keeps the values some backward reads (the activations of one batch; each op
//! declares what its backward reads, [`Kernel::backward_reads`]) and lets the others' data go
//! after their last reader, their shapes kept; the backward pass walks the nodes in reverse (the
//! tape is the node order) and sums each value's gradient over its uses.

use super::fold::Folding;
use super::fuse;
use super::ops::{self, Kernel};
use super::spec::{GraphSpec, InitSpec, NodeSpec};
use super::tensor::{ITensor, Tensor, Value, MAX_ELEMS};
use crate::core::error::{Error, ErrorKind, Result};
use std::collections::HashMap;

struct Node {
    kernel: Box<dyn Kernel>,
    ins: Vec<Option<usize>>,
    outs: Vec<usize>,
    op: String,
    /// `Op 'name'` (or `Op node` when the file gave no name): how errors name the node.
    label: String,
    /// Its outputs depend on no batch value, only on constants and the inputs' shapes: it runs
    /// once per input shape (see [`Folding`]).
    folded: bool,
    /// Per input: whether its gradient is needed (it is a parameter or computed from one).
    need: Vec<bool>,
    /// Values whose data no backward reads and whose last forward reader this node is (or which
    /// nothing reads): let go once it has run (or been skipped as folded), their shapes kept.
    release: Vec<usize>,
}

/// A parameter: a float initializer the optimizer updates.
pub struct Param {
    pub name: String,
    pub slot: usize,
}

pub struct Graph {
    nodes: Vec<Node>,
    names: Vec<String>,
    /// Values: initializers stay, activations are overwritten by each forward.
    values: Vec<Option<Value>>,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    output_names: Vec<String>,
    pub params: Vec<Param>,
    /// The values hold a complete forward pass (the backward's precondition).
    ran: bool,
    /// Per value: its data is let go during the forward (see `Node::release`).
    released: Vec<bool>,
    /// Keep every value's data after the forward (no release): for [`Graph::value`] on any
    /// intermediate value, and for the tests that compare the two.
    keep_all: bool,
    folding: Folding,
    /// Bench only: seconds per op type, forward and backward.
    #[cfg(sparsekit_train_profile)]
    pub profile: std::cell::RefCell<HashMap<String, (f64, f64)>>,
}

/// Bench only: called with a phase and a node index (in run order) after each node's forward
/// ([`HOOK_FORWARD`]), once the loss is computed and the backward starts ([`HOOK_LOSS`], node 0),
/// and after each node's backward with the parameters it completed updated ([`HOOK_BACKWARD`]):
/// bench/rust/src/bin/train_memory.rs attributes the bytes a step allocates to the nodes with it.
#[cfg(sparsekit_train_profile)]
pub static NODE_HOOK: std::sync::OnceLock<fn(u8, usize)> = std::sync::OnceLock::new();
#[cfg(sparsekit_train_profile)]
pub const HOOK_FORWARD: u8 = 0;
#[cfg(sparsekit_train_profile)]
pub const HOOK_LOSS: u8 = 1;
#[cfg(sparsekit_train_profile)]
pub const HOOK_BACKWARD: u8 = 2;

#[cfg(sparsekit_train_profile)]
fn hook(phase: u8, node: usize) {
    if let Some(f) = NODE_HOOK.get() {
        f(phase, node)
    }
}

fn bad(msg: String) -> Error {
    Error::new(ErrorKind::InvalidArguments, msg)
}

/// Inputs that are never trained: BatchNormalization's running mean and variance (statistics),
/// the operands that configure an op rather than carry data (Resize scales, Clip bounds, Pad's
/// constant, Expand's shape, Gather's indices, Where's condition). A float initializer that only
/// comparisons read stays a parameter whose gradient is zero: freezing it here would freeze it
/// everywhere, and `Where(Less(a, b), a, b)` trains `a` and `b`.
fn frozen_by_op(node: &NodeSpec, i: usize) -> bool {
    match node.op_type.as_str() {
        "BatchNormalization" => i >= 3,
        "Resize" | "Upsample" | "Clip" | "Pad" | "Reshape" | "Slice" | "Split" | "Squeeze" | "Unsqueeze" | "Expand" | "Gather"
        | "GatherElements" => i >= 1,
        "Where" => i == 0,
        _ => false,
    }
}

impl Graph {
    /// Checks every op first (an unsupported one is refused by name before anything else), then
    /// wires the graph and orders the nodes topologically.
    pub fn new(spec: &GraphSpec, inits: Vec<InitSpec>) -> Result<Graph> {
        let mut unsupported: Vec<&str> = spec.nodes.iter().map(|n| n.op_type.as_str()).filter(|o| !ops::supported(o)).collect();
        unsupported.dedup();
        if let Some(op) = unsupported.first() {
            return Err(ops::unsupported(op, "is not an operator of the training core"));
        }
        let kernels = spec.nodes.iter().map(ops::build).collect::<Result<Vec<_>>>()?;
        let planned = fuse::plan(spec, &inits, kernels);

        let mut slot: HashMap<String, usize> = HashMap::new();
        let mut names = Vec::new();
        let mut values: Vec<Option<Value>> = Vec::new();
        let mut intern = |n: &str, names: &mut Vec<String>, values: &mut Vec<Option<Value>>| -> usize {
            *slot.entry(n.to_string()).or_insert_with(|| {
                names.push(n.to_string());
                values.push(None);
                names.len() - 1
            })
        };
        let mut init_slots = Vec::new();
        for init in inits {
            let s = intern(&init.name, &mut names, &mut values);
            let n = init.dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).filter(|&n| n <= MAX_ELEMS);
            let n = n.ok_or_else(|| bad(format!("initializer {}: shape {:?} too large", init.name, init.dims)))?;
            values[s] = Some(match (init.floats, init.ints) {
                (Some(f), None) => Value::F(Tensor::new(init.dims, f)?),
                (None, Some(i)) if i.len() == n => Value::I(ITensor { shape: init.dims, data: i }),
                _ => return Err(bad(format!("initializer {}: needs exactly one of floats/ints of {n} elements", init.name))),
            });
            init_slots.push(s);
        }
        let inputs = spec.inputs.iter().map(|n| intern(n, &mut names, &mut values)).collect::<Vec<_>>();
        let mut nodes = Vec::new();
        for nd in planned {
            let ins = nd.inputs.iter().map(|n| (!n.is_empty()).then(|| intern(n, &mut names, &mut values))).collect();
            let outs = nd.outputs.iter().map(|n| intern(n, &mut names, &mut values)).collect();
            let label = if nd.name.is_empty() { format!("{} node", nd.op) } else { format!("{} '{}'", nd.op, nd.name) };
            nodes.push(Node { kernel: nd.kernel, ins, outs, op: nd.op, label, folded: false, need: Vec::new(), release: Vec::new() });
        }
        let outputs = spec
            .outputs
            .iter()
            .map(|n| slot.get(n).copied().ok_or_else(|| bad(format!("graph output {n} is not produced"))))
            .collect::<Result<Vec<_>>>()?;

        // Topological order: a node runs once all its inputs are known.
        let mut known = vec![false; names.len()];
        for &s in init_slots.iter().chain(&inputs) {
            known[s] = true;
        }
        let mut order = Vec::with_capacity(nodes.len());
        let mut pending: Vec<Node> = nodes;
        while !pending.is_empty() {
            let before = pending.len();
            let mut rest = Vec::new();
            for nd in pending {
                if nd.ins.iter().flatten().all(|&s| known[s]) {
                    nd.outs.iter().for_each(|&s| known[s] = true);
                    order.push(nd);
                } else {
                    rest.push(nd);
                }
            }
            if rest.len() == before {
                let nd = &rest[0];
                let miss = nd.ins.iter().flatten().find(|&&s| !known[s]).map(|&s| names[s].clone()).unwrap_or_default();
                return Err(bad(format!("{} node: input {miss} is never produced (or the graph has a cycle)", nd.op)));
            }
            pending = rest;
        }

        // Parameters: float initializers read by some node at a differentiable position.
        let mut params = Vec::new();
        for nd in &spec.nodes {
            for (i, n) in nd.inputs.iter().enumerate() {
                let Some(&s) = slot.get(n) else { continue };
                let is_float_init = init_slots.contains(&s) && matches!(values[s], Some(Value::F(_)));
                if is_float_init && !frozen_by_op(nd, i) && !spec.frozen.contains(n) && !params.iter().any(|p: &Param| p.slot == s) {
                    params.push(Param { name: n.clone(), slot: s });
                }
            }
        }
        // A statistic that is also read elsewhere stays frozen. A one-element float initializer
        // is a constant of the graph (a decomposed HardSwish's 3 and 6, an epsilon), not a weight.
        params.retain(|p| !spec.nodes.iter().any(|nd| nd.inputs.iter().enumerate().any(|(i, n)| *n == p.name && frozen_by_op(nd, i))));
        params.retain(|p| !matches!(&values[p.slot], Some(Value::F(t)) if t.len() == 1));
        // Which values need a gradient: the parameters and whatever is computed from them.
        let mut needs = vec![false; names.len()];
        params.iter().for_each(|p| needs[p.slot] = true);
        for nd in order.iter_mut() {
            nd.need = nd.ins.iter().map(|s| s.is_some_and(|s| needs[s])).collect();
            if nd.need.iter().any(|&b| b) {
                nd.outs.iter().for_each(|&s| needs[s] = true);
            }
        }
        // Fixed values (see Folding): constants, Shape outputs, and what only they compute.
        let mut fixed = vec![false; names.len()];
        init_slots.iter().filter(|&&s| !params.iter().any(|p| p.slot == s)).for_each(|&s| fixed[s] = true);
        for nd in order.iter_mut() {
            nd.folded = nd.op == "Shape" || nd.ins.iter().flatten().all(|&s| fixed[s]);
            if nd.folded {
                nd.outs.iter().for_each(|&s| fixed[s] = true);
            }
        }
        // Values a backward reads: those its op declares, at the nodes whose backward runs (some
        // input needs a gradient). The others, computed each forward (not initializers, inputs,
        // outputs or folded values), are let go after their last forward reader.
        let mut read = vec![false; names.len()];
        for nd in order.iter().filter(|nd| nd.need.iter().any(|&b| b)) {
            let (ins_read, outs_read) = nd.kernel.backward_reads(&nd.need);
            for (i, s) in nd.ins.iter().enumerate() {
                if let Some(s) = *s {
                    read[s] |= ins_read.get(i).copied().unwrap_or(true);
                }
            }
            nd.outs.iter().for_each(|&s| read[s] |= outs_read);
        }
        let mut released = vec![false; names.len()];
        let mut last_reader: Vec<Option<usize>> = vec![None; names.len()];
        for (at, nd) in order.iter().enumerate() {
            nd.ins.iter().flatten().for_each(|&s| last_reader[s] = Some(at));
        }
        let mut release: Vec<Vec<usize>> = vec![Vec::new(); order.len()];
        for (at, nd) in order.iter().enumerate() {
            if nd.folded {
                continue;
            }
            for &s in &nd.outs {
                if !read[s] && !outputs.contains(&s) && !inputs.contains(&s) {
                    released[s] = true;
                    release[last_reader[s].unwrap_or(at).max(at)].push(s);
                }
            }
        }
        for (nd, r) in order.iter_mut().zip(release) {
            nd.release = r;
        }
        Ok(Graph {
            nodes: order,
            names,
            values,
            inputs,
            outputs,
            output_names: spec.outputs.clone(),
            params,
            ran: false,
            released,
            keep_all: false,
            folding: Folding::default(),
            #[cfg(sparsekit_train_profile)]
            profile: Default::default(),
        })
    }

    /// Runs the graph on `inputs` (in the order of the spec's inputs); returns the outputs.
    pub fn forward(&mut self, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
        if inputs.len() != self.inputs.len() {
            return Err(bad(format!("graph takes {} inputs, got {}", self.inputs.len(), inputs.len())));
        }
        self.ran = false;
        let key: Vec<Vec<usize>> = inputs.iter().map(|t| t.shape.clone()).collect();
        for (&s, t) in self.inputs.iter().zip(inputs) {
            self.values[s] = Some(Value::F(t));
        }
        let fold_now = self.folding.prepare(&key, &mut self.values);
        #[allow(clippy::unused_enumerate_index)]
        for (_at, nd) in self.nodes.iter().enumerate() {
            if nd.folded && !fold_now {
                release(&mut self.values, &nd.release, self.keep_all);
                continue;
            }
            let ins: Vec<Option<&Value>> = nd.ins.iter().map(|s| s.and_then(|s| self.values[s].as_ref())).collect();
            #[cfg(sparsekit_train_profile)]
            let t0 = clock();
            let outs = nd.kernel.forward(&ins).map_err(|e| Error::new(e.kind(), format!("{}: {}", nd.label, e.message())))?;
            #[cfg(sparsekit_train_profile)]
            {
                self.profile.borrow_mut().entry(profile_key(&nd.op, &ins)).or_default().0 += clock() - t0;
            }
            for (&s, v) in nd.outs.iter().zip(outs) {
                self.values[s] = Some(v);
            }
            release(&mut self.values, &nd.release, self.keep_all);
            #[cfg(sparsekit_train_profile)]
            hook(HOOK_FORWARD, _at);
        }
        if fold_now {
            let values = &self.values;
            let kept =
                self.nodes.iter().filter(|nd| nd.folded).flat_map(|nd| nd.outs.iter().filter_map(|&s| Some((s, values[s].clone()?))));
            self.folding.keep(key, kept.collect());
        }
        let outs = self.outputs.iter().map(|&s| self.float(s).cloned()).collect::<Result<Vec<_>>>()?;
        self.ran = true;
        Ok(outs)
    }

    /// Shapes of the outputs of the last completed forward.
    pub fn output_shapes(&self) -> Result<Vec<Vec<usize>>> {
        if !self.ran {
            return Err(bad("no completed forward pass yet".into()));
        }
        self.outputs.iter().map(|&s| Ok(self.float(s)?.shape.clone())).collect()
    }

    /// The graph's outputs: any value of the graph may be one (an intermediate tensor for a
    /// matched-feature loss), listed in the spec's `outputs`.
    pub fn output_names(&self) -> &[String] {
        &self.output_names
    }

    fn float(&self, s: usize) -> Result<&Tensor> {
        match &self.values[s] {
            Some(Value::F(t)) => Ok(t),
            _ => Err(bad(format!("value {} is not a float tensor", self.names[s]))),
        }
    }

    /// Gradients of the parameters (in [`Graph::params`] order) given the gradients of the
    /// outputs of the last [`Graph::forward`].
    pub fn backward(&mut self, gouts: Vec<Tensor>) -> Result<Vec<Tensor>> {
        let mut out: Vec<Option<Tensor>> = vec![None; self.params.len()];
        self.backward_each(gouts, |i, _, g| {
            out[i] = Some(g);
            Ok(())
        })?;
        Ok(out.into_iter().map(|g| g.expect("backward_each hands every parameter once")).collect())
    }

    /// The backward pass of [`Graph::backward`], handing each parameter's gradient to
    /// `done(i, value, gradient)` (`i` in [`Graph::params`] order) as soon as it is complete, with
    /// the parameter's value to update in place: once the walk has passed the first node (in run
    /// order) that reads a parameter, nothing adds to its gradient and no node still to walk reads
    /// its value (the activations it made were kept by the forward). A training step updates each
    /// parameter there and lets its gradient go, so the gradients of all parameters are never held
    /// at once (issue 37: 0.5 GB beside a 135 M-parameter student's state); a value's gradient is
    /// let go once the node that made it has passed it on. Every parameter is handed exactly once.
    pub fn backward_each(&mut self, gouts: Vec<Tensor>, mut done: impl FnMut(usize, &mut Tensor, Tensor) -> Result<()>) -> Result<()> {
        if !self.ran {
            return Err(bad("backward needs a completed forward pass first".into()));
        }
        if gouts.len() != self.outputs.len() {
            return Err(bad(format!("{} output gradients for {} outputs", gouts.len(), self.outputs.len())));
        }
        let mut grads: Vec<Option<Tensor>> = vec![None; self.names.len()];
        for (&s, g) in self.outputs.iter().zip(gouts) {
            if g.shape != self.float(s)?.shape {
                return Err(Error::shape_mismatch("output gradient", &self.float(s)?.shape, &g.shape));
            }
            accumulate(&mut grads[s], g);
        }
        // Per node (run order), the parameters it is the first reader of: complete after it.
        let mut first_reader: Vec<Vec<usize>> = vec![Vec::new(); self.nodes.len()];
        let mut unread = Vec::new();
        for (i, p) in self.params.iter().enumerate() {
            match self.nodes.iter().position(|nd| nd.ins.contains(&Some(p.slot))) {
                Some(at) => first_reader[at].push(i),
                None => unread.push(i),
            }
        }
        let (nodes, params, values) = (&self.nodes, &self.params, &mut self.values);
        let mut hand = |i: usize, grads: &mut Vec<Option<Tensor>>, values: &mut Vec<Option<Value>>| -> Result<()> {
            let Some(Value::F(w)) = &mut values[params[i].slot] else { unreachable!("parameters are float initializers") };
            let g = match grads[params[i].slot].take() {
                Some(g) => g,
                None => Tensor::zeros(&w.shape)?,
            };
            done(i, w, g)
        };
        #[cfg(sparsekit_train_profile)]
        hook(HOOK_LOSS, 0);
        for (at, nd) in nodes.iter().enumerate().rev() {
            if nd.outs.iter().any(|&s| grads[s].is_some()) && nd.need.iter().any(|&b| b) {
                let ins: Vec<Option<&Value>> = nd.ins.iter().map(|s| s.and_then(|s| values[s].as_ref())).collect();
                let outs: Vec<&Value> = nd.outs.iter().map(|&s| values[s].as_ref().expect("forward ran")).collect();
                let gouts: Vec<Option<&Tensor>> = nd.outs.iter().map(|&s| grads[s].as_ref()).collect();
                #[cfg(sparsekit_train_profile)]
                let t0 = clock();
                let gins = nd
                    .kernel
                    .backward_some(&ins, &outs, &gouts, &nd.need)
                    .map_err(|e| Error::new(e.kind(), format!("{} backward: {}", nd.label, e.message())))?;
                #[cfg(sparsekit_train_profile)]
                {
                    self.profile.borrow_mut().entry(profile_key(&nd.op, &ins)).or_default().1 += clock() - t0;
                }
                for ((s, g), &need) in nd.ins.iter().zip(gins).zip(&nd.need) {
                    if let (Some(s), Some(g), true) = (s, g, need) {
                        if matches!(values[*s], Some(Value::F(_))) {
                            accumulate(&mut grads[*s], g);
                        }
                    }
                }
            }
            // Every reader of this node's outputs came after it: their gradients are used up.
            nd.outs.iter().for_each(|&s| grads[s] = None);
            for &i in &first_reader[at] {
                hand(i, &mut grads, values)?;
            }
            #[cfg(sparsekit_train_profile)]
            hook(HOOK_BACKWARD, at);
        }
        for i in unread {
            hand(i, &mut grads, values)?;
        }
        Ok(())
    }

    /// A parameter's current value.
    pub fn param(&self, i: usize) -> &Tensor {
        match &self.values[self.params[i].slot] {
            Some(Value::F(t)) => t,
            _ => unreachable!("parameters are float initializers"),
        }
    }

    /// A parameter's value, to update in place.
    pub fn param_mut(&mut self, i: usize) -> &mut Tensor {
        match &mut self.values[self.params[i].slot] {
            Some(Value::F(t)) => t,
            _ => unreachable!("parameters are float initializers"),
        }
    }

    /// The op of each node in run order, after fusion (a fused chain is `HardSwish`,
    /// `HardSigmoid` or `FusedElementwise`).
    pub fn node_ops(&self) -> Vec<&str> {
        self.nodes.iter().map(|n| n.op.as_str()).collect()
    }

    /// The op of each node that runs on every batch (the data path), in run order: the nodes
    /// [`Graph::node_ops`] lists minus those folded once per input shape.
    pub fn data_path_ops(&self) -> Vec<&str> {
        self.nodes.iter().filter(|n| !n.folded).map(|n| n.op.as_str()).collect()
    }

    /// The value of a named tensor after the last forward (intermediate outputs for matching):
    /// `None` for a value whose data the forward let go (no backward reads it) unless
    /// [`Graph::keep_all_values`] is set.
    pub fn value(&self, name: &str) -> Option<&Tensor> {
        let s = self.names.iter().position(|n| n == name)?;
        if self.released[s] && !self.keep_all {
            return None;
        }
        self.float(s).ok()
    }

    /// Whether the forward keeps every value's data (`true`) or lets go of those no backward
    /// reads (`false`, the default: the same gradients and steps, bit for bit, with fewer
    /// activations held). Takes effect from the next forward.
    pub fn keep_all_values(&mut self, keep: bool) {
        self.keep_all = keep;
    }
}

/// Bench only: seconds from a fixed origin (`performance.now()` in wasm, which has no clock
/// of its own for `Instant`).
#[cfg(sparsekit_train_profile)]
fn clock() -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        use wasm_bindgen::JsCast;
        let perf = js_sys::Reflect::get(&js_sys::global(), &"performance".into()).expect("performance");
        let now: js_sys::Function = js_sys::Reflect::get(&perf, &"now".into()).expect("performance.now").unchecked_into();
        now.call0(&perf).ok().and_then(|v| v.as_f64()).unwrap_or(0.0) / 1e3
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        static T0: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        T0.get_or_init(std::time::Instant::now).elapsed().as_secs_f64()
    }
}

/// Bench only: the profile's row of a node; convolutions split by kind (depthwise: one input
/// channel per group; pointwise: 1x1; the rest) and matrix products by the rank of their second
/// input, whose costs differ most.
#[cfg(sparsekit_train_profile)]
fn profile_key(op: &str, ins: &[Option<&Value>]) -> String {
    match (op, ins.get(1).copied().flatten()) {
        ("Conv", Some(w)) => match w.shape() {
            [_, 1, kh, kw] if kh * kw > 1 => "Conv depthwise".into(),
            [_, _, 1, 1] => "Conv 1x1".into(),
            _ => "Conv".into(),
        },
        // a product with a weight matrix against one of two computed values (attention's
        // scores and mix: many small products in a batch)
        ("MatMul", Some(b)) => {
            if b.shape().len() == 2 {
                "MatMul by a matrix".into()
            } else {
                "MatMul batched".into()
            }
        }
        _ => op.into(),
    }
}

/// Lets go of the data of the float values in `slots`, keeping their shapes (which backward
/// passes read); `keep` (every value kept) makes it a no-op.
fn release(values: &mut [Option<Value>], slots: &[usize], keep: bool) {
    if keep {
        return;
    }
    for &s in slots {
        if let Some(Value::F(t)) = &mut values[s] {
            t.data = Vec::new();
        }
    }
}

fn accumulate(slot: &mut Option<Tensor>, g: Tensor) {
    match slot {
        Some(acc) => acc.add_assign(&g),
        None => *slot = Some(g),
    }
}
