//! Block shapes as the API writes them (docs/API.md) (`[]`, `-1` for a whole dimension) made explicit.

use crate::core::error::{Error, ErrorKind, Result};

/// Normalises a block shape: `[]` means all ones, a value `<= 0` spans the
/// whole dimension; then every size must be divisible by its block size.
pub fn normalize_block_shape(shape: &[usize], block: &[i64], what: &str) -> Result<Vec<usize>> {
    if block.is_empty() {
        return Ok(vec![1; shape.len()]);
    }
    if block.len() != shape.len() {
        return Err(Error::new(
            ErrorKind::BlockRankMismatch,
            format!("{what}: block shape has {} dims {block:?} but the tensor is {}-D {shape:?}", block.len(), shape.len()),
        ));
    }
    let mut out = Vec::with_capacity(shape.len());
    for (d, (&s, &b)) in shape.iter().zip(block).enumerate() {
        let b = if b <= 0 { s } else { b as usize };
        if b == 0 || s % b != 0 {
            return Err(Error::new(
                ErrorKind::InvalidBlockShape,
                format!("{what}: a block of {b} does not tile dimension {d} of size {s} evenly"),
            ));
        }
        out.push(b);
    }
    // A zero-size dimension accepts any block size (0 % b == 0): the block's element count
    // must still fit in usize.
    if out.iter().try_fold(1usize, |a, &b| a.checked_mul(b)).is_none() {
        return Err(Error::new(ErrorKind::InvalidBlockShape, format!("{what}: block shape {out:?} has more elements than fit in memory")));
    }
    Ok(out)
}
