//! The SIMD128 register tile of the Hessian's update ([`crate::kernels::syrk`]; the scalar
//! oracle: `scalar/syrk.rs`): 4 rows x 8 columns in eight f32x4 accumulators, a separate
//! multiply and add per row `p` in order, then each accumulator widened to two f64x2 and added.

use crate::kernels::syrk::{PANEL, STRIP};
use core::arch::wasm32::*;

/// As the scalar `syrk_tile`: the same per-element operations, four columns per vector.
///
/// # Safety
/// As the scalar `syrk_tile`.
#[inline(always)]
pub unsafe fn syrk_tile(a: *const f32, b: *const f32, k: usize, h: *mut f64, ldh: usize) {
    const _: () = assert!(STRIP == 4 && PANEL == 8);
    let z = f32x4_splat(0.0);
    let mut acc = [[z; 2]; 4];
    // One row per trip: unrolled by two (four `B` vectors live beside the eight accumulators,
    // near x64's sixteen vector registers) it measured slower in V8 (bench/RESULTS.md, "The
    // Hessian cells with the tiled update").
    for p in 0..k {
        let (mut ap, bp) = (a.add(p * PANEL), b.add(p * PANEL));
        let b0 = v128_load(bp as *const v128);
        let b1 = v128_load(bp.add(4) as *const v128);
        for row in acc.iter_mut() {
            // One broadcast load per row of the tile.
            let av = v128_load32_splat(ap as *const u32);
            row[0] = f32x4_add(row[0], f32x4_mul(av, b0));
            row[1] = f32x4_add(row[1], f32x4_mul(av, b1));
            ap = ap.add(1);
        }
    }
    for (r, row) in acc.iter().enumerate() {
        let hr = h.add(r * ldh);
        for (v, &s) in row.iter().enumerate() {
            let lo = f64x2_promote_low_f32x4(s);
            let hi = f64x2_promote_low_f32x4(i32x4_shuffle::<2, 3, 2, 3>(s, s));
            let (p0, p1) = (hr.add(4 * v) as *mut v128, hr.add(4 * v + 2) as *mut v128);
            v128_store(p0, f64x2_add(v128_load(p0), lo));
            v128_store(p1, f64x2_add(v128_load(p1), hi));
        }
    }
}
