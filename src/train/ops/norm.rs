//! BatchNormalization (inference form: fixed statistics), LayerNormalization and Softmax.
//!
//! LayerNormalization and Softmax rows are independent: runs of rows go to the workers (the same
//! arithmetic per row, so the same bits on any number of them). LayerNormalization's scale and bias
//! gradients sum over rows: partial sums over fixed parts of [`SUM_ROWS`] rows, added in order, so
//! the bits do not depend on the worker count either.

use super::{fin, fin_opt, gout0, unsupported, Attrs, Kernel};
use crate::core::error::{Error, ErrorKind, Result};
use crate::kernels::{self, par};
use crate::train::tensor::{norm_axis, Tensor, Value};

/// Elements per task at least in a row-wise pass (a row costs ~10 operations an element).
const TASK: usize = 1 << 14;
/// Rows per partial sum of LayerNormalization's parameter gradients (fixed: not the worker count).
const SUM_ROWS: usize = 32;

/// Whole rows of `d` elements per run, at least [`TASK`] elements a run when threads are up.
fn rows_per_run(rows: usize, d: usize) -> usize {
    par::run_len(rows, TASK.div_ceil(d.max(1)))
}

pub struct BatchNorm {
    eps: f32,
}

impl BatchNorm {
    pub fn new(a: &Attrs) -> Result<BatchNorm> {
        if a.int("training_mode", 0)? != 0 {
            return Err(unsupported("BatchNormalization", "training_mode=1 (only the inference form is implemented)"));
        }
        Ok(BatchNorm { eps: a.float("epsilon", 1e-5)? })
    }

    /// Per channel `(scale / sqrt(var + eps), bias - mean * that)` and the shape facts.
    fn coeffs(&self, ins: &[Option<&Value>]) -> Result<(Vec<f32>, usize, usize)> {
        let x = fin(ins, 0, "BatchNormalization")?;
        let t: Vec<&Tensor> = (1..5).map(|i| fin(ins, i, "BatchNormalization")).collect::<Result<_>>()?;
        let c = *x.shape.get(1).unwrap_or(&1);
        if t.iter().any(|t| t.len() != c) {
            return Err(Error::new(ErrorKind::ShapeMismatch, format!("BatchNormalization: parameters must have {c} elements")));
        }
        let inv: Vec<f32> = (0..c).map(|i| 1.0 / (t[3].data[i] + self.eps).sqrt()).collect();
        let inner = x.shape.get(2..).map_or(1, |s| s.iter().product());
        Ok((inv, c, inner))
    }
}

impl Kernel for BatchNorm {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let (inv, c, inner) = self.coeffs(ins)?;
        let x = fin(ins, 0, "BatchNormalization")?;
        let (s, b, m) = (fin(ins, 1, "")?, fin(ins, 2, "")?, fin(ins, 3, "")?);
        let mut y = x.clone();
        for (r, row) in y.data.chunks_mut(inner.max(1)).enumerate() {
            let ch = r % c;
            for v in row {
                *v = (*v - m.data[ch]) * inv[ch] * s.data[ch] + b.data[ch];
            }
        }
        Ok(vec![Value::F(y)])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let (inv, c, inner) = self.coeffs(ins)?;
        let x = fin(ins, 0, "BatchNormalization")?;
        let (s, m) = (fin(ins, 1, "")?, fin(ins, 3, "")?);
        let g = gout0(gouts, outs[0].shape())?;
        let mut dx = g.clone();
        // The per-channel sums run over every pixel of the batch: f64 accumulators.
        let (mut ds, mut db) = (vec![0.0f64; c], vec![0.0f64; c]);
        for (r, row) in dx.data.chunks_mut(inner.max(1)).enumerate() {
            let ch = r % c;
            let xr = &x.data[r * inner..][..inner];
            for (i, v) in row.iter_mut().enumerate() {
                ds[ch] += (*v * (xr[i] - m.data[ch]) * inv[ch]) as f64;
                db[ch] += *v as f64;
                *v *= inv[ch] * s.data[ch];
            }
        }
        let f32s = |v: Vec<f64>| Tensor { shape: vec![c], data: v.into_iter().map(|x| x as f32).collect() };
        Ok(vec![Some(dx), Some(f32s(ds)), Some(f32s(db)), None, None])
    }
}

pub struct LayerNorm {
    axis: i64,
    eps: f32,
}

impl LayerNorm {
    pub fn new(a: &Attrs) -> Result<LayerNorm> {
        if a.int("stash_type", 1)? != 1 {
            return Err(unsupported("LayerNormalization", "stash_type other than float"));
        }
        Ok(LayerNorm { axis: a.int("axis", -1)?, eps: a.float("epsilon", 1e-5)? })
    }

    fn split(&self, x: &Tensor) -> Result<(usize, usize)> {
        let ax = norm_axis(self.axis, x.rank(), "LayerNormalization")?;
        Ok((x.shape[..ax].iter().product(), x.shape[ax..].iter().product()))
    }

    /// Per row `(mean, 1/sqrt(var + eps))` in f64.
    fn stats(x: &[f32], eps: f32) -> (f64, f64) {
        let n = x.len().max(1) as f64;
        let mean = x.iter().map(|&v| v as f64).sum::<f64>() / n;
        let var = x.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n;
        (mean, 1.0 / (var + eps as f64).sqrt())
    }

    /// Scale and bias read per element of a row (broadcast along leading axes of the row).
    fn row_param(t: Option<&Tensor>, d: usize, default: f32) -> Result<Vec<f32>> {
        match t {
            None => Ok(vec![default; d]),
            Some(t) if t.len() == d => Ok(t.data.clone()),
            Some(t) if t.len() == 1 => Ok(vec![t.data[0]; d]),
            Some(t) => Err(Error::new(ErrorKind::ShapeMismatch, format!("LayerNormalization: scale/bias {:?} for rows of {d}", t.shape))),
        }
    }
}

impl Kernel for LayerNorm {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let x = fin(ins, 0, "LayerNormalization")?;
        let (rows, d) = self.split(x)?;
        let sc = Self::row_param(Some(fin(ins, 1, "LayerNormalization")?), d, 1.0)?;
        let bi = Self::row_param(fin_opt(ins, 2, "LayerNormalization")?, d, 0.0)?;
        let mut y = x.clone();
        let ax = norm_axis(self.axis, x.rank(), "LayerNormalization")?;
        let mut sshape = x.shape.clone();
        sshape[ax..].iter_mut().for_each(|v| *v = 1);
        let (mut mt, mut it) = (Tensor::zeros(&sshape)?, Tensor::zeros(&sshape)?);
        let run = rows_per_run(rows, d);
        let stats = par::map_chunks_mut(&mut y.data, run * d.max(1), |_, block| {
            block
                .chunks_mut(d.max(1))
                .map(|row| {
                    let (mean, inv) = Self::stats(row, self.eps);
                    for (i, v) in row.iter_mut().enumerate() {
                        *v = ((*v as f64 - mean) * inv) as f32 * sc[i] + bi[i];
                    }
                    (mean as f32, inv as f32)
                })
                .collect::<Vec<_>>()
        });
        let mut stats = stats.into_iter().flatten();
        for r in 0..rows {
            // rows of no elements (d = 0) have no chunk: their statistics are the empty row's
            (mt.data[r], it.data[r]) = stats.next().unwrap_or_else(|| {
                let (mean, inv) = Self::stats(&[], self.eps);
                (mean as f32, inv as f32)
            });
        }
        Ok(vec![Value::F(y), Value::F(mt), Value::F(it)])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let x = fin(ins, 0, "LayerNormalization")?;
        let (_, d) = self.split(x)?;
        let st = fin(ins, 1, "LayerNormalization")?;
        let sc = Self::row_param(Some(st), d, 1.0)?;
        let bt = fin_opt(ins, 2, "LayerNormalization")?;
        let g = gout0(gouts, outs[0].shape())?;
        let mut dx = Tensor::zeros(&x.shape)?;
        // parts of SUM_ROWS rows: each its dx rows and its partial (ds, db)
        let parts = par::map_chunks_mut(&mut dx.data, SUM_ROWS * d.max(1), |p, block| {
            let (mut ds, mut db) = (vec![0.0f64; d], vec![0.0f64; d]);
            for (k, dxr) in block.chunks_mut(d.max(1)).enumerate() {
                let r = p * SUM_ROWS + k;
                let xr = &x.data[r * d..][..d];
                let gr = &g.data[r * d..][..d];
                let (mean, inv) = Self::stats(xr, self.eps);
                let xh: Vec<f64> = xr.iter().map(|&v| (v as f64 - mean) * inv).collect();
                let gh: Vec<f64> = (0..d).map(|i| gr[i] as f64 * sc[i] as f64).collect();
                let m1 = gh.iter().sum::<f64>() / d as f64;
                let m2 = gh.iter().zip(&xh).map(|(a, b)| a * b).sum::<f64>() / d as f64;
                for i in 0..d {
                    dxr[i] = (inv * (gh[i] - m1 - xh[i] * m2)) as f32;
                    ds[i] += gr[i] as f64 * xh[i];
                    db[i] += gr[i] as f64;
                }
            }
            (ds, db)
        });
        let (mut ds, mut db) = (vec![0.0f64; d], vec![0.0f64; d]);
        for (pds, pdb) in parts {
            ds.iter_mut().zip(&pds).for_each(|(a, b)| *a += b);
            db.iter_mut().zip(&pdb).for_each(|(a, b)| *a += b);
        }
        // Summed over rows (and over the row for a scalar scale) in f64, rounded once.
        let fold = |v: Vec<f64>, t: &Tensor| Tensor {
            shape: t.shape.clone(),
            data: if t.len() == 1 { vec![v.iter().sum::<f64>() as f32] } else { v.into_iter().map(|x| x as f32).collect() },
        };
        Ok(vec![Some(dx), Some(fold(ds, st)), bt.map(|t| fold(db, t))])
    }
}

pub struct Softmax {
    axis: i64,
}

impl Softmax {
    pub fn new(a: &Attrs) -> Result<Softmax> {
        Ok(Softmax { axis: a.int("axis", -1)? })
    }
    /// (outer, axis length, inner) around the softmax axis.
    fn dims(&self, s: &[usize]) -> Result<(usize, usize, usize)> {
        let ax = norm_axis(self.axis, s.len(), "Softmax")?;
        Ok((s[..ax].iter().product(), s[ax], s[ax + 1..].iter().product()))
    }
}

impl Kernel for Softmax {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let x = fin(ins, 0, "Softmax")?;
        let (o, d, inner) = self.dims(&x.shape)?;
        let mut y = x.clone();
        let block = (d * inner).max(1);
        let run = rows_per_run(o, block);
        par::map_chunks_mut(&mut y.data, run * block, |_, ys| {
            for yb in ys.chunks_mut(block) {
                for b in 0..inner {
                    let at = |i: usize| i * inner + b;
                    let mx = (0..d).map(|i| yb[at(i)]).fold(f32::NEG_INFINITY, f32::max);
                    // The terms in f32 (the kernels' exp, four lanes at a time along a contiguous
                    // axis), summed and divided in f64.
                    if inner == 1 {
                        kernels::exp_in_place(yb, mx);
                    } else {
                        for i in 0..d {
                            yb[at(i)] = kernels::exp_f32(yb[at(i)] - mx);
                        }
                    }
                    let sum: f64 = (0..d).map(|i| yb[at(i)] as f64).sum();
                    for i in 0..d {
                        yb[at(i)] = (yb[at(i)] as f64 / sum) as f32;
                    }
                }
            }
        });
        Ok(vec![Value::F(y)])
    }

    fn backward(&self, _ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let Value::F(y) = outs[0] else { unreachable!("Softmax outputs floats") };
        let (o, d, inner) = self.dims(&y.shape)?;
        let mut g = gout0(gouts, &y.shape)?;
        let block = (d * inner).max(1);
        let run = rows_per_run(o, block);
        par::map_chunks_mut(&mut g.data, run * block, |t, gs| {
            for (k, gb) in gs.chunks_mut(block).enumerate() {
                let yb = &y.data[(t * run + k) * block..][..block];
                for b in 0..inner {
                    let at = |i: usize| i * inner + b;
                    let dot: f64 = (0..d).map(|i| gb[at(i)] as f64 * yb[at(i)] as f64).sum();
                    for i in 0..d {
                        gb[at(i)] = (yb[at(i)] as f64 * (gb[at(i)] as f64 - dot)) as f32;
                    }
                }
            }
        });
        Ok(vec![Some(g)])
    }

    fn backward_reads(&self, need: &[bool]) -> (Vec<bool>, bool) {
        // the output only: a language model's logits (128 x 49 152 per window) need not stay
        // beside their Softmax
        (vec![false; need.len()], true)
    }
}
