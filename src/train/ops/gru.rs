//! GRU (ONNX: gates z, r, h; default activations Sigmoid and Tanh; `linear_before_reset` as
//! torch exports it (1) and the ONNX default (0); forward, reverse, bidirectional):
//!   z = σ(x Wzᵀ + Wbz + h Rzᵀ + Rbz),  r = σ(x Wrᵀ + Wbr + h Rrᵀ + Rbr)
//!   ĥ = tanh(x Whᵀ + Wbh + (r ⊙ h) Rhᵀ + Rbh)            (linear_before_reset = 0)
//!   ĥ = tanh(x Whᵀ + Wbh + r ⊙ (h Rhᵀ + Rbh))            (linear_before_reset ≠ 0)
//!   h' = (1 − z) ⊙ ĥ + z ⊙ h
//! Every matrix product is the kernels' GEMM; the backward walks the steps back from the
//! gradients of Y and Y_h (backpropagation through time).

use super::linear::matmul_acc;
use super::rnn::{assemble, bias_grad, gout, project, project_back, sigmoid, tanh, Io, Rnn};
use super::{Attrs, Kernel};
use crate::core::error::Result;
use crate::kernels::col_sums::add_col_sums;
use crate::kernels::gemm::SUM_CHUNK;
use crate::train::tensor::{Tensor, Value};

pub struct Gru {
    rnn: Rnn,
    lbr: bool,
}

/// One step's values the backward needs: the previous state, the gates, and `lin`: h Rhᵀ + Rbh
/// (linear_before_reset) or r ⊙ h (not).
struct Step {
    hp: Vec<f32>,
    z: Vec<f32>,
    r: Vec<f32>,
    hh: Vec<f32>,
    lin: Vec<f32>,
}

impl Gru {
    pub fn new(a: &Attrs) -> Result<Gru> {
        Ok(Gru { rnn: Rnn::new(a, "GRU", 3, &["Sigmoid", "Tanh"])?, lbr: a.int("linear_before_reset", 0)? != 0 })
    }

    /// Direction `d`'s states by time and, with `trace`, each step's values in run order.
    fn run(&self, io: &Io, d: usize, trace: bool) -> (Vec<Vec<f32>>, Vec<Step>) {
        let (b, h) = (io.bsz, io.h);
        let gh = 3 * h;
        let xw = project(io, d);
        let (rd, rb) = (io.r_d(d), io.rb_d(d));
        let mut hs = vec![Vec::new(); io.t];
        let mut steps = Vec::new();
        let mut hp = io.init(io.h0, d);
        for t in self.rnn.steps(d, io.t) {
            let mut hr = vec![0.0; b * gh];
            matmul_acc(&hp, false, rd, true, b, h, gh, 0, &mut hr);
            let (mut z, mut r) = (vec![0.0; b * h], vec![0.0; b * h]);
            for n in 0..b {
                let (x, q) = (&xw[(t * b + n) * gh..][..gh], &hr[n * gh..][..gh]);
                for j in 0..h {
                    z[n * h + j] = sigmoid(x[j] + q[j] + rb[j]);
                    r[n * h + j] = sigmoid(x[h + j] + q[h + j] + rb[h + j]);
                }
            }
            let lin: Vec<f32> = if self.lbr {
                (0..b * h).map(|e| hr[(e / h) * gh + 2 * h + e % h] + rb[2 * h + e % h]).collect()
            } else {
                r.iter().zip(&hp).map(|(r, h)| r * h).collect()
            };
            let mut hh = vec![0.0; b * h];
            if !self.lbr {
                matmul_acc(&lin, false, &rd[2 * h * h..], true, b, h, h, 0, &mut hh);
            }
            for e in 0..b * h {
                let (n, j) = (e / h, e % h);
                let x = xw[(t * b + n) * gh + 2 * h + j];
                hh[e] = if self.lbr { tanh(x + r[e] * lin[e]) } else { tanh(x + hh[e] + rb[2 * h + j]) };
            }
            let hn: Vec<f32> = (0..b * h).map(|e| (1.0 - z[e]) * hh[e] + z[e] * hp[e]).collect();
            hs[t] = hn.clone();
            if trace {
                steps.push(Step { hp: std::mem::replace(&mut hp, hn), z, r, hh, lin });
            } else {
                hp = hn;
            }
        }
        (hs, steps)
    }
}

impl Kernel for Gru {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let io = self.rnn.io(ins, None)?;
        let per_dir: Vec<Vec<Vec<f32>>> = (0..io.dirs).map(|d| self.run(&io, d, false).0).collect();
        let y = assemble(&io, &per_dir)?;
        let mut yh = Tensor::zeros(&[io.dirs, io.bsz, io.h])?;
        for (d, hs) in per_dir.iter().enumerate() {
            let last = *self.rnn.steps(d, io.t).last().unwrap_or(&0);
            if io.t > 0 {
                yh.data[d * io.bsz * io.h..][..io.bsz * io.h].copy_from_slice(&hs[last]);
            } else {
                yh.data[d * io.bsz * io.h..][..io.bsz * io.h].copy_from_slice(&io.init(io.h0, d));
            }
        }
        Ok(vec![Value::F(y), Value::F(yh)])
    }

    fn backward(&self, ins: &[Option<&Value>], _outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let io = self.rnn.io(ins, None)?;
        let (b, h, gh) = (io.bsz, io.h, 3 * io.h);
        let (gy, gyh) = (gout(gouts, 0), gout(gouts, 1));
        let mut dx = Tensor::zeros(&io.x.shape)?;
        let (mut dw, mut dr) = (Tensor::zeros(&io.w.shape)?, Tensor::zeros(&io.r.shape)?);
        let mut db = vec![0.0f64; io.dirs * 2 * gh];
        let mut dh0 = Tensor::zeros(&[io.dirs, b, h])?;
        for d in 0..io.dirs {
            let (_, steps) = self.run(&io, d, true);
            let order = self.rnn.steps(d, io.t);
            let rd = io.r_d(d);
            let drd = &mut dr.data[d * gh * h..][..gh * h];
            let mut carry = gyh.map_or_else(|| vec![0.0; b * h], |g| g.data[d * b * h..][..b * h].to_vec());
            let mut dpre = vec![0.0f32; io.t * b * gh];
            let mut drb = vec![0.0f64; gh];
            for (s, &t) in steps.iter().zip(&order).rev() {
                if let Some(g) = gy {
                    carry.iter_mut().zip(&g.data[(t * io.dirs + d) * b * h..][..b * h]).for_each(|(c, g)| *c += g);
                }
                let mut dhp = vec![0.0; b * h];
                // the recurrent pre-activations' gradients [B, 3H] (the h block: of h Rhᵀ + Rbh, or
                // of (r ⊙ h) Rhᵀ + Rbh)
                let mut grec = vec![0.0; b * gh];
                let mut dph = vec![0.0; b * h];
                for e in 0..b * h {
                    let (n, j) = (e / h, e % h);
                    let dhn = carry[e];
                    dhp[e] = dhn * s.z[e];
                    dph[e] = dhn * (1.0 - s.z[e]) * (1.0 - s.hh[e] * s.hh[e]);
                    let dpz = dhn * (s.hp[e] - s.hh[e]) * s.z[e] * (1.0 - s.z[e]);
                    let row = &mut dpre[(t * b + n) * gh..][..gh];
                    row[j] = dpz;
                    row[2 * h + j] = dph[e];
                    grec[n * gh + j] = dpz;
                    grec[n * gh + 2 * h + j] = dph[e];
                }
                let dr_gate: Vec<f32> = if self.lbr {
                    (0..b * h).map(|e| dph[e] * s.lin[e]).collect()
                } else {
                    // (r ⊙ h) Rhᵀ: its input's gradient dph · Rh, split onto r and h
                    let mut drh = vec![0.0; b * h];
                    matmul_acc(&dph, false, &rd[2 * h * h..], false, b, h, h, 0, &mut drh);
                    matmul_acc(&dph, true, &s.lin, false, h, b, h, SUM_CHUNK, &mut drd[2 * h * h..]);
                    dhp.iter_mut().zip(&drh).zip(&s.r).for_each(|((d, g), r)| *d += g * r);
                    drh.iter().zip(&s.hp).map(|(g, h)| g * h).collect()
                };
                for e in 0..b * h {
                    let (n, j) = (e / h, e % h);
                    let dpr = dr_gate[e] * s.r[e] * (1.0 - s.r[e]);
                    dpre[(t * b + n) * gh + h + j] = dpr;
                    grec[n * gh + h + j] = dpr;
                    if self.lbr {
                        grec[n * gh + 2 * h + j] = dph[e] * s.r[e];
                    }
                }
                add_col_sums(&mut drb, &grec);
                if !self.lbr {
                    // the h block went through (r ⊙ h) above; only z and r multiply h by R here
                    grec.chunks_mut(gh).for_each(|row| row[2 * h..].iter_mut().for_each(|v| *v = 0.0));
                }
                matmul_acc(&grec, false, rd, false, b, gh, h, 0, &mut dhp);
                matmul_acc(&grec, true, &s.hp, false, gh, b, h, SUM_CHUNK, drd);
                carry = dhp;
            }
            dh0.data[d * b * h..][..b * h].copy_from_slice(&carry);
            project_back(&io, d, &dpre, &mut dx, &mut dw, &mut db);
            db[d * 2 * gh + gh..][..gh].iter_mut().zip(&drb).for_each(|(a, v)| *a += v);
        }
        let dh0 = io.h0.map(|_| dh0);
        Ok(vec![Some(dx), Some(dw), Some(dr), bias_grad(&io, db), None, dh0])
    }
}
