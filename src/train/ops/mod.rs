//! The operators of the training core: each parses its node's attributes once (refusing what it
//! does not implement, by name) and then runs forward and backward on [`Value`]s.

mod binary;
mod cast;
pub mod chain;
mod conv;
mod conv_transpose;
mod linear;
mod norm;
mod pool;
mod reduce;
mod resize;
mod shape;
mod unary;

use super::spec::{Attr, NodeSpec};
use super::tensor::{ITensor, Tensor, Value};
use crate::core::error::{Error, ErrorKind, Result};
use std::collections::BTreeMap;

/// One operator, ready to run. `ins[i]` is `None` for an omitted optional input.
pub trait Kernel: Send + Sync {
    /// The outputs from the inputs.
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>>;
    /// Gradients of the loss w.r.t. each input (`None`: not differentiable or not needed) from
    /// the inputs, the forward's outputs and the gradients w.r.t. the outputs (`None`: zero).
    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>>;
    /// [`Kernel::backward`] told which inputs need a gradient (`need[i]`, a parameter or a value
    /// computed from one): an op may skip the others' work (the input image's gradient, a
    /// constant operand's). The default computes them all; the graph drops the unneeded.
    fn backward_some(
        &self,
        ins: &[Option<&Value>],
        outs: &[&Value],
        gouts: &[Option<&Tensor>],
        need: &[bool],
    ) -> Result<Vec<Option<Tensor>>> {
        let _ = need;
        self.backward(ins, outs, gouts)
    }
}

/// Every op type the core implements (the ONNX names).
pub const SUPPORTED: &[&str] = &[
    "Conv",
    "ConvTranspose",
    "Gemm",
    "MatMul",
    "BatchNormalization",
    "Relu",
    "LeakyRelu",
    "Clip",
    "Sigmoid",
    "HardSigmoid",
    "HardSwish",
    "Tanh",
    "Erf",
    "Gelu",
    "Identity",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "Resize",
    "Upsample",
    "Concat",
    "Split",
    "Slice",
    "Reshape",
    "Transpose",
    "Flatten",
    "Squeeze",
    "Unsqueeze",
    "Softmax",
    "Pad",
    "LayerNormalization",
    "Shape",
    "Cast",
    "ReduceMean",
    "ReduceSum",
    "Pow",
    "Sqrt",
];

/// The kernel of a node, or `unsupported_op` naming its op type (or attribute).
pub fn build(node: &NodeSpec) -> Result<Box<dyn Kernel>> {
    let a = Attrs { op: &node.op_type, map: &node.attrs };
    Ok(match node.op_type.as_str() {
        "Conv" => Box::new(conv::Conv::new(&a)?),
        "ConvTranspose" => Box::new(conv_transpose::ConvTranspose::new(&a)?),
        "Gemm" => Box::new(linear::Gemm::new(&a)?),
        "MatMul" => Box::new(linear::MatMul),
        "BatchNormalization" => Box::new(norm::BatchNorm::new(&a)?),
        "LayerNormalization" => Box::new(norm::LayerNorm::new(&a)?),
        "Softmax" => Box::new(norm::Softmax::new(&a)?),
        "Relu" | "LeakyRelu" | "Clip" | "Sigmoid" | "HardSigmoid" | "HardSwish" | "Tanh" | "Erf" | "Gelu" | "Identity" | "Sqrt" => {
            Box::new(unary::Unary::new(&a)?)
        }
        "Add" | "Sub" | "Mul" | "Div" | "Pow" => Box::new(IntLift(binary::Binary::new(&a)?)),
        "ReduceMean" | "ReduceSum" => Box::new(reduce::Reduce::new(&a)?),
        "Shape" => Box::new(cast::Shape::new(&a)?),
        "Cast" => Box::new(cast::Cast::new(&a)?),
        "MaxPool" | "AveragePool" | "GlobalAveragePool" | "GlobalMaxPool" => Box::new(pool::Pool::new(&a)?),
        "Resize" | "Upsample" => Box::new(resize::Resize::new(&a)?),
        "Concat" => Box::new(IntLift(shape::Concat::new(&a)?)),
        "Split" => Box::new(IntLift(shape::Split::new(&a, node.outputs.len())?)),
        "Slice" => Box::new(IntLift(shape::Slice::new(&a)?)),
        "Reshape" | "Flatten" | "Squeeze" | "Unsqueeze" => Box::new(IntLift(shape::Reshape::new(&a)?)),
        "Transpose" => Box::new(IntLift(shape::Transpose::new(&a)?)),
        "Pad" => Box::new(shape::Pad::new(&a)?),
        other => return Err(unsupported(other, "is not an operator of the training core")),
    })
}

/// The `unsupported_op` error.
pub fn unsupported(op: &str, what: &str) -> Error {
    Error::new(ErrorKind::UnsupportedOp, format!("unsupported op {op}: {what}"))
}

/// A node's attributes, read with ONNX's defaults.
pub struct Attrs<'a> {
    pub op: &'a str,
    pub map: &'a BTreeMap<String, Attr>,
}

impl Attrs<'_> {
    fn bad(&self, k: &str, what: &str) -> Error {
        Error::new(ErrorKind::InvalidArguments, format!("{}: attribute {k} {what}", self.op))
    }
    pub fn int(&self, k: &str, default: i64) -> Result<i64> {
        match self.map.get(k) {
            None => Ok(default),
            Some(Attr::Int(v)) => Ok(*v),
            Some(Attr::Float(v)) if v.fract() == 0.0 => Ok(*v as i64),
            _ => Err(self.bad(k, "must be an integer")),
        }
    }
    pub fn float(&self, k: &str, default: f32) -> Result<f32> {
        match self.map.get(k) {
            None => Ok(default),
            Some(Attr::Float(v)) => Ok(*v as f32),
            Some(Attr::Int(v)) => Ok(*v as f32),
            _ => Err(self.bad(k, "must be a number")),
        }
    }
    pub fn ints(&self, k: &str) -> Result<Option<Vec<i64>>> {
        match self.map.get(k) {
            None => Ok(None),
            Some(Attr::Ints(v)) => Ok(Some(v.clone())),
            Some(Attr::Int(v)) => Ok(Some(vec![*v])),
            Some(Attr::Floats(v)) if v.iter().all(|x| x.fract() == 0.0) => Ok(Some(v.iter().map(|x| *x as i64).collect())),
            _ => Err(self.bad(k, "must be a list of integers")),
        }
    }
    pub fn floats(&self, k: &str) -> Result<Option<Vec<f32>>> {
        match self.map.get(k) {
            None => Ok(None),
            Some(Attr::Floats(v)) => Ok(Some(v.iter().map(|x| *x as f32).collect())),
            Some(Attr::Ints(v)) => Ok(Some(v.iter().map(|x| *x as f32).collect())),
            _ => Err(self.bad(k, "must be a list of numbers")),
        }
    }
    pub fn str(&self, k: &str, default: &str) -> Result<String> {
        match self.map.get(k) {
            None => Ok(default.to_string()),
            Some(Attr::Str(v)) => Ok(v.clone()),
            _ => Err(self.bad(k, "must be a string")),
        }
    }
    /// Non-negative sizes (kernel shapes, strides, ...).
    pub fn sizes(&self, k: &str) -> Result<Option<Vec<usize>>> {
        match self.ints(k)? {
            None => Ok(None),
            Some(v) if v.iter().all(|&x| x >= 0) => Ok(Some(v.iter().map(|&x| x as usize).collect())),
            Some(_) => Err(self.bad(k, "must not be negative")),
        }
    }
}

/// Required `f32` input `i`.
pub fn fin<'a>(ins: &[Option<&'a Value>], i: usize, op: &str) -> Result<&'a Tensor> {
    match ins.get(i).copied().flatten() {
        Some(Value::F(t)) => Ok(t),
        Some(Value::I(_)) => Err(Error::new(ErrorKind::InvalidArguments, format!("{op}: input {i} must be a float tensor"))),
        None => Err(Error::new(ErrorKind::InvalidArguments, format!("{op}: input {i} is missing"))),
    }
}

/// Optional `f32` input `i`.
pub fn fin_opt<'a>(ins: &[Option<&'a Value>], i: usize, op: &str) -> Result<Option<&'a Tensor>> {
    match ins.get(i).copied().flatten() {
        None => Ok(None),
        Some(_) => fin(ins, i, op).map(Some),
    }
}

/// Optional `i64` input `i` (a float tensor of integral values is accepted too).
pub fn iin_opt(ins: &[Option<&Value>], i: usize, op: &str) -> Result<Option<ITensor>> {
    match ins.get(i).copied().flatten() {
        None => Ok(None),
        Some(Value::I(t)) => Ok(Some(t.clone())),
        Some(Value::F(t)) if t.data.iter().all(|v| v.fract() == 0.0) => {
            Ok(Some(ITensor { shape: t.shape.clone(), data: t.data.iter().map(|&v| v as i64).collect() }))
        }
        Some(Value::F(_)) => Err(Error::new(ErrorKind::InvalidArguments, format!("{op}: input {i} must be an integer tensor"))),
    }
}

/// The first gradient of the outputs, as zeros when absent.
pub fn gout0(gouts: &[Option<&Tensor>], shape: &[usize]) -> Result<Tensor> {
    match gouts.first().copied().flatten() {
        Some(g) => Ok(g.clone()),
        None => Tensor::zeros(shape),
    }
}

/// Integers below 2^24 are exact in f32.
const EXACT: i64 = 1 << 24;

/// Runs a data-movement or arithmetic op on integer tensors too (the shape arithmetic of
/// exported graphs: Shape -> Slice -> Concat -> Reshape): integer inputs whose values are exact
/// in f32 go through the float kernel, and the outputs are integers again when input 0 was. The
/// integer side has no gradients.
pub struct IntLift<K: Kernel>(pub K);

fn lift(v: Option<&Value>) -> Option<Value> {
    match v {
        Some(Value::I(t)) if t.data.iter().all(|x| x.abs() <= EXACT) => {
            Some(Value::F(Tensor { shape: t.shape.clone(), data: t.data.iter().map(|&x| x as f32).collect() }))
        }
        _ => None,
    }
}

impl<K: Kernel> Kernel for IntLift<K> {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let int_out = matches!(ins.first().copied().flatten(), Some(Value::I(_)));
        if !ins.iter().any(|v| matches!(v, Some(Value::I(_)))) {
            return self.0.forward(ins);
        }
        let lifted: Vec<Option<Value>> = ins.iter().map(|v| lift(*v)).collect();
        let ins2: Vec<Option<&Value>> = ins.iter().zip(&lifted).map(|(v, l)| l.as_ref().or(*v)).collect();
        let outs = self.0.forward(&ins2)?;
        if !int_out {
            return Ok(outs);
        }
        Ok(outs
            .into_iter()
            .map(|o| match o {
                Value::F(t) => Value::I(ITensor { shape: t.shape, data: t.data.iter().map(|&x| x.round() as i64).collect() }),
                i => i,
            })
            .collect())
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        if matches!(ins.first().copied().flatten(), Some(Value::I(_))) {
            return Ok(vec![None; ins.len()]);
        }
        let lifted: Vec<Option<Value>> = ins.iter().map(|v| lift(*v)).collect();
        let ins2: Vec<Option<&Value>> = ins.iter().zip(&lifted).map(|(v, l)| l.as_ref().or(*v)).collect();
        let mut g = self.0.backward(&ins2, outs, gouts)?;
        // no gradient flows into an integer input
        for (i, v) in ins.iter().enumerate() {
            if matches!(v, Some(Value::I(_))) && i < g.len() {
                g[i] = None;
            }
        }
        Ok(g)
    }
}
