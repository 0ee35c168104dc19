//! MaxPool, AveragePool (2-D: kernel, strides, pads, dilations for max, ceil_mode,
//! count_include_pad, auto_pad) and the global poolings.

use super::conv::ConvAttrs;
use super::{fin, gout0, unsupported, Attrs, Kernel};
use crate::core::error::{Error, ErrorKind, Result};
use crate::train::tensor::{Tensor, Value};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Max,
    Avg,
    GlobalMax,
    GlobalAvg,
}

pub struct Pool {
    kind: Kind,
    at: Option<ConvAttrs>,
    ceil: bool,
    include_pad: bool,
}

/// One output's window along an axis: the input indices it reads (`start`, step `d`, `n`
/// taps, all inside the input) and its divisor with `count_include_pad`.
#[derive(Clone, Copy)]
struct Win {
    first: usize,
    taps: usize,
    step: usize,
    padded: usize,
}

/// Per output: the input offsets it reads within a plane, and its divisor.
type Taps = Vec<(Vec<usize>, f32)>;

impl Pool {
    pub fn new(a: &Attrs) -> Result<Pool> {
        let kind = match a.op {
            "MaxPool" => Kind::Max,
            "AveragePool" => Kind::Avg,
            "GlobalMaxPool" => Kind::GlobalMax,
            _ => Kind::GlobalAvg,
        };
        let at = if matches!(kind, Kind::Max | Kind::Avg) {
            if a.int("storage_order", 0)? != 0 {
                return Err(unsupported(a.op, "storage_order=1"));
            }
            let at = ConvAttrs::new(a)?;
            match at.kernel_shape.as_deref() {
                Some([x, y]) if *x > 0 && *y > 0 => {}
                _ => return Err(unsupported(a.op, "kernel_shape must be two positive integers (2-D only)")),
            }
            Some(at)
        } else {
            None
        };
        Ok(Pool { kind, at, ceil: a.int("ceil_mode", 0)? != 0, include_pad: a.int("count_include_pad", 0)? != 0 })
    }

    /// Windows per axis (H, W) for an input of `h x w`.
    fn windows(&self, h: usize, w: usize) -> Result<[Vec<Win>; 2]> {
        let Some(at) = &self.at else {
            let full = |len: usize| vec![Win { first: 0, taps: len, step: 1, padded: len }];
            return Ok([full(h), full(w)]);
        };
        let k = at.kernel_shape.clone().unwrap_or_default();
        let k = [k[0], k[1]];
        let p = at.pads_for(h, w, k);
        let mut r: [Vec<Win>; 2] = [Vec::new(), Vec::new()];
        for (ax, len) in [h, w].into_iter().enumerate() {
            let (s, d) = (at.strides[ax], at.dilations[ax]);
            let (pb, pe) = (p[ax], p[ax + 2]);
            let ext = (k[ax] - 1) * d + 1;
            let span = len + pb + pe;
            if span < ext {
                return Err(Error::new(ErrorKind::ShapeMismatch, format!("pool: kernel {k:?} larger than padded input {h}x{w}")));
            }
            let mut out = if self.ceil { (span - ext).div_ceil(s) + 1 } else { (span - ext) / s + 1 };
            // ceil_mode: a last window must start inside the input or its leading pad.
            if self.ceil && (out - 1) * s >= len + pb {
                out -= 1;
            }
            for o in 0..out {
                let start = (o * s) as isize - pb as isize;
                let taps: Vec<usize> =
                    (0..k[ax]).map(|i| start + (i * d) as isize).filter(|&i| i >= 0 && (i as usize) < len).map(|i| i as usize).collect();
                let end = (start + ext as isize).min((len + pe) as isize);
                let padded = (end - start).max(0) as usize;
                let padded = if d > 1 { k[ax] } else { padded };
                r[ax].push(Win { first: taps.first().copied().unwrap_or(0), taps: taps.len(), step: d, padded });
            }
        }
        Ok(r)
    }

    fn check(x: &Tensor) -> Result<(usize, usize, usize)> {
        if x.rank() != 4 {
            return Err(unsupported("pooling", &format!("input {:?}: only 2-D pooling (NCHW) is implemented", x.shape)));
        }
        Ok((x.shape[0] * x.shape[1], x.shape[2], x.shape[3]))
    }

    /// For each output: (input offsets it reads within a plane, divisor).
    fn taps(&self, h: usize, w: usize) -> Result<(usize, usize, Taps)> {
        let [wh, ww] = self.windows(h, w)?;
        let mut out = Vec::with_capacity(wh.len() * ww.len());
        for a in &wh {
            for b in &ww {
                let mut t = Vec::with_capacity(a.taps * b.taps);
                for i in 0..a.taps {
                    for j in 0..b.taps {
                        t.push((a.first + i * a.step) * w + b.first + j * b.step);
                    }
                }
                let div = if self.include_pad { (a.padded * b.padded) as f32 } else { t.len() as f32 };
                out.push((t, div));
            }
        }
        Ok((wh.len(), ww.len(), out))
    }
}

impl Kernel for Pool {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let x = fin(ins, 0, "pooling")?;
        let (planes, h, w) = Pool::check(x)?;
        let (oh, ow, taps) = self.taps(h, w)?;
        let mut y = Tensor::zeros(&[x.shape[0], x.shape[1], oh, ow])?;
        let max = matches!(self.kind, Kind::Max | Kind::GlobalMax);
        for p in 0..planes {
            let xp = &x.data[p * h * w..][..h * w];
            for (o, (t, div)) in taps.iter().enumerate() {
                y.data[p * oh * ow + o] = if max {
                    t.iter().map(|&i| xp[i]).fold(f32::NEG_INFINITY, |a, b| if b > a || b.is_nan() { b } else { a })
                } else {
                    // f64: a global pool sums a whole plane, where an f32 running sum is the
                    // forward's largest rounding error (bench/recover/forward-precision.mjs)
                    (t.iter().map(|&i| xp[i] as f64).sum::<f64>() / *div as f64) as f32
                };
            }
        }
        Ok(vec![Value::F(y)])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let x = fin(ins, 0, "pooling")?;
        let (planes, h, w) = Pool::check(x)?;
        let (oh, ow, taps) = self.taps(h, w)?;
        let g = gout0(gouts, outs[0].shape())?;
        let mut dx = Tensor::zeros(&x.shape)?;
        let max = matches!(self.kind, Kind::Max | Kind::GlobalMax);
        for p in 0..planes {
            let xp = &x.data[p * h * w..][..h * w];
            let dp = &mut dx.data[p * h * w..][..h * w];
            for (o, (t, div)) in taps.iter().enumerate() {
                let gv = g.data[p * oh * ow + o];
                if max {
                    // the first maximum takes the gradient
                    let mut best: Option<usize> = None;
                    for &i in t {
                        if best.is_none_or(|b| xp[i] > xp[b]) {
                            best = Some(i);
                        }
                    }
                    if let Some(b) = best {
                        dp[b] += gv;
                    }
                } else {
                    for &i in t {
                        dp[i] += gv / div;
                    }
                }
            }
        }
        Ok(vec![Some(dx)])
    }
}
