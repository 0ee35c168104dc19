//! `Hessian`: the input statistics `H = mean(x xᵀ)` of one linear map, and the sum of each
//! input (its column of the vectors added), so that the centred statistics `C = H − μ μᵀ` of a
//! consumer whose bias absorbs the mean can be taken from the same vectors ([`Hessian::centered`]).
//!
//! Accumulation ([`crate::kernels::syrk`]): the rows of each call go in chunks of [`CHUNK`]
//! counted from its first row; each chunk's products are summed in f32 and that sum is added to
//! an f64 sum, element by element, in upper-triangle tiles that stay in cache over all the rows
//! (the threads take whole tiles, so the bits do not depend on their number). Error bound: a
//! chunk entry sums at most `CHUNK` f32 products, so its error is at most
//! `(CHUNK + 1) u Σ|x_a x_b|` with `u = 2⁻²⁴`, and the f64 fold adds nothing that matters; hence
//! `|ΔH_ab| <= 65 · 2⁻²⁴ · sqrt(H_aa H_bb) ≈ 3.9e-6 · sqrt(H_aa H_bb)` (Cauchy-Schwarz), below
//! the conformance tolerance (`1e-5 · max diag H`). A chunk bounds the error, unlike an f32
//! running sum whose error grows with the number of vectors. A call whose row count is not a
//! multiple of `CHUNK` ends with a shorter chunk (its error is smaller): two calls give the sum of
//! one call within this bound, not bit for bit.

use super::conv::ConvGeometry;
use crate::bail;
use crate::core::alloc::try_alloc;
use crate::core::error::Result;
use crate::kernels::col_sums::add_col_sums;
use crate::kernels::syrk::{sym_sum, SymTiles};

/// Input vectors per f32 partial sum (the error bound above scales with it).
pub const CHUNK: usize = crate::kernels::syrk::CHUNK;

#[derive(Debug, Clone)]
pub struct Hessian {
    cols: usize,
    count: u64,
    /// Where each element of the upper triangle lies in `sum`.
    tiles: SymTiles,
    /// Σ x xᵀ, upper triangle, in the tiles of `tiles`.
    sum: Vec<f64>,
    /// Σ x per input, f64 (each f32 input added exactly, up to f64 rounding). For a Conv input the
    /// inputs are the im2col columns `(c, i, j)`: with zero padding their means are not channel
    /// c's mean, so they are summed here from the same vectors as `sum`.
    col_sum: Vec<f64>,
}

/// A centred input whose variance is at most this fraction of its mean square is constant to the
/// accumulation's precision: `H_jj`'s error bound is `(CHUNK + 1) · 2⁻²⁴ · H_jj ≈ 3.9e-6 · H_jj`
/// (the module comment), so below about twice that the difference `H_jj − μ_j²` is rounding.
const CONSTANT_TOL: f64 = 1e-5;

impl Hessian {
    /// An empty accumulator for `cols` inputs (`cols >= 1`).
    pub fn new(cols: usize) -> Result<Hessian> {
        if cols == 0 {
            bail!(InvalidArguments, "Hessian needs cols >= 1 (the number of inputs of the layer)");
        }
        let tiles = SymTiles::new(cols)?;
        Ok(Hessian { cols, count: 0, sum: sym_sum(&tiles)?, tiles, col_sum: try_alloc(cols, 0.0f64)? })
    }

    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Input vectors added so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Adds `n` input vectors, `x` row-major `n x cols`. Refuses (changing nothing) a length
    /// other than `n * cols` or a non-finite value.
    pub fn add_rows(&mut self, x: &[f32], n: usize) -> Result<()> {
        match n.checked_mul(self.cols) {
            Some(len) if len == x.len() => {}
            _ => bail!(ShapeMismatch, "Hessian.addRows: x has {} elements, expected n * cols = {n} * {}", x.len(), self.cols),
        }
        check_finite(x, "Hessian.addRows")?;
        if n > 0 {
            self.tiles.add_rows(x, &mut self.sum)?;
            add_col_sums(&mut self.col_sum, x);
        }
        self.count += n as u64;
        Ok(())
    }

    /// Adds one vector per output position of every image of an ONNX Conv (group 1) input
    /// `x` of shape `input_shape = [N, C, H, W]`, in the weight's `(c, i, j)` order. The im2col
    /// rows are built a bounded batch (a multiple of [`CHUNK`]) at a time, never all at once, so
    /// the chunks are those of one `add_rows` of all of them.
    pub fn add_conv(&mut self, x: &[f32], input_shape: &[i64], conv: &ConvGeometry) -> Result<()> {
        let g = conv.resolve(input_shape, x.len(), self.cols)?;
        check_finite(x, "Hessian.addConv")?;
        let total = g.vectors();
        let batch = self.tiles.batch_rows().min(total.div_ceil(CHUNK) * CHUNK);
        let mut rows = try_alloc(batch * self.cols, 0.0f32)?;
        let mut done = 0;
        while done < total {
            let k = batch.min(total - done);
            g.im2col(x, done, k, &mut rows[..k * self.cols]);
            self.tiles.add_rows(&rows[..k * self.cols], &mut self.sum)?;
            add_col_sums(&mut self.col_sum, &rows[..k * self.cols]);
            done += k;
        }
        self.count += total as u64;
        Ok(())
    }

    /// `mean(x xᵀ)` in f64, full symmetric `cols x cols` (all zeros while `count == 0`).
    pub fn matrix_f64(&self) -> Result<Vec<f64>> {
        let c = self.cols;
        let mut m = try_alloc(c * c, 0.0f64)?;
        if self.count == 0 {
            return Ok(m);
        }
        let inv = 1.0 / self.count as f64;
        for i in 0..c {
            for j in i..c {
                let v = self.sum[self.tiles.at(i, j)] * inv;
                m[i * c + j] = v;
                m[j * c + i] = v;
            }
        }
        Ok(m)
    }

    /// [`Self::matrix_f64`] rounded to f32 (what JS sees).
    pub fn matrix(&self) -> Result<Vec<f32>> {
        Ok(self.matrix_f64()?.into_iter().map(|v| v as f32).collect())
    }

    /// The mean of `x_j²` for every input j (the diagonal of the matrix), f64.
    pub fn diag_f64(&self) -> Vec<f64> {
        let c = self.cols;
        let inv = if self.count == 0 { 0.0 } else { 1.0 / self.count as f64 };
        (0..c).map(|j| self.sum[self.tiles.at(j, j)] * inv).collect()
    }

    /// `sqrt(diag(matrix()))`: the RMS of each input.
    pub fn input_norms(&self) -> Vec<f32> {
        self.diag_f64().into_iter().map(|d| d.sqrt() as f32).collect()
    }

    /// The mean of each input over the vectors added (zeros while `count == 0`), f64.
    pub fn means(&self) -> Vec<f64> {
        let inv = if self.count == 0 { 0.0 } else { 1.0 / self.count as f64 };
        self.col_sum.iter().map(|s| s * inv).collect()
    }

    /// The statistics of the same vectors minus their mean: `Σ (x − μ)(x − μ)ᵀ = Σ x xᵀ − n μ μᵀ`
    /// (same count; its means are 0). A consumer whose bias takes `(W − W')·μ` loses only
    /// `(W − W')(x − μ)`, so its least-squares compensation is over this matrix, not `H`
    /// (exact for an input that is constant). An input whose centred diagonal is rounding
    /// (`≤ CONSTANT_TOL · H_jj`) gets a zero row and column: constant, dead to the solver (which
    /// zeroes its weights; the bias shift then carries them). `self` is not changed.
    pub fn centered(&self) -> Result<Hessian> {
        let c = self.cols;
        let mut sum = try_alloc(self.sum.len(), 0.0f64)?;
        sum.copy_from_slice(&self.sum);
        let mut out = Hessian { cols: c, count: self.count, tiles: self.tiles.clone(), sum, col_sum: try_alloc(c, 0.0f64)? };
        if self.count == 0 {
            return Ok(out);
        }
        let inv = 1.0 / self.count as f64;
        let s = &self.col_sum;
        let constant: Vec<bool> = (0..c)
            .map(|j| {
                let h = self.sum[self.tiles.at(j, j)];
                h - s[j] * s[j] * inv <= CONSTANT_TOL * h
            })
            .collect();
        for i in 0..c {
            for j in i..c {
                let at = self.tiles.at(i, j);
                out.sum[at] = if constant[i] || constant[j] { 0.0 } else { self.sum[at] - s[i] * s[j] * inv };
            }
        }
        Ok(out)
    }
}

/// Adds each column of `x` (row-major, `col_sum.len()` columns) to `col_sum`, in f64.
/// `invalid_value` at the first NaN or infinity.
fn check_finite(x: &[f32], what: &str) -> Result<()> {
    if let Some(i) = x.iter().position(|v| !v.is_finite()) {
        bail!(InvalidValue, "{what}: input element {i} is {} (calibration inputs must be finite)", x[i]);
    }
    Ok(())
}
