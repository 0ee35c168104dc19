//! The values a training graph carries: dense row-major `f32` tensors (activations, weights,
//! gradients) and `i64` tensors (the shapes, axes and indices ONNX passes as inputs).

use crate::core::error::{Error, ErrorKind, Result};

/// A dense row-major `f32` tensor (NCHW for images).
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: Vec<f32>,
}

/// Elements of a shape, or an error when the product overflows.
pub fn numel(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| Error::new(ErrorKind::OutOfMemory, format!("train: shape {shape:?} has more elements than fit in memory")))
}

/// Largest tensor the core allocates (elements): 2^28 f32 = 1 GiB, beyond any model of ours,
/// so that a malformed shape is a typed error rather than an allocation abort.
pub const MAX_ELEMS: usize = 1 << 28;

impl Tensor {
    /// A zero tensor, its size checked first.
    pub fn zeros(shape: &[usize]) -> Result<Tensor> {
        let n = numel(shape)?;
        if n > MAX_ELEMS {
            return Err(Error::new(ErrorKind::OutOfMemory, format!("train: a tensor of shape {shape:?} is too large")));
        }
        Ok(Tensor { shape: shape.to_vec(), data: vec![0.0; n] })
    }

    /// A tensor from its data, checking the length.
    pub fn new(shape: Vec<usize>, data: Vec<f32>) -> Result<Tensor> {
        let n = numel(&shape)?;
        if n != data.len() {
            return Err(Error::length_mismatch("train tensor", &shape, n, data.len()));
        }
        Ok(Tensor { shape, data })
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Adds `other` element by element (same shape).
    pub fn add_assign(&mut self, other: &Tensor) {
        debug_assert_eq!(self.shape, other.shape);
        for (a, b) in self.data.iter_mut().zip(&other.data) {
            *a += b;
        }
    }
}

/// An `i64` tensor (shape operands of Reshape, Slice, Pad, Split, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct ITensor {
    pub shape: Vec<usize>,
    pub data: Vec<i64>,
}

/// A value of the graph.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    F(Tensor),
    I(ITensor),
}

impl Value {
    pub fn shape(&self) -> &[usize] {
        match self {
            Value::F(t) => &t.shape,
            Value::I(t) => &t.shape,
        }
    }
}

/// Row-major strides of a shape.
pub fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// An ONNX axis (negative counts from the end) in `0..rank`.
pub fn norm_axis(axis: i64, rank: usize, op: &str) -> Result<usize> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if a < 0 || a >= r {
        return Err(Error::new(ErrorKind::InvalidArguments, format!("{op}: axis {axis} is out of range for rank {rank}")));
    }
    Ok(a as usize)
}

/// The numpy broadcast of two shapes.
pub fn broadcast_shape(a: &[usize], b: &[usize], op: &str) -> Result<Vec<usize>> {
    let r = a.len().max(b.len());
    let mut out = vec![0; r];
    for i in 0..r {
        let da = if i + a.len() >= r { a[i + a.len() - r] } else { 1 };
        let db = if i + b.len() >= r { b[i + b.len() - r] } else { 1 };
        out[i] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return Err(Error::new(ErrorKind::ShapeMismatch, format!("{op}: shapes {a:?} and {b:?} do not broadcast"))),
        };
    }
    Ok(out)
}

/// Strides of `shape` read as a broadcast to `out` (0 along broadcast axes), aligned right.
pub fn broadcast_strides(shape: &[usize], out: &[usize]) -> Vec<usize> {
    let s = strides(shape);
    let off = out.len() - shape.len();
    (0..out.len()).map(|i| if i < off || shape[i - off] == 1 { 0 } else { s[i - off] }).collect()
}

/// Calls `f(out_index, offset_a, offset_b)` over every element of `out` in row-major order,
/// with the offsets of two broadcast operands of strides `sa`, `sb`: [`for_each_run`] element
/// by element.
pub fn for_each_bcast2(out: &[usize], sa: &[usize], sb: &[usize], mut f: impl FnMut(usize, usize, usize)) {
    for_each_run(out, sa, sb, |o, oa, ob, len, ia, ib| {
        for k in 0..len {
            f(o + k, oa + k * ia, ob + k * ib);
        }
    });
}

/// Merges neighbouring axes along which both operands are laid out alike (both contiguous
/// across the pair, or both broadcast), and drops size-1 axes: `[N,C,H,W] * [1,C,1,1]` becomes
/// `[N*C, H*W]` with strides `[HW, 1]` and `[1, 0]`, so the inner loop is one long run.
pub fn coalesce(out: &[usize], sa: &[usize], sb: &[usize]) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
    let (mut o, mut a, mut b): (Vec<usize>, Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..out.len() {
        if out[i] == 1 {
            continue;
        }
        if let (Some(&la), Some(&lb)) = (a.last(), b.last()) {
            // the previous (outer) axis continues into this one for both operands
            let fits = |outer: usize, inner: usize| (outer == 0 && inner == 0) || outer == inner * out[i];
            if fits(la, sa[i]) && fits(lb, sb[i]) {
                let n = o.len() - 1;
                o[n] *= out[i];
                a[n] = sa[i];
                b[n] = sb[i];
                continue;
            }
        }
        o.push(out[i]);
        a.push(sa[i]);
        b.push(sb[i]);
    }
    (o, a, b)
}

/// Calls `f(o, oa, ob, len, ia, ib)` for each run of the innermost (coalesced) axis, in
/// row-major order of `out`: output elements `o..o+len`, operand offsets `oa + k*ia`, `ob + k*ib`.
pub fn for_each_run(out: &[usize], sa: &[usize], sb: &[usize], mut f: impl FnMut(usize, usize, usize, usize, usize, usize)) {
    if out.contains(&0) {
        return;
    }
    let (out, sa, sb) = coalesce(out, sa, sb);
    let r = out.len();
    if r == 0 {
        return f(0, 0, 0, 1, 0, 0);
    }
    let (inner, ia, ib) = (out[r - 1], sa[r - 1], sb[r - 1]);
    let mut idx = vec![0usize; r - 1];
    let (mut oa, mut ob, mut o) = (0usize, 0usize, 0usize);
    loop {
        f(o, oa, ob, inner, ia, ib);
        o += inner;
        let mut ax = r - 1;
        loop {
            if ax == 0 {
                return;
            }
            ax -= 1;
            idx[ax] += 1;
            oa += sa[ax];
            ob += sb[ax];
            if idx[ax] < out[ax] {
                break;
            }
            oa -= sa[ax] * out[ax];
            ob -= sb[ax] * out[ax];
            idx[ax] = 0;
        }
    }
}

/// Sums `g` (of shape `out`) down to `shape` (a broadcast operand of it), in row-major order of
/// `out`: the adjoint of broadcasting.
pub fn reduce_to(g: &Tensor, shape: &[usize]) -> Result<Tensor> {
    if g.shape == shape {
        return Ok(g.clone());
    }
    reduce_into(g, shape)
}

/// [`reduce_to`] that takes `g` (no copy when the shapes already agree).
pub fn reduce_owned(g: Tensor, shape: &[usize]) -> Result<Tensor> {
    if g.shape == shape {
        return Ok(g);
    }
    reduce_into(&g, shape)
}

fn reduce_into(g: &Tensor, shape: &[usize]) -> Result<Tensor> {
    let r = Tensor::zeros(shape)?;
    // f64 sums: a per-channel operand's gradient sums a whole batch of planes.
    let mut acc = vec![0.0f64; r.len()];
    let s = broadcast_strides(shape, &g.shape);
    let zero = vec![0; g.shape.len()];
    for_each_run(&g.shape, &s, &zero, |o, a, _, len, ia, _| {
        let gs = &g.data[o..o + len];
        if ia == 0 {
            acc[a] += gs.iter().map(|&v| v as f64).sum::<f64>();
        } else if ia == 1 {
            acc[a..a + len].iter_mut().zip(gs).for_each(|(x, &v)| *x += v as f64);
        } else {
            gs.iter().enumerate().for_each(|(k, &v)| acc[a + k * ia] += v as f64);
        }
    });
    Ok(Tensor { shape: r.shape, data: acc.into_iter().map(|v| v as f32).collect() })
}

/// [`for_each_run`] writing `y` (of shape `out`) run by run, the runs split into contiguous
/// chunks over threads where the build has them: `f(run_of_y, oa, ob, ia, ib)`. Each element
/// is computed alone, so the bits do not depend on the split.
pub fn map_runs(
    out: &[usize],
    sa: &[usize],
    sb: &[usize],
    y: &mut [f32],
    f: impl Fn(&mut [f32], usize, usize, usize, usize) + Sync + Send,
) {
    if out.contains(&0) {
        return;
    }
    let (out, sa, sb) = coalesce(out, sa, sb);
    let r = out.len();
    if r == 0 {
        return f(&mut y[..1], 0, 0, 0, 0);
    }
    let (inner, ia, ib) = (out[r - 1], sa[r - 1], sb[r - 1]);
    let rows: usize = out[..r - 1].iter().product();
    let tasks = crate::kernels::par::tasks_for(rows * inner, 1 << 15, rows);
    let chunk = rows.div_ceil(tasks.max(1)).max(1);
    crate::kernels::par::map_chunks_mut(&mut y[..rows * inner], chunk * inner, |t, ys| {
        for (k, run) in ys.chunks_mut(inner).enumerate() {
            // offsets of outer row `t * chunk + k`, by its digits over the outer axes
            let (mut row, mut oa, mut ob) = (t * chunk + k, 0, 0);
            for d in (0..r - 1).rev() {
                let i = row % out[d];
                row /= out[d];
                oa += i * sa[d];
                ob += i * sb[d];
            }
            f(run, oa, ob, ia, ib);
        }
    });
}
