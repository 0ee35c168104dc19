//! LSTM (ONNX: gates i, o, f, c; default activations Sigmoid, Tanh, Tanh; no peepholes; forward,
//! reverse, bidirectional):
//!   i, o, f = σ(x Wᵀ + Wb + h Rᵀ + Rb) (their blocks),  ĉ = tanh(same, block c)
//!   c' = f ⊙ c + i ⊙ ĉ,  h' = o ⊙ tanh(c')
//! Every matrix product is the kernels' GEMM; the backward walks the steps back from the
//! gradients of Y, Y_h and Y_c (backpropagation through time).

use super::linear::matmul_acc;
use super::rnn::{assemble, bias_grad, gout, project, project_back, sigmoid, tanh, Io, Rnn};
use super::{Attrs, Kernel};
use crate::core::error::Result;
use crate::kernels::col_sums::add_col_sums;
use crate::kernels::gemm::SUM_CHUNK;
use crate::train::tensor::{Tensor, Value};

pub struct Lstm {
    rnn: Rnn,
}

/// One step's values the backward needs: previous states, the gates (post-activation, [B, 4H] in
/// the order i, o, f, c) and the new cell state.
struct Step {
    hp: Vec<f32>,
    cp: Vec<f32>,
    g: Vec<f32>,
    c: Vec<f32>,
}

/// Input 6 is the initial cell state.
const C0: usize = 6;

impl Lstm {
    pub fn new(a: &Attrs) -> Result<Lstm> {
        Ok(Lstm { rnn: Rnn::new(a, "LSTM", 4, &["Sigmoid", "Tanh", "Tanh"])? })
    }

    /// Direction `d`'s hidden and cell states by time and, with `trace`, each step in run order.
    fn run(&self, io: &Io, d: usize, trace: bool) -> (Vec<Vec<f32>>, Vec<Vec<f32>>, Vec<Step>) {
        let (b, h) = (io.bsz, io.h);
        let gh = 4 * h;
        let xw = project(io, d);
        let (rd, rb) = (io.r_d(d), io.rb_d(d));
        let (mut hs, mut cs) = (vec![Vec::new(); io.t], vec![Vec::new(); io.t]);
        let mut steps = Vec::new();
        let (mut hp, mut cp) = (io.init(io.h0, d), io.init(io.c0, d));
        for t in self.rnn.steps(d, io.t) {
            let mut g = vec![0.0; b * gh];
            matmul_acc(&hp, false, rd, true, b, h, gh, 0, &mut g);
            for n in 0..b {
                let (x, row) = (&xw[(t * b + n) * gh..][..gh], &mut g[n * gh..][..gh]);
                for k in 0..gh {
                    let v = x[k] + row[k] + rb[k];
                    row[k] = if k >= 3 * h { tanh(v) } else { sigmoid(v) };
                }
            }
            let (mut c, mut hn) = (vec![0.0; b * h], vec![0.0; b * h]);
            for e in 0..b * h {
                let (n, j) = (e / h, e % h);
                let row = &g[n * gh..][..gh];
                c[e] = row[2 * h + j] * cp[e] + row[j] * row[3 * h + j];
                hn[e] = row[h + j] * tanh(c[e]);
            }
            hs[t] = hn.clone();
            cs[t] = c.clone();
            if trace {
                steps.push(Step { hp: std::mem::replace(&mut hp, hn), cp: std::mem::replace(&mut cp, c.clone()), g, c });
            } else {
                (hp, cp) = (hn, c);
            }
        }
        (hs, cs, steps)
    }
}

impl Kernel for Lstm {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let io = self.rnn.io(ins, Some(C0))?;
        let runs: Vec<_> = (0..io.dirs).map(|d| self.run(&io, d, false)).collect();
        let y = assemble(&io, &runs.iter().map(|r| r.0.clone()).collect::<Vec<_>>())?;
        let n = io.bsz * io.h;
        let (mut yh, mut yc) = (Tensor::zeros(&[io.dirs, io.bsz, io.h])?, Tensor::zeros(&[io.dirs, io.bsz, io.h])?);
        for (d, (hs, cs, _)) in runs.iter().enumerate() {
            let (h_end, c_end) = match self.rnn.steps(d, io.t).last() {
                Some(&t) => (hs[t].clone(), cs[t].clone()),
                None => (io.init(io.h0, d), io.init(io.c0, d)),
            };
            yh.data[d * n..][..n].copy_from_slice(&h_end);
            yc.data[d * n..][..n].copy_from_slice(&c_end);
        }
        Ok(vec![Value::F(y), Value::F(yh), Value::F(yc)])
    }

    fn backward(&self, ins: &[Option<&Value>], _outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let io = self.rnn.io(ins, Some(C0))?;
        let (b, h, gh) = (io.bsz, io.h, 4 * io.h);
        let (gy, gyh, gyc) = (gout(gouts, 0), gout(gouts, 1), gout(gouts, 2));
        let mut dx = Tensor::zeros(&io.x.shape)?;
        let (mut dw, mut dr) = (Tensor::zeros(&io.w.shape)?, Tensor::zeros(&io.r.shape)?);
        let mut db = vec![0.0f64; io.dirs * 2 * gh];
        let (mut dh0, mut dc0) = (Tensor::zeros(&[io.dirs, b, h])?, Tensor::zeros(&[io.dirs, b, h])?);
        for d in 0..io.dirs {
            let (_, _, steps) = self.run(&io, d, true);
            let order = self.rnn.steps(d, io.t);
            let rd = io.r_d(d);
            let drd = &mut dr.data[d * gh * h..][..gh * h];
            let at = |g: Option<&Tensor>| g.map_or_else(|| vec![0.0; b * h], |g| g.data[d * b * h..][..b * h].to_vec());
            let (mut dh, mut dc) = (at(gyh), at(gyc));
            let mut dpre = vec![0.0f32; io.t * b * gh];
            let mut drb = vec![0.0f64; gh];
            for (s, &t) in steps.iter().zip(&order).rev() {
                if let Some(g) = gy {
                    dh.iter_mut().zip(&g.data[(t * io.dirs + d) * b * h..][..b * h]).for_each(|(c, g)| *c += g);
                }
                let grow = &mut dpre[t * b * gh..][..b * gh];
                for e in 0..b * h {
                    let (n, j) = (e / h, e % h);
                    let g = &s.g[n * gh..][..gh];
                    let (i, o, f, cc) = (g[j], g[h + j], g[2 * h + j], g[3 * h + j]);
                    let tc = tanh(s.c[e]);
                    let dce = dc[e] + dh[e] * o * (1.0 - tc * tc);
                    let row = &mut grow[n * gh..][..gh];
                    row[j] = dce * cc * i * (1.0 - i);
                    row[h + j] = dh[e] * tc * o * (1.0 - o);
                    row[2 * h + j] = dce * s.cp[e] * f * (1.0 - f);
                    row[3 * h + j] = dce * i * (1.0 - cc * cc);
                    dc[e] = dce * f;
                }
                add_col_sums(&mut drb, grow);
                let mut dhp = vec![0.0; b * h];
                matmul_acc(grow, false, rd, false, b, gh, h, 0, &mut dhp);
                matmul_acc(grow, true, &s.hp, false, gh, b, h, SUM_CHUNK, drd);
                dh = dhp;
            }
            dh0.data[d * b * h..][..b * h].copy_from_slice(&dh);
            dc0.data[d * b * h..][..b * h].copy_from_slice(&dc);
            project_back(&io, d, &dpre, &mut dx, &mut dw, &mut db);
            db[d * 2 * gh + gh..][..gh].iter_mut().zip(&drb).for_each(|(a, v)| *a += v);
        }
        let (dh0, dc0) = (io.h0.map(|_| dh0), io.c0.map(|_| dc0));
        Ok(vec![Some(dx), Some(dw), Some(dr), bias_grad(&io, db), None, dh0, dc0, None])
    }
}
