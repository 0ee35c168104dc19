//! A chain of element-wise steps with scalar constants run as one node (built by
//! [`crate::train::fuse`] from an exported graph's decomposed activations: PaddleOCR writes
//! HardSwish as `x * Clip(x + 3, 0, 6) / 6`, with a scalar scale and shift on either side).
//!
//! Every step repeats, element by element, the f32 operations of the nodes it replaces, in
//! their order: the forward has the bits of the unfused graph (and so its agreement with
//! onnxruntime), and so has the backward (the two gradient terms of a HardSwish's input are
//! summed as the graph sums a value's uses: two terms, and f32 addition is commutative).
//! What the fusion saves is memory traffic: one pass over the tensor forward and one backward
//! instead of one per node, and no stored intermediates (the backward recomputes them from the
//! chain's input, block by block, while they are in cache).

use super::{fin, gout0, Kernel};
use crate::core::error::Result;
use crate::kernels::par;
use crate::train::tensor::{Tensor, Value};

/// The final scaling of a decomposed hard activation: `/ 6` or `* (1/6)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    Div(f32),
    Mul(f32),
}

impl Scale {
    #[inline(always)]
    fn apply(self, v: f32) -> f32 {
        match self {
            Scale::Div(k) => v / k,
            Scale::Mul(k) => v * k,
        }
    }
}

/// One step. `Add`, `Mul`, `Div` and `Clip` are single nodes with constant operands; the hard
/// activations are the decomposed forms: `a = x + 3`, `c = Clip(a, 0, 6)`, then
/// `HardSwish(MulFirst)`: `(x * c) s`, `HardSwish(ScaleFirst)`: `x * (c s)`, `HardSigmoid`:
/// `c s`, where `s` is the [`Scale`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    Add(f32),
    Mul(f32),
    Div(f32),
    Clip(f32, f32),
    HardSwish { scale: Scale, mul_first: bool },
    HardSigmoid(Scale),
}

/// Clip as the unfused node computes it (`Unary`: max then min) and its gradient mask
/// (inclusive bounds, as there; `&` rather than `&&` so the compiler can vectorize it).
#[inline(always)]
fn clip(x: f32, lo: f32, hi: f32) -> f32 {
    x.max(lo).min(hi)
}
#[inline(always)]
fn inside(x: f32, lo: f32, hi: f32) -> f32 {
    ((x >= lo) & (x <= hi)) as u8 as f32
}

/// `clip(a, 0, 6)` of a hard activation, as compares and selects, which vectorize where
/// `max`/`min` (NaN-ignoring) do not in wasm. Equal to `clip` for every `a` but `-0.0`
/// (NaN gives 0 in both), and `a = x + 3` is never `-0.0`.
#[inline(always)]
fn clip06(a: f32) -> f32 {
    let c = if a > 0.0 { a } else { 0.0 };
    if c < 6.0 {
        c
    } else {
        6.0
    }
}

impl Step {
    /// Applies the step to every element of `v` (a loop per step: the match is outside it).
    fn forward(self, v: &mut [f32]) {
        match self {
            Step::Add(k) => v.iter_mut().for_each(|x| *x += k),
            Step::Mul(k) => v.iter_mut().for_each(|x| *x *= k),
            Step::Div(k) => v.iter_mut().for_each(|x| *x /= k),
            Step::Clip(lo, hi) => v.iter_mut().for_each(|x| *x = clip(*x, lo, hi)),
            Step::HardSwish { scale, mul_first: true } => v.iter_mut().for_each(|x| *x = scale.apply(*x * clip06(*x + 3.0))),
            Step::HardSwish { scale, mul_first: false } => v.iter_mut().for_each(|x| *x *= scale.apply(clip06(*x + 3.0))),
            Step::HardSigmoid(scale) => v.iter_mut().for_each(|x| *x = scale.apply(clip06(*x + 3.0))),
        }
    }

    /// Turns `g`, the gradient w.r.t. the step's output, into the gradient w.r.t. its input
    /// `x`, with the operations (and operand order) of the unfused nodes' backward passes.
    fn backward(self, x: &[f32], g: &mut [f32]) {
        let (x, g) = (&x[..g.len()], g);
        match self {
            Step::Add(_) => {}
            Step::Mul(k) => g.iter_mut().for_each(|g| *g *= k),
            Step::Div(k) => g.iter_mut().for_each(|g| *g /= k),
            Step::Clip(lo, hi) => g.iter_mut().zip(x).for_each(|(g, &x)| *g *= inside(x, lo, hi)),
            // Mul(x, c) then scale: the scale's backward gives t; Mul sends t c to x and t x to
            // c, the Clip masks the latter, the Add passes it on, and x sums both.
            Step::HardSwish { scale, mul_first: true } => g.iter_mut().zip(x).for_each(|(g, &x)| {
                let a = x + 3.0;
                let t = scale.apply(*g);
                *g = t * clip06(a) + (t * x) * inside(a, 0.0, 6.0);
            }),
            // Mul(x, d), d = c s: x gets g d directly and (g x) s through the scale and the Clip.
            Step::HardSwish { scale, mul_first: false } => g.iter_mut().zip(x).for_each(|(g, &x)| {
                let a = x + 3.0;
                let d = scale.apply(clip06(a));
                *g = *g * d + scale.apply(*g * x) * inside(a, 0.0, 6.0);
            }),
            Step::HardSigmoid(scale) => g.iter_mut().zip(x).for_each(|(g, &x)| *g = scale.apply(*g) * inside(x + 3.0, 0.0, 6.0)),
        }
    }
}

/// Elements per block: the step inputs of a block stay in L1 between the forward recompute
/// and the backward of the backward pass.
const BLOCK: usize = 256;
/// Elements per parallel task (threaded builds).
const TASK: usize = 1 << 15;

/// The fused node. `rank` is the largest rank among the replaced nodes' constants: a
/// constant of shape `[1]` broadcasts a scalar input to `[1]`, and the output keeps that.
pub struct Chain {
    pub steps: Vec<Step>,
    pub rank: usize,
}

impl Chain {
    fn out_shape(&self, x: &[usize]) -> Vec<usize> {
        let mut s = vec![1; self.rank.saturating_sub(x.len())];
        s.extend_from_slice(x);
        s
    }
}

impl Kernel for Chain {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let x = fin(ins, 0, "fused element-wise chain")?;
        let mut y = Tensor { shape: self.out_shape(&x.shape), data: x.data.clone() };
        let chunk = par::run_len(y.len(), TASK);
        par::map_chunks_mut(&mut y.data, chunk, |_, ys| {
            for b in ys.chunks_mut(BLOCK) {
                self.steps.iter().for_each(|s| s.forward(b));
            }
        });
        Ok(vec![Value::F(y)])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let x = fin(ins, 0, "fused element-wise chain")?;
        let mut g = gout0(gouts, outs[0].shape())?;
        g.shape = x.shape.clone();
        let n = self.steps.len();
        let chunk = par::run_len(g.len(), TASK);
        par::map_chunks_mut(&mut g.data, chunk, |t, gs| {
            // vals[s] holds the input of step s for the current block
            let mut vals = vec![0.0f32; n * BLOCK];
            for (bi, gb) in gs.chunks_mut(BLOCK).enumerate() {
                let off = t * chunk + bi * BLOCK;
                let len = gb.len();
                vals[..len].copy_from_slice(&x.data[off..off + len]);
                for s in 1..n {
                    let (done, next) = vals.split_at_mut(s * BLOCK);
                    next[..len].copy_from_slice(&done[(s - 1) * BLOCK..][..len]);
                    self.steps[s - 1].forward(&mut next[..len]);
                }
                for s in (0..n).rev() {
                    self.steps[s].backward(&vals[s * BLOCK..][..len], gb);
                }
            }
        });
        Ok(vec![Some(g)])
    }
}
