//! Conv (2-D, grouped and depthwise, strides, pads, dilations, auto_pad) as im2col + GEMM on
//! the kernels layer (`kernels::conv_band`: a band of input channels at a time), one task per
//! (image, group): every task writes its own output slice, so the bits do not depend on the
//! thread count.

use super::{fin, fin_opt, gout0, unsupported, Attrs, Kernel};
use crate::core::error::{Error, ErrorKind, Result};
use crate::kernels::conv_band;
use crate::kernels::depthwise::{self, Padded};
use crate::kernels::im2col::ConvGeom;
use crate::kernels::par;
use crate::train::tensor::{reduce_to, Tensor, Value};

/// The attributes shared by Conv and ConvTranspose.
#[derive(Debug, Clone)]
pub struct ConvAttrs {
    pub group: usize,
    pub strides: [usize; 2],
    pub dilations: [usize; 2],
    /// `[top, left, bottom, right]`, or `None` with auto_pad SAME_*.
    pub pads: [usize; 4],
    pub auto_pad: String,
    pub kernel_shape: Option<Vec<usize>>,
}

fn pair(v: Option<Vec<usize>>, op: &str, k: &str) -> Result<[usize; 2]> {
    match v.as_deref() {
        None => Ok([1, 1]),
        Some([a, b]) if *a > 0 && *b > 0 => Ok([*a, *b]),
        Some(_) => Err(unsupported(op, &format!("{k} must be two positive integers (2-D only)"))),
    }
}

impl ConvAttrs {
    pub fn new(a: &Attrs) -> Result<ConvAttrs> {
        let group = a.int("group", 1)?;
        if group < 1 {
            return Err(Error::new(ErrorKind::InvalidArguments, format!("{}: group must be >= 1", a.op)));
        }
        let pads = match a.sizes("pads")?.as_deref() {
            None => [0; 4],
            Some([t, l, b, r]) => [*t, *l, *b, *r],
            Some(_) => return Err(unsupported(a.op, "pads must have 4 entries (2-D only)")),
        };
        let auto_pad = a.str("auto_pad", "NOTSET")?;
        if !["NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"].contains(&auto_pad.as_str()) {
            return Err(unsupported(a.op, &format!("auto_pad {auto_pad}")));
        }
        Ok(ConvAttrs {
            group: group as usize,
            strides: pair(a.sizes("strides")?, a.op, "strides")?,
            dilations: pair(a.sizes("dilations")?, a.op, "dilations")?,
            pads,
            auto_pad,
            kernel_shape: a.sizes("kernel_shape")?,
        })
    }

    /// The im2col geometry of one group: `c` channels of an `hw` image, kernel `k`, these strides
    /// and dilations, the leading pads of `p`, an `o` grid of patch columns. ConvTranspose passes
    /// its output as the image and its input as the grid (it is the adjoint of that Conv).
    pub fn geom(&self, c: usize, hw: [usize; 2], k: [usize; 2], p: [usize; 4], o: [usize; 2]) -> ConvGeom {
        let [sh, sw] = self.strides;
        let [dh, dw] = self.dilations;
        ConvGeom { c, h: hw[0], w: hw[1], kh: k[0], kw: k[1], sh, sw, ph: p[0], pw: p[1], dh, dw, oh: o[0], ow: o[1] }
    }

    /// Pads of a convolution over `h x w` with kernel `k` (auto_pad resolved).
    pub fn pads_for(&self, h: usize, w: usize, k: [usize; 2]) -> [usize; 4] {
        match self.auto_pad.as_str() {
            "VALID" => [0; 4],
            "SAME_UPPER" | "SAME_LOWER" => {
                let mut p = [0; 4];
                for (ax, len) in [h, w].into_iter().enumerate() {
                    let s = self.strides[ax];
                    let out = len.div_ceil(s);
                    let ext = (k[ax] - 1) * self.dilations[ax] + 1;
                    let total = ((out - 1) * s + ext).saturating_sub(len);
                    let (small, big) = (total / 2, total - total / 2);
                    (p[ax], p[ax + 2]) = if self.auto_pad == "SAME_UPPER" { (small, big) } else { (big, small) };
                }
                p
            }
            _ => self.pads,
        }
    }
}

pub struct Conv {
    at: ConvAttrs,
}

/// The shapes of one Conv call.
struct Plan {
    n: usize,
    g: usize,
    cout_g: usize,
    geom: ConvGeom,
}

impl Plan {
    /// One input channel per output channel (group == channels in == channels out).
    fn depthwise(&self) -> bool {
        self.geom.c == 1 && self.cout_g == 1
    }
}

impl Conv {
    pub fn new(a: &Attrs) -> Result<Conv> {
        Ok(Conv { at: ConvAttrs::new(a)? })
    }

    fn plan(&self, x: &Tensor, w: &Tensor) -> Result<Plan> {
        let (xs, ws) = (&x.shape, &w.shape);
        if xs.len() != 4 || ws.len() != 4 {
            return Err(unsupported("Conv", &format!("input {xs:?} / weight {ws:?}: only 2-D convolutions (NCHW) are implemented")));
        }
        let g = self.at.group;
        let (cin, cout) = (xs[1], ws[0]);
        if cin % g != 0 || cout % g != 0 || ws[1] * g != cin {
            return Err(Error::new(ErrorKind::ShapeMismatch, format!("Conv: input {xs:?}, weight {ws:?} and group {g} do not fit")));
        }
        if let Some(k) = &self.at.kernel_shape {
            if k[..] != ws[2..] {
                return Err(Error::new(ErrorKind::ShapeMismatch, format!("Conv: kernel_shape {k:?} but weight {ws:?}")));
            }
        }
        let k = [ws[2], ws[3]];
        let p = self.at.pads_for(xs[2], xs[3], k);
        let out = |ax: usize| -> Result<usize> {
            let ext = (k[ax] - 1) * self.at.dilations[ax] + 1;
            let len = xs[2 + ax] + p[ax] + p[ax + 2];
            if k[ax] == 0 || len < ext {
                return Err(Error::new(ErrorKind::ShapeMismatch, format!("Conv: kernel {k:?} larger than padded input {xs:?}")));
            }
            Ok((len - ext) / self.at.strides[ax] + 1)
        };
        let geom = self.at.geom(cin / g, [xs[2], xs[3]], k, p, [out(0)?, out(1)?]);
        Ok(Plan { n: xs[0], g, cout_g: cout / g, geom })
    }
}

impl Kernel for Conv {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let (x, w) = (fin(ins, 0, "Conv")?, fin(ins, 1, "Conv")?);
        let b = fin_opt(ins, 2, "Conv")?;
        let p = self.plan(x, w)?;
        let (gm, co, ohw) = (&p.geom, p.cout_g, p.geom.cols());
        if let Some(b) = b {
            if b.data.len() != co * p.g {
                return Err(Error::shape_mismatch("Conv bias", &[co * p.g], &b.shape));
            }
        }
        let mut y = Tensor::zeros(&[p.n, co * p.g, gm.oh, gm.ow])?;
        let (ckk, xin) = (gm.rows(), gm.c * gm.h * gm.w);
        if p.depthwise() {
            let pad = Padded::of(gm);
            par::map_chunks_mut(&mut y.data, ohw, |t, ys| {
                if let Some(b) = b {
                    ys.fill(b.data[t % p.g]);
                }
                let mut xp = vec![0.0; pad.len(gm)];
                pad.pad(gm, &x.data[t * xin..][..xin], &mut xp);
                depthwise::forward(gm, &pad, &xp, &w.data[(t % p.g) * ckk..][..ckk], ys);
            });
            return Ok(vec![Value::F(y)]);
        }
        par::map_chunks_mut(&mut y.data, co * ohw, |t, ys| {
            let (ni, gi) = (t / p.g, t % p.g);
            if let Some(b) = b {
                for (o, row) in ys.chunks_mut(ohw).enumerate() {
                    row.fill(b.data[gi * co + o]);
                }
            }
            let xs = &x.data[(ni * p.g + gi) * xin..][..xin];
            conv_band::forward(gm, co, &w.data[gi * co * ckk..][..co * ckk], xs, ys);
        });
        Ok(vec![Value::F(y)])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        self.backward_some(ins, outs, gouts, &[true, true, true])
    }

    /// Skips dX when the input needs no gradient (the network's input image).
    fn backward_some(
        &self,
        ins: &[Option<&Value>],
        outs: &[&Value],
        gouts: &[Option<&Tensor>],
        need: &[bool],
    ) -> Result<Vec<Option<Tensor>>> {
        let (x, w) = (fin(ins, 0, "Conv")?, fin(ins, 1, "Conv")?);
        let has_b = fin_opt(ins, 2, "Conv")?.is_some();
        let p = self.plan(x, w)?;
        let dy = gout0(gouts, outs[0].shape())?;
        let (gm, co, ohw) = (&p.geom, p.cout_g, p.geom.cols());
        let (ckk, xin) = (gm.rows(), gm.c * gm.h * gm.w);

        let need_x = need.first() != Some(&false);
        if p.depthwise() {
            return depthwise_backward(&p, x, w, &dy, need_x, has_b);
        }
        // dX per (image, group): the columns' gradient W_gᵀ · dY, scattered back band by band.
        let mut dx = Tensor::zeros(if need_x { &x.shape } else { &[0] })?;
        par::map_chunks_mut(&mut dx.data, xin, |t, dxs| {
            let (ni, gi) = (t / p.g, t % p.g);
            let dys = &dy.data[(ni * p.g + gi) * co * ohw..][..co * ohw];
            conv_band::input_grad(gm, co, &w.data[gi * co * ckk..][..co * ckk], dys, dxs);
        });

        // dW_g = sum over images of dY_ng · colᵀ, images in order; groups in parallel.
        let mut dw = Tensor::zeros(&w.shape)?;
        par::map_chunks_mut(&mut dw.data, co * ckk, |gi, dwg| {
            let mut acc = conv_band::WeightGrad::new(gm, co);
            for ni in 0..p.n {
                let xs = &x.data[(ni * p.g + gi) * xin..][..xin];
                acc.add(xs, &dy.data[(ni * p.g + gi) * co * ohw..][..co * ohw], dwg);
            }
            acc.finish(dwg);
        });

        Ok(vec![need_x.then_some(dx), Some(dw), has_b.then(|| bias_grad(&dy)).transpose()?])
    }
}

/// The bias gradient of a convolution's output `dy` (`[n, c, spatial...]`): per channel, the
/// adjoint of broadcasting the bias over the images and the plane (`reduce_to`, summed in f64).
pub(super) fn bias_grad(dy: &Tensor) -> Result<Tensor> {
    let mut per_channel = vec![1; dy.shape.len()];
    per_channel[1] = dy.shape[1];
    let mut db = reduce_to(dy, &per_channel)?;
    db.shape = vec![dy.shape[1]];
    Ok(db)
}

/// Depthwise backward without columns (`kernels::depthwise`): dX one task per (image,
/// channel), dW one task per channel summing the images in order.
fn depthwise_backward(p: &Plan, x: &Tensor, w: &Tensor, dy: &Tensor, need_x: bool, has_b: bool) -> Result<Vec<Option<Tensor>>> {
    let (gm, kk, hw, ohw) = (&p.geom, p.geom.rows(), p.geom.h * p.geom.w, p.geom.cols());
    let pad = Padded::of(gm);
    let dx = if need_x {
        let mut dx = Tensor::zeros(&x.shape)?;
        par::map_chunks_mut(&mut dx.data, hw, |t, dxs| {
            let mut dxp = vec![0.0; pad.len(gm)];
            depthwise::input_grad(gm, &pad, &w.data[(t % p.g) * kk..][..kk], &dy.data[t * ohw..][..ohw], &mut dxp);
            pad.unpad(gm, &dxp, dxs);
        });
        Some(dx)
    } else {
        None
    };
    let mut dw = Tensor::zeros(&w.shape)?;
    par::map_chunks_mut(&mut dw.data, kk, |c, dws| {
        // the padding stays zero: each image overwrites only the interior
        let mut xp = vec![0.0; pad.len(gm)];
        for ni in 0..p.n {
            let t = ni * p.g + c;
            pad.pad(gm, &x.data[t * hw..][..hw], &mut xp);
            depthwise::weight_grad(gm, &pad, &xp, &dy.data[t * ohw..][..ohw], dws);
        }
    });
    Ok(vec![dx, Some(dw), has_b.then(|| bias_grad(dy)).transpose()?])
}
