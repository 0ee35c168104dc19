//! Gather along an axis: embedding lookups (a table of rows indexed by token ids) on the data
//! path, and `Shape -> Gather` picks of one dimension in shape subgraphs. The backward adds each
//! gathered block of the output gradient into its row of the table, in the output's order (so
//! the bits do not depend on the build); rows no index reads are left zero and never visited,
//! so a step costs the batch's tokens, not the vocabulary.

use super::select::{input, int_values, take};
use super::{gout0, Attrs, Kernel};
use crate::core::error::{Error, ErrorKind, Result};
use crate::train::tensor::{norm_axis, Tensor, Value};

pub struct Gather {
    axis: i64,
}

/// The sizes around the gathered axis and the resolved indices.
struct Plan {
    outer: usize,
    dim: usize,
    inner: usize,
    idx: Vec<usize>,
    out_shape: Vec<usize>,
}

impl Gather {
    pub fn new(a: &Attrs) -> Result<Gather> {
        Ok(Gather { axis: a.int("axis", 0)? })
    }

    fn plan(&self, ins: &[Option<&Value>]) -> Result<Plan> {
        let (data, ind) = (input(ins, 0, "Gather")?, input(ins, 1, "Gather")?);
        let shape = data.shape();
        let ax = norm_axis(self.axis, shape.len(), "Gather")?;
        let dim = shape[ax];
        let raw = int_values(ind, "Gather", "the indices")?;
        // ONNX allows negative indices (from the end); anything else outside the axis is the
        // user's data, refused with the range it had to be in (onnxruntime's own wording).
        let idx = raw
            .iter()
            .map(|&i| {
                let j = if i < 0 { i + dim as i64 } else { i };
                if j < 0 || j >= dim as i64 {
                    Err(Error::new(
                        ErrorKind::InvalidArguments,
                        format!("Gather: index {i} is out of range [-{dim}, {}] of axis {ax}", dim as i64 - 1),
                    ))
                } else {
                    Ok(j as usize)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let mut out_shape = shape[..ax].to_vec();
        out_shape.extend_from_slice(ind.shape());
        out_shape.extend_from_slice(&shape[ax + 1..]);
        Ok(Plan { outer: shape[..ax].iter().product(), dim, inner: shape[ax + 1..].iter().product(), idx, out_shape })
    }
}

impl Kernel for Gather {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let p = self.plan(ins)?;
        let mut at = Vec::with_capacity(p.outer * p.idx.len() * p.inner);
        for o in 0..p.outer {
            for &j in &p.idx {
                let base = (o * p.dim + j) * p.inner;
                at.extend(base..base + p.inner);
            }
        }
        Ok(vec![take(input(ins, 0, "Gather")?, &at, p.out_shape)?])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let data = input(ins, 0, "Gather")?;
        if matches!(data, Value::I(_)) {
            return Ok(vec![None, None]);
        }
        let p = self.plan(ins)?;
        let g = gout0(gouts, outs[0].shape())?;
        let mut gd = Tensor::zeros(data.shape())?;
        let mut k = 0;
        for o in 0..p.outer {
            for &j in &p.idx {
                let base = (o * p.dim + j) * p.inner;
                gd.data[base..base + p.inner].iter_mut().zip(&g.data[k..k + p.inner]).for_each(|(d, &v)| *d += v);
                k += p.inner;
            }
        }
        Ok(vec![Some(gd), None])
    }
}
