//! Gemm and MatMul (batched, broadcast batch dimensions) on the kernels layer's GEMM.

use super::{fin, fin_opt, gout0, Attrs, Kernel};
use crate::core::error::{Error, ErrorKind, Result};
use crate::kernels::gemm::{gemm_acc, Gemm as G, SUM_CHUNK};
use crate::kernels::im2col::transpose;
use crate::train::tensor::{broadcast_shape, broadcast_strides, for_each_bcast2, reduce_to, Tensor, Value};

/// `out += A' · B'` with `A'` `m x k` (`a` stored `m x k`, or `k x m` when `ta`) and `B'`
/// `k x n` (`b` stored `k x n`, or `n x k` when `tb`); `kc` as in `kernels::gemm`: a depth over
/// features is one running sum (0), a depth over the rows of a batch (a weight gradient) is
/// summed in chunks of `SUM_CHUNK`.
#[allow(clippy::too_many_arguments)]
pub fn matmul_acc(a: &[f32], ta: bool, b: &[f32], tb: bool, m: usize, k: usize, n: usize, kc: usize, out: &mut [f32]) {
    let g = G { m, n, k, a_rs: if ta { 1 } else { k }, a_ks: if ta { m } else { 1 }, ldb: n, ldc: n, upper: false, kc };
    if tb {
        // The GEMM reads its second operand row-major, so `b` (`n x k`) is transposed into a copy
        // of `k·n` — unless that copy is the larger one and `out` is still zero: then the product is
        // computed transposed, `outᵀ = b · A'ᵀ` (`b` read in place, `A'ᵀ` a copy of `m·k` only when
        // `A'` is not already stored transposed, `outᵀ` `n·m`). A language model's head
        // (`k·n` = 576 x 49 152, 108 MiB) has a gradient step `dA = g · Wᵀ` of 128 x 576 per window:
        // the copies are 0.6 MiB instead of 108. Every element is the same sum in the same order
        // from zero (`c = c + a_p·b_p`, the products' factors swapped, which is exact), so the bits
        // are those of the copy path; a non-zero `out` (a broadcast operand's gradient summed over
        // the batch) keeps the copy path, whose first addend is `out`.
        if k * n > m * k + n * m && out[..m * n].iter().all(|v| v.to_bits() == 0) {
            let at_copy;
            let at: &[f32] = if ta {
                a
            } else {
                let mut t = vec![0.0; m * k];
                transpose(a, m, k, &mut t);
                at_copy = t;
                &at_copy
            };
            let gt = G { m: n, n: m, k, a_rs: k, a_ks: 1, ldb: m, ldc: m, upper: false, kc };
            let mut out_t = vec![0.0; n * m];
            gemm_acc(&gt, b, at, &mut out_t);
            transpose(&out_t, n, m, out);
        } else {
            let mut bt = vec![0.0; k * n];
            transpose(b, n, k, &mut bt);
            gemm_acc(&g, a, &bt, out);
        }
    } else {
        gemm_acc(&g, a, b, out);
    }
}

pub struct Gemm {
    alpha: f32,
    beta: f32,
    ta: bool,
    tb: bool,
}

impl Gemm {
    pub fn new(a: &Attrs) -> Result<Gemm> {
        Ok(Gemm { alpha: a.float("alpha", 1.0)?, beta: a.float("beta", 1.0)?, ta: a.int("transA", 0)? != 0, tb: a.int("transB", 0)? != 0 })
    }
    fn dims(&self, a: &Tensor, b: &Tensor) -> Result<(usize, usize, usize)> {
        if a.rank() != 2 || b.rank() != 2 {
            return Err(Error::new(ErrorKind::ShapeMismatch, format!("Gemm: operands {:?}, {:?} must be 2-D", a.shape, b.shape)));
        }
        let (m, k) = if self.ta { (a.shape[1], a.shape[0]) } else { (a.shape[0], a.shape[1]) };
        let (k2, n) = if self.tb { (b.shape[1], b.shape[0]) } else { (b.shape[0], b.shape[1]) };
        if k != k2 {
            return Err(Error::new(
                ErrorKind::ShapeMismatch,
                format!("Gemm: {:?} x {:?} (transA {}, transB {})", a.shape, b.shape, self.ta, self.tb),
            ));
        }
        Ok((m, k, n))
    }
}

impl Kernel for Gemm {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let (a, b) = (fin(ins, 0, "Gemm")?, fin(ins, 1, "Gemm")?);
        let (m, k, n) = self.dims(a, b)?;
        let mut y = Tensor::zeros(&[m, n])?;
        matmul_acc(&a.data, self.ta, &b.data, self.tb, m, k, n, 0, &mut y.data);
        if self.alpha != 1.0 {
            y.data.iter_mut().for_each(|v| *v *= self.alpha);
        }
        if let Some(c) = fin_opt(ins, 2, "Gemm")? {
            let s = broadcast_strides(&c.shape, &y.shape);
            broadcast_shape(&c.shape, &y.shape, "Gemm C")?;
            let zero = [0, 0];
            for_each_bcast2(&[m, n], &zero, &s, |o, _, j| y.data[o] += self.beta * c.data[j]);
        }
        Ok(vec![Value::F(y)])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let (a, b) = (fin(ins, 0, "Gemm")?, fin(ins, 1, "Gemm")?);
        let (m, k, n) = self.dims(a, b)?;
        let mut g = gout0(gouts, outs[0].shape())?;
        let dc = match fin_opt(ins, 2, "Gemm")? {
            Some(c) => {
                let mut dc = reduce_to(&g, &c.shape)?;
                dc.data.iter_mut().for_each(|v| *v *= self.beta);
                Some(dc)
            }
            None => None,
        };
        g.data.iter_mut().for_each(|v| *v *= self.alpha);
        // dA' = g · B'ᵀ (m x k); dB' = A'ᵀ · g (k x n); stored transposed where A, B are.
        let mut da = Tensor::zeros(&a.shape)?;
        if self.ta {
            // dA = B' · gᵀ (k x m)
            let mut gt = vec![0.0; m * n];
            transpose(&g.data, m, n, &mut gt);
            matmul_acc(&b.data, self.tb, &gt, false, k, n, m, 0, &mut da.data);
        } else {
            matmul_acc(&g.data, false, &b.data, !self.tb, m, n, k, 0, &mut da.data);
        }
        let mut db = Tensor::zeros(&b.shape)?;
        if self.tb {
            // dB = gᵀ · A' (n x k)
            matmul_acc(&g.data, true, &a.data, self.ta, n, m, k, SUM_CHUNK, &mut db.data);
        } else {
            matmul_acc(&a.data, !self.ta, &g.data, false, k, m, n, SUM_CHUNK, &mut db.data);
        }
        Ok(vec![Some(da), Some(db), dc])
    }
}

/// MatMul of rank >= 2 operands (1-D operands are promoted as numpy does).
pub struct MatMul;

struct MmPlan {
    batch: Vec<usize>,
    sa: Vec<usize>,
    sb: Vec<usize>,
    m: usize,
    k: usize,
    n: usize,
    out: Vec<usize>,
}

fn plan(a: &[usize], b: &[usize]) -> Result<MmPlan> {
    let err = || Error::new(ErrorKind::ShapeMismatch, format!("MatMul: {a:?} x {b:?}"));
    let a2: Vec<usize> = if a.len() == 1 { vec![1, a[0]] } else { a.to_vec() };
    let b2: Vec<usize> = if b.len() == 1 { vec![b[0], 1] } else { b.to_vec() };
    if a2.len() < 2 || b2.len() < 2 {
        return Err(err());
    }
    let (m, k) = (a2[a2.len() - 2], a2[a2.len() - 1]);
    let (k2, n) = (b2[b2.len() - 2], b2[b2.len() - 1]);
    if k != k2 {
        return Err(err());
    }
    let (ba, bb) = (&a2[..a2.len() - 2], &b2[..b2.len() - 2]);
    let batch = broadcast_shape(ba, bb, "MatMul")?;
    let mut out = batch.clone();
    if a.len() > 1 {
        out.push(m);
    }
    if b.len() > 1 {
        out.push(n);
    }
    if ba.len() >= bb.len() && bb.iter().all(|&d| d == 1) {
        // One `B` for every batch of `A` (a weight matrix against activations `[batch.., m, k]`):
        // `A`'s batches are its rows' outer axes, stored in order, and so are the output's, so the
        // product is one GEMM of `batch · m` rows. Each output row is the same sum as per batch;
        // `B`'s gradient `Aᵀ·g` becomes one sum over every row (in the chunks of `SUM_CHUNK`)
        // where it was a sum per batch. A transformer's batch of 8 sentences of ~12 tokens is then
        // one product of ~100 rows, which the GEMM packs and splits over threads, instead of eight
        // of 12 rows, each too short for either.
        let rows = batch.iter().product::<usize>() * m;
        return Ok(MmPlan { batch: Vec::new(), sa: Vec::new(), sb: Vec::new(), m: rows, k, n, out });
    }
    Ok(MmPlan { sa: broadcast_strides(ba, &batch), sb: broadcast_strides(bb, &batch), batch, m, k, n, out })
}

impl Kernel for MatMul {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let (a, b) = (fin(ins, 0, "MatMul")?, fin(ins, 1, "MatMul")?);
        let p = plan(&a.shape, &b.shape)?;
        let mut y = Tensor::zeros(&p.out)?;
        let (mk, kn, mn) = (p.m * p.k, p.k * p.n, p.m * p.n);
        for_each_bcast2(&p.batch, &p.sa, &p.sb, |o, i, j| {
            matmul_acc(&a.data[i * mk..][..mk], false, &b.data[j * kn..][..kn], false, p.m, p.k, p.n, 0, &mut y.data[o * mn..][..mn]);
        });
        Ok(vec![Value::F(y)])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        self.backward_some(ins, outs, gouts, &[true, true])
    }

    /// Only the needed gradients: each reads the other operand ([`Kernel::backward_reads`]).
    fn backward_some(
        &self,
        ins: &[Option<&Value>],
        outs: &[&Value],
        gouts: &[Option<&Tensor>],
        need: &[bool],
    ) -> Result<Vec<Option<Tensor>>> {
        let (a, b) = (fin(ins, 0, "MatMul")?, fin(ins, 1, "MatMul")?);
        let p = plan(&a.shape, &b.shape)?;
        // read where it is held, not cloned (a head's is 128 x 49 152 per window, 24 MiB)
        let zero;
        let g = match gouts.first().copied().flatten() {
            Some(g) => g,
            None => {
                zero = Tensor::zeros(outs[0].shape())?;
                &zero
            }
        };
        let (need_a, need_b) = (need.first() != Some(&false), need.get(1) != Some(&false));
        let mut da = if need_a { Some(Tensor::zeros(&a.shape)?) } else { None };
        let mut db = if need_b { Some(Tensor::zeros(&b.shape)?) } else { None };
        let (mk, kn, mn) = (p.m * p.k, p.k * p.n, p.m * p.n);
        for_each_bcast2(&p.batch, &p.sa, &p.sb, |o, i, j| {
            let go = &g.data[o * mn..][..mn];
            if let Some(da) = &mut da {
                matmul_acc(go, false, &b.data[j * kn..][..kn], true, p.m, p.n, p.k, 0, &mut da.data[i * mk..][..mk]);
            }
            if let Some(db) = &mut db {
                matmul_acc(&a.data[i * mk..][..mk], true, go, false, p.k, p.m, p.n, SUM_CHUNK, &mut db.data[j * kn..][..kn]);
            }
        });
        Ok(vec![da, db])
    }

    fn backward_reads(&self, need: &[bool]) -> (Vec<bool>, bool) {
        // dA = g · Bᵀ reads B, dB = Aᵀ · g reads A
        let (need_a, need_b) = (need.first() != Some(&false), need.get(1) != Some(&false));
        (vec![need_b, need_a], false)
    }
}
