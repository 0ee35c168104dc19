//! Comparisons and logic as masks: Equal, Less(OrEqual), Greater(OrEqual), And, Or (numpy
//! broadcast), Not and IsNaN (torch's scaled_dot_product_attention export zeroes the Softmax of a
//! fully masked row with Where(IsNaN(p), 0, p)). The outputs are booleans held as 0/1 integer tensors; Where reads them as
//! conditions, Cast turns them into float masks. A mask has no gradient (its derivative is zero
//! almost everywhere), so nothing flows back into the compared values.

use super::select::{bcast_index, input};
use super::{Attrs, Kernel};
use crate::core::error::Result;
use crate::train::tensor::{broadcast_shape, ITensor, Tensor, Value};

#[derive(Debug, Clone, Copy)]
enum Kind {
    Equal,
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
    And,
    Or,
    Not,
    IsNaN,
}

pub struct Compare {
    kind: Kind,
}

impl Compare {
    pub fn new(a: &Attrs) -> Result<Compare> {
        let kind = match a.op {
            "Equal" => Kind::Equal,
            "Less" => Kind::Less,
            "LessOrEqual" => Kind::LessOrEqual,
            "Greater" => Kind::Greater,
            "GreaterOrEqual" => Kind::GreaterOrEqual,
            "And" => Kind::And,
            "Or" => Kind::Or,
            "IsNaN" => Kind::IsNaN,
            _ => Kind::Not,
        };
        Ok(Compare { kind })
    }
}

/// The elements widened to f64: exact for f32 and for the integers of shapes and ids; an
/// integer compared with a float (`Equal(ids, 0.0)`) is compared by value, as numpy does.
fn wide(v: &Value) -> Vec<f64> {
    match v {
        Value::F(t) => t.data.iter().map(|&x| x as f64).collect(),
        Value::I(t) => t.data.iter().map(|&x| x as f64).collect(),
    }
}

impl Kernel for Compare {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let a = input(ins, 0, "compare")?;
        if let Kind::Not = self.kind {
            let data = wide(a).iter().map(|&x| (x == 0.0) as i64).collect();
            return Ok(vec![Value::I(ITensor { shape: a.shape().to_vec(), data })]);
        }
        if let Kind::IsNaN = self.kind {
            let data = wide(a).iter().map(|&x| x.is_nan() as i64).collect();
            return Ok(vec![Value::I(ITensor { shape: a.shape().to_vec(), data })]);
        }
        let b = input(ins, 1, "compare")?;
        let out = broadcast_shape(a.shape(), b.shape(), "compare")?;
        let (ia, ib) = (bcast_index(a.shape(), &out), bcast_index(b.shape(), &out));
        let (va, vb) = (wide(a), wide(b));
        let f: fn(f64, f64) -> bool = match self.kind {
            Kind::Equal => |u, v| u == v,
            Kind::Less => |u, v| u < v,
            Kind::LessOrEqual => |u, v| u <= v,
            Kind::Greater => |u, v| u > v,
            Kind::GreaterOrEqual => |u, v| u >= v,
            Kind::And => |u, v| u != 0.0 && v != 0.0,
            Kind::Or | Kind::Not | Kind::IsNaN => |u, v| u != 0.0 || v != 0.0,
        };
        let data = ia.iter().zip(&ib).map(|(&i, &j)| f(va[i], vb[j]) as i64).collect();
        Ok(vec![Value::I(ITensor { shape: out, data })])
    }

    fn backward(&self, ins: &[Option<&Value>], _outs: &[&Value], _g: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![None; ins.len()])
    }
}
