//! The SIMD128 register tile of the f64 `C -= A · B` ([`crate::kernels::gemm_f64`]): `MR x NR`
//! elements as f64x2 vectors, the same per-lane multiply and subtract as the scalar tile, so
//! the same bits.

use crate::kernels::gemm_shape::{SubMul, MR};
use core::arch::wasm32::*;

/// The full `MR x NR` tile at `(a, b, c)`, `p` in order.
///
/// # Safety
/// As the scalar tile: `a[r * lda + p]`, `b[p * ldb + j]`, `c[r * ldc + j]` valid for `r < MR`,
/// `j < NR`, `p < k`.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // register tiles: indices name rows and lanes
pub unsafe fn sub_mul_tile(g: &SubMul, a: *const f64, b: *const f64, c: *mut f64) {
    let mut acc = [[f64x2_splat(0.0); 2]; MR];
    for r in 0..MR {
        let cr = c.add(r * g.ldc);
        acc[r][0] = v128_load(cr as *const v128);
        acc[r][1] = v128_load(cr.add(2) as *const v128);
    }
    for p in 0..g.k {
        let bp = b.add(p * g.ldb);
        let b0 = v128_load(bp as *const v128);
        let b1 = v128_load(bp.add(2) as *const v128);
        for r in 0..MR {
            let av = f64x2_splat(*a.add(r * g.lda + p));
            acc[r][0] = f64x2_sub(acc[r][0], f64x2_mul(av, b0));
            acc[r][1] = f64x2_sub(acc[r][1], f64x2_mul(av, b1));
        }
    }
    for r in 0..MR {
        let cr = c.add(r * g.ldc);
        v128_store(cr as *mut v128, acc[r][0]);
        v128_store(cr.add(2) as *mut v128, acc[r][1]);
    }
}
