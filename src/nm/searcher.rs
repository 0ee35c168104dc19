//! `MagnitudeSearcher` (after NVIDIA ASP's, docs/API.md): computes ASP masks for a set of weights and applies them.
//!
//! All masks are computed before any weight is written, so a failing tensor (bad shape or
//! pattern) leaves every weight unchanged.

use super::asp::{create_asp_mask, AspPattern};
use crate::core::error::{Error, Result};

/// One weight to prune: its data (row-major) and shape. Conv weights `(K, C, R[, S])` are
/// grouped along the input channels `C`, as in [`create_asp_mask`].
pub struct Tensor<'a> {
    pub data: &'a mut [f32],
    pub shape: &'a [usize],
}

/// Magnitude-based N:M searcher for one pattern (`m{M}n{N}_1d`, `m4n2_2d_greedy`,
/// `m4n2_2d_best`; default `m4n2_1d`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MagnitudeSearcher {
    pattern: String,
}

impl Default for MagnitudeSearcher {
    fn default() -> Self {
        MagnitudeSearcher { pattern: "m4n2_1d".to_owned() }
    }
}

impl MagnitudeSearcher {
    /// Errors: a pattern `create_asp_mask` does not know -> `UnsupportedPattern`; an m:n with
    /// `n > m` or `m < 1` -> `InvalidNmPattern`.
    pub fn new(pattern: &str) -> Result<Self> {
        // Refuse an impossible m:n (e.g. 'm3n9_1d') now, not at the first mask.
        if let AspPattern::OneD { m, n } = AspPattern::parse(pattern)? {
            super::pattern::check_nm(m, n)?;
        }
        Ok(MagnitudeSearcher { pattern: pattern.to_owned() })
    }

    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Keep-masks of `tensors` (each in its tensor's layout), without changing them.
    /// `progress(done, total)` is called after each tensor.
    ///
    /// Errors: those of [`create_asp_mask`], with the tensor index in the message.
    pub fn compute_masks(&self, tensors: &[(&[f32], &[usize])], progress: &mut dyn FnMut(usize, usize)) -> Result<Vec<Vec<u8>>> {
        let total = tensors.len();
        let mut masks = Vec::with_capacity(total);
        for (i, (data, shape)) in tensors.iter().enumerate() {
            let mask =
                create_asp_mask(data, shape, &self.pattern).map_err(|e| Error::new(e.kind(), format!("tensor {i}: {}", e.message())))?;
            masks.push(mask);
            progress(i + 1, total);
        }
        Ok(masks)
    }

    /// Computes the masks of all `tensors`, then multiplies each weight by its mask in place
    /// (masks multiply, docs/API.md: a pruned `-x` becomes `-0.0`, a pruned NaN stays NaN). Returns the masks.
    /// `progress(done, total)` counts mask computations.
    pub fn apply(&self, tensors: &mut [Tensor<'_>], progress: &mut dyn FnMut(usize, usize)) -> Result<Vec<Vec<u8>>> {
        let views: Vec<(&[f32], &[usize])> = tensors.iter().map(|t| (&*t.data, t.shape)).collect();
        let masks = self.compute_masks(&views, progress)?;
        for (t, mask) in tensors.iter_mut().zip(&masks) {
            apply_mask(t.data, mask);
        }
        Ok(masks)
    }
}

/// Multiplies a weight by its keep-mask in place: masks multiply (docs/API.md; a pruned `-x` becomes
/// `-0.0`, a pruned NaN stays NaN).
pub fn apply_mask(data: &mut [f32], keep: &[u8]) {
    for (x, &k) in data.iter_mut().zip(keep) {
        *x *= f32::from(k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::error::ErrorKind;

    #[test]
    fn applies_all_or_nothing() {
        let mut a = vec![1.0, -2.0, 3.0, -4.0];
        let mut b = vec![1.0f32; 6];
        let s = MagnitudeSearcher::default();
        let mut calls = Vec::new();
        {
            let mut ts = [Tensor { data: &mut a, shape: &[1, 4] }, Tensor { data: &mut b, shape: &[2, 3] }];
            let err = s.apply(&mut ts, &mut |d, t| calls.push((d, t))).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidNmShape);
        }
        assert_eq!(a, vec![1.0, -2.0, 3.0, -4.0]);
        assert_eq!(calls, vec![(1, 2)]);
        let masks = s.apply(&mut [Tensor { data: &mut a, shape: &[4] }], &mut |_, _| {}).unwrap();
        assert_eq!(masks, vec![vec![0, 0, 1, 1]]);
        assert_eq!(a[..2], [0.0, -0.0]);
        assert!(a[1].is_sign_negative());
        assert_eq!(a[2..], [3.0, -4.0]);
        assert_eq!(MagnitudeSearcher::new("m3n9_1d").unwrap_err().kind(), ErrorKind::InvalidNmPattern);
        assert_eq!(MagnitudeSearcher::new("m0n0_1d").unwrap_err().kind(), ErrorKind::InvalidNmPattern);
        assert_eq!(MagnitudeSearcher::new("2:4").unwrap_err().kind(), ErrorKind::UnsupportedPattern);
    }
}
