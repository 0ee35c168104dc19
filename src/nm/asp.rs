//! NVIDIA ASP's tensor layouts: which axis N:M groups run along for 1-D to 4-D weights, and
//! `create_asp_mask` over them.

use super::one_d::mn_1d_best;
use super::pattern::get_nmprune_info;
use super::two_d;
use crate::bail;
use crate::core::alloc::try_alloc;
use crate::core::error::{Error, Result};

/// The patterns `create_asp_mask` understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AspPattern {
    /// `m{M}n{N}_1d`: keep `n` of every `m` along the grouped dimension.
    OneD { m: usize, n: usize },
    /// `m4n2_2d_greedy`: transposable 2:4 by ASP's greedy per 4x4 tile.
    TwoDGreedy,
    /// `m4n2_2d_best`: transposable 2:4, best of the 90 valid 4x4 tiles.
    TwoDBest,
}

impl AspPattern {
    /// Parses a pattern name; anything unknown is `UnsupportedPattern`. `n > m` is reported
    /// later, by the mask functions, as `InvalidNmPattern`, as ASP reports it (docs/API.md, N:M).
    pub fn parse(pattern: &str) -> Result<Self> {
        match pattern {
            "m4n2_2d_greedy" => return Ok(AspPattern::TwoDGreedy),
            "m4n2_2d_best" => return Ok(AspPattern::TwoDBest),
            _ => {}
        }
        match get_nmprune_info(pattern) {
            (true, m, n) => Ok(AspPattern::OneD { m, n }),
            _ => bail!(
                UnsupportedPattern,
                "unsupported sparsity pattern {pattern:?}: expected 'm{{M}}n{{N}}_1d' \
                 (e.g. 'm4n2_1d'), 'm4n2_2d_greedy' or 'm4n2_2d_best'"
            ),
        }
    }

    /// The keep-mask of a `(rows, cols)` matrix, groups along the columns.
    pub fn mask_2d(self, values: &[f32], rows: usize, cols: usize) -> Result<Vec<u8>> {
        match self {
            AspPattern::OneD { m, n } => mn_1d_best(values, rows, cols, m, n),
            AspPattern::TwoDGreedy => two_d::m4n2_2d_greedy(values, rows, cols),
            AspPattern::TwoDBest => two_d::m4n2_2d_best(values, rows, cols),
        }
    }
}

/// Where element `flat` of a tensor of `shape` lands in ASP's 2-D matrix, and that matrix's
/// shape. 1-D `(L)` -> `(1, L)`; 2-D as is; 3-D `(K,C,R)` -> `permute(0,2,1)` -> `(K*R, C)`;
/// 4-D `(K,C,R,S)` -> `permute(2,3,0,1)` -> `(R*S*K, C)`. Groups therefore run along the input
/// channels `C` of conv weights.
pub struct AspLayout {
    pub rows: usize,
    pub cols: usize,
    shape: [usize; 4],
    ndim: usize,
}

impl AspLayout {
    /// Errors: rank not in 1..=4 -> `InvalidNmShape`; shape overflow -> `ShapeMismatch`.
    pub fn new(shape: &[usize]) -> Result<Self> {
        let (rows, cols) = match *shape {
            [l] => (Some(1), l),
            [r, c] => (Some(r), c),
            [k, c, r] => (k.checked_mul(r), c),
            [k, c, r, s] => (r.checked_mul(s).and_then(|rs| rs.checked_mul(k)), c),
            _ => bail!(
                InvalidNmShape,
                "create_asp_mask supports 1-D, 2-D, 3-D (K,C,R) and 4-D (K,C,R,S) tensors, \
                 got rank {} (shape {shape:?})",
                shape.len()
            ),
        };
        // A zero-sized dim does not make the other products safe: check both.
        let Some(rows) = rows.filter(|r| r.checked_mul(cols).is_some()) else {
            bail!(ShapeMismatch, "create_asp_mask: shape {shape:?} overflows usize");
        };
        let mut s = [1usize; 4];
        s[..shape.len()].copy_from_slice(shape);
        Ok(AspLayout { rows, cols, shape: s, ndim: shape.len() })
    }

    /// Calls `f(tensor_flat, matrix_flat)` for every element, in tensor order.
    pub fn for_each(&self, mut f: impl FnMut(usize, usize)) {
        let [d0, d1, d2, d3] = self.shape;
        match self.ndim {
            1 | 2 => (0..d0 * d1).for_each(|i| f(i, i)),
            3 => {
                // (k, c, r) -> row k*R + r, col c
                let mut t = 0;
                for k in 0..d0 {
                    for c in 0..d1 {
                        for r in 0..d2 {
                            f(t, (k * d2 + r) * d1 + c);
                            t += 1;
                        }
                    }
                }
            }
            _ => {
                // (k, c, r, s) -> row (r*S + s)*K + k, col c
                let mut t = 0;
                for k in 0..d0 {
                    for c in 0..d1 {
                        for r in 0..d2 {
                            for s in 0..d3 {
                                f(t, ((r * d3 + s) * d0 + k) * d1 + c);
                                t += 1;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// ASP's `create_mask`: the keep-mask of `values` (a tensor of `shape`, row-major) for
/// `pattern`, returned in the tensor's own layout. The tensor is first viewed as ASP's 2-D
/// matrix (see [`AspLayout`]) so that groups run along dim 1 (input channels of conv weights).
///
/// Errors: unknown pattern -> `UnsupportedPattern`; rank not 1-4, `C % m != 0` (or, for the
/// 2-D patterns, rows or `C` not a multiple of 4) -> `InvalidNmShape`; `n > m` ->
/// `InvalidNmPattern`; `values.len()` not the product of `shape` -> `ShapeMismatch`.
pub fn create_asp_mask(values: &[f32], shape: &[usize], pattern: &str) -> Result<Vec<u8>> {
    let pat = AspPattern::parse(pattern)?;
    let layout = AspLayout::new(shape)?;
    let numel = layout.rows * layout.cols;
    if numel != values.len() {
        return Err(Error::length_mismatch("create_asp_mask", shape, numel, values.len()));
    }
    let contiguous = shape.len() <= 2;
    let matrix = if contiguous {
        std::borrow::Cow::Borrowed(values)
    } else {
        let mut mat = try_alloc(numel, 0.0f32)?;
        layout.for_each(|t, m| mat[m] = values[t]);
        std::borrow::Cow::Owned(mat)
    };
    let mask2d = pat.mask_2d(&matrix, layout.rows, layout.cols)?;
    if contiguous {
        return Ok(mask2d);
    }
    let mut mask = try_alloc(numel, 0u8)?;
    layout.for_each(|t, m| mask[t] = mask2d[m]);
    Ok(mask)
}
