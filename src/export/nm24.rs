//! The 2:4 compressed form of sparse tensor cores, its byte size and its decoder.

use super::widths::F32;
use crate::bail;
use crate::core::alloc::{try_alloc, try_with_capacity};
use crate::core::error::Result;
use crate::core::shape::check_len;

/// The 2:4 compressed form consumed by sparse tensor cores: every group of 4 consecutive
/// elements of a row keeps 2 values (`values`, `(rows, cols/2)` row-major) and their two 2-bit
/// positions in the group (`meta`).
///
/// Metadata layout: group `q` (row-major over all groups, `q = r * cols/4 + j`) is the nibble
/// `pos0 | pos1 << 2` with `pos0 < pos1`, in the low nibble of byte `q / 2` when `q` is even and
/// the high nibble otherwise. When `cols % 16 == 0` each row's metadata is the little-endian
/// sequence of 16-bit words of PTX `mma.sp` (four groups per word, first group in the low bits);
/// cuSPARSELt's `compress` additionally shuffles these words into its own tile order, which is
/// not reproduced here.
#[derive(Clone, Debug, PartialEq)]
pub struct Nm24 {
    pub rows: usize,
    pub cols: usize,
    pub values: Vec<f32>,
    pub meta: Vec<u8>,
}

impl Nm24 {
    /// Bytes of `values + meta`.
    pub fn byte_size(&self) -> usize {
        nm24_bytes(self.rows, self.cols)
    }
}

/// Bytes of a 2:4 compressed `(rows, cols)` matrix: `cols/2` f32 values per row plus 4 bits of
/// metadata per group of 4.
pub fn nm24_bytes(rows: usize, cols: usize) -> usize {
    let groups = rows * (cols / 4);
    F32 * 2 * groups + groups.div_ceil(2)
}

fn check_nm24_shape(context: &str, rows: usize, cols: usize) -> Result<()> {
    if !cols.is_multiple_of(4) {
        bail!(InvalidNmShape, "{context}: 2:4 groups need cols % 4 == 0, got shape [{rows}, {cols}]");
    }
    Ok(())
}

/// Compresses a 2:4-sparse `(rows, cols)` matrix. A group with fewer than 2 non-zeros stores
/// zeros at the lowest free positions, so the two positions are always distinct and ascending.
///
/// Errors: wrong length -> `ShapeMismatch`; `cols % 4 != 0` -> `InvalidNmShape`; a group with
/// more than 2 non-zeros (not 2:4 sparse; prune it first, e.g. with `m4n2_1d`) ->
/// `InvalidNmPattern`.
pub fn to_nm24(values: &[f32], rows: usize, cols: usize) -> Result<Nm24> {
    check_len("to_nm24", values.len(), rows, cols)?;
    check_nm24_shape("to_nm24", rows, cols)?;
    let groups = values.len() / 4;
    let mut vals = try_with_capacity(groups.saturating_mul(2))?;
    let mut meta = try_alloc(groups.div_ceil(2), 0u8)?;
    for (q, g) in values.chunks_exact(4).enumerate() {
        let nz = g.iter().filter(|&&x| x != 0.0).count();
        if nz > 2 {
            let (r, j) = (q / (cols / 4), q % (cols / 4));
            bail!(InvalidNmPattern, "to_nm24: group {j} of row {r} (columns {}..{}) has {nz} non-zeros; 2:4 allows 2", 4 * j, 4 * j + 4);
        }
        // Non-zero positions first, then the lowest zero positions, then sort ascending.
        let mut pos = [0u8; 2];
        let nonzero_first = (0..4u8).filter(|&p| g[p as usize] != 0.0).chain((0..4u8).filter(|&p| g[p as usize] == 0.0));
        for (slot, p) in pos.iter_mut().zip(nonzero_first) {
            *slot = p;
        }
        pos.sort_unstable();
        for &p in &pos {
            let x = g[p as usize];
            vals.push(if x == 0.0 { 0.0 } else { x });
        }
        meta[q / 2] |= (pos[0] | pos[1] << 2) << (4 * (q % 2));
    }
    Ok(Nm24 { rows, cols, values: vals, meta })
}

/// Dense `(rows, cols)` matrix of a 2:4 compressed form.
///
/// Errors: `cols % 4 != 0` -> `InvalidNmShape`; wrong `values`/`meta` lengths or a group whose
/// positions are not strictly ascending -> `InvalidArguments`.
pub fn nm24_to_dense(nm: &Nm24) -> Result<Vec<f32>> {
    let Nm24 { rows, cols, values, meta } = nm;
    let (rows, cols) = (*rows, *cols);
    check_nm24_shape("nm24_to_dense", rows, cols)?;
    let Some(numel) = rows.checked_mul(cols) else {
        bail!(ShapeMismatch, "nm24_to_dense: shape [{rows}, {cols}] overflows usize");
    };
    let groups = numel / 4;
    if values.len() != 2 * groups || meta.len() != groups.div_ceil(2) {
        bail!(
            InvalidArguments,
            "nm24_to_dense: shape [{rows}, {cols}] needs {} values and {} metadata bytes, got {} and {}",
            2 * groups,
            groups.div_ceil(2),
            values.len(),
            meta.len()
        );
    }
    let mut out = try_alloc(numel, 0.0f32)?;
    for q in 0..groups {
        let nib = (meta[q / 2] >> (4 * (q % 2))) & 0xf;
        let (p0, p1) = (usize::from(nib & 3), usize::from(nib >> 2));
        if p0 >= p1 {
            bail!(InvalidArguments, "nm24_to_dense: group {q} has positions ({p0}, {p1}); expected p0 < p1");
        }
        out[4 * q + p0] = values[2 * q];
        out[4 * q + p1] = values[2 * q + 1];
    }
    Ok(out)
}
