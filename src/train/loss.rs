//! Losses of distillation: mean squared error between a student output and the teacher's.

use super::tensor::Tensor;
use crate::core::error::{Error, Result};

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
