//! Sparse storage formats for a pruned 2-D `f32` weight `(rows, cols)`, row-major: CSR,
//! block-CSR (BSR) and the 2:4 compressed form of sparse tensor cores, each with a decoder back
//! to dense and a byte-size helper (what the playground shows next to the dense `4 * numel`).
//!
//! "Non-zero" means `x != 0.0`: `-0.0` is a zero (decoded as `+0.0`) and NaN is a non-zero.
//! Indices are `u32` (what GPU libraries and JS typed arrays use); a matrix whose indices do not
//! fit is refused with `InvalidArguments`.

use crate::bail;
use crate::error::Result;
use crate::nm::check_len;

const F32: usize = 4;
const U32: usize = 4;

fn to_u32(what: &str, x: usize) -> Result<u32> {
    match u32::try_from(x) {
        Ok(v) => Ok(v),
        Err(_) => bail!(
            InvalidArguments,
            "{what} = {x} does not fit the u32 indices of the format"
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// CSR

/// Compressed sparse rows: row `r` holds `values[indptr[r]..indptr[r+1]]` at columns
/// `indices[..]` (ascending).
#[derive(Clone, Debug, PartialEq)]
pub struct Csr {
    pub rows: usize,
    pub cols: usize,
    pub indptr: Vec<u32>,
    pub indices: Vec<u32>,
    pub values: Vec<f32>,
}

impl Csr {
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// Bytes of `indptr + indices + values`.
    pub fn byte_size(&self) -> usize {
        csr_bytes(self.rows, self.nnz())
    }
}

/// Bytes of a CSR matrix with `rows` rows and `nnz` stored values (u32 indices, f32 values).
pub fn csr_bytes(rows: usize, nnz: usize) -> usize {
    U32 * (rows + 1) + (U32 + F32) * nnz
}

/// CSR of the non-zeros of a `(rows, cols)` matrix.
///
/// Errors: wrong length -> `ShapeMismatch`; indices beyond `u32` -> `InvalidArguments`.
pub fn to_csr(values: &[f32], rows: usize, cols: usize) -> Result<Csr> {
    check_len("to_csr", values.len(), rows, cols)?;
    to_u32("cols", cols)?;
    let mut indptr = Vec::with_capacity(rows + 1);
    let (mut indices, mut vals) = (Vec::new(), Vec::new());
    indptr.push(0);
    for r in 0..rows {
        let row = &values[r * cols..(r + 1) * cols];
        for (c, &x) in row.iter().enumerate() {
            if x != 0.0 {
                indices.push(c as u32);
                vals.push(x);
            }
        }
        indptr.push(to_u32("nnz", vals.len())?);
    }
    Ok(Csr {
        rows,
        cols,
        indptr,
        indices,
        values: vals,
    })
}

/// Dense `(rows, cols)` matrix of a CSR, after checking that it is well formed.
///
/// Errors: inconsistent lengths, non-monotone `indptr`, or column indices out of range or not
/// strictly ascending within a row -> `InvalidArguments`; shape overflow -> `ShapeMismatch`.
pub fn csr_to_dense(csr: &Csr) -> Result<Vec<f32>> {
    let Csr {
        rows,
        cols,
        indptr,
        indices,
        values,
    } = csr;
    let (rows, cols) = (*rows, *cols);
    let Some(numel) = rows.checked_mul(cols) else {
        bail!(
            ShapeMismatch,
            "csr_to_dense: shape [{rows}, {cols}] overflows usize"
        );
    };
    if indptr.len() != rows + 1 || indices.len() != values.len() {
        bail!(
            InvalidArguments,
            "csr_to_dense: expected {} indptr entries and as many indices as values, got {}, {} and {}",
            rows + 1,
            indptr.len(),
            indices.len(),
            values.len()
        );
    }
    let mut out = vec![0.0f32; numel];
    for_each_stored("csr_to_dense", indptr, indices, cols, |r, c, k| out[r * cols + c] = values[k])?;
    Ok(out)
}

/// Walks a compressed-row structure (CSR, or BSR at block granularity), validating it first:
/// `indptr` starts at 0, ends at `indices.len()` and never decreases; the indices of every row
/// are below `ncols` and strictly ascending. Then calls `f(row, col, k)` for each stored entry.
/// Errors: any violation -> `InvalidArguments` (nothing is visited then).
fn for_each_stored(
    context: &str,
    indptr: &[u32],
    indices: &[u32],
    ncols: usize,
    mut f: impl FnMut(usize, usize, usize),
) -> Result<()> {
    let nrows = indptr.len() - 1;
    if indptr[0] != 0 || indptr[nrows] as usize != indices.len() {
        bail!(
            InvalidArguments,
            "{context}: indptr must start at 0 and end at {}",
            indices.len()
        );
    }
    for r in 0..nrows {
        let (a, b) = (indptr[r] as usize, indptr[r + 1] as usize);
        if a > b {
            bail!(InvalidArguments, "{context}: indptr decreases at row {r}");
        }
        for k in a..b {
            let c = indices[k] as usize;
            if c >= ncols || (k > a && c <= indices[k - 1] as usize) {
                bail!(
                    InvalidArguments,
                    "{context}: row {r} has column index {c}: out of range ({ncols} columns) or not ascending"
                );
            }
        }
    }
    for r in 0..nrows {
        for k in indptr[r] as usize..indptr[r + 1] as usize {
            f(r, indices[k] as usize, k);
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// BSR

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

fn check_blocks(context: &str, rows: usize, cols: usize, bh: usize, bw: usize) -> Result<()> {
    if bh == 0 || bw == 0 || !rows.is_multiple_of(bh) || !cols.is_multiple_of(bw) {
        bail!(
            InvalidBlockShape,
            "{context}: block ({bh}, {bw}) must be positive and divide the shape [{rows}, {cols}]"
        );
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
    let mut indptr = Vec::with_capacity(brows + 1);
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
    Ok(Bsr {
        rows,
        cols,
        bh,
        bw,
        indptr,
        indices,
        values: vals,
    })
}

/// Dense `(rows, cols)` matrix of a BSR, after checking that it is well formed.
///
/// Errors: bad block shape -> `InvalidBlockShape`; inconsistent lengths, non-monotone
/// `indptr`, block columns out of range or not ascending -> `InvalidArguments`.
pub fn bsr_to_dense(bsr: &Bsr) -> Result<Vec<f32>> {
    let Bsr {
        rows,
        cols,
        bh,
        bw,
        indptr,
        indices,
        values,
    } = bsr;
    let (rows, cols, bh, bw) = (*rows, *cols, *bh, *bw);
    let Some(numel) = rows.checked_mul(cols) else {
        bail!(
            ShapeMismatch,
            "bsr_to_dense: shape [{rows}, {cols}] overflows usize"
        );
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
    let mut out = vec![0.0f32; numel];
    for_each_stored("bsr_to_dense", indptr, indices, bcols, |bi, bj, k| {
        for r in 0..bh {
            let src = &values[k * bsize + r * bw..][..bw];
            out[(bi * bh + r) * cols + bj * bw..][..bw].copy_from_slice(src);
        }
    })?;
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// 2:4 compressed

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
        bail!(
            InvalidNmShape,
            "{context}: 2:4 groups need cols % 4 == 0, got shape [{rows}, {cols}]"
        );
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
    let mut vals = Vec::with_capacity(groups * 2);
    let mut meta = vec![0u8; groups.div_ceil(2)];
    for (q, g) in values.chunks_exact(4).enumerate() {
        let nz = g.iter().filter(|&&x| x != 0.0).count();
        if nz > 2 {
            let (r, j) = (q / (cols / 4), q % (cols / 4));
            bail!(
                InvalidNmPattern,
                "to_nm24: group {j} of row {r} (columns {}..{}) has {nz} non-zeros; 2:4 allows 2",
                4 * j,
                4 * j + 4
            );
        }
        // Non-zero positions first, then the lowest zero positions, then sort ascending.
        let mut pos = [0u8; 2];
        let nonzero_first = (0..4u8)
            .filter(|&p| g[p as usize] != 0.0)
            .chain((0..4u8).filter(|&p| g[p as usize] == 0.0));
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
    Ok(Nm24 {
        rows,
        cols,
        values: vals,
        meta,
    })
}

/// Dense `(rows, cols)` matrix of a 2:4 compressed form.
///
/// Errors: `cols % 4 != 0` -> `InvalidNmShape`; wrong `values`/`meta` lengths or a group whose
/// positions are not strictly ascending -> `InvalidArguments`.
pub fn nm24_to_dense(nm: &Nm24) -> Result<Vec<f32>> {
    let Nm24 {
        rows,
        cols,
        values,
        meta,
    } = nm;
    let (rows, cols) = (*rows, *cols);
    check_nm24_shape("nm24_to_dense", rows, cols)?;
    let Some(numel) = rows.checked_mul(cols) else {
        bail!(
            ShapeMismatch,
            "nm24_to_dense: shape [{rows}, {cols}] overflows usize"
        );
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
    let mut out = vec![0.0f32; numel];
    for q in 0..groups {
        let nib = (meta[q / 2] >> (4 * (q % 2))) & 0xf;
        let (p0, p1) = (usize::from(nib & 3), usize::from(nib >> 2));
        if p0 >= p1 {
            bail!(
                InvalidArguments,
                "nm24_to_dense: group {q} has positions ({p0}, {p1}); expected p0 < p1"
            );
        }
        out[4 * q + p0] = values[2 * q];
        out[4 * q + p1] = values[2 * q + 1];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    const W: [f32; 16] = [
        0.0, 1.5, 0.0, -2.0, //
        3.0, 0.0, 0.0, 0.0, //
        0.0, 0.0, 0.0, 0.0, //
        -0.0, 0.0, 4.0, 5.0,
    ];

    #[test]
    fn csr_known_layout_and_round_trip() {
        let csr = to_csr(&W, 4, 4).unwrap();
        assert_eq!(csr.indptr, vec![0, 2, 3, 3, 5]);
        assert_eq!(csr.indices, vec![1, 3, 0, 2, 3]);
        assert_eq!(csr.values, vec![1.5, -2.0, 3.0, 4.0, 5.0]);
        assert_eq!(csr.byte_size(), 4 * 5 + 8 * 5);
        assert_eq!(csr_to_dense(&csr).unwrap(), W.to_vec());
        let mut bad = csr.clone();
        bad.indices[1] = 1;
        assert_eq!(
            csr_to_dense(&bad).unwrap_err().kind,
            ErrorKind::InvalidArguments
        );
    }

    #[test]
    fn bsr_known_layout_and_round_trip() {
        let bsr = to_bsr(&W, 4, 4, 2, 2).unwrap();
        assert_eq!(bsr.indptr, vec![0, 2, 3]);
        assert_eq!(bsr.indices, vec![0, 1, 1]);
        assert_eq!(bsr.values[..4], [0.0, 1.5, 3.0, 0.0]);
        assert_eq!(bsr.byte_size(), 4 * 3 + 4 * 3 + 4 * 12);
        assert_eq!(bsr_to_dense(&bsr).unwrap(), W.to_vec());
        for bad in [
            Bsr { indices: vec![1, 0, 1], ..bsr.clone() },
            Bsr { indices: vec![0, 2, 1], ..bsr.clone() },
            Bsr { indptr: vec![0, 3, 2], ..bsr.clone() },
        ] {
            assert_eq!(bsr_to_dense(&bad).unwrap_err().kind, ErrorKind::InvalidArguments);
        }
        assert_eq!(
            to_bsr(&W, 4, 4, 3, 2).unwrap_err().kind,
            ErrorKind::InvalidBlockShape
        );
        assert_eq!(
            to_bsr(&W, 4, 4, 0, 2).unwrap_err().kind,
            ErrorKind::InvalidBlockShape
        );
    }

    #[test]
    fn nm24_known_layout_and_round_trip() {
        let nm = to_nm24(&W, 4, 4).unwrap();
        assert_eq!(nm.values, vec![1.5, -2.0, 3.0, 0.0, 0.0, 0.0, 4.0, 5.0]);
        // groups: (1,3) -> 0b1101; (0,1) -> 0b0100; (0,1) -> 0b0100; (2,3) -> 0b1110
        assert_eq!(nm.meta, vec![0b0100_1101, 0b1110_0100]);
        assert_eq!(nm.byte_size(), 4 * 8 + 2);
        assert_eq!(nm24_to_dense(&nm).unwrap(), W.to_vec());
        let dense3 = [1.0, 1.0, 1.0, 0.0];
        assert_eq!(
            to_nm24(&dense3, 1, 4).unwrap_err().kind,
            ErrorKind::InvalidNmPattern
        );
        assert_eq!(
            to_nm24(&W[..12], 2, 6).unwrap_err().kind,
            ErrorKind::InvalidNmShape
        );
        let mut bad = nm.clone();
        bad.meta[0] = 0b0101;
        assert_eq!(
            nm24_to_dense(&bad).unwrap_err().kind,
            ErrorKind::InvalidArguments
        );
    }
}
