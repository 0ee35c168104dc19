//! A k×k convolution on one (image, group) as im2col + GEMM, a band of input channels at a time.
//!
//! Unfolding a whole image first makes a column matrix of `c * kh * kw` rows of `oh * ow`: 3.4 MB
//! for a 3×3 layer of 96 channels at 32×32, written by im2col and then read by the GEMM once per
//! 4-row tile of the weights (6 times for 24 output channels) out of the last-level cache; the
//! input gradient's column matrix (written by a GEMM of depth `co`, then scattered by col2im) is
//! as large. Here the columns of a few input channels at a time ([`band_channels`], about
//! [`BAND_FLOATS`] floats) are unfolded, multiplied and dropped while they are still in L2.
//!
//! The bits are those of the whole-matrix path (tests/train_conv_band.rs): a forward output sums
//! `w_r * col_r` over the rows `r` in order in chunks of [`forward_chunk`] rows (a few input
//! channels), each chunk from zero and added to the output in order, which is what `gemm_acc`
//! with that `kc` does over the whole depth; the bands are whole chunks, accumulated one after
//! another into the same output. Why chunks: one running f32 sum over every row (864 products
//! for a 3×3 layer of 96 channels) carries an error that grows with the depth, and it was the
//! largest part of the distance between our PaddleOCR det logits and float64 (bench/RESULTS.md,
//! issue 38); onnxruntime's NCHWc convolutions likewise sum a block of input channels before
//! adding it to the output (MLAS, onnxruntime/core/mlas/lib/snchwc.cpp, the kernels'
//! accumulate-output flag). An input-gradient column row is the same
//! GEMM of depth `co` from zero, and col2im scatters the rows in increasing order either way; a
//! weight-gradient element belongs to one row, so the bands partition its sums without
//! reordering them. SIMD128 and scalar builds agree because `gemm` does.

use super::gemm::{gemm_acc, Gemm, SUM_CHUNK};
use super::im2col::{col2im_acc, im2col, transpose, ConvGeom};

/// Column floats per band: 128 KiB, a quarter of a core's L2 on the machines we measure, so
/// that a band, the output rows it feeds and the weights stay resident together.
pub const BAND_FLOATS: usize = 32 * 1024;

/// Input channels per band: as many as fit in [`BAND_FLOATS`], rounded down to a count whose
/// rows are a multiple of 4 (the GEMM's register tile height for the input gradient), at least
/// one such unit; all channels when the column matrix is the image itself (nothing to unfold).
pub fn band_channels(g: &ConvGeom) -> usize {
    if g.is_identity() || g.c == 0 {
        return g.c.max(1);
    }
    let kk = g.kh * g.kw;
    let unit = match kk % 4 {
        0 => 1,
        2 => 2,
        _ => 4,
    };
    let fit = BAND_FLOATS / (kk * g.cols()).max(1);
    (fit / unit * unit).max(unit).min(g.c)
}

/// Rows per chunk of the forward's sums: the rows of a power-of-two count of input channels, the
/// most whose rows stay within 1.5 × [`CHUNK_ROWS`] (at least one channel's), cut to a divisor of
/// a band's channel count so that every band is whole chunks and the bits do not depend on
/// where bands fall. A chunk of one row would be the running sum (`0 + p` is exact).
pub fn forward_chunk(g: &ConvGeom) -> usize {
    let kk = (g.kh * g.kw).max(1);
    let mut want = 1;
    while 2 * want * kk <= CHUNK_ROWS * 3 / 2 {
        want *= 2;
    }
    let (mut a, mut b) = (band_channels(g), want);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a * kk
}

/// The forward's chunk length target: near the square root of the deepest sums (a few hundred
/// to a few thousand rows), which balances the error inside the chunks and across them.
pub const CHUNK_ROWS: usize = 32;

/// The columns of channels `c0 .. c0 + nc` of image `x`: the image rows themselves when the
/// geometry is the identity, else unfolded into `col`.
fn band<'a>(g: &ConvGeom, x: &'a [f32], c0: usize, nc: usize, col: &'a mut [f32]) -> &'a [f32] {
    let (hw, rows) = (g.h * g.w, nc * g.kh * g.kw);
    if g.is_identity() {
        return &x[c0 * hw..][..nc * hw];
    }
    im2col(&ConvGeom { c: nc, ..*g }, &x[c0 * hw..], &mut col[..rows * g.cols()]);
    &col[..rows * g.cols()]
}

fn check(g: &ConvGeom, co: usize, w: usize, x: usize, y: usize) {
    assert!(w >= co * g.rows(), "conv_band: weights too short");
    assert!(x >= g.c * g.h * g.w, "conv_band: image too short");
    assert!(y >= co * g.cols(), "conv_band: output too short");
}

/// `y += W · im2col(x)`: `w` is `co x (c kh kw)`, `x` one group's `c x h x w` image, `y` its
/// `co x oh ow` output (holding the bias or zeros on entry).
pub fn forward(g: &ConvGeom, co: usize, w: &[f32], x: &[f32], y: &mut [f32]) {
    check(g, co, w.len(), x.len(), y.len());
    let (kk, ckk, ohw, cb, kc) = (g.kh * g.kw, g.rows(), g.cols(), band_channels(g), forward_chunk(g));
    let mut col = vec![0.0; if g.is_identity() { 0 } else { cb * kk * ohw }];
    for c0 in (0..g.c).step_by(cb) {
        let nc = cb.min(g.c - c0);
        let cols = band(g, x, c0, nc, &mut col);
        let gemm = Gemm { m: co, n: ohw, k: nc * kk, a_rs: ckk, a_ks: 1, ldb: ohw, ldc: ohw, upper: false, kc };
        gemm_acc(&gemm, &w[c0 * kk..], cols, y);
    }
}

/// `dx += col2im(Wᵀ · dy)`: `dy` is the group's `co x oh ow` output gradient, `dx` its
/// `c x h x w` input gradient.
pub fn input_grad(g: &ConvGeom, co: usize, w: &[f32], dy: &[f32], dx: &mut [f32]) {
    check(g, co, w.len(), dx.len(), dy.len());
    let (kk, ckk, ohw, hw) = (g.kh * g.kw, g.rows(), g.cols(), g.h * g.w);
    if g.is_identity() {
        let gemm = Gemm { m: ckk, n: ohw, k: co, a_rs: 1, a_ks: ckk, ldb: ohw, ldc: ohw, upper: false, kc: 0 };
        return gemm_acc(&gemm, w, dy, dx);
    }
    let cb = band_channels(g);
    let mut dcol = vec![0.0; cb * kk * ohw];
    for c0 in (0..g.c).step_by(cb) {
        let nc = cb.min(g.c - c0);
        let rows = nc * kk;
        let dcol = &mut dcol[..rows * ohw];
        dcol.fill(0.0);
        let gemm = Gemm { m: rows, n: ohw, k: co, a_rs: 1, a_ks: ckk, ldb: ohw, ldc: ohw, upper: false, kc: 0 };
        gemm_acc(&gemm, &w[c0 * kk..], dy, dcol);
        col2im_acc(&ConvGeom { c: nc, ..*g }, dcol, &mut dx[c0 * hw..]);
    }
}

/// The weight gradient of one group, `dw += Σ_images dy · im2col(x)ᵀ`, images in order.
///
/// With fewer output channels than column rows (a k×k kernel) it is formed transposed,
/// `dwᵀ += col · dyᵀ`, so the per-image transpose is of `dy` rather than of the columns; the
/// products and their order per element are the same either way.
pub struct WeightGrad {
    g: ConvGeom,
    co: usize,
    cb: usize,
    dy_side: bool,
    col: Vec<f32>,
    t: Vec<f32>,
    /// `dwᵀ` (`c kh kw x co`) when `dy_side`.
    dwt: Vec<f32>,
}

impl WeightGrad {
    pub fn new(g: &ConvGeom, co: usize) -> WeightGrad {
        let (ckk, ohw, cb) = (g.rows(), g.cols(), band_channels(g));
        let dy_side = co < ckk;
        let band_len = cb * g.kh * g.kw * ohw;
        WeightGrad {
            g: *g,
            co,
            cb,
            dy_side,
            col: vec![0.0; if g.is_identity() { 0 } else { band_len }],
            t: vec![0.0; if dy_side { co * ohw } else { band_len }],
            dwt: vec![0.0; if dy_side { co * ckk } else { 0 }],
        }
    }

    /// Adds one image's products: `x` its `c x h x w` input, `dy` its `co x oh ow` output
    /// gradient; `dw` (`co x c kh kw`) is written only when not `dy_side` (see [`Self::finish`]).
    pub fn add(&mut self, x: &[f32], dy: &[f32], dw: &mut [f32]) {
        let (g, co) = (self.g, self.co);
        check(&g, co, dw.len(), x.len(), dy.len());
        let (kk, ckk, ohw) = (g.kh * g.kw, g.rows(), g.cols());
        if self.dy_side {
            transpose(dy, co, ohw, &mut self.t);
        }
        for c0 in (0..g.c).step_by(self.cb) {
            let nc = self.cb.min(g.c - c0);
            let rows = nc * kk;
            let cols = band(&g, x, c0, nc, &mut self.col);
            if self.dy_side {
                let gemm = Gemm { m: rows, n: co, k: ohw, a_rs: ohw, a_ks: 1, ldb: co, ldc: co, upper: false, kc: SUM_CHUNK };
                gemm_acc(&gemm, cols, &self.t, &mut self.dwt[c0 * kk * co..]);
            } else {
                transpose(cols, rows, ohw, &mut self.t);
                let gemm = Gemm { m: co, n: rows, k: ohw, a_rs: ohw, a_ks: 1, ldb: rows, ldc: ckk, upper: false, kc: SUM_CHUNK };
                gemm_acc(&gemm, dy, &self.t, &mut dw[c0 * kk..]);
            }
        }
    }

    /// Writes `dw` from the transposed sums (a no-op when they were added to `dw` directly).
    pub fn finish(&self, dw: &mut [f32]) {
        if self.dy_side {
            transpose(&self.dwt, self.g.rows(), self.co, dw);
        }
    }
}
