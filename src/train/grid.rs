//! A parameter held on a quantization grid while it trains (quantization-aware training with the
//! straight-through estimator: Bengio et al. 2013, arXiv:1308.3432; Jacob et al. 2018,
//! arXiv:1712.05877). The forward and backward passes see the quantized values
//! `clamp(round(master / scale), lo, hi) · scale`; Adam updates the float `master` with the
//! gradient taken at those values, as if the rounding were the identity. Without the master, a
//! step smaller than half a grid step would be rounded away and the weight could never move.
//!
//! The grid is given per element (`scale[i]`, codes in `[lo, hi]`), so one type serves every layout
//! the writer has — per output channel, per block of G inputs, transposed MatMul weights — without
//! the core knowing any of them: the caller lays the scales out as the parameter is.

use crate::core::error::{Error, ErrorKind, Result};

pub struct HeldGrid {
    /// The float values Adam updates.
    pub master: Vec<f32>,
    scale: Vec<f32>,
    lo: f32,
    hi: f32,
}

impl HeldGrid {
    /// Holds `w` on the grid: its values become the master, `w` their quantized values.
    /// Scales must be finite and nonzero (negative is a grid too: onnxruntime's 4-bit grid puts a
    /// block's positive extreme on code -8), codes `lo < hi`, integers.
    pub fn hold(w: &mut [f32], scale: Vec<f32>, lo: f32, hi: f32) -> Result<HeldGrid> {
        if scale.len() != w.len() {
            return Err(Error::new(ErrorKind::ShapeMismatch, format!("grid: {} scales for {} weights", scale.len(), w.len())));
        }
        if !(lo.is_finite() && hi.is_finite() && lo < hi && lo.fract() == 0.0 && hi.fract() == 0.0) {
            return Err(Error::new(ErrorKind::InvalidValue, format!("grid: codes [{lo}, {hi}] are not an integer range")));
        }
        if let Some(at) = scale.iter().position(|s| !s.is_finite() || *s == 0.0) {
            return Err(Error::new(
                ErrorKind::InvalidValue,
                format!("grid: scale {} at element {at} is not finite and nonzero", scale[at]),
            ));
        }
        let grid = HeldGrid { master: w.to_vec(), scale, lo, hi };
        grid.project(w);
        Ok(grid)
    }

    /// The grid's value nearest to `x` for element `i`.
    #[inline]
    pub fn quantize(&self, i: usize, x: f32) -> f32 {
        let s = self.scale[i];
        // + 0.0: code 0 under a negative scale is +0, as the writer's dequantization gives.
        (x / s).round().clamp(self.lo, self.hi) * s + 0.0
    }

    /// Writes the master's quantized values into `w`.
    pub fn project(&self, w: &mut [f32]) {
        for (i, (wi, &m)) in w.iter_mut().zip(&self.master).enumerate() {
            *wi = self.quantize(i, m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_values_on_the_grid_and_checks_it() {
        let mut w = vec![0.26, -0.74, 0.0, 9.0];
        let g = HeldGrid::hold(&mut w, vec![0.5, 0.5, 0.5, -0.25], -8.0, 7.0).unwrap();
        // 0.26 → code 1 (0.5); -0.74 → -1 (-0.5); 9 / -0.25 = -36 → -8 → 2.0
        assert_eq!(w, vec![0.5, -0.5, 0.0, 2.0]);
        assert_eq!(g.master, vec![0.26, -0.74, 0.0, 9.0]);
        assert!(HeldGrid::hold(&mut w, vec![0.5; 3], -8.0, 7.0).is_err());
        assert!(HeldGrid::hold(&mut w, vec![0.0, 0.5, 0.5, 0.5], -8.0, 7.0).is_err());
        assert!(HeldGrid::hold(&mut w, vec![0.5; 4], 7.0, -8.0).is_err());
        assert!(HeldGrid::hold(&mut w, vec![0.5; 4], -8.5, 7.0).is_err());
    }
}
