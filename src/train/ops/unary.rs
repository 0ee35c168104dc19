//! Element-wise activations: forward and the derivative applied to the output gradient.

use super::{fin, fin_opt, gout0, unsupported, Attrs, Kernel};
use crate::core::error::Result;
use crate::kernels::{self, par};
use crate::train::tensor::{Tensor, Value};

/// Elements per parallel task at least (each value on its own: the bits whatever the split): a run
/// of 2^15 outweighs the few microseconds of handing it out many times over, even for the kernels'
/// four-lane exp and erf; cheap ops split less often than they would gain from, never more.
const TASK: usize = 1 << 15;

#[derive(Debug, Clone, Copy)]
enum Kind {
    Relu,
    LeakyRelu(f32),
    /// Clip bounds from attributes (opset < 11); inputs 1 and 2 override them.
    Clip(f32, f32),
    Sigmoid,
    HardSigmoid(f32, f32),
    HardSwish,
    Tanh,
    Erf,
    Gelu {
        tanh: bool,
    },
    Identity,
    Sqrt,
    Neg,
    Exp,
    Log,
    Reciprocal,
    /// Rotary position embeddings' tables, computed in the graph from the position ids (Llama-style exports).
    Cos,
    Sin,
}

pub struct Unary {
    kind: Kind,
}

const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
const TWO_OVER_SQRT_PI: f32 = std::f32::consts::FRAC_2_SQRT_PI;
/// 1 / sqrt(2 pi): the standard normal density's factor (GELU's derivative).
const INV_SQRT_2PI: f32 = 0.398_942_3;

impl Unary {
    pub fn new(a: &Attrs) -> Result<Unary> {
        let kind = match a.op {
            "Relu" => Kind::Relu,
            "LeakyRelu" => Kind::LeakyRelu(a.float("alpha", 0.01)?),
            "Clip" => Kind::Clip(a.float("min", f32::NEG_INFINITY)?, a.float("max", f32::INFINITY)?),
            "Sigmoid" => Kind::Sigmoid,
            "HardSigmoid" => Kind::HardSigmoid(a.float("alpha", 0.2)?, a.float("beta", 0.5)?),
            "HardSwish" => Kind::HardSwish,
            "Tanh" => Kind::Tanh,
            "Erf" => Kind::Erf,
            "Gelu" => match a.str("approximate", "none")?.as_str() {
                "none" => Kind::Gelu { tanh: false },
                "tanh" => Kind::Gelu { tanh: true },
                other => return Err(unsupported("Gelu", &format!("approximate={other}"))),
            },
            "Sqrt" => Kind::Sqrt,
            "Neg" => Kind::Neg,
            "Exp" => Kind::Exp,
            "Log" => Kind::Log,
            "Reciprocal" => Kind::Reciprocal,
            "Cos" => Kind::Cos,
            "Sin" => Kind::Sin,
            _ => Kind::Identity,
        };
        Ok(Unary { kind })
    }

    fn clip_bounds(&self, ins: &[Option<&Value>]) -> Result<(f32, f32)> {
        let Kind::Clip(mut lo, mut hi) = self.kind else { return Ok((0.0, 0.0)) };
        if let Some(t) = fin_opt(ins, 1, "Clip")? {
            lo = t.data.first().copied().unwrap_or(lo);
        }
        if let Some(t) = fin_opt(ins, 2, "Clip")? {
            hi = t.data.first().copied().unwrap_or(hi);
        }
        Ok((lo, hi))
    }

    fn f(&self, x: f32, lo: f32, hi: f32) -> f32 {
        match self.kind {
            Kind::Relu => x.max(0.0),
            Kind::LeakyRelu(a) => {
                if x >= 0.0 {
                    x
                } else {
                    a * x
                }
            }
            Kind::Clip(..) => x.max(lo).min(hi),
            Kind::HardSigmoid(a, b) => (a * x + b).clamp(0.0, 1.0),
            Kind::HardSwish => x * (x / 6.0 + 0.5).clamp(0.0, 1.0),
            Kind::Tanh => x.tanh(),
            Kind::Gelu { tanh: true } => {
                let x = x as f64;
                (0.5 * x * (1.0 + (SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)).tanh())) as f32
            }
            Kind::Identity => x,
            Kind::Sqrt => x.sqrt(),
            Kind::Neg => -x,
            // forward's lanes compute these (the kernels' exp, sigmoid and erf on runs of elements)
            Kind::Exp | Kind::Sigmoid | Kind::Erf | Kind::Gelu { tanh: false } => unreachable!("computed in lanes"),
            Kind::Log => (x as f64).ln() as f32,
            Kind::Reciprocal => 1.0 / x,
            Kind::Cos => (x as f64).cos() as f32,
            Kind::Sin => (x as f64).sin() as f32,
        }
    }

    /// dy/dx at `x` (with `y = f(x)`).
    fn df(&self, x: f32, y: f32, lo: f32, hi: f32) -> f32 {
        match self.kind {
            Kind::Relu => (x > 0.0) as u8 as f32,
            Kind::LeakyRelu(a) => {
                if x >= 0.0 {
                    1.0
                } else {
                    a
                }
            }
            Kind::Clip(..) => (x >= lo && x <= hi) as u8 as f32,
            Kind::Sigmoid => y * (1.0 - y),
            Kind::HardSigmoid(a, b) => {
                let z = a * x + b;
                if z > 0.0 && z < 1.0 {
                    a
                } else {
                    0.0
                }
            }
            Kind::HardSwish => {
                if x < -3.0 {
                    0.0
                } else if x > 3.0 {
                    1.0
                } else {
                    x / 3.0 + 0.5
                }
            }
            Kind::Tanh => 1.0 - y * y,
            // backward's lanes compute these
            Kind::Erf | Kind::Gelu { tanh: false } => unreachable!("computed in lanes"),
            Kind::Gelu { tanh: true } => {
                let x = x as f64;
                let u = SQRT_2_OVER_PI * (x + 0.044715 * x * x * x);
                let t = u.tanh();
                (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * SQRT_2_OVER_PI * (1.0 + 3.0 * 0.044715 * x * x)) as f32
            }
            Kind::Identity => 1.0,
            Kind::Sqrt => 0.5 / y,
            Kind::Neg => -1.0,
            Kind::Exp => y,
            Kind::Log => 1.0 / x,
            // d(1/x) = -1/x² = -y²
            Kind::Reciprocal => -y * y,
            Kind::Cos => -(x as f64).sin() as f32,
            Kind::Sin => (x as f64).cos() as f32,
        }
    }
}

impl Kernel for Unary {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let x = fin(ins, 0, "activation")?;
        let (lo, hi) = self.clip_bounds(ins)?;
        let mut data = vec![0.0f32; x.len()];
        let run = par::run_len(data.len(), TASK);
        par::map_chunks_mut(&mut data, run, |t, ys| {
            let xs = &x.data[t * run..][..ys.len()];
            // exp, sigmoid and erf four lanes at a time (the kernels' bits); `f` holds every other kind.
            match self.kind {
                Kind::Exp => {
                    ys.copy_from_slice(xs);
                    kernels::exp_in_place(ys, 0.0);
                }
                Kind::Sigmoid => {
                    ys.copy_from_slice(xs);
                    kernels::sigmoid_in_place(ys);
                }
                Kind::Erf => {
                    ys.copy_from_slice(xs);
                    kernels::erf_in_place(ys);
                }
                Kind::Gelu { tanh: false } => {
                    for (y, &v) in ys.iter_mut().zip(xs) {
                        *y = v * std::f32::consts::FRAC_1_SQRT_2;
                    }
                    kernels::erf_in_place(ys);
                    for (y, &v) in ys.iter_mut().zip(xs) {
                        *y = 0.5 * v * (1.0 + *y);
                    }
                }
                _ => {
                    for (y, &v) in ys.iter_mut().zip(xs) {
                        *y = self.f(v, lo, hi);
                    }
                }
            }
        });
        Ok(vec![Value::F(Tensor { shape: x.shape.clone(), data })])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let x = fin(ins, 0, "activation")?;
        let Value::F(y) = outs[0] else { unreachable!("activations output floats") };
        let (lo, hi) = self.clip_bounds(ins)?;
        let mut g = gout0(gouts, &x.shape)?;
        let run = par::run_len(g.len(), TASK);
        par::map_chunks_mut(&mut g.data, run, |t, gs| {
            let (xs, ys) = (&x.data[t * run..], &y.data[t * run..]);
            // df's exponentials and erf four lanes at a time, then its products in its order: df's bits
            let xs = &xs[..gs.len()];
            match self.kind {
                Kind::Erf => {
                    let mut e: Vec<f32> = xs.iter().map(|&v| -(v * v)).collect();
                    kernels::exp_in_place(&mut e, 0.0);
                    for (gv, ev) in gs.iter_mut().zip(&e) {
                        *gv *= TWO_OVER_SQRT_PI * ev;
                    }
                    return;
                }
                Kind::Gelu { tanh: false } => {
                    let mut e: Vec<f32> = xs.iter().map(|&v| -0.5 * v * v).collect();
                    kernels::exp_in_place(&mut e, 0.0);
                    let mut cdf: Vec<f32> = xs.iter().map(|&v| v * std::f32::consts::FRAC_1_SQRT_2).collect();
                    kernels::erf_in_place(&mut cdf);
                    for (i, gv) in gs.iter_mut().enumerate() {
                        *gv *= 0.5 * (1.0 + cdf[i]) + xs[i] * e[i] * INV_SQRT_2PI;
                    }
                    return;
                }
                _ => {}
            }
            for (i, gv) in gs.iter_mut().enumerate() {
                *gv *= self.df(xs[i], ys[i], lo, hi);
            }
        });
        let mut r = vec![Some(g)];
        r.extend((1..ins.len()).map(|_| None));
        Ok(r)
    }
}
