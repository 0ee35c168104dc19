//! ConstantOfShape and Range: tensors made from shapes and scalars, almost always inside a
//! shape subgraph that folding evaluates once per input shape (graph.rs); they run here too
//! when a graph keeps one on its data path. Neither has a gradient.

use super::select::{input, int_values};
use super::{unsupported, Attrs, Kernel};
use crate::core::error::{Error, ErrorKind, Result};
use crate::train::spec::Attr;
use crate::train::tensor::{numel, ITensor, Tensor, Value, MAX_ELEMS};

fn too_large(op: &str, n: usize) -> Error {
    Error::new(ErrorKind::OutOfMemory, format!("{op}: {n} elements are too many"))
}

/// ConstantOfShape(shape) filled with the `value` attribute (one element; float 0 by default).
pub struct ConstantOfShape {
    value: f64,
    int: bool,
}

impl ConstantOfShape {
    pub fn new(a: &Attrs) -> Result<ConstantOfShape> {
        match a.map.get("value") {
            None => Ok(ConstantOfShape { value: 0.0, int: false }),
            Some(Attr::Tensor(t)) if t.values.len() == 1 => Ok(ConstantOfShape { value: t.values[0], int: t.int }),
            Some(_) => Err(unsupported("ConstantOfShape", "attribute value must be a one-element tensor")),
        }
    }
}

impl Kernel for ConstantOfShape {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let dims = int_values(input(ins, 0, "ConstantOfShape")?, "ConstantOfShape", "the shape")?;
        if dims.iter().any(|&d| d < 0) {
            return Err(Error::new(ErrorKind::InvalidArguments, format!("ConstantOfShape: shape {dims:?} has a negative size")));
        }
        let shape: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
        let n = numel(&shape)?;
        if n > MAX_ELEMS {
            return Err(too_large("ConstantOfShape", n));
        }
        Ok(vec![if self.int {
            Value::I(ITensor { shape, data: vec![self.value as i64; n] })
        } else {
            Value::F(Tensor { shape, data: vec![self.value as f32; n] })
        }])
    }

    fn backward(&self, _ins: &[Option<&Value>], _outs: &[&Value], _g: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![None])
    }
}

/// Range(start, limit, delta): `max(ceil((limit - start) / delta), 0)` elements
/// from `start` by steps of `delta`; integers when the three scalars are, else floats, each the
/// previous plus `delta` in f32 (onnxruntime's range.cc accumulates the same way).
pub struct Range;

fn scalar(ins: &[Option<&Value>], i: usize) -> Result<(f64, bool)> {
    let v = input(ins, i, "Range")?;
    if v.shape().iter().product::<usize>() != 1 {
        return Err(Error::new(ErrorKind::ShapeMismatch, format!("Range: input {i} must be a scalar, has shape {:?}", v.shape())));
    }
    Ok(match v {
        Value::I(t) => (t.data[0] as f64, true),
        Value::F(t) => (t.data[0] as f64, false),
    })
}

impl Kernel for Range {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let ((s, si), (l, li), (d, di)) = (scalar(ins, 0)?, scalar(ins, 1)?, scalar(ins, 2)?);
        if d == 0.0 {
            return Err(Error::new(ErrorKind::InvalidArguments, "Range: delta must not be 0"));
        }
        let n = ((l - s) / d).ceil().max(0.0);
        if n > MAX_ELEMS as f64 {
            return Err(too_large("Range", n as usize));
        }
        let n = n as usize;
        Ok(vec![if si && li && di {
            let (s, d) = (s as i64, d as i64);
            Value::I(ITensor { shape: vec![n], data: (0..n as i64).map(|i| s + i * d).collect() })
        } else {
            let (mut v, d) = (s as f32, d as f32);
            let data = (0..n)
                .map(|_| {
                    let x = v;
                    v += d;
                    x
                })
                .collect();
            Value::F(Tensor { shape: vec![n], data })
        }])
    }

    fn backward(&self, ins: &[Option<&Value>], _outs: &[&Value], _g: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![None; ins.len()])
    }
}
