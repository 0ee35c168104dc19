//! Resize (opset 10+) and Upsample: nearest (all nearest_mode values) and bilinear over the
//! last two axes, with the coordinate transformation modes PaddleOCR's and common exports use.

use super::{fin, fin_opt, gout0, iin_opt, unsupported, Attrs, Kernel};
use crate::core::error::{Error, ErrorKind, Result};
use crate::train::tensor::{strides, Tensor, Value};

pub struct Resize {
    linear: bool,
    coord: String,
    nearest: String,
    upsample: bool,
    scales_attr: Option<Vec<f32>>,
}

/// Along one axis, each output index reads `(i0, i1, w1)`: `(1 - w1) x[i0] + w1 x[i1]`.
type AxisMap = Vec<(usize, usize, f32)>;

impl Resize {
    pub fn new(a: &Attrs) -> Result<Resize> {
        let mode = a.str("mode", "nearest")?;
        let linear = match mode.as_str() {
            "nearest" => false,
            "linear" | "bilinear" => true,
            other => return Err(unsupported(a.op, &format!("mode {other}"))),
        };
        let upsample = a.op == "Upsample";
        let coord = if upsample { "asymmetric".to_string() } else { a.str("coordinate_transformation_mode", "half_pixel")? };
        if !["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"].contains(&coord.as_str()) {
            return Err(unsupported(a.op, &format!("coordinate_transformation_mode {coord}")));
        }
        let nearest = if upsample { "floor".to_string() } else { a.str("nearest_mode", "round_prefer_floor")? };
        if !["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"].contains(&nearest.as_str()) {
            return Err(unsupported(a.op, &format!("nearest_mode {nearest}")));
        }
        if a.int("exclude_outside", 0)? != 0 || a.ints("axes")?.is_some() || a.str("keep_aspect_ratio_policy", "stretch")? != "stretch" {
            return Err(unsupported(a.op, "exclude_outside, axes or keep_aspect_ratio_policy"));
        }
        Ok(Resize { linear, coord, nearest, upsample, scales_attr: a.floats("scales")? })
    }

    /// Output shape and per-axis scales.
    fn target(&self, ins: &[Option<&Value>], x: &Tensor) -> Result<(Vec<usize>, Vec<f32>)> {
        let r = x.rank();
        let scales = if self.upsample {
            fin_opt(ins, 1, "Upsample")?.map(|t| t.data.clone()).or(self.scales_attr.clone())
        } else {
            fin_opt(ins, 2, "Resize")?.map(|t| t.data.clone())
        };
        let sizes = if self.upsample { None } else { iin_opt(ins, 3, "Resize")? };
        let (out, sc): (Vec<usize>, Vec<f32>) = match (sizes, scales) {
            (Some(s), _) if s.data.len() == r => {
                let out: Vec<usize> = s.data.iter().map(|&v| v.max(0) as usize).collect();
                let sc = out.iter().zip(&x.shape).map(|(&o, &i)| o as f32 / i.max(1) as f32).collect();
                (out, sc)
            }
            (_, Some(sc)) if sc.len() == r && sc.iter().all(|&s| s > 0.0 && s.is_finite()) => {
                (x.shape.iter().zip(&sc).map(|(&i, &s)| (i as f32 * s).floor() as usize).collect(), sc)
            }
            _ => return Err(Error::new(ErrorKind::InvalidArguments, format!("Resize: needs scales or sizes for all {r} axes"))),
        };
        if self.linear && (0..r.saturating_sub(2)).any(|a| out[a] != x.shape[a]) {
            return Err(unsupported("Resize", "linear mode over axes other than the last two"));
        }
        Ok((out, sc))
    }

    fn axis_map(&self, inp: usize, out: usize, scale: f32) -> AxisMap {
        (0..out)
            .map(|o| {
                let (o, s, il, ol) = (o as f32, scale, inp as f32, out as f32);
                let x = match self.coord.as_str() {
                    "half_pixel" => (o + 0.5) / s - 0.5,
                    "pytorch_half_pixel" => {
                        if out > 1 {
                            (o + 0.5) / s - 0.5
                        } else {
                            0.0
                        }
                    }
                    "align_corners" => {
                        if out > 1 {
                            o * (il - 1.0) / (ol - 1.0)
                        } else {
                            0.0
                        }
                    }
                    _ => o / s,
                };
                let last = inp.saturating_sub(1);
                if self.linear {
                    let x = x.clamp(0.0, last as f32);
                    let i0 = (x.floor() as usize).min(last);
                    let i1 = (i0 + 1).min(last);
                    (i0, i1, x - i0 as f32)
                } else {
                    let i = match self.nearest.as_str() {
                        "floor" => x.floor(),
                        "ceil" => x.ceil(),
                        "round_prefer_ceil" => (x + 0.5).floor(),
                        _ => {
                            if x.fract() == 0.5 {
                                x.floor()
                            } else {
                                x.round()
                            }
                        }
                    };
                    let i = (i.max(0.0) as usize).min(last);
                    (i, i, 0.0)
                }
            })
            .collect()
    }

    /// Calls `f(out_offset, in_offset, weight)` for every tap, row-major output order (the
    /// order the backward's sums follow). Outer axes step an odometer once per output row.
    fn walk(&self, x: &Tensor, out: &[usize], sc: &[f32], mut f: impl FnMut(usize, usize, f32)) {
        let r = x.rank();
        let st = strides(&x.shape);
        let maps: Vec<AxisMap> = (0..r).map(|a| self.axis_map(x.shape[a], out[a], sc[a])).collect();
        if out.contains(&0) {
            return;
        }
        if r < 2 {
            let n: usize = out.iter().product();
            (0..n).for_each(|o| f(o, if r == 0 { 0 } else { maps[0][o].0 }, 1.0));
            return;
        }
        let (ya, xa) = (r - 2, r - 1);
        let (oh, ow) = (out[ya], out[xa]);
        let outer = &out[..ya];
        let mut idx = vec![0usize; ya];
        let mut o = 0;
        loop {
            // outer axes: nearest index (linear only touches the last two)
            let base: usize = (0..ya).map(|a| maps[a][idx[a]].0 * st[a]).sum();
            for &(y0, y1, wy) in &maps[ya][..oh] {
                let (r0, r1) = (base + y0 * st[ya], base + y1 * st[ya]);
                for &(x0, x1, wx) in &maps[xa][..ow] {
                    if self.linear {
                        f(o, r0 + x0, (1.0 - wy) * (1.0 - wx));
                        f(o, r0 + x1, (1.0 - wy) * wx);
                        f(o, r1 + x0, wy * (1.0 - wx));
                        f(o, r1 + x1, wy * wx);
                    } else {
                        f(o, r0 + x0, 1.0);
                    }
                    o += 1;
                }
            }
            let mut a = ya;
            loop {
                if a == 0 {
                    return;
                }
                a -= 1;
                idx[a] += 1;
                if idx[a] < outer[a] {
                    break;
                }
                idx[a] = 0;
            }
        }
    }
}

impl Kernel for Resize {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let x = fin(ins, 0, "Resize")?;
        let (out, sc) = self.target(ins, x)?;
        let mut y = Tensor::zeros(&out)?;
        if self.linear {
            self.walk(x, &out, &sc, |o, i, w| y.data[o] += w * x.data[i]);
        } else {
            self.walk(x, &out, &sc, |o, i, _| y.data[o] = x.data[i]);
        }
        Ok(vec![Value::F(y)])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let x = fin(ins, 0, "Resize")?;
        let (out, sc) = self.target(ins, x)?;
        let g = gout0(gouts, outs[0].shape())?;
        let mut dx = Tensor::zeros(&x.shape)?;
        self.walk(x, &out, &sc, |o, i, w| dx.data[i] += w * g.data[o]);
        Ok(vec![Some(dx), None, None, None])
    }
}
