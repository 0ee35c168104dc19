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

    fn backward_reads(&self, need: &[bool]) -> (Vec<bool>, bool) {
        // the table's shape, the indices
        super::reads_operands_from(1, need)
    }
}

/// GatherElements: `out[i] = data[i with axis a replaced by indices[i]]`, the output of the
/// indices' shape (torch.gather's export; BERT exports read their token-type buffer through it,
/// inside the shape subgraph that folding evaluates). The backward adds each output gradient into
/// the element it read, in output order.
pub struct GatherElements {
    axis: i64,
}

impl GatherElements {
    pub fn new(a: &Attrs) -> Result<GatherElements> {
        Ok(GatherElements { axis: a.int("axis", 0)? })
    }

    /// Per output element, the offset in `data` it reads; and the output shape.
    fn plan(&self, ins: &[Option<&Value>]) -> Result<(Vec<usize>, Vec<usize>)> {
        let (data, ind) = (input(ins, 0, "GatherElements")?, input(ins, 1, "GatherElements")?);
        let (ds, is) = (data.shape(), ind.shape().to_vec());
        let bad = |what: String| Error::new(ErrorKind::InvalidArguments, format!("GatherElements: {what}"));
        if ds.len() != is.len() {
            return Err(bad(format!("indices of rank {} for data of rank {}", is.len(), ds.len())));
        }
        let ax = norm_axis(self.axis, ds.len(), "GatherElements")?;
        if (0..ds.len()).any(|d| d != ax && is[d] > ds[d]) {
            return Err(bad(format!("indices of shape {is:?} exceed data of shape {ds:?} off axis {ax}")));
        }
        let raw = int_values(ind, "GatherElements", "the indices")?;
        let dstr = crate::train::tensor::strides(ds);
        let dim = ds[ax] as i64;
        let mut at = Vec::with_capacity(raw.len());
        let mut idx = vec![0usize; is.len()];
        for &r in &raw {
            let j = if r < 0 { r + dim } else { r };
            if j < 0 || j >= dim {
                return Err(bad(format!("index {r} is out of range [-{dim}, {}] of axis {ax}", dim - 1)));
            }
            let off: usize = (0..is.len()).map(|d| if d == ax { j as usize } else { idx[d] } * dstr[d]).sum();
            at.push(off);
            // next row-major index over the indices' shape
            for d in (0..is.len()).rev() {
                idx[d] += 1;
                if idx[d] < is[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        Ok((at, is))
    }
}

impl Kernel for GatherElements {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let (at, shape) = self.plan(ins)?;
        Ok(vec![take(input(ins, 0, "GatherElements")?, &at, shape)?])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let data = input(ins, 0, "GatherElements")?;
        if matches!(data, Value::I(_)) {
            return Ok(vec![None, None]);
        }
        let (at, _) = self.plan(ins)?;
        let g = gout0(gouts, outs[0].shape())?;
        let mut gd = Tensor::zeros(data.shape())?;
        at.iter().zip(&g.data).for_each(|(&o, &v)| gd.data[o] += v);
        Ok(vec![Some(gd), None])
    }
}
