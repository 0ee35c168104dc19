//! Losses of distillation, one per output: the student's output `y` against the teacher's `t`.
//!
//! - `Mse`: `mean((y - t)²)`, for any output (logits, features, regressions);
//! - `Kl { axis }`: for probability outputs (a Softmax along `axis`): the mean over the other
//!   axes of `KL(t ‖ y) = Σ t log(t / y)` along `axis` — 0 when equal. Its gradient, `-t / y`
//!   per row, is soft cross-entropy's; through the Softmax it becomes `y - t` (cancelling `y`);
//! - `Bce`: element-wise binary cross-entropy against the teacher's probabilities, for
//!   Sigmoid maps (PaddleOCR det): `mean(-t log y - (1 - t) log(1 - y))` (its minimum is the
//!   teacher's entropy, not 0). Through the Sigmoid its gradient becomes `(y - t) / n`;
//! - `Cosine`: for embeddings, `mean(1 - cos(y, t))` over the rows of the last axis: what a
//!   sentence embedding is used for (cosine neighbours) is blind to its norm, which the MSE would
//!   spend its gradient on (the loss of sentence-transformers' distillation recipes, Reimers &
//!   Gurevych 2020, with the cosine in place of their MSE for the same reason).
//!
//! Sums in f64. A probability loss refuses a value outside [0, 1] (the output is then not a
//! probability: wrong kind for that output) with `invalid_value` instead of returning NaN.

use super::tensor::Tensor;
use crate::core::error::{Error, ErrorKind, Result};

/// Student probabilities are clamped here before the logarithm and the division: a Softmax
/// that underflows to 0 gives a finite gradient, which its backward multiplies by 0 again.
const P_MIN: f64 = 1e-30;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LossKind {
    Mse,
    Kl { axis: i64 },
    Bce,
    Cosine,
}

/// The loss of one output and its weight in the sum (0: the output is not in the loss).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LossSpec {
    pub kind: LossKind,
    pub weight: f32,
}

impl Default for LossSpec {
    fn default() -> Self {
        LossSpec { kind: LossKind::Mse, weight: 1.0 }
    }
}

impl LossSpec {
    /// `kind` is `"mse"`, `"kl"` or `"bce"`; `axis` (kl only, default -1); `weight` >= 0.
    pub fn parse(kind: &str, axis: Option<i64>, weight: Option<f64>) -> Result<LossSpec> {
        let kind = match kind {
            "mse" => LossKind::Mse,
            "kl" => LossKind::Kl { axis: axis.unwrap_or(-1) },
            "bce" => LossKind::Bce,
            "cosine" => LossKind::Cosine,
            other => return Err(Error::new(ErrorKind::InvalidArguments, format!("loss `{other}`: expected mse, kl, bce or cosine"))),
        };
        if axis.is_some() && !matches!(kind, LossKind::Kl { .. }) {
            return Err(Error::new(ErrorKind::InvalidArguments, "loss: `axis` applies to kl only"));
        }
        let weight = weight.unwrap_or(1.0);
        if !(weight.is_finite() && weight >= 0.0) {
            return Err(Error::new(ErrorKind::InvalidValue, format!("loss weight must be finite and >= 0, got {weight}")));
        }
        Ok(LossSpec { kind, weight: weight as f32 })
    }

    /// The weighted loss and its gradient w.r.t. `y` (`None` when the weight is 0).
    pub fn eval(&self, y: &Tensor, t: &Tensor) -> Result<(f64, Option<Tensor>)> {
        if y.shape != t.shape {
            return Err(Error::shape_mismatch("loss target", &y.shape, &t.shape));
        }
        if self.weight == 0.0 {
            return Ok((0.0, None));
        }
        let (l, mut g) = match self.kind {
            LossKind::Mse => mse(y, t)?,
            LossKind::Kl { axis } => kl(y, t, axis)?,
            LossKind::Bce => bce(y, t)?,
            LossKind::Cosine => cosine(y, t)?,
        };
        if self.weight != 1.0 {
            g.data.iter_mut().for_each(|x| *x *= self.weight);
        }
        Ok((l * self.weight as f64, Some(g)))
    }
}

/// `mean((y - t)²)` and its gradient `2 (y - t) / n`, accumulated in f64.
pub fn mse(y: &Tensor, t: &Tensor) -> Result<(f64, Tensor)> {
    if y.shape != t.shape {
        return Err(Error::shape_mismatch("mse target", &y.shape, &t.shape));
    }
    let n = y.len().max(1) as f64;
    let mut sum = 0.0f64;
    let mut g = Tensor::zeros(&y.shape)?;
    for i in 0..y.len() {
        let d = y.data[i] - t.data[i];
        sum += (d as f64) * (d as f64);
        g.data[i] = (2.0 * d as f64 / n) as f32;
    }
    Ok((sum / n, g))
}

/// How far outside [0, 1] a probability may be and still be read as one: onnxruntime's Sigmoid is
/// an approximation that returns 1.0000001 for large logits, and a teacher's map of such values is a
/// map of probabilities all the same.
const PROBABILITY_SLACK: f32 = 1e-5;

fn probability(v: f32, who: &str, i: usize, loss: &str) -> Result<f64> {
    if (-PROBABILITY_SLACK..=1.0 + PROBABILITY_SLACK).contains(&v) {
        Ok(v.clamp(0.0, 1.0) as f64)
    } else {
        Err(Error::new(
            ErrorKind::InvalidValue,
            format!("{loss} loss needs probabilities: the {who} has {v} at element {i} (use mse for that output)"),
        ))
    }
}

/// KL(t ‖ y) along `axis`, averaged over the other axes' positions.
pub fn kl(y: &Tensor, t: &Tensor, axis: i64) -> Result<(f64, Tensor)> {
    let r = y.rank() as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if r == 0 || !(0..r).contains(&a) {
        return Err(Error::new(ErrorKind::InvalidArguments, format!("kl loss: axis {axis} is outside a {r}-D output")));
    }
    let d = y.shape[a as usize];
    let rows = (y.len() / d.max(1)).max(1) as f64;
    let mut g = Tensor::zeros(&y.shape)?;
    let mut sum = 0.0f64;
    for i in 0..y.len() {
        let p = probability(y.data[i], "student output", i, "kl")?.max(P_MIN);
        let q = probability(t.data[i], "target", i, "kl")?;
        if q > 0.0 {
            sum += q * (q.ln() - p.ln());
        }
        g.data[i] = (-q / p / rows) as f32;
    }
    Ok((sum / rows, g))
}

/// Norms below this count as zero: such a row has no direction, its cosine is taken as 0 and the
/// gradient pulls it along the target's direction.
const NORM_MIN: f64 = 1e-12;

/// `mean(1 - cos(y, t))` over the rows along the last axis, with the gradient
/// `-(t / (|y||t|) - cos · y / |y|²) / rows`. A target row of zero norm is left out (no direction
/// to match): it adds neither loss nor gradient.
pub fn cosine(y: &Tensor, t: &Tensor) -> Result<(f64, Tensor)> {
    if y.shape != t.shape {
        return Err(Error::shape_mismatch("cosine target", &y.shape, &t.shape));
    }
    let d = *y.shape.last().unwrap_or(&1);
    let mut g = Tensor::zeros(&y.shape)?;
    if d == 0 || y.is_empty() {
        return Ok((0.0, g));
    }
    let rows = y.len() / d;
    let mut sum = 0.0f64;
    let mut counted = 0usize;
    let mut grads: Vec<(usize, f64, f64, f64)> = Vec::with_capacity(rows);
    for r in 0..rows {
        let (ys, ts) = (&y.data[r * d..(r + 1) * d], &t.data[r * d..(r + 1) * d]);
        let (mut yy, mut tt, mut yt) = (0.0f64, 0.0f64, 0.0f64);
        for (&a, &b) in ys.iter().zip(ts) {
            let (a, b) = (a as f64, b as f64);
            yy += a * a;
            tt += b * b;
            yt += a * b;
        }
        if !(yy.is_finite() && tt.is_finite() && yt.is_finite()) {
            return Err(Error::new(ErrorKind::InvalidValue, format!("cosine loss: row {r} is not finite")));
        }
        let nt = tt.sqrt();
        if nt < NORM_MIN {
            continue;
        }
        let ny = yy.sqrt().max(NORM_MIN);
        let c = yt / (ny * nt);
        sum += 1.0 - c;
        counted += 1;
        grads.push((r, ny, nt, c));
    }
    let n = counted.max(1) as f64;
    for (r, ny, nt, c) in grads {
        for i in r * d..(r + 1) * d {
            let dc = t.data[i] as f64 / (ny * nt) - c * y.data[i] as f64 / (ny * ny);
            g.data[i] = (-dc / n) as f32;
        }
    }
    Ok((sum / n, g))
}

/// Mean binary cross-entropy of `y` against the probabilities `t`.
pub fn bce(y: &Tensor, t: &Tensor) -> Result<(f64, Tensor)> {
    let n = y.len().max(1) as f64;
    let mut g = Tensor::zeros(&y.shape)?;
    let mut sum = 0.0f64;
    for i in 0..y.len() {
        let p = probability(y.data[i], "student output", i, "bce")?;
        let q = probability(t.data[i], "target", i, "bce")?;
        let (p1, p0) = (p.max(P_MIN), (1.0 - p).max(P_MIN));
        sum -= q * p1.ln() + (1.0 - q) * p0.ln();
        // d/dp = (p - q) / (p (1 - p)), written as the two terms so a saturated p stays finite
        g.data[i] = ((-q / p1 + (1.0 - q) / p0) / n) as f32;
    }
    Ok((sum / n, g))
}
