//! Sparse storage formats for a pruned 2-D `f32` weight `(rows, cols)`, row-major: CSR,
//! block-CSR (BSR) and the 2:4 compressed form of sparse tensor cores, each with a decoder back
//! to dense and a byte-size helper (what the playground shows next to the dense `4 * numel`).
//!
//! "Non-zero" means `x != 0.0`: `-0.0` is a zero (decoded as `+0.0`) and NaN is a non-zero.
//! Indices are `u32` (what GPU libraries and JS typed arrays use); a matrix whose indices do not
//! fit is refused with `InvalidArguments`.

mod bsr;
mod bytes;
mod compressed;
mod csr;
mod nm24;
mod widths;

pub use bsr::{bsr_bytes, bsr_to_dense, to_bsr, Bsr};
pub use bytes::{sparse_bytes, SparseBytes};
pub use csr::{csr_bytes, csr_to_dense, to_csr, Csr};
pub use nm24::{nm24_bytes, nm24_to_dense, to_nm24, Nm24};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::error::ErrorKind;

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
        assert_eq!(csr_to_dense(&bad).unwrap_err().kind(), ErrorKind::InvalidArguments);
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
            assert_eq!(bsr_to_dense(&bad).unwrap_err().kind(), ErrorKind::InvalidArguments);
        }
        assert_eq!(to_bsr(&W, 4, 4, 3, 2).unwrap_err().kind(), ErrorKind::InvalidBlockShape);
        assert_eq!(to_bsr(&W, 4, 4, 0, 2).unwrap_err().kind(), ErrorKind::InvalidBlockShape);
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
        assert_eq!(to_nm24(&dense3, 1, 4).unwrap_err().kind(), ErrorKind::InvalidNmPattern);
        assert_eq!(to_nm24(&W[..12], 2, 6).unwrap_err().kind(), ErrorKind::InvalidNmShape);
        let mut bad = nm.clone();
        bad.meta[0] = 0b0101;
        assert_eq!(nm24_to_dense(&bad).unwrap_err().kind(), ErrorKind::InvalidArguments);
    }
}
