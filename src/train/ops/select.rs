//! Expand and Where: broadcasting selections that read float or integer tensors alike (the
//! shape subgraphs of torch exports run them on integers, the data path on activations). Both
//! are index maps from each output element to an element of each operand; the backward sums
//! the output gradient back along the same maps (`reduce_to`, f64 sums).

use super::{gout0, Kernel};
use crate::core::error::{Error, ErrorKind, Result};
use crate::train::tensor::{broadcast_shape, broadcast_strides, for_each_bcast2, reduce_owned, ITensor, Tensor, Value};

fn missing(op: &str, i: usize) -> Error {
    Error::new(ErrorKind::InvalidArguments, format!("{op}: input {i} is missing"))
}

/// Required input `i` of either kind.
pub fn input<'a>(ins: &[Option<&'a Value>], i: usize, op: &str) -> Result<&'a Value> {
    ins.get(i).copied().flatten().ok_or_else(|| missing(op, i))
}

/// A value's elements as integers: integer tensors as they are, float tensors when every element
/// is integral (graph inputs reach the core as floats, token ids among them).
pub fn int_values(v: &Value, op: &str, what: &str) -> Result<Vec<i64>> {
    match v {
        Value::I(t) => Ok(t.data.clone()),
        Value::F(t) if t.data.iter().all(|x| x.fract() == 0.0) => Ok(t.data.iter().map(|&x| x as i64).collect()),
        Value::F(_) => Err(Error::new(ErrorKind::InvalidArguments, format!("{op}: {what} must hold integers"))),
    }
}

/// For each element of `out` (row-major), the offset of the element of `shape` it reads when
/// `shape` is broadcast to `out`.
pub fn bcast_index(shape: &[usize], out: &[usize]) -> Vec<usize> {
    let n: usize = out.iter().product();
    let mut idx = vec![0usize; n];
    let s = broadcast_strides(shape, out);
    let zero = vec![0; out.len()];
    for_each_bcast2(out, &s, &zero, |o, a, _| idx[o] = a);
    idx
}

/// The elements of `v` at `idx`, as a tensor of `shape` of `v`'s kind.
pub fn take(v: &Value, idx: &[usize], shape: Vec<usize>) -> Result<Value> {
    Ok(match v {
        Value::F(t) => {
            let mut y = Tensor::zeros(&shape)?;
            y.data.iter_mut().zip(idx).for_each(|(y, &i)| *y = t.data[i]);
            Value::F(y)
        }
        Value::I(t) => Value::I(ITensor { shape, data: idx.iter().map(|&i| t.data[i]).collect() }),
    })
}

/// Expand: `x` broadcast (both ways, as numpy) with the shape input.
pub struct Expand;

impl Expand {
    fn out_shape(ins: &[Option<&Value>]) -> Result<Vec<usize>> {
        let x = input(ins, 0, "Expand")?;
        let dims = int_values(input(ins, 1, "Expand")?, "Expand", "the shape")?;
        if dims.iter().any(|&d| d < 0) {
            return Err(Error::new(ErrorKind::InvalidArguments, format!("Expand: shape {dims:?} has a negative size")));
        }
        let want: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
        broadcast_shape(x.shape(), &want, "Expand")
    }
}

impl Kernel for Expand {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let x = input(ins, 0, "Expand")?;
        let out = Self::out_shape(ins)?;
        if out.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).is_none_or(|n| n > crate::train::tensor::MAX_ELEMS) {
            return Err(Error::new(ErrorKind::OutOfMemory, format!("Expand: shape {out:?} is too large")));
        }
        Ok(vec![take(x, &bcast_index(x.shape(), &out), out)?])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let x = input(ins, 0, "Expand")?;
        if matches!(x, Value::I(_)) {
            return Ok(vec![None, None]);
        }
        let g = gout0(gouts, outs[0].shape())?;
        Ok(vec![Some(reduce_owned(g, x.shape())?), None])
    }

    fn backward_reads(&self, need: &[bool]) -> (Vec<bool>, bool) {
        // x's shape, the shape operand
        super::reads_operands_from(1, need)
    }
}

/// Whether each element of a condition holds (non-zero).
fn truth(v: &Value) -> Vec<bool> {
    match v {
        Value::F(t) => t.data.iter().map(|&x| x != 0.0).collect(),
        Value::I(t) => t.data.iter().map(|&x| x != 0).collect(),
    }
}

/// Where(cond, x, y): `x` where the condition holds, else `y`, all three broadcast. The
/// condition gets no gradient; `x` and `y` get the output gradient where they were chosen.
pub struct Where;

struct WherePlan {
    out: Vec<usize>,
    cond: Vec<bool>,
    ic: Vec<usize>,
    ix: Vec<usize>,
    iy: Vec<usize>,
}

fn plan(ins: &[Option<&Value>]) -> Result<WherePlan> {
    let (c, x, y) = (input(ins, 0, "Where")?, input(ins, 1, "Where")?, input(ins, 2, "Where")?);
    let out = broadcast_shape(&broadcast_shape(c.shape(), x.shape(), "Where")?, y.shape(), "Where")?;
    Ok(WherePlan {
        cond: truth(c),
        ic: bcast_index(c.shape(), &out),
        ix: bcast_index(x.shape(), &out),
        iy: bcast_index(y.shape(), &out),
        out,
    })
}

impl Kernel for Where {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let p = plan(ins)?;
        let (x, y) = (input(ins, 1, "Where")?, input(ins, 2, "Where")?);
        let pick = |o: usize| p.cond[p.ic[o]];
        Ok(vec![match (x, y) {
            (Value::I(a), Value::I(b)) => {
                let data = (0..p.ix.len()).map(|o| if pick(o) { a.data[p.ix[o]] } else { b.data[p.iy[o]] }).collect();
                Value::I(ITensor { shape: p.out, data })
            }
            // a float branch makes the output float (an integer operand is widened, exactly below 2^24)
            _ => {
                let (a, b) = (as_f32(x), as_f32(y));
                let mut t = Tensor::zeros(&p.out)?;
                t.data.iter_mut().enumerate().for_each(|(o, v)| *v = if pick(o) { a[p.ix[o]] } else { b[p.iy[o]] });
                Value::F(t)
            }
        }])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        self.backward_some(ins, outs, gouts, &[false, true, true])
    }

    fn backward_some(
        &self,
        ins: &[Option<&Value>],
        outs: &[&Value],
        gouts: &[Option<&Tensor>],
        need: &[bool],
    ) -> Result<Vec<Option<Tensor>>> {
        let p = plan(ins)?;
        let g = gout0(gouts, outs[0].shape())?;
        let branch = |k: usize, chosen: bool| -> Result<Option<Tensor>> {
            let v = input(ins, k, "Where")?;
            if !need.get(k).copied().unwrap_or(true) || matches!(v, Value::I(_)) {
                return Ok(None);
            }
            let mut gb = g.clone();
            gb.data.iter_mut().enumerate().for_each(|(o, v)| {
                if p.cond[p.ic[o]] != chosen {
                    *v = 0.0;
                }
            });
            Ok(Some(reduce_owned(gb, v.shape())?))
        };
        Ok(vec![None, branch(1, true)?, branch(2, false)?])
    }
}

fn as_f32(v: &Value) -> std::borrow::Cow<'_, [f32]> {
    match v {
        Value::F(t) => std::borrow::Cow::Borrowed(&t.data),
        Value::I(t) => std::borrow::Cow::Owned(t.data.iter().map(|&x| x as f32).collect()),
    }
}
