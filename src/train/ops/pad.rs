//! Pad (constant, reflect, edge): a separable index map ([`SepMap`]) whose padded positions read
//! the fill value (constant) or a mirrored / clamped input index; its backward is the map's
//! scatter-add.

use super::{fin, fin_opt, iin_opt, unsupported, Attrs, Kernel};
use crate::core::error::{Error, ErrorKind, Result};
use crate::train::gather::SepMap;
use crate::train::tensor::{norm_axis, strides, Tensor, Value};

fn shape_err(msg: String) -> Error {
    Error::new(ErrorKind::ShapeMismatch, msg)
}

pub struct Pad {
    mode: String,
    pads: Option<Vec<i64>>,
    value: f32,
}

impl Pad {
    pub fn new(a: &Attrs) -> Result<Pad> {
        let mode = a.str("mode", "constant")?;
        if !["constant", "reflect", "edge"].contains(&mode.as_str()) {
            return Err(unsupported("Pad", &format!("mode {mode}")));
        }
        Ok(Pad { mode, pads: a.ints("pads")?, value: a.float("value", 0.0)? })
    }

    fn map(&self, ins: &[Option<&Value>], x: &Tensor) -> Result<(SepMap, f32)> {
        let r = x.rank();
        let mut pads = iin_opt(ins, 1, "Pad")?.map(|t| t.data).or(self.pads.clone()).ok_or_else(|| shape_err("Pad: no pads".into()))?;
        if let Some(axes) = iin_opt(ins, 3, "Pad")? {
            let mut full = vec![0; 2 * r];
            let k = axes.data.len();
            for (i, &a) in axes.data.iter().enumerate() {
                let a = norm_axis(a, r, "Pad")?;
                (full[a], full[a + r]) = (pads[i], pads[i + k]);
            }
            pads = full;
        }
        if pads.len() != 2 * r {
            return Err(shape_err(format!("Pad: {} pads for rank {r}", pads.len())));
        }
        let value = fin_opt(ins, 2, "Pad")?.and_then(|t| t.data.first().copied()).unwrap_or(self.value);
        let st = strides(&x.shape);
        let mut maps = Vec::with_capacity(r);
        for a in 0..r {
            let (b, e, d) = (pads[a], pads[a + r], x.shape[a] as i64);
            let len = d + b + e;
            if len < 0 || (self.mode != "constant" && d == 0 && len > 0) {
                return Err(shape_err(format!("Pad: pads {pads:?} do not fit {:?}", x.shape)));
            }
            let m = (0..len)
                .map(|o| {
                    let i = o - b;
                    let i = match self.mode.as_str() {
                        "edge" => Some(i.clamp(0, d - 1)),
                        "reflect" if d > 1 => {
                            let p = 2 * (d - 1);
                            let k = i.rem_euclid(p);
                            Some(if k >= d { p - k } else { k })
                        }
                        "reflect" => Some(0),
                        _ => (0..d).contains(&i).then_some(i),
                    };
                    i.map(|i| i as usize * st[a])
                })
                .collect();
            maps.push(m);
        }
        Ok((SepMap { out_shape: maps.iter().map(|m: &Vec<_>| m.len()).collect(), maps }, value))
    }
}

impl Kernel for Pad {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let x = fin(ins, 0, "Pad")?;
        let (m, v) = self.map(ins, x)?;
        Ok(vec![Value::F(m.gather(x, v)?)])
    }
    fn backward(&self, ins: &[Option<&Value>], _o: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let x = fin(ins, 0, "Pad")?;
        let mut dx = Tensor::zeros(&x.shape)?;
        if let Some(g) = gouts[0] {
            self.map(ins, x)?.0.scatter_add(g, &mut dx);
        }
        Ok(vec![Some(dx), None, None, None])
    }
}
