//! ReduceMean and ReduceSum over any axes (attribute, or input from opset 18), keepdims.

use super::{fin, gout0, iin_opt, Attrs, Kernel};
use crate::core::error::Result;
use crate::train::tensor::{broadcast_strides, for_each_bcast2, norm_axis, Tensor, Value};

pub struct Reduce {
    mean: bool,
    axes: Option<Vec<i64>>,
    keepdims: bool,
    noop_empty: bool,
}

impl Reduce {
    pub fn new(a: &Attrs) -> Result<Reduce> {
        Ok(Reduce {
            mean: a.op == "ReduceMean",
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

impl Kernel for Reduce {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let x = fin(ins, 0, "Reduce")?;
        let (kept, out, count) = self.shapes(ins, x)?;
        let mut acc = vec![0.0f64; kept.iter().product()];
        let s = broadcast_strides(&kept, &x.shape);
        let zero = vec![0; x.rank()];
        for_each_bcast2(&x.shape, &s, &zero, |o, k, _| acc[k] += x.data[o] as f64);
        let div = if self.mean { count.max(1) as f64 } else { 1.0 };
        Ok(vec![Value::F(Tensor { shape: out, data: acc.iter().map(|&v| (v / div) as f32).collect() })])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let x = fin(ins, 0, "Reduce")?;
        let (kept, _, count) = self.shapes(ins, x)?;
        let g = gout0(gouts, outs[0].shape())?;
        let scale = if self.mean { 1.0 / count.max(1) as f32 } else { 1.0 };
        let mut dx = Tensor::zeros(&x.shape)?;
        let s = broadcast_strides(&kept, &x.shape);
        let zero = vec![0; x.rank()];
        for_each_bcast2(&x.shape, &s, &zero, |o, k, _| dx.data[o] = g.data[k] * scale);
        Ok(vec![Some(dx), None])
    }
}
