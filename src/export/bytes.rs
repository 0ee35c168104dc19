//! What a pruned 2-D weight costs in each storage format, side by side (the playground's and
//! the CLI's size table).

use super::bsr::{bsr_bytes, check_blocks};
use super::csr::csr_bytes;
use super::nm24::nm24_bytes;
use crate::core::error::Result;
use crate::core::shape::check_len;

/// Byte sizes of one `(rows, cols)` weight: dense f32, CSR, BSR with `(bh, bw)` blocks, and
/// 2:4 compressed (`None` when `cols % 4 != 0`: the format does not apply).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SparseBytes {
    pub dense: usize,
    pub csr: usize,
    pub bsr: usize,
    pub nm24: Option<usize>,
}

/// Counts the non-zeros (`x != 0.0`) and stored blocks once, without building the formats.
pub fn sparse_bytes(values: &[f32], rows: usize, cols: usize, bh: usize, bw: usize) -> Result<SparseBytes> {
    check_len("sparse_bytes", values.len(), rows, cols)?;
    check_blocks("sparse_bytes", rows, cols, bh, bw)?;
    let nnz = values.iter().filter(|&&x| x != 0.0).count();
    let mut blocks = 0usize;
    for bi in 0..rows / bh {
        for bj in 0..cols / bw {
            let stored = (0..bh).any(|r| values[(bi * bh + r) * cols + bj * bw..][..bw].iter().any(|&x| x != 0.0));
            blocks += stored as usize;
        }
    }
    Ok(SparseBytes {
        dense: rows * cols * 4,
        csr: csr_bytes(rows, nnz),
        bsr: bsr_bytes(rows, bh, bw, blocks),
        nm24: cols.is_multiple_of(4).then(|| nm24_bytes(rows, cols)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::{to_bsr, to_csr};

    #[test]
    fn sizes_agree_with_the_built_formats() {
        let w = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0f32];
        let b = sparse_bytes(&w, 4, 4, 2, 2).unwrap();
        assert_eq!(b.dense, 64);
        assert_eq!(b.csr, to_csr(&w, 4, 4).unwrap().byte_size());
        assert_eq!(b.bsr, to_bsr(&w, 4, 4, 2, 2).unwrap().byte_size());
        assert_eq!(b.nm24, Some(crate::export::nm24_bytes(4, 4)));
        assert_eq!(sparse_bytes(&w[..12], 4, 3, 2, 1).unwrap().nm24, None);
        assert_eq!(sparse_bytes(&w, 4, 4, 3, 2).unwrap_err().kind(), crate::ErrorKind::InvalidBlockShape);
    }
}
