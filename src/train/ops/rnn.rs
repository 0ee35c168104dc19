//! What GRU and LSTM share (ONNX semantics, layout 0): the attributes the core reads and the ones
//! it refuses by name (other activations, their alpha / beta, clip, layout 1, LSTM's
//! input_forget and peepholes, sequence_lens shorter than the sequence), the inputs' shapes, the
//! order of time steps per direction (forward, reverse, both), the input projection of all time
//! steps in one GEMM, and its backward (dX, dW, the input bias). The cells are in gru.rs and
//! lstm.rs; their backward re-runs the forward keeping each step's gates (the graph keeps only
//! the outputs) and walks the steps back.

use super::linear::matmul_acc;
use super::select::int_values;
use super::{fin, fin_opt, unsupported, Attrs};
use crate::core::error::{Error, ErrorKind, Result};
use crate::kernels::col_sums::add_col_sums;
use crate::kernels::gemm::SUM_CHUNK;
use crate::train::tensor::{Tensor, Value};

#[derive(Clone, Copy, PartialEq)]
pub enum Dir {
    Forward,
    Reverse,
    Both,
}

pub struct Rnn {
    pub op: &'static str,
    /// Gates per cell: 3 (GRU: z, r, h), 4 (LSTM: i, o, f, c).
    pub gates: usize,
    hidden: Option<usize>,
    dir: Dir,
}

/// One node's inputs, shapes checked: `x` [T, B, I], `w` [D, G·H, I], `r` [D, G·H, H],
/// `b` [D, 2·G·H], `h0` / `c0` [D, B, H].
pub struct Io<'a> {
    pub x: &'a Tensor,
    pub w: &'a Tensor,
    pub r: &'a Tensor,
    pub b: Option<&'a Tensor>,
    pub h0: Option<&'a Tensor>,
    pub c0: Option<&'a Tensor>,
    pub t: usize,
    pub bsz: usize,
    pub i: usize,
    pub h: usize,
    pub dirs: usize,
}

impl Io<'_> {
    pub fn gh(&self) -> usize {
        self.r.shape[1]
    }
    pub fn w_d(&self, d: usize) -> &[f32] {
        &self.w.data[d * self.gh() * self.i..][..self.gh() * self.i]
    }
    pub fn r_d(&self, d: usize) -> &[f32] {
        &self.r.data[d * self.gh() * self.h..][..self.gh() * self.h]
    }
    /// The recurrence's bias `Rb` of direction `d` (zeros when B is omitted).
    pub fn rb_d(&self, d: usize) -> Vec<f32> {
        let gh = self.gh();
        self.b.map_or_else(|| vec![0.0; gh], |b| b.data[d * 2 * gh + gh..][..gh].to_vec())
    }
    /// The initial state of direction `d` from `s0` (zeros when omitted).
    pub fn init(&self, s0: Option<&Tensor>, d: usize) -> Vec<f32> {
        let n = self.bsz * self.h;
        s0.map_or_else(|| vec![0.0; n], |s| s.data[d * n..][..n].to_vec())
    }
}

impl Rnn {
    pub fn new(a: &Attrs, op: &'static str, gates: usize, default_acts: &[&str]) -> Result<Rnn> {
        let dir = match a.str("direction", "forward")?.as_str() {
            "forward" => Dir::Forward,
            "reverse" => Dir::Reverse,
            "bidirectional" => Dir::Both,
            d => return Err(unsupported(op, &format!("direction {d}"))),
        };
        if let Some(acts) = a.map.get("activations") {
            let want: Vec<String> = default_acts.iter().map(|s| s.to_lowercase()).collect();
            let ok = match acts {
                crate::train::spec::Attr::Strs(v) => {
                    v.chunks(default_acts.len()).all(|c| c.iter().map(|s| s.to_lowercase()).eq(want.iter().cloned()))
                }
                _ => false,
            };
            if !ok {
                return Err(unsupported(op, &format!("activations other than the defaults {default_acts:?}")));
            }
        }
        for k in ["activation_alpha", "activation_beta", "clip"] {
            if a.map.contains_key(k) {
                return Err(unsupported(op, &format!("attribute {k}")));
            }
        }
        if a.int("layout", 0)? != 0 {
            return Err(unsupported(op, "layout 1 (batch first)"));
        }
        if a.int("input_forget", 0)? != 0 {
            return Err(unsupported(op, "input_forget"));
        }
        let hidden = a.sizes("hidden_size")?.and_then(|v| v.first().copied());
        Ok(Rnn { op, gates, hidden, dir })
    }

    fn bad(&self, what: String) -> Error {
        Error::new(ErrorKind::ShapeMismatch, format!("{}: {what}", self.op))
    }

    /// The inputs, their shapes checked against each other. `c0_at` is the index of LSTM's
    /// initial cell state (None for GRU); `p_at` the peepholes' (refused).
    pub fn io<'a>(&self, ins: &[Option<&'a Value>], c0_at: Option<usize>) -> Result<Io<'a>> {
        let (x, w, r) = (fin(ins, 0, self.op)?, fin(ins, 1, self.op)?, fin(ins, 2, self.op)?);
        if x.rank() != 3 || w.rank() != 3 || r.rank() != 3 {
            return Err(self.bad(format!("X {:?}, W {:?}, R {:?} must be 3-D", x.shape, w.shape, r.shape)));
        }
        let (t, bsz, i) = (x.shape[0], x.shape[1], x.shape[2]);
        let h = r.shape[2];
        let dirs = if self.dir == Dir::Both { 2 } else { 1 };
        let gh = self.gates * h;
        if self.hidden.is_some_and(|hs| hs != h) || w.shape != [dirs, gh, i] || r.shape != [dirs, gh, h] {
            return Err(self.bad(format!("W {:?} and R {:?} for X {:?}, {dirs} direction(s), hidden size {h}", w.shape, r.shape, x.shape)));
        }
        let b = fin_opt(ins, 3, self.op)?;
        if b.is_some_and(|b| b.shape != [dirs, 2 * gh]) {
            return Err(self.bad(format!("B {:?} is not [{dirs}, {}]", b.map(|b| &b.shape), 2 * gh)));
        }
        if let Some(sl) = ins.get(4).copied().flatten() {
            let v = int_values(sl, self.op, "sequence_lens")?;
            if v.len() != bsz || v.iter().any(|&l| l != t as i64) {
                return Err(unsupported(self.op, &format!("sequence_lens {v:?} shorter than the sequence ({t})")));
            }
        }
        let state = |k: usize| -> Result<Option<&'a Tensor>> {
            let s = fin_opt(ins, k, self.op)?;
            if s.is_some_and(|s| s.shape != [dirs, bsz, h]) {
                return Err(self.bad(format!("initial state {:?} is not [{dirs}, {bsz}, {h}]", s.map(|s| &s.shape))));
            }
            Ok(s)
        };
        let h0 = state(5)?;
        let c0 = match c0_at {
            Some(k) => state(k)?,
            None => None,
        };
        if c0_at.is_some() && ins.get(7).copied().flatten().is_some() {
            return Err(unsupported(self.op, "peepholes (input P)"));
        }
        Ok(Io { x, w, r, b, h0, c0, t, bsz, i, h, dirs })
    }

    /// The time steps of direction `d` in the order they run.
    pub fn steps(&self, d: usize, t: usize) -> Vec<usize> {
        if self.dir == Dir::Reverse || d == 1 {
            (0..t).rev().collect()
        } else {
            (0..t).collect()
        }
    }
}

/// The unary Sigmoid's function, so that a cell's gates have its bits.
pub fn sigmoid(x: f32) -> f32 {
    crate::kernels::sigmoid_f32(x)
}

/// Tanh in f64, rounded: the same bits whichever libm the build links (glibc natively, Rust's
/// libm in wasm), as Log is computed.
pub fn tanh(x: f32) -> f32 {
    (x as f64).tanh() as f32
}

/// `X · W_dᵀ + Wb_d` for every time step at once: [T·B, G·H].
pub fn project(io: &Io, d: usize) -> Vec<f32> {
    let (n, gh) = (io.t * io.bsz, io.gh());
    let mut xw = vec![0.0; n * gh];
    matmul_acc(&io.x.data, false, io.w_d(d), true, n, io.i, gh, 0, &mut xw);
    if let Some(b) = io.b {
        let wb = &b.data[d * 2 * gh..][..gh];
        xw.chunks_mut(gh).for_each(|row| row.iter_mut().zip(wb).for_each(|(v, b)| *v += b));
    }
    xw
}

/// The gradients of direction `d`'s input projection from the pre-activation gradients of every
/// step (`dpre`, [T·B, G·H] by time): dX += dpre · W_d, dW_d = dpreᵀ · X, dWb_d = Σ dpre.
pub fn project_back(io: &Io, d: usize, dpre: &[f32], dx: &mut Tensor, dw: &mut Tensor, db: &mut [f64]) {
    let (n, gh) = (io.t * io.bsz, io.gh());
    matmul_acc(dpre, false, io.w_d(d), false, n, gh, io.i, 0, &mut dx.data);
    matmul_acc(dpre, true, &io.x.data, false, gh, n, io.i, SUM_CHUNK, &mut dw.data[d * gh * io.i..][..gh * io.i]);
    add_col_sums(&mut db[d * 2 * gh..][..gh], dpre);
}

/// The output gradient `k` of a node (Y [T, D, B, H], Y_h / Y_c [D, B, H]), if any.
pub fn gout<'a>(gouts: &[Option<&'a Tensor>], k: usize) -> Option<&'a Tensor> {
    gouts.get(k).copied().flatten()
}

/// `Y` [T, D, B, H] and the final states [D, B, H] from each direction's per-time states.
pub fn assemble(io: &Io, per_dir: &[Vec<Vec<f32>>]) -> Result<Tensor> {
    let n = io.bsz * io.h;
    let mut y = Tensor::zeros(&[io.t, io.dirs, io.bsz, io.h])?;
    for (d, states) in per_dir.iter().enumerate() {
        for (t, s) in states.iter().enumerate() {
            y.data[(t * io.dirs + d) * n..][..n].copy_from_slice(s);
        }
    }
    Ok(y)
}

/// The bias gradient as a tensor of B's shape, or None when the node has no B.
pub fn bias_grad(io: &Io, db: Vec<f64>) -> Option<Tensor> {
    io.b.map(|b| Tensor { shape: b.shape.clone(), data: db.into_iter().map(|v| v as f32).collect() })
}
