//! Convolution as GEMM: the unfolding of an image into patch columns (`im2col`), its adjoint
//! (`col2im`, the scatter-add of the input gradient) and a blocked 2-D transpose.
//!
//! These are data movement plus, in `col2im`, one add per element in a fixed order (kernel
//! offsets outer, output pixels inner), so they have no separate SIMD path: the arithmetic of a
//! convolution is in [`super::gemm`], whose SIMD128 and scalar paths agree bit for bit, and so a
//! convolution built from these and `gemm` has the same bits in every build.

/// The geometry of one group of a 2-D convolution on one image: `c` input channels of
/// `h x w`, a `kh x kw` kernel with strides, leading pads and dilations, and the output size
/// `oh x ow` (the caller computes it from the trailing pads too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvGeom {
    pub c: usize,
    pub h: usize,
    pub w: usize,
    pub kh: usize,
    pub kw: usize,
    pub sh: usize,
    pub sw: usize,
    pub ph: usize,
    pub pw: usize,
    pub dh: usize,
    pub dw: usize,
    pub oh: usize,
    pub ow: usize,
}

impl ConvGeom {
    /// Rows of the column matrix: `c * kh * kw`.
    pub fn rows(&self) -> usize {
        self.c * self.kh * self.kw
    }
    /// Columns of the column matrix: `oh * ow`.
    pub fn cols(&self) -> usize {
        self.oh * self.ow
    }
    /// True when the column matrix is the image itself (1x1, stride 1, no pad).
    pub fn is_identity(&self) -> bool {
        self.kh == 1
            && self.kw == 1
            && self.sh == 1
            && self.sw == 1
            && self.ph == 0
            && self.pw == 0
            && self.oh == self.h
            && self.ow == self.w
    }

    /// The range of output positions `o` (of `n` along one axis) whose input index
    /// `o * s + off - p` lies in `0..len`, for kernel offset `off = k * d`.
    #[inline]
    fn valid(n: usize, s: usize, off: usize, p: usize, len: usize) -> (usize, usize) {
        // o*s + off >= p  <=>  o >= ceil((p - off) / s)
        let lo = if off >= p { 0 } else { (p - off).div_ceil(s) };
        // o*s + off - p < len  <=>  o*s < len + p - off
        let hi = if len + p <= off { 0 } else { (len + p - off).div_ceil(s) };
        (lo.min(n), hi.min(n).max(lo.min(n)))
    }

    fn check(&self, x: usize, col: usize) {
        assert!(x >= self.c * self.h * self.w, "im2col: image too short");
        assert!(col >= self.rows() * self.cols(), "im2col: columns too short");
    }
}

/// `col[(ci kh + i) kw + j][oy ow + ox] = x[ci][oy sh + i dh - ph][ox sw + j dw - pw]`, zero
/// where that falls in the padding.
pub fn im2col(g: &ConvGeom, x: &[f32], col: &mut [f32]) {
    g.check(x.len(), col.len());
    let (hw, ohw) = (g.h * g.w, g.cols());
    for ci in 0..g.c {
        let img = &x[ci * hw..(ci + 1) * hw];
        for i in 0..g.kh {
            let (y0, y1) = ConvGeom::valid(g.oh, g.sh, i * g.dh, g.ph, g.h);
            for j in 0..g.kw {
                let (x0, x1) = ConvGeom::valid(g.ow, g.sw, j * g.dw, g.pw, g.w);
                let r = (ci * g.kh + i) * g.kw + j;
                let dst = &mut col[r * ohw..(r + 1) * ohw];
                dst[..y0 * g.ow].fill(0.0);
                dst[y1 * g.ow..].fill(0.0);
                for oy in y0..y1 {
                    let iy = oy * g.sh + i * g.dh - g.ph;
                    let row = &mut dst[oy * g.ow..(oy + 1) * g.ow];
                    row[..x0].fill(0.0);
                    row[x1..].fill(0.0);
                    let src = &img[iy * g.w..(iy + 1) * g.w];
                    if g.sw == 1 {
                        let ix0 = x0 + j * g.dw - g.pw;
                        row[x0..x1].copy_from_slice(&src[ix0..ix0 + (x1 - x0)]);
                    } else {
                        for (ox, v) in row[x0..x1].iter_mut().enumerate() {
                            *v = src[(ox + x0) * g.sw + j * g.dw - g.pw];
                        }
                    }
                }
            }
        }
    }
}

/// The input vectors of a batch of `n` images, one row per output position: row `v - first`
/// (for `v = first .. first + count`, positions in the order `(n, oy, ox)`) holds
/// `x[n][ci][oy sh + i dh - ph][ox sw + j dw - pw]` in the order `(ci, i, j)` of a Conv weight's
/// columns, zero where that falls in the padding: [`im2col`]'s matrix transposed and spanning
/// images, the layout a Hessian of the Conv's inputs reads.
pub fn im2row(g: &ConvGeom, x: &[f32], first: usize, count: usize, out: &mut [f32]) {
    let (cols, ohw, chw) = (g.rows(), g.cols(), g.c * g.h * g.w);
    assert!(out.len() >= count * cols, "im2row: rows too short");
    for (v, row) in (first..first + count).zip(out.chunks_exact_mut(cols)) {
        let (n, pos) = (v / ohw, v % ohw);
        let (oy, ox) = (pos / g.ow, pos % g.ow);
        let image = &x[n * chw..(n + 1) * chw];
        let mut o = 0;
        for ci in 0..g.c {
            let img = &image[ci * g.h * g.w..][..g.h * g.w];
            for i in 0..g.kh {
                let y = (oy * g.sh + i * g.dh).wrapping_sub(g.ph);
                for j in 0..g.kw {
                    let xx = (ox * g.sw + j * g.dw).wrapping_sub(g.pw);
                    row[o] = if y < g.h && xx < g.w { img[y * g.w + xx] } else { 0.0 };
                    o += 1;
                }
            }
        }
    }
}

/// The adjoint of [`im2col`]: `dx[ci][iy][ix] += col[..]` for every column entry that
/// [`im2col`] read from there, in the order kernel row, kernel column, output pixel.
pub fn col2im_acc(g: &ConvGeom, col: &[f32], dx: &mut [f32]) {
    g.check(dx.len(), col.len());
    let (hw, ohw) = (g.h * g.w, g.cols());
    for ci in 0..g.c {
        let img = &mut dx[ci * hw..(ci + 1) * hw];
        for i in 0..g.kh {
            let (y0, y1) = ConvGeom::valid(g.oh, g.sh, i * g.dh, g.ph, g.h);
            for j in 0..g.kw {
                let (x0, x1) = ConvGeom::valid(g.ow, g.sw, j * g.dw, g.pw, g.w);
                let r = (ci * g.kh + i) * g.kw + j;
                let src = &col[r * ohw..(r + 1) * ohw];
                for oy in y0..y1 {
                    let iy = oy * g.sh + i * g.dh - g.ph;
                    let row = &src[oy * g.ow..(oy + 1) * g.ow];
                    let dst = &mut img[iy * g.w..(iy + 1) * g.w];
                    if g.sw == 1 {
                        // one add per element either way; as slices the loop vectorizes
                        let ix0 = x0 + j * g.dw - g.pw;
                        dst[ix0..ix0 + (x1 - x0)].iter_mut().zip(&row[x0..x1]).for_each(|(d, &v)| *d += v);
                    } else {
                        for ox in x0..x1 {
                            dst[ox * g.sw + j * g.dw - g.pw] += row[ox];
                        }
                    }
                }
            }
        }
    }
}

/// `dst[j][i] = src[i][j]` for a `rows x cols` row-major `src`, in 32 x 32 tiles.
pub fn transpose(src: &[f32], rows: usize, cols: usize, dst: &mut [f32]) {
    assert!(src.len() >= rows * cols && dst.len() >= rows * cols, "transpose: buffers too short");
    const T: usize = 32;
    for i0 in (0..rows).step_by(T) {
        for j0 in (0..cols).step_by(T) {
            for i in i0..(i0 + T).min(rows) {
                for j in j0..(j0 + T).min(cols) {
                    dst[j * rows + i] = src[i * cols + j];
                }
            }
        }
    }
}
