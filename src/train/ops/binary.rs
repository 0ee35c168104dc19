//! Add, Sub, Mul, Div with numpy broadcasting; the backward sums each gradient back to its
//! operand's shape.

use super::{fin, gout0, Attrs, Kernel};
use crate::core::error::Result;
use crate::train::tensor::{broadcast_shape, broadcast_strides, for_each_bcast2, reduce_to, Tensor, Value};

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

impl Kernel for Binary {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let (a, b) = (fin(ins, 0, "binary op")?, fin(ins, 1, "binary op")?);
        let shape = broadcast_shape(&a.shape, &b.shape, "binary op")?;
        let mut y = Tensor::zeros(&shape)?;
        let (sa, sb) = (broadcast_strides(&a.shape, &shape), broadcast_strides(&b.shape, &shape));
        let k = self.kind;
        for_each_bcast2(&shape, &sa, &sb, |o, i, j| {
            let (u, v) = (a.data[i], b.data[j]);
            y.data[o] = match k {
                Kind::Add => u + v,
                Kind::Sub => u - v,
                Kind::Mul => u * v,
                Kind::Div => u / v,
                Kind::Pow => pow(u, v),
            };
        });
        Ok(vec![Value::F(y)])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let (a, b) = (fin(ins, 0, "binary op")?, fin(ins, 1, "binary op")?);
        let shape = outs[0].shape().to_vec();
        let g = gout0(gouts, &shape)?;
        let (sa, sb) = (broadcast_strides(&a.shape, &shape), broadcast_strides(&b.shape, &shape));
        let (mut ga, mut gb) = (g.clone(), g);
        match self.kind {
            Kind::Add => {}
            Kind::Sub => gb.data.iter_mut().for_each(|v| *v = -*v),
            Kind::Pow => {
                for_each_bcast2(&shape, &sa, &sb, |o, i, j| {
                    let (u, v, gv) = (a.data[i], b.data[j], ga.data[o]);
                    ga.data[o] = gv * v * pow(u, v - 1.0);
                    gb.data[o] = if u > 0.0 { gv * pow(u, v) * u.ln() } else { 0.0 };
                });
            }
            Kind::Mul | Kind::Div => {
                let k = self.kind;
                for_each_bcast2(&shape, &sa, &sb, |o, i, j| {
                    let (u, v, gv) = (a.data[i], b.data[j], ga.data[o]);
                    if k == Kind::Mul {
                        ga.data[o] = gv * v;
                        gb.data[o] = gv * u;
                    } else {
                        ga.data[o] = gv / v;
                        gb.data[o] = -gv * u / (v * v);
                    }
                });
            }
        }
        Ok(vec![Some(reduce_to(&ga, &a.shape)?), Some(reduce_to(&gb, &b.shape)?)])
    }
}
