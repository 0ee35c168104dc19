//! The one validating walk of compressed rows (`indptr` + ascending `indices`) that the CSR and
//! BSR decoders share: bounds, monotonic pointers and sorted unique indices are checked before
//! any value is read.

use crate::bail;
use crate::core::error::Result;

/// Walks a compressed-row structure (CSR, or BSR at block granularity), validating it first:
/// `indptr` starts at 0, ends at `indices.len()` and never decreases; the indices of every row
/// are below `ncols` and strictly ascending. Then calls `f(row, col, k)` for each stored entry.
/// Errors: any violation -> `InvalidArguments` (nothing is visited then).
pub(super) fn for_each_stored(
    context: &str,
    indptr: &[u32],
    indices: &[u32],
    ncols: usize,
    mut f: impl FnMut(usize, usize, usize),
) -> Result<()> {
    let nrows = indptr.len() - 1;
    if indptr[0] != 0 || indptr[nrows] as usize != indices.len() {
        bail!(InvalidArguments, "{context}: indptr must start at 0 and end at {}", indices.len());
    }
    for r in 0..nrows {
        let (a, b) = (indptr[r] as usize, indptr[r + 1] as usize);
        if a > b {
            bail!(InvalidArguments, "{context}: indptr decreases at row {r}");
        }
        for k in a..b {
            let c = indices[k] as usize;
            if c >= ncols || (k > a && c <= indices[k - 1] as usize) {
                bail!(InvalidArguments, "{context}: row {r} has column index {c}: out of range ({ncols} columns) or not ascending");
            }
        }
    }
    for (r, span) in indptr.windows(2).enumerate().take(nrows) {
        for (k, &c) in indices.iter().enumerate().take(span[1] as usize).skip(span[0] as usize) {
            f(r, c as usize, k);
        }
    }
    Ok(())
}
