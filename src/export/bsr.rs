//! BSR: block-compressed rows of a 2-D weight, its byte size and its decoder.

use super::compressed::for_each_stored;
use super::widths::{to_u32, F32, U32};
use crate::bail;
use crate::core::alloc::{try_alloc, try_with_capacity};
use crate::core::error::Result;
use crate::core::shape::check_len;

/// Block CSR: the matrix as a grid of `(bh, bw)` blocks; a block is stored (densely, row-major,
/// `bh * bw` values) when any of its elements is non-zero. Block row `i` holds blocks
/// `indptr[i]..indptr[i+1]` at block columns `indices[..]` (ascending).
#[derive(Clone, Debug, PartialEq)]
pub struct Bsr {
    pub rows: usize,
    pub cols: usize,
    pub bh: usize,
    pub bw: usize,
    pub indptr: Vec<u32>,
    pub indices: Vec<u32>,
    pub values: Vec<f32>,
}

impl Bsr {
    pub fn num_blocks(&self) -> usize {
        self.indices.len()
    }

    /// Bytes of `indptr + indices + values`.
    pub fn byte_size(&self) -> usize {
        bsr_bytes(self.rows, self.bh, self.bw, self.num_blocks())
    }
}

/// Bytes of a BSR matrix with `rows` rows, `(bh, bw)` blocks and `nblocks` stored blocks.
/// (`bh == 0` counts no block rows.)
pub fn bsr_bytes(rows: usize, bh: usize, bw: usize, nblocks: usize) -> usize {
    let block_rows = rows.checked_div(bh).unwrap_or(0);
    U32 * (block_rows + 1) + U32 * nblocks + F32 * nblocks * bh * bw
}

pub(super) fn check_blocks(context: &str, rows: usize, cols: usize, bh: usize, bw: usize) -> Result<()> {
    if bh == 0 || bw == 0 || !rows.is_multiple_of(bh) || !cols.is_multiple_of(bw) {
        bail!(InvalidBlockShape, "{context}: block ({bh}, {bw}) must be positive and divide the shape [{rows}, {cols}]");
    }
    Ok(())
}

/// BSR of a `(rows, cols)` matrix with `(bh, bw)` blocks.
///
/// Errors: wrong length -> `ShapeMismatch`; a block that is empty or does not divide the
/// shape -> `InvalidBlockShape`; indices beyond `u32` -> `InvalidArguments`.
pub fn to_bsr(values: &[f32], rows: usize, cols: usize, bh: usize, bw: usize) -> Result<Bsr> {
    check_len("to_bsr", values.len(), rows, cols)?;
    check_blocks("to_bsr", rows, cols, bh, bw)?;
    let (brows, bcols) = (rows / bh, cols / bw);
    to_u32("block cols", bcols)?;
    let mut indptr = try_with_capacity(brows.saturating_add(1))?;
    let (mut indices, mut vals) = (Vec::new(), Vec::new());
    indptr.push(0);
    for bi in 0..brows {
        for bj in 0..bcols {
            let rows_of = |r: usize| &values[(bi * bh + r) * cols + bj * bw..][..bw];
            if (0..bh).any(|r| rows_of(r).iter().any(|&x| x != 0.0)) {
                indices.push(bj as u32);
                for r in 0..bh {
                    vals.extend_from_slice(rows_of(r));
                }
            }
        }
        indptr.push(to_u32("number of blocks", indices.len())?);
    }
    Ok(Bsr { rows, cols, bh, bw, indptr, indices, values: vals })
}

/// Dense `(rows, cols)` matrix of a BSR, after checking that it is well formed.
///
/// Errors: bad block shape -> `InvalidBlockShape`; inconsistent lengths, non-monotone
/// `indptr`, block columns out of range or not ascending -> `InvalidArguments`.
pub fn bsr_to_dense(bsr: &Bsr) -> Result<Vec<f32>> {
    let Bsr { rows, cols, bh, bw, indptr, indices, values } = bsr;
    let (rows, cols, bh, bw) = (*rows, *cols, *bh, *bw);
    let Some(numel) = rows.checked_mul(cols) else {
        bail!(ShapeMismatch, "bsr_to_dense: shape [{rows}, {cols}] overflows usize");
    };
    check_blocks("bsr_to_dense", rows, cols, bh, bw)?;
    let (brows, bcols, bsize) = (rows / bh, cols / bw, bh * bw);
    if indptr.len() != brows + 1 || Some(values.len()) != indices.len().checked_mul(bsize) {
        bail!(
            InvalidArguments,
            "bsr_to_dense: expected {} indptr entries and {bsize} values per block, got {} indptr \
             entries, {} blocks and {} values",
            brows + 1,
            indptr.len(),
            indices.len(),
            values.len()
        );
    }
    let mut out = try_alloc(numel, 0.0f32)?;
    for_each_stored("bsr_to_dense", indptr, indices, bcols, |bi, bj, k| {
        for r in 0..bh {
            let src = &values[k * bsize + r * bw..][..bw];
            out[(bi * bh + r) * cols + bj * bw..][..bw].copy_from_slice(src);
        }
    })?;
    Ok(out)
}
