//! The operators of the training core: each parses its node's attributes once (refusing what it
//! does not implement, by name) and then runs forward and backward on [`Value`]s.

mod binary;
mod cast;
pub mod chain;
mod compare;
mod conv;
mod conv_transpose;
mod einsum;
mod extremum;
mod gather;
mod generate;
mod gru;
mod linear;
mod lstm;
mod norm;
mod pad;
mod pool;
mod reduce;
mod resize;
mod rnn;
mod select;
mod shape;
mod tile;
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
    /// Which values [`Kernel::backward_some`] reads beyond their shapes when told `need`: per
    /// input, and whether it reads its outputs. The graph lets a computed value's data go once its
    /// last forward reader has run when no backward reads it (its shape stays, which every backward
    /// may read): a language model's step keeps far fewer activations. The default is everything;
    /// an op declares less only where its backward provably reads less.
    fn backward_reads(&self, need: &[bool]) -> (Vec<bool>, bool) {
        (vec![true; need.len()], true)
    }
}

/// [`Kernel::backward_reads`] of an op that reads the data of none of its inputs and outputs but
/// those from `from` on (its operands: shapes, axes, indices).
pub fn reads_operands_from(from: usize, need: &[bool]) -> (Vec<bool>, bool) {
    ((0..need.len()).map(|i| i >= from).collect(), false)
}

/// Builds a node's kernel from its attributes (refusing an attribute it does not implement).
type Build = fn(&NodeSpec, &Attrs) -> Result<Box<dyn Kernel>>;

/// The one table of the core's operators (ONNX names): what [`supported`] answers and what
/// [`build`] dispatches on are the same rows, so the two cannot drift apart.
/// Ops that also run on the integer side of a graph (shape arithmetic) are wrapped in
/// [`IntLift`]; the ops of `select`, `compare`, `gather`, `generate` read both kinds natively.
const OPS: &[(&str, Build)] = &[
    ("Conv", |_, a| Ok(Box::new(conv::Conv::new(a)?))),
    ("ConvTranspose", |_, a| Ok(Box::new(conv_transpose::ConvTranspose::new(a)?))),
    ("Gemm", |_, a| Ok(Box::new(linear::Gemm::new(a)?))),
    ("MatMul", |_, _| Ok(Box::new(linear::MatMul))),
    ("BatchNormalization", |_, a| Ok(Box::new(norm::BatchNorm::new(a)?))),
    ("LayerNormalization", |_, a| Ok(Box::new(norm::LayerNorm::new(a)?))),
    ("Softmax", |_, a| Ok(Box::new(norm::Softmax::new(a)?))),
    ("Relu", unary_op),
    ("LeakyRelu", unary_op),
    ("Clip", unary_op),
    ("Sigmoid", unary_op),
    ("HardSigmoid", unary_op),
    ("HardSwish", unary_op),
    ("Tanh", unary_op),
    ("Erf", unary_op),
    ("Gelu", unary_op),
    ("Identity", unary_op),
    ("Sqrt", unary_op),
    ("Neg", unary_op),
    ("Exp", unary_op),
    ("Log", unary_op),
    ("Reciprocal", unary_op),
    ("Cos", unary_op),
    ("Sin", unary_op),
    ("Add", binary_op),
    ("Sub", binary_op),
    ("Mul", binary_op),
    ("Div", binary_op),
    ("Pow", binary_op),
    ("Max", |_, a| Ok(Box::new(IntLift(extremum::Extremum::new(a)?)))),
    ("Min", |_, a| Ok(Box::new(IntLift(extremum::Extremum::new(a)?)))),
    ("ReduceMean", reduce_op),
    ("ReduceSum", reduce_op),
    ("ReduceL2", reduce_op),
    ("ReduceMax", reduce_op),
    ("ReduceMin", reduce_op),
    ("Shape", |_, a| Ok(Box::new(cast::Shape::new(a)?))),
    ("Cast", |_, a| Ok(Box::new(cast::Cast::new(a)?))),
    ("MaxPool", pool_op),
    ("AveragePool", pool_op),
    ("GlobalAveragePool", pool_op),
    ("GlobalMaxPool", pool_op),
    ("Resize", |_, a| Ok(Box::new(resize::Resize::new(a)?))),
    ("Upsample", |_, a| Ok(Box::new(resize::Resize::new(a)?))),
    ("Concat", |_, a| Ok(Box::new(IntLift(shape::Concat::new(a)?)))),
    ("Split", |n, a| Ok(Box::new(IntLift(shape::Split::new(a, n.outputs.len())?)))),
    ("Slice", |_, a| Ok(Box::new(IntLift(shape::Slice::new(a)?)))),
    ("Reshape", reshape_op),
    ("Flatten", reshape_op),
    ("Squeeze", reshape_op),
    ("Unsqueeze", reshape_op),
    ("Transpose", |_, a| Ok(Box::new(IntLift(shape::Transpose::new(a)?)))),
    ("Pad", |_, a| Ok(Box::new(pad::Pad::new(a)?))),
    ("Expand", |_, _| Ok(Box::new(select::Expand))),
    ("Where", |_, _| Ok(Box::new(select::Where))),
    ("Equal", compare_op),
    ("Less", compare_op),
    ("LessOrEqual", compare_op),
    ("Greater", compare_op),
    ("GreaterOrEqual", compare_op),
    ("Not", compare_op),
    ("IsNaN", compare_op),
    ("And", compare_op),
    ("Or", compare_op),
    ("Gather", |_, a| Ok(Box::new(gather::Gather::new(a)?))),
    ("GatherElements", |_, a| Ok(Box::new(gather::GatherElements::new(a)?))),
    ("ConstantOfShape", |_, a| Ok(Box::new(generate::ConstantOfShape::new(a)?))),
    ("Range", |_, _| Ok(Box::new(generate::Range))),
    ("Tile", |_, _| Ok(Box::new(IntLift(tile::Tile)))),
    ("Einsum", |_, a| Ok(Box::new(einsum::Einsum::new(a)?))),
    ("GRU", |_, a| Ok(Box::new(gru::Gru::new(a)?))),
    ("LSTM", |_, a| Ok(Box::new(lstm::Lstm::new(a)?))),
];

fn unary_op(_: &NodeSpec, a: &Attrs) -> Result<Box<dyn Kernel>> {
    Ok(Box::new(IntLift(unary::Unary::new(a)?)))
}
fn binary_op(_: &NodeSpec, a: &Attrs) -> Result<Box<dyn Kernel>> {
    Ok(Box::new(IntLift(binary::Binary::new(a)?)))
}
fn reduce_op(_: &NodeSpec, a: &Attrs) -> Result<Box<dyn Kernel>> {
    Ok(Box::new(IntLift(reduce::Reduce::new(a)?)))
}
fn pool_op(_: &NodeSpec, a: &Attrs) -> Result<Box<dyn Kernel>> {
    Ok(Box::new(pool::Pool::new(a)?))
}
fn reshape_op(_: &NodeSpec, a: &Attrs) -> Result<Box<dyn Kernel>> {
    Ok(Box::new(IntLift(shape::Reshape::new(a)?)))
}
fn compare_op(_: &NodeSpec, a: &Attrs) -> Result<Box<dyn Kernel>> {
    Ok(Box::new(compare::Compare::new(a)?))
}

/// Whether the core implements an op type.
pub fn supported(op: &str) -> bool {
    OPS.iter().any(|(name, _)| *name == op)
}

/// Every op type the core implements, in the table's order.
pub fn supported_ops() -> impl Iterator<Item = &'static str> {
    OPS.iter().map(|(name, _)| *name)
}

/// The kernel of a node, or `unsupported_op` naming its op type (or attribute).
pub fn build(node: &NodeSpec) -> Result<Box<dyn Kernel>> {
    let a = Attrs { op: &node.op_type, map: &node.attrs };
    match OPS.iter().find(|(name, _)| *name == node.op_type) {
        Some((_, make)) => make(node, &a),
        None => Err(unsupported(&node.op_type, "is not an operator of the training core")),
    }
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
                // truncated, as ONNX's integer Div is (7 / 2 = 3, -7 / 2 = -3); the other ops' results
                // are exact integers already, and quotients of exact integers are correctly rounded
                Value::F(t) => Value::I(ITensor { shape: t.shape, data: t.data.iter().map(|&x| x.trunc() as i64).collect() }),
                i => i,
            })
            .collect())
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        self.backward_some(ins, outs, gouts, &vec![true; ins.len()])
    }

    /// The inner op's own `backward_some` on the lifted inputs (it may skip the unneeded
    /// gradients, whose inputs' data the graph may have let go: [`Kernel::backward_reads`]).
    fn backward_some(
        &self,
        ins: &[Option<&Value>],
        outs: &[&Value],
        gouts: &[Option<&Tensor>],
        need: &[bool],
    ) -> Result<Vec<Option<Tensor>>> {
        if matches!(ins.first().copied().flatten(), Some(Value::I(_))) {
            return Ok(vec![None; ins.len()]);
        }
        let lifted: Vec<Option<Value>> = ins.iter().map(|v| lift(*v)).collect();
        let ins2: Vec<Option<&Value>> = ins.iter().zip(&lifted).map(|(v, l)| l.as_ref().or(*v)).collect();
        let mut g = self.0.backward_some(&ins2, outs, gouts, need)?;
        // no gradient flows into an integer input
        for (i, v) in ins.iter().enumerate() {
            if matches!(v, Some(Value::I(_))) && i < g.len() {
                g[i] = None;
            }
        }
        Ok(g)
    }

    fn backward_reads(&self, need: &[bool]) -> (Vec<bool>, bool) {
        self.0.backward_reads(need)
    }
}
