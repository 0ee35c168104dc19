//! ReduceMean, ReduceSum, ReduceL2, ReduceMax and ReduceMin over any axes (attribute, or input
//! from opset 18), keepdims. Max and Min send each output's gradient to the first element (row-major)
//! that holds the extremum, as a one-element argmax would. L2 (sentence-transformers' Normalize as
//! torch exports it: x / clip(ReduceL2(x))) has dy/dx = x / y, taken as 0 where y is 0 (the
//! subgradient torch's norm backward uses there).

use super::{fin, gout0, iin_opt, Attrs, Kernel};
use crate::core::error::Result;
use crate::train::tensor::{broadcast_strides, for_each_bcast2, norm_axis, Tensor, Value};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Sum,
    Mean,
    L2,
    Max,
    Min,
}

pub struct Reduce {
    kind: Kind,
    axes: Option<Vec<i64>>,
    keepdims: bool,
    noop_empty: bool,
}

impl Reduce {
    pub fn new(a: &Attrs) -> Result<Reduce> {
        Ok(Reduce {
            kind: match a.op {
                "ReduceMean" => Kind::Mean,
                "ReduceL2" => Kind::L2,
                "ReduceMax" => Kind::Max,
                "ReduceMin" => Kind::Min,
                _ => Kind::Sum,
            },
            axes: a.ints("axes")?,
            keepdims: a.int("keepdims", 1)? != 0,
            noop_empty: a.int("noop_with_empty_axes", 0)? != 0,
        })
    }

    /// The reduced shape with kept (size-1) axes, the output shape, and the element count per output.
    fn shapes(&self, ins: &[Option<&Value>], x: &Tensor) -> Result<(Vec<usize>, Vec<usize>, usize)> {
        let axes = iin_opt(ins, 1, "Reduce")?.map(|t| t.data).or(self.axes.clone());
        let r = x.rank();
        let axes: Vec<usize> = match axes {
            Some(a) if !a.is_empty() => a.iter().map(|&v| norm_axis(v, r, "Reduce")).collect::<Result<_>>()?,
            _ if self.noop_empty => vec![],
            _ => (0..r).collect(),
        };
        let kept: Vec<usize> = (0..r).map(|i| if axes.contains(&i) { 1 } else { x.shape[i] }).collect();
        let out = if self.keepdims { kept.clone() } else { (0..r).filter(|i| !axes.contains(i)).map(|i| x.shape[i]).collect() };
        let count = axes.iter().map(|&a| x.shape[a]).product::<usize>();
        Ok((kept, out, count))
    }
}

impl Reduce {
    /// Per output element, the offset in `x` of its first extremum.
    fn arg(&self, x: &Tensor, kept: &[usize]) -> Vec<usize> {
        let n: usize = kept.iter().product();
        let mut at: Vec<Option<usize>> = vec![None; n];
        let s = broadcast_strides(kept, &x.shape);
        let zero = vec![0; x.rank()];
        let max = self.kind == Kind::Max;
        for_each_bcast2(&x.shape, &s, &zero, |o, k, _| {
            let v = x.data[o];
            let take = match at[k] {
                None => true,
                // NaN wins and stays (onnxruntime propagates it)
                Some(b) => {
                    let w = x.data[b];
                    !w.is_nan() && (v.is_nan() || if max { v > w } else { v < w })
                }
            };
            if take {
                at[k] = Some(o);
            }
        });
        at.into_iter().map(|a| a.unwrap_or(0)).collect()
    }
}

impl Kernel for Reduce {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let x = fin(ins, 0, "Reduce")?;
        let (kept, out, count) = self.shapes(ins, x)?;
        if matches!(self.kind, Kind::Max | Kind::Min) {
            if count == 0 {
                return Err(crate::core::error::Error::new(
                    crate::core::error::ErrorKind::InvalidArguments,
                    "ReduceMax/ReduceMin: the reduced axes are empty",
                ));
            }
            let data = self.arg(x, &kept).iter().map(|&o| x.data[o]).collect();
            return Ok(vec![Value::F(Tensor { shape: out, data })]);
        }
        let mut acc = vec![0.0f64; kept.iter().product()];
        let s = broadcast_strides(&kept, &x.shape);
        let zero = vec![0; x.rank()];
        if self.kind == Kind::L2 {
            for_each_bcast2(&x.shape, &s, &zero, |o, k, _| acc[k] += (x.data[o] as f64) * (x.data[o] as f64));
            return Ok(vec![Value::F(Tensor { shape: out, data: acc.iter().map(|&v| v.sqrt() as f32).collect() })]);
        }
        for_each_bcast2(&x.shape, &s, &zero, |o, k, _| acc[k] += x.data[o] as f64);
        let div = if self.kind == Kind::Mean { count.max(1) as f64 } else { 1.0 };
        Ok(vec![Value::F(Tensor { shape: out, data: acc.iter().map(|&v| (v / div) as f32).collect() })])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let x = fin(ins, 0, "Reduce")?;
        let (kept, _, count) = self.shapes(ins, x)?;
        let g = gout0(gouts, outs[0].shape())?;
        if matches!(self.kind, Kind::Max | Kind::Min) {
            let mut dx = Tensor::zeros(&x.shape)?;
            self.arg(x, &kept).iter().zip(&g.data).for_each(|(&o, &v)| dx.data[o] = v);
            return Ok(vec![Some(dx), None]);
        }
        if self.kind == Kind::L2 {
            let y = fin(&[Some(outs[0])], 0, "ReduceL2")?;
            let mut dx = Tensor::zeros(&x.shape)?;
            let s = broadcast_strides(&kept, &x.shape);
            let zero = vec![0; x.rank()];
            for_each_bcast2(&x.shape, &s, &zero, |o, k, _| {
                dx.data[o] = if y.data[k] > 0.0 { g.data[k] * x.data[o] / y.data[k] } else { 0.0 };
            });
            return Ok(vec![Some(dx), None]);
        }
        let scale = if self.kind == Kind::Mean { 1.0 / count.max(1) as f32 } else { 1.0 };
        let mut dx = Tensor::zeros(&x.shape)?;
        let s = broadcast_strides(&kept, &x.shape);
        let zero = vec![0; x.rank()];
        for_each_bcast2(&x.shape, &s, &zero, |o, k, _| dx.data[o] = g.data[k] * scale);
        Ok(vec![Some(dx), None])
    }

    fn backward_reads(&self, need: &[bool]) -> (Vec<bool>, bool) {
        match self.kind {
            // x's shape and the axes: the gradient is spread evenly
            Kind::Sum | Kind::Mean => super::reads_operands_from(1, need),
            // the arg-extremum reads x; L2 reads x and its output
            Kind::Max | Kind::Min | Kind::L2 => (vec![true; need.len()], true),
        }
    }
}
