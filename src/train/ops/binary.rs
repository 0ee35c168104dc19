//! Add, Sub, Mul, Div with numpy broadcasting; the backward sums each gradient back to its
//! operand's shape.

use super::{fin, gout0, Attrs, Kernel};
use crate::core::error::Result;
use crate::train::tensor::{broadcast_shape, broadcast_strides, map_runs, reduce_owned, reduce_to, strides, Tensor, Value};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
}

/// `u^v`, with small integral exponents as products (ONNX runtimes do the same for `x^2`,
/// the LayerNorm decompositions' square, so the results agree to the bit there).
fn pow(u: f32, v: f32) -> f32 {
    match v {
        1.0 => u,
        2.0 => u * u,
        3.0 => u * u * u,
        0.5 => u.sqrt(),
        _ => (u as f64).powf(v as f64) as f32,
    }
}

pub struct Binary {
    kind: Kind,
}

impl Binary {
    pub fn new(a: &Attrs) -> Result<Binary> {
        let kind = match a.op {
            "Add" => Kind::Add,
            "Sub" => Kind::Sub,
            "Mul" => Kind::Mul,
            "Pow" => Kind::Pow,
            _ => Kind::Div,
        };
        Ok(Binary { kind })
    }
}

/// `y[o+k] = f(a[oa + k ia], b[ob + k ib])` over one run, with the common stride pairs as plain
/// slice loops (vectorised by the compiler; the op is a generic `f`, so no match per element).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn run<F: Fn(f32, f32) -> f32>(y: &mut [f32], a: &[f32], b: &[f32], oa: usize, ob: usize, ia: usize, ib: usize, f: F) {
    let n = y.len();
    match (ia, ib) {
        (1, 1) => y.iter_mut().zip(&a[oa..oa + n]).zip(&b[ob..ob + n]).for_each(|((y, &u), &v)| *y = f(u, v)),
        (1, 0) => {
            let v = b[ob];
            y.iter_mut().zip(&a[oa..oa + n]).for_each(|(y, &u)| *y = f(u, v))
        }
        (0, 1) => {
            let u = a[oa];
            y.iter_mut().zip(&b[ob..ob + n]).for_each(|(y, &v)| *y = f(u, v))
        }
        _ => y.iter_mut().enumerate().for_each(|(k, y)| *y = f(a[oa + k * ia], b[ob + k * ib])),
    }
}

/// `y = f(x, z)` over `shape` for operands laid out with (broadcast) strides `sx`, `sz`.
fn map2s<F: Fn(f32, f32) -> f32 + Copy + Sync + Send>(
    shape: &[usize],
    x: &[f32],
    sx: &[usize],
    z: &[f32],
    sz: &[usize],
    y: &mut [f32],
    f: F,
) {
    map_runs(shape, sx, sz, y, |ys, ox, oz, ix, iz| run(ys, x, z, ox, oz, ix, iz, f));
}

fn map2<F: Fn(f32, f32) -> f32 + Copy + Sync + Send>(shape: &[usize], a: &Tensor, b: &Tensor, y: &mut [f32], f: F) {
    let (sa, sb) = (broadcast_strides(&a.shape, shape), broadcast_strides(&b.shape, shape));
    map2s(shape, &a.data, &sa, &b.data, &sb, y, f);
}

impl Kernel for Binary {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let (a, b) = (fin(ins, 0, "binary op")?, fin(ins, 1, "binary op")?);
        let shape = broadcast_shape(&a.shape, &b.shape, "binary op")?;
        let mut y = Tensor::zeros(&shape)?;
        match self.kind {
            Kind::Add => map2(&shape, a, b, &mut y.data, |u, v| u + v),
            Kind::Sub => map2(&shape, a, b, &mut y.data, |u, v| u - v),
            Kind::Mul => map2(&shape, a, b, &mut y.data, |u, v| u * v),
            Kind::Div => map2(&shape, a, b, &mut y.data, |u, v| u / v),
            Kind::Pow => map2(&shape, a, b, &mut y.data, pow),
        }
        Ok(vec![Value::F(y)])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        self.backward_some(ins, outs, gouts, &[true, true])
    }

    fn backward_some(
        &self,
        ins: &[Option<&Value>],
        outs: &[&Value],
        gouts: &[Option<&Tensor>],
        need: &[bool],
    ) -> Result<Vec<Option<Tensor>>> {
        let (a, b) = (fin(ins, 0, "binary op")?, fin(ins, 1, "binary op")?);
        let (need_a, need_b) = (need.first() != Some(&false), need.get(1) != Some(&false));
        let shape = outs[0].shape().to_vec();
        let g = gout0(gouts, &shape)?;
        match self.kind {
            Kind::Add | Kind::Sub => {
                let gb = if need_b {
                    let mut gb = reduce_to(&g, &b.shape)?;
                    if self.kind == Kind::Sub {
                        gb.data.iter_mut().for_each(|v| *v = -*v);
                    }
                    Some(gb)
                } else {
                    None
                };
                Ok(vec![if need_a { Some(reduce_owned(g, &a.shape)?) } else { None }, gb])
            }
            Kind::Mul | Kind::Div => {
                // Mul: ga = g v, gb = g u; Div: ga = g / v, gb = (-g u) / (v v); summed back by reduce
                let (sa, sb, so) = (broadcast_strides(&a.shape, &shape), broadcast_strides(&b.shape, &shape), strides(&shape));
                let mul = self.kind == Kind::Mul;
                let ga = if need_a {
                    let mut ga = Tensor::zeros(&shape)?;
                    if mul {
                        map2s(&shape, &g.data, &so, &b.data, &sb, &mut ga.data, |gv, v| gv * v);
                    } else {
                        map2s(&shape, &g.data, &so, &b.data, &sb, &mut ga.data, |gv, v| gv / v);
                    }
                    Some(reduce_owned(ga, &a.shape)?)
                } else {
                    None
                };
                let gb = if need_b {
                    let mut gb = Tensor::zeros(&shape)?;
                    if mul {
                        map2s(&shape, &g.data, &so, &a.data, &sa, &mut gb.data, |gv, u| gv * u);
                    } else {
                        map2s(&shape, &g.data, &so, &a.data, &sa, &mut gb.data, |gv, u| -gv * u);
                        let t = gb.data.clone();
                        map2s(&shape, &t, &so, &b.data, &sb, &mut gb.data, |t, v| t / (v * v));
                    }
                    Some(reduce_owned(gb, &b.shape)?)
                } else {
                    None
                };
                Ok(vec![ga, gb])
            }
            Kind::Pow => {
                // ga = g v u^(v-1), gb = g u^v ln u (u > 0), each element alone: runs over the workers
                // in place of a copy of g. A constant exponent (RMSNorm's square) needs no gb, and
                // its logarithm per element was most of the op's time.
                let (sa, sb) = (broadcast_strides(&a.shape, &shape), broadcast_strides(&b.shape, &shape));
                let each = |mut t: Tensor, f: fn(f32, f32, f32) -> f32| {
                    map_runs(&shape, &sa, &sb, &mut t.data, |ys, oa, ob, ia, ib| {
                        ys.iter_mut().enumerate().for_each(|(k, y)| *y = f(*y, a.data[oa + k * ia], b.data[ob + k * ib]))
                    });
                    t
                };
                let da = |gv: f32, u: f32, v: f32| gv * v * pow(u, v - 1.0);
                let db = |gv: f32, u: f32, v: f32| if u > 0.0 { gv * pow(u, v) * u.ln() } else { 0.0 };
                let gb = if need_b { Some(reduce_owned(each(g.clone(), db), &b.shape)?) } else { None };
                let ga = if need_a { Some(reduce_owned(each(g, da), &a.shape)?) } else { None };
                Ok(vec![ga, gb])
            }
        }
    }

    fn backward_reads(&self, need: &[bool]) -> (Vec<bool>, bool) {
        let (need_a, need_b) = (need.first() != Some(&false), need.get(1) != Some(&false));
        let ins = match self.kind {
            // the shapes only
            Kind::Add | Kind::Sub => vec![false, false],
            // ga = g v, gb = g u
            Kind::Mul => vec![need_b, need_a],
            // ga = g / v, gb = -g u / v²
            Kind::Div => vec![need_b, need_a || need_b],
            Kind::Pow => vec![need_a || need_b, need_a || need_b],
        };
        (ins, false)
    }
}
