//! Data-movement ops: Concat, Split, Slice, Reshape (and Flatten, Squeeze, Unsqueeze),
//! Transpose (Pad is in pad.rs). All are index maps ([`SepMap`]) or plain reshapes.

use super::{fin, gout0, iin_opt, unsupported, Attrs, Kernel};
use crate::core::error::{Error, ErrorKind, Result};
use crate::train::gather::SepMap;
use crate::train::tensor::{norm_axis, numel, strides, Tensor, Value};

fn shape_err(msg: String) -> Error {
    Error::new(ErrorKind::ShapeMismatch, msg)
}

/// Maps of the whole input (identity over `shape`), with `axis` replaced.
fn maps_with(shape: &[usize], axis: usize, m: Vec<Option<usize>>) -> SepMap {
    let st = strides(shape);
    let mut maps: Vec<Vec<Option<usize>>> = shape.iter().zip(&st).map(|(&d, &s)| SepMap::axis(0, d, s)).collect();
    let mut out_shape = shape.to_vec();
    out_shape[axis] = m.len();
    maps[axis] = m;
    SepMap { out_shape, maps }
}

pub struct Concat {
    axis: i64,
}

impl Concat {
    pub fn new(a: &Attrs) -> Result<Concat> {
        Ok(Concat { axis: a.int("axis", 0)? })
    }
}

impl Kernel for Concat {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let ts = (0..ins.len()).map(|i| fin(ins, i, "Concat")).collect::<Result<Vec<_>>>()?;
        let first = ts.first().ok_or_else(|| shape_err("Concat: no inputs".into()))?;
        let ax = norm_axis(self.axis, first.rank(), "Concat")?;
        let mut shape = first.shape.clone();
        shape[ax] = 0;
        for t in &ts {
            if t.rank() != shape.len() || (0..shape.len()).any(|i| i != ax && t.shape[i] != shape[i]) {
                return Err(shape_err(format!("Concat: shapes {:?} and {:?} differ off axis {ax}", first.shape, t.shape)));
            }
            shape[ax] += t.shape[ax];
        }
        let mut y = Tensor::zeros(&shape)?;
        let outer: usize = shape[..ax].iter().product();
        let inner_out: usize = shape[ax..].iter().product();
        let mut at = 0;
        for t in &ts {
            let inner = t.shape[ax..].iter().product::<usize>();
            for o in 0..outer {
                y.data[o * inner_out + at..][..inner].copy_from_slice(&t.data[o * inner..][..inner]);
            }
            at += inner;
        }
        Ok(vec![Value::F(y)])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let g = gout0(gouts, outs[0].shape())?;
        let ax = norm_axis(self.axis, g.rank(), "Concat")?;
        let outer: usize = g.shape[..ax].iter().product();
        let inner_out: usize = g.shape[ax..].iter().product();
        let mut at = 0;
        let mut r = Vec::new();
        for i in 0..ins.len() {
            let t = fin(ins, i, "Concat")?;
            let inner = t.shape[ax..].iter().product::<usize>();
            let mut gi = Tensor::zeros(&t.shape)?;
            for o in 0..outer {
                gi.data[o * inner..][..inner].copy_from_slice(&g.data[o * inner_out + at..][..inner]);
            }
            at += inner;
            r.push(Some(gi));
        }
        Ok(r)
    }

    fn backward_reads(&self, need: &[bool]) -> (Vec<bool>, bool) {
        // the inputs' shapes only
        super::reads_operands_from(need.len(), need)
    }
}

pub struct Split {
    axis: i64,
    split: Option<Vec<i64>>,
    outputs: usize,
}

impl Split {
    pub fn new(a: &Attrs, outputs: usize) -> Result<Split> {
        Ok(Split { axis: a.int("axis", 0)?, split: a.ints("split")?, outputs })
    }

    fn parts(&self, ins: &[Option<&Value>], x: &Tensor) -> Result<(usize, Vec<usize>)> {
        let ax = norm_axis(self.axis, x.rank(), "Split")?;
        let d = x.shape[ax];
        let split = match iin_opt(ins, 1, "Split")? {
            Some(t) => Some(t.data),
            None => self.split.clone(),
        };
        let parts: Vec<usize> = match split {
            Some(s) => {
                s.iter().map(|&v| usize::try_from(v).map_err(|_| shape_err("Split: negative size".into()))).collect::<Result<_>>()?
            }
            None => {
                let k = self.outputs.max(1);
                let each = d.div_ceil(k);
                (0..k).map(|i| each.min(d.saturating_sub(i * each))).collect()
            }
        };
        if parts.iter().sum::<usize>() != d || parts.len() != self.outputs {
            return Err(shape_err(format!("Split: sizes {parts:?} do not cover axis {ax} of {:?} in {} outputs", x.shape, self.outputs)));
        }
        Ok((ax, parts))
    }
}

impl Kernel for Split {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let x = fin(ins, 0, "Split")?;
        let (ax, parts) = self.parts(ins, x)?;
        let st = strides(&x.shape);
        let mut at = 0;
        let mut r = Vec::new();
        for p in parts {
            r.push(Value::F(maps_with(&x.shape, ax, SepMap::axis(at, p, st[ax])).gather(x, 0.0)?));
            at += p;
        }
        Ok(r)
    }

    fn backward(&self, ins: &[Option<&Value>], _outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let x = fin(ins, 0, "Split")?;
        let (ax, parts) = self.parts(ins, x)?;
        let st = strides(&x.shape);
        let mut dx = Tensor::zeros(&x.shape)?;
        let mut at = 0;
        for (p, g) in parts.into_iter().zip(gouts) {
            if let Some(g) = g {
                maps_with(&x.shape, ax, SepMap::axis(at, p, st[ax])).scatter_add(g, &mut dx);
            }
            at += p;
        }
        Ok(vec![Some(dx), None])
    }

    fn backward_reads(&self, need: &[bool]) -> (Vec<bool>, bool) {
        // x's shape, the split sizes
        super::reads_operands_from(1, need)
    }
}

/// Slice; opset < 10 gives starts, ends and axes as attributes.
pub struct Slice {
    starts: Option<Vec<i64>>,
    ends: Option<Vec<i64>>,
    axes: Option<Vec<i64>>,
}

impl Slice {
    pub fn new(a: &Attrs) -> Result<Slice> {
        Ok(Slice { starts: a.ints("starts")?, ends: a.ints("ends")?, axes: a.ints("axes")? })
    }

    fn map(&self, ins: &[Option<&Value>], x: &Tensor) -> Result<SepMap> {
        let need = |i: usize, attr: &Option<Vec<i64>>| -> Result<Vec<i64>> {
            match iin_opt(ins, i, "Slice")? {
                Some(t) => Ok(t.data),
                None => attr.clone().ok_or_else(|| unsupported("Slice", "no starts / ends (inputs from opset 10, attributes before)")),
            }
        };
        let (starts, ends) = (need(1, &self.starts)?, need(2, &self.ends)?);
        let axes = iin_opt(ins, 3, "Slice")?.map(|t| t.data).or(self.axes.clone()).unwrap_or_else(|| (0..starts.len() as i64).collect());
        let steps = iin_opt(ins, 4, "Slice")?.map(|t| t.data).unwrap_or_else(|| vec![1; starts.len()]);
        if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
            return Err(shape_err("Slice: starts, ends, axes and steps differ in length".into()));
        }
        let st = strides(&x.shape);
        let mut maps: Vec<Vec<Option<usize>>> = x.shape.iter().zip(&st).map(|(&d, &s)| SepMap::axis(0, d, s)).collect();
        for i in 0..starts.len() {
            let ax = norm_axis(axes[i], x.rank(), "Slice")?;
            let d = x.shape[ax] as i64;
            let step = steps[i];
            if step == 0 {
                return Err(shape_err("Slice: step 0".into()));
            }
            let clampi = |v: i64, lo: i64, hi: i64| v.clamp(lo, hi);
            let norm = |v: i64| if v < 0 { v.saturating_add(d) } else { v };
            let (s, e) = if step > 0 {
                (clampi(norm(starts[i]), 0, d), clampi(norm(ends[i]), 0, d))
            } else {
                (clampi(norm(starts[i]), -1, d - 1), clampi(norm(ends[i]), -1, d - 1))
            };
            let mut m = Vec::new();
            let mut k = s;
            while (step > 0 && k < e) || (step < 0 && k > e) {
                m.push(Some(k as usize * st[ax]));
                k += step;
            }
            maps[ax] = m;
        }
        let out_shape = maps.iter().map(|m| m.len()).collect();
        Ok(SepMap { out_shape, maps })
    }
}

impl Kernel for Slice {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let x = fin(ins, 0, "Slice")?;
        Ok(vec![Value::F(self.map(ins, x)?.gather(x, 0.0)?)])
    }
    fn backward(&self, ins: &[Option<&Value>], _o: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let x = fin(ins, 0, "Slice")?;
        let mut dx = Tensor::zeros(&x.shape)?;
        if let Some(g) = gouts[0] {
            self.map(ins, x)?.scatter_add(g, &mut dx);
        }
        Ok(vec![Some(dx), None, None, None, None])
    }
    fn backward_reads(&self, need: &[bool]) -> (Vec<bool>, bool) {
        // x's shape, the starts / ends / axes / steps
        super::reads_operands_from(1, need)
    }
}

/// Reshape, Flatten, Squeeze, Unsqueeze: the data unchanged, a new shape.
pub struct Reshape {
    op: String,
    allowzero: bool,
    axis: i64,
    axes: Option<Vec<i64>>,
}

impl Reshape {
    pub fn new(a: &Attrs) -> Result<Reshape> {
        let axis = a.int("axis", 1)?;
        Ok(Reshape { op: a.op.to_string(), allowzero: a.int("allowzero", 0)? != 0, axis, axes: a.ints("axes")? })
    }

    fn out_shape(&self, ins: &[Option<&Value>], x: &Tensor) -> Result<Vec<usize>> {
        let r = x.rank();
        let axes = || -> Result<Option<Vec<i64>>> { Ok(iin_opt(ins, 1, &self.op)?.map(|t| t.data).or(self.axes.clone())) };
        let shape = match self.op.as_str() {
            "Flatten" => {
                let a = if self.axis < 0 { self.axis + r as i64 } else { self.axis };
                if a < 0 || a > r as i64 {
                    return Err(shape_err(format!("Flatten: axis {} for rank {r}", self.axis)));
                }
                let a = a as usize;
                vec![x.shape[..a].iter().product(), x.shape[a..].iter().product()]
            }
            "Squeeze" => match axes()? {
                None => x.shape.iter().copied().filter(|&d| d != 1).collect(),
                Some(ax) => {
                    let ax = ax.iter().map(|&a| norm_axis(a, r, "Squeeze")).collect::<Result<Vec<_>>>()?;
                    if ax.iter().any(|&a| x.shape[a] != 1) {
                        return Err(shape_err(format!("Squeeze: axes {ax:?} of {:?} are not all 1", x.shape)));
                    }
                    (0..r).filter(|i| !ax.contains(i)).map(|i| x.shape[i]).collect()
                }
            },
            "Unsqueeze" => {
                let ax = axes()?.ok_or_else(|| shape_err("Unsqueeze: no axes".into()))?;
                let nr = r + ax.len();
                let mut ax = ax.iter().map(|&a| norm_axis(a, nr, "Unsqueeze")).collect::<Result<Vec<_>>>()?;
                ax.sort_unstable();
                let mut it = x.shape.iter();
                (0..nr).map(|i| if ax.contains(&i) { 1 } else { *it.next().unwrap_or(&1) }).collect()
            }
            _ => {
                let spec = iin_opt(ins, 1, "Reshape")?.ok_or_else(|| shape_err("Reshape: no shape input".into()))?.data;
                let mut out = Vec::with_capacity(spec.len());
                let mut infer = None;
                for (i, &d) in spec.iter().enumerate() {
                    out.push(match d {
                        0 if !self.allowzero => *x.shape.get(i).ok_or_else(|| shape_err("Reshape: 0 beyond the input rank".into()))?,
                        -1 if infer.is_none() => {
                            infer = Some(i);
                            1
                        }
                        d if d >= 0 => d as usize,
                        _ => return Err(shape_err(format!("Reshape: bad shape {spec:?}"))),
                    });
                }
                if let Some(i) = infer {
                    let known: usize = out.iter().product();
                    if known == 0 || !x.len().is_multiple_of(known) {
                        return Err(shape_err(format!("Reshape: {:?} cannot become {spec:?}", x.shape)));
                    }
                    out[i] = x.len() / known;
                }
                out
            }
        };
        if numel(&shape)? != x.len() {
            return Err(shape_err(format!("{}: {:?} cannot become {shape:?}", self.op, x.shape)));
        }
        Ok(shape)
    }
}

impl Kernel for Reshape {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let x = fin(ins, 0, &self.op)?;
        Ok(vec![Value::F(Tensor { shape: self.out_shape(ins, x)?, data: x.data.clone() })])
    }
    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let x = fin(ins, 0, &self.op)?;
        let g = gout0(gouts, outs[0].shape())?;
        Ok(vec![Some(Tensor { shape: x.shape.clone(), data: g.data }), None])
    }
    fn backward_reads(&self, need: &[bool]) -> (Vec<bool>, bool) {
        // x's shape only
        super::reads_operands_from(1, need)
    }
}

pub struct Transpose {
    perm: Option<Vec<i64>>,
}

impl Transpose {
    pub fn new(a: &Attrs) -> Result<Transpose> {
        Ok(Transpose { perm: a.ints("perm")? })
    }
    fn perm(&self, r: usize) -> Result<Vec<usize>> {
        let p: Vec<usize> = match &self.perm {
            None => (0..r).rev().collect(),
            Some(p) => p.iter().map(|&a| norm_axis(a, r, "Transpose")).collect::<Result<_>>()?,
        };
        let mut seen = vec![false; r];
        if p.len() != r || p.iter().any(|&a| std::mem::replace(&mut seen[a], true)) {
            return Err(shape_err(format!("Transpose: perm {:?} is not a permutation of rank {r}", self.perm)));
        }
        Ok(p)
    }
    fn map(&self, x: &Tensor) -> Result<SepMap> {
        let p = self.perm(x.rank())?;
        let st = strides(&x.shape);
        Ok(SepMap {
            out_shape: p.iter().map(|&a| x.shape[a]).collect(),
            maps: p.iter().map(|&a| SepMap::axis(0, x.shape[a], st[a])).collect(),
        })
    }
}

impl Kernel for Transpose {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let x = fin(ins, 0, "Transpose")?;
        Ok(vec![Value::F(self.map(x)?.gather(x, 0.0)?)])
    }
    fn backward(&self, ins: &[Option<&Value>], _o: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let x = fin(ins, 0, "Transpose")?;
        let mut dx = Tensor::zeros(&x.shape)?;
        if let Some(g) = gouts[0] {
            self.map(x)?.scatter_add(g, &mut dx);
        }
        Ok(vec![Some(dx)])
    }

    fn backward_reads(&self, need: &[bool]) -> (Vec<bool>, bool) {
        // x's shape only
        super::reads_operands_from(1, need)
    }
}
