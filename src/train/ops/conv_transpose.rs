//! ConvTranspose (2-D, groups, strides, pads, dilations, output_padding) as the adjoint of
//! Conv: `col = W_gᵀ · X_ng`, scattered by col2im into the output; the backward is a Conv.

use super::conv::{bias_grad, ConvAttrs};
use super::{fin, fin_opt, gout0, unsupported, Attrs, Kernel};
use crate::core::error::{Error, ErrorKind, Result};
use crate::kernels::gemm::{gemm_acc, Gemm, SUM_CHUNK};
use crate::kernels::im2col::{col2im_acc, im2col, transpose, ConvGeom};
use crate::kernels::par::{self, SharedMut};
use crate::train::tensor::{Tensor, Value};

pub struct ConvTranspose {
    at: ConvAttrs,
    out_pad: [usize; 2],
    output_shape: Option<Vec<usize>>,
}

struct Plan {
    n: usize,
    g: usize,
    cin_g: usize,
    /// The geometry of the *forward conv* this op is the adjoint of: its input is our output.
    geom: ConvGeom,
}

impl ConvTranspose {
    pub fn new(a: &Attrs) -> Result<ConvTranspose> {
        let at = ConvAttrs::new(a)?;
        if at.auto_pad != "NOTSET" && at.auto_pad != "VALID" {
            return Err(unsupported("ConvTranspose", &format!("auto_pad {}", at.auto_pad)));
        }
        let out_pad = match a.sizes("output_padding")?.as_deref() {
            None => [0, 0],
            Some([h, w]) => [*h, *w],
            Some(_) => return Err(unsupported("ConvTranspose", "output_padding must have 2 entries")),
        };
        let output_shape = a.sizes("output_shape")?;
        if output_shape.is_some() {
            return Err(unsupported("ConvTranspose", "output_shape (give pads instead)"));
        }
        Ok(ConvTranspose { at, out_pad, output_shape })
    }

    fn plan(&self, x: &Tensor, w: &Tensor) -> Result<Plan> {
        let (xs, ws) = (&x.shape, &w.shape);
        if xs.len() != 4 || ws.len() != 4 {
            return Err(unsupported("ConvTranspose", &format!("input {xs:?} / weight {ws:?}: only 2-D (NCHW) is implemented")));
        }
        let _ = &self.output_shape;
        let g = self.at.group;
        if xs[1] != ws[0] || ws[0] % g != 0 {
            return Err(Error::new(ErrorKind::ShapeMismatch, format!("ConvTranspose: input {xs:?}, weight {ws:?}, group {g}")));
        }
        let p = if self.at.auto_pad == "VALID" { [0; 4] } else { self.at.pads };
        let mut o = [0; 2];
        for ax in 0..2 {
            let full = (xs[2 + ax] - 1) * self.at.strides[ax] + (ws[2 + ax] - 1) * self.at.dilations[ax] + 1 + self.out_pad[ax];
            o[ax] = full.checked_sub(p[ax] + p[ax + 2]).filter(|&v| v > 0 && xs[2 + ax] > 0).ok_or_else(|| {
                Error::new(ErrorKind::ShapeMismatch, format!("ConvTranspose: pads {p:?} leave no output for input {xs:?}"))
            })?;
        }
        let geom = self.at.geom(ws[1], o, [ws[2], ws[3]], p, [xs[2], xs[3]]);
        Ok(Plan { n: xs[0], g, cin_g: xs[1] / g, geom })
    }
}

impl Kernel for ConvTranspose {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let (x, w) = (fin(ins, 0, "ConvTranspose")?, fin(ins, 1, "ConvTranspose")?);
        let b = fin_opt(ins, 2, "ConvTranspose")?;
        let p = self.plan(x, w)?;
        let gm = &p.geom;
        let (ckk, hw_in, out_g) = (gm.rows(), gm.cols(), gm.c * gm.h * gm.w);
        let cout = gm.c * p.g;
        if let Some(b) = b {
            if b.len() != cout {
                return Err(Error::shape_mismatch("ConvTranspose bias", &[cout], &b.shape));
            }
        }
        let mut y = Tensor::zeros(&[p.n, cout, gm.h, gm.w])?;
        let gc = Gemm { m: ckk, n: hw_in, k: p.cin_g, a_rs: 1, a_ks: ckk, ldb: hw_in, ldc: hw_in, upper: false, kc: 0 };
        par::map_chunks_mut(&mut y.data, out_g, |t, ys| {
            let (ni, gi) = (t / p.g, t % p.g);
            let xs = &x.data[(ni * p.g + gi) * p.cin_g * hw_in..][..p.cin_g * hw_in];
            let wg = &w.data[gi * p.cin_g * ckk..][..p.cin_g * ckk];
            let mut col = vec![0.0; ckk * hw_in];
            gemm_acc(&gc, wg, xs, &mut col);
            col2im_acc(gm, &col, ys);
            if let Some(b) = b {
                for (c, plane) in ys.chunks_mut(gm.h * gm.w).enumerate() {
                    plane.iter_mut().for_each(|v| *v += b.data[gi * gm.c + c]);
                }
            }
        });
        Ok(vec![Value::F(y)])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let (x, w) = (fin(ins, 0, "ConvTranspose")?, fin(ins, 1, "ConvTranspose")?);
        let has_b = fin_opt(ins, 2, "ConvTranspose")?.is_some();
        let p = self.plan(x, w)?;
        let dy = gout0(gouts, outs[0].shape())?;
        let gm = &p.geom;
        let (ckk, hw_in, out_g) = (gm.rows(), gm.cols(), gm.c * gm.h * gm.w);
        let xin = p.cin_g * hw_in;
        // dX_ng = W_g · im2col(dY_ng)
        let mut dx = Tensor::zeros(&x.shape)?;
        let gx = Gemm { m: p.cin_g, n: hw_in, k: ckk, a_rs: ckk, a_ks: 1, ldb: hw_in, ldc: hw_in, upper: false, kc: 0 };
        par::map_chunks_mut(&mut dx.data, xin, |t, dxs| {
            let (ni, gi) = (t / p.g, t % p.g);
            let mut col = vec![0.0; ckk * hw_in];
            im2col(gm, &dy.data[(ni * p.g + gi) * out_g..][..out_g], &mut col);
            gemm_acc(&gx, &w.data[gi * p.cin_g * ckk..][..p.cin_g * ckk], &col, dxs);
        });
        // dW_g += X_ng · im2col(dY_ng)ᵀ, images in order
        let mut dw = Tensor::zeros(&w.shape)?;
        let gw = Gemm { m: p.cin_g, n: ckk, k: hw_in, a_rs: hw_in, a_ks: 1, ldb: ckk, ldc: ckk, upper: false, kc: SUM_CHUNK };
        let dwp = SharedMut(dw.data.as_mut_ptr());
        par::for_each_index(p.g, |gi| {
            // SAFETY: group gi writes only its rows of dW.
            let dwg = unsafe { std::slice::from_raw_parts_mut(dwp.get().add(gi * p.cin_g * ckk), p.cin_g * ckk) };
            let (mut col, mut colt) = (vec![0.0; ckk * hw_in], vec![0.0; ckk * hw_in]);
            for ni in 0..p.n {
                im2col(gm, &dy.data[(ni * p.g + gi) * out_g..][..out_g], &mut col);
                transpose(&col, ckk, hw_in, &mut colt);
                gemm_acc(&gw, &x.data[(ni * p.g + gi) * xin..][..xin], &colt, dwg);
            }
        });
        let db = has_b.then(|| bias_grad(&dy)).transpose()?;
        Ok(vec![Some(dx), Some(dw), db])
    }
}
