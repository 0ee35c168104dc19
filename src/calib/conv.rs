//! ONNX Conv inputs as input vectors (group 1): every output position `(n, oh, ow)` is one
//! vector, holding `x[n, c, oh*sh - top + i*dh, ow*sw - left + j*dw]` (0 outside the image) in
//! the order `(c, i, j)` of a Conv weight `(O, C, kh, kw)`, so that the Hessian's inputs line up
//! with the columns of the weight's 2-D view `[O, C*kh*kw]`.

use crate::bail;
use crate::core::error::Result;
use crate::kernels::im2col::{im2row, ConvGeom};

/// Conv attributes as ONNX names them; `None` means the ONNX default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConvGeometry {
    /// `[kh, kw]`.
    pub kernel_shape: Vec<i64>,
    /// `[sh, sw]`, default `[1, 1]`.
    pub strides: Option<Vec<i64>>,
    /// `[top, left, bottom, right]`, default zeros.
    pub pads: Option<Vec<i64>>,
    /// `[dh, dw]`, default `[1, 1]`.
    pub dilations: Option<Vec<i64>>,
}

/// A validated geometry bound to one input shape: `n` images of the kernels' per-image geometry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Im2col {
    pub n: usize,
    pub geom: ConvGeom,
}

fn attr(v: &Option<Vec<i64>>, len: usize, default: i64, min: i64, name: &str) -> Result<Vec<usize>> {
    let v = v.clone().unwrap_or_else(|| vec![default; len]);
    if v.len() != len || v.iter().any(|&x| x < min) {
        bail!(InvalidArguments, "Hessian.addConv: {name} must be {len} integers >= {min}, got {v:?}");
    }
    Ok(v.into_iter().map(|x| x as usize).collect())
}

impl ConvGeometry {
    /// Checks the attributes against an input of `input_shape` (`[N, C, H, W]`, `x_len`
    /// elements) and a Hessian of `cols` inputs. Errors: attributes out of range or a kernel
    /// larger than the padded input -> `invalid_arguments`; `x_len != prod(input_shape)` or
    /// `C*kh*kw != cols` -> `shape_mismatch`.
    pub fn resolve(&self, input_shape: &[i64], x_len: usize, cols: usize) -> Result<Im2col> {
        if input_shape.len() != 4 {
            bail!(ShapeMismatch, "Hessian.addConv: inputShape must be [N, C, H, W], got {input_shape:?}");
        }
        if input_shape.iter().any(|&d| d < 0) {
            bail!(InvalidArguments, "Hessian.addConv: inputShape must be non-negative, got {input_shape:?}");
        }
        let k = attr(&Some(self.kernel_shape.clone()), 2, 1, 1, "kernelShape")?;
        let s = attr(&self.strides, 2, 1, 1, "strides")?;
        let p = attr(&self.pads, 4, 0, 0, "pads")?;
        let d = attr(&self.dilations, 2, 1, 1, "dilations")?;
        let sh: Vec<usize> = input_shape.iter().map(|&x| x as usize).collect();
        let numel = sh.iter().try_fold(1usize, |a, &b| a.checked_mul(b));
        if numel != Some(x_len) {
            bail!(ShapeMismatch, "Hessian.addConv: x has {x_len} elements but inputShape {input_shape:?} needs their product");
        }
        let (n, c, h, w) = (sh[0], sh[1], sh[2], sh[3]);
        let patch = c.checked_mul(k[0]).and_then(|v| v.checked_mul(k[1]));
        if patch != Some(cols) {
            bail!(ShapeMismatch, "Hessian.addConv: C*kh*kw = {c}*{}*{} must equal the Hessian's cols = {cols}", k[0], k[1]);
        }
        let out = |len: usize, pad: usize, kk: usize, dil: usize, st: usize, axis: &str| -> Result<usize> {
            let span = (kk - 1).checked_mul(dil).and_then(|v| v.checked_add(1));
            match (len.checked_add(pad), span) {
                (Some(padded), Some(span)) if padded >= span => Ok((padded - span) / st + 1),
                _ => bail!(InvalidArguments, "Hessian.addConv: the dilated kernel ({kk} taps, dilation {dil}) is larger than the padded input {axis} ({len} + pads {pad})"),
            }
        };
        let oh = out(h, p[0] + p[2], k[0], d[0], s[0], "height")?;
        let ow = out(w, p[1] + p[3], k[1], d[1], s[1], "width")?;
        let geom = ConvGeom { c, h, w, kh: k[0], kw: k[1], sh: s[0], sw: s[1], ph: p[0], pw: p[1], dh: d[0], dw: d[1], oh, ow };
        Ok(Im2col { n, geom })
    }
}

impl Im2col {
    /// Number of input vectors (`N * OH * OW`).
    pub fn vectors(&self) -> usize {
        self.n * self.geom.cols()
    }

    /// Writes vectors `first .. first + count` (position order `(n, oh, ow)`) into `out`,
    /// row-major `count x (C*kh*kw)`.
    pub fn im2col(&self, x: &[f32], first: usize, count: usize, out: &mut [f32]) {
        im2row(&self.geom, x, first, count, out);
    }
}
