//! CSR: compressed sparse rows of a 2-D weight, its byte size and its decoder.

use super::compressed::for_each_stored;
use super::widths::{to_u32, F32, U32};
use crate::bail;
use crate::core::alloc::{try_alloc, try_with_capacity};
use crate::core::error::Result;
use crate::core::shape::check_len;

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
    let mut indptr = try_with_capacity(rows.saturating_add(1))?;
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
    Ok(Csr { rows, cols, indptr, indices, values: vals })
}

/// Dense `(rows, cols)` matrix of a CSR, after checking that it is well formed.
///
/// Errors: inconsistent lengths, non-monotone `indptr`, or column indices out of range or not
/// strictly ascending within a row -> `InvalidArguments`; shape overflow -> `ShapeMismatch`.
pub fn csr_to_dense(csr: &Csr) -> Result<Vec<f32>> {
    let Csr { rows, cols, indptr, indices, values } = csr;
    let (rows, cols) = (*rows, *cols);
    let Some(numel) = rows.checked_mul(cols) else {
        bail!(ShapeMismatch, "csr_to_dense: shape [{rows}, {cols}] overflows usize");
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
    let mut out = try_alloc(numel, 0.0f32)?;
    for_each_stored("csr_to_dense", indptr, indices, cols, |r, c, k| out[r * cols + c] = values[k])?;
    Ok(out)
}
