//! Shape and Cast: the integer side of a graph (shape arithmetic before a Reshape) and float
//! casts, which pass gradients through unchanged.

use super::{unsupported, Attrs, Kernel};
use crate::core::error::{Error, ErrorKind, Result};
use crate::train::tensor::{ITensor, Tensor, Value};

pub struct Shape {
    start: i64,
    end: Option<i64>,
}

impl Shape {
    pub fn new(a: &Attrs) -> Result<Shape> {
        let end = a.map.contains_key("end").then(|| a.int("end", 0)).transpose()?;
        Ok(Shape { start: a.int("start", 0)?, end })
    }
}

impl Kernel for Shape {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let v = ins.first().copied().flatten().ok_or_else(|| Error::new(ErrorKind::InvalidArguments, "Shape: no input"))?;
        let s = v.shape();
        let r = s.len() as i64;
        let clamp = |i: i64| (if i < 0 { i + r } else { i }).clamp(0, r) as usize;
        let (a, b) = (clamp(self.start), clamp(self.end.unwrap_or(r)));
        let data: Vec<i64> = s[a..b.max(a)].iter().map(|&d| d as i64).collect();
        Ok(vec![Value::I(ITensor { shape: vec![data.len()], data })])
    }
    fn backward(&self, _ins: &[Option<&Value>], _outs: &[&Value], _g: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![None])
    }
}

pub struct Cast {
    to_float: bool,
    /// BOOL (9): integers 0/1, a float is true when non-zero (masks of attention exports).
    to_bool: bool,
}

/// ONNX data types: FLOAT, FLOAT16, DOUBLE, BFLOAT16 are floats here; INT32, INT64 integers.
const FLOATS: [i64; 4] = [1, 10, 11, 16];
/// INT32, INT64, BOOL, and the narrower integers exports cast ids through (INT8, UINT8, INT16).
const INTS: [i64; 6] = [6, 7, 9, 3, 2, 5];

impl Cast {
    pub fn new(a: &Attrs) -> Result<Cast> {
        let to = a.int("to", 1)?;
        if !FLOATS.contains(&to) && !INTS.contains(&to) {
            return Err(unsupported("Cast", &format!("to data type {to} (float and int32/int64 casts only)")));
        }
        Ok(Cast { to_float: FLOATS.contains(&to), to_bool: to == 9 })
    }
}

impl Kernel for Cast {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let v = ins.first().copied().flatten().ok_or_else(|| Error::new(ErrorKind::InvalidArguments, "Cast: no input"))?;
        if self.to_bool {
            let data = match v {
                Value::F(t) => t.data.iter().map(|&x| (x != 0.0) as i64).collect(),
                Value::I(t) => t.data.iter().map(|&x| (x != 0) as i64).collect(),
            };
            return Ok(vec![Value::I(ITensor { shape: v.shape().to_vec(), data })]);
        }
        Ok(vec![match (v, self.to_float) {
            (Value::F(t), true) => Value::F(t.clone()),
            (Value::I(t), false) => Value::I(t.clone()),
            (Value::I(t), true) => Value::F(Tensor { shape: t.shape.clone(), data: t.data.iter().map(|&x| x as f32).collect() }),
            (Value::F(t), false) => Value::I(ITensor { shape: t.shape.clone(), data: t.data.iter().map(|&x| x as i64).collect() }),
        }])
    }
    fn backward(&self, ins: &[Option<&Value>], _outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let float_in = matches!(ins.first().copied().flatten(), Some(Value::F(_)));
        Ok(vec![if float_in && self.to_float { gouts[0].cloned() } else { None }])
    }

    fn backward_reads(&self, need: &[bool]) -> (Vec<bool>, bool) {
        // whether the input is a float, by its kind: the gradient passes through
        super::reads_operands_from(need.len(), need)
    }
}
