//! Shapes, strides and the length checks of flat row-major arrays.

use crate::bail;
use crate::core::error::{Error, ErrorKind, Result};

/// `prod(shape)` with overflow reported as an error rather than a wrap-around. The product of
/// the non-zero sizes must fit too (an empty `[0, 2^40, 2^40]` still has row-major strides that
/// would overflow).
pub fn checked_numel(shape: &[usize]) -> Result<usize> {
    let overflow = || Error::new(ErrorKind::OutOfMemory, format!("shape {shape:?} has more elements than fit in memory"));
    shape.iter().try_fold(1usize, |acc, &s| acc.checked_mul(s.max(1))).ok_or_else(overflow)?;
    shape.iter().try_fold(1usize, |acc, &s| acc.checked_mul(s)).ok_or_else(overflow)
}

/// Row-major strides of a contiguous `shape`.
pub fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
    let mut st = vec![1usize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        st[d] = st[d + 1] * shape[d + 1].max(1);
    }
    st
}

/// Row-major multi-index of flat position `flat` in `shape`.
pub fn unravel(mut flat: usize, shape: &[usize], out: &mut [usize]) {
    for d in (0..shape.len()).rev() {
        out[d] = flat % shape[d];
        flat /= shape[d];
    }
}

/// A grid-shaped flat input must have exactly `prod(grid)` elements.
pub fn check_grid_len(what: &str, grid: &[usize], got: usize) -> Result<()> {
    let n = checked_numel(grid)?;
    if n != got {
        return Err(Error::length_mismatch(what, grid, n, got));
    }
    Ok(())
}

/// `rows * cols`, checked against `len` (`ShapeMismatch` on overflow or a wrong length).
pub(crate) fn check_len(context: &str, len: usize, rows: usize, cols: usize) -> Result<()> {
    match rows.checked_mul(cols) {
        Some(numel) if numel == len => Ok(()),
        Some(numel) => Err(Error::length_mismatch(context, &[rows, cols], numel, len)),
        None => bail!(ShapeMismatch, "{context}: shape [{rows}, {cols}] overflows usize"),
    }
}

/// A grid-shaped input given with its own n-d shape (`{data, shape}` in JS, a case tensor in the
/// conformance runs) must have exactly the grid's shape: the same length in another shape
/// (thresholds `[4, 2]` for a `[2, 4]` grid) is a caller's mistake, not a reshape.
pub fn check_grid_shape(context: &str, grid: &[usize], given: &[usize]) -> Result<()> {
    if grid != given {
        return Err(Error::shape_mismatch(context, grid, given));
    }
    Ok(())
}
