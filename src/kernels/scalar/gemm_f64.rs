//! The portable register tiles of the f64 `C -= A · B` ([`crate::kernels::gemm_f64`]): any
//! `R x C` tile (the remainders on every backend) and the full `MR x NR` one off SIMD128.

use crate::kernels::gemm_shape::{SubMul, MR, NR};

/// One register tile of `R x C` elements at `(a, b, c)`, `p` in order.
///
/// # Safety
/// `a[r * lda + p]`, `b[p * ldb + j]`, `c[r * ldc + j]` valid for `r < R`, `j < C`, `p < k`.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // register tiles: indices name rows and lanes
pub unsafe fn sub_mul_tile_of<const R: usize, const C: usize>(g: &SubMul, a: *const f64, b: *const f64, c: *mut f64) {
    let mut acc = [[0.0f64; C]; R];
    for r in 0..R {
        for j in 0..C {
            acc[r][j] = *c.add(r * g.ldc + j);
        }
    }
    for p in 0..g.k {
        let bp = b.add(p * g.ldb);
        let mut bv = [0.0f64; C];
        for j in 0..C {
            bv[j] = *bp.add(j);
        }
        for r in 0..R {
            let av = *a.add(r * g.lda + p);
            for j in 0..C {
                acc[r][j] -= av * bv[j];
            }
        }
    }
    for r in 0..R {
        for j in 0..C {
            *c.add(r * g.ldc + j) = acc[r][j];
        }
    }
}

/// The full `MR x NR` register tile ([`sub_mul_tile_of`] at that size).
///
/// # Safety
/// As [`sub_mul_tile_of`].
#[inline(always)]
pub unsafe fn sub_mul_tile(g: &SubMul, a: *const f64, b: *const f64, c: *mut f64) {
    sub_mul_tile_of::<MR, NR>(g, a, b, c)
}
