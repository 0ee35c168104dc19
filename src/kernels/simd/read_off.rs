//! The bisection's iterate read off four roots at once (f64 arithmetic, two lanes at a time).

use core::arch::wasm32::*;

/// [`crate::kernels::scalar::bisection_iterate`] on four lanes: the same f64 operations, two lanes at a time.
#[inline(always)]
pub(super) fn bisection_iterate4(lo: v128, hi: v128, r: v128, k: usize, cells: f64) -> v128 {
    if k == 0 {
        return f32x4_mul(f32x4_add(lo, hi), f32x4_splat(0.5));
    }
    if k >= 48 {
        return r;
    }
    let (c, top, per) = (f64x2_splat(cells), f64x2_splat(cells - 1.0), f64x2_splat(1.0 / cells));
    // Lanes 0 and 1 of the arguments; the result in lanes 0 and 1.
    let pair = |lo: v128, hi: v128, r: v128| -> v128 {
        let (lo64, r64) = (f64x2_promote_low_f32x4(lo), f64x2_promote_low_f32x4(r));
        let w = f64x2_sub(f64x2_promote_low_f32x4(hi), lo64);
        let j = f64x2_floor(f64x2_mul(f64x2_div(f64x2_sub(r64, lo64), w), c));
        // f64::clamp(0, cells - 1): pmax/pmin pick by `<` alone, so NaN passes through as there.
        let j = f64x2_pmin(f64x2_pmax(j, f64x2_splat(0.0)), top);
        // w / cells: cells is a power of two (at most 2^47 here), so the product is exact.
        f32x4_demote_f64x2_zero(f64x2_add(lo64, f64x2_mul(f64x2_add(j, f64x2_splat(0.5)), f64x2_mul(w, per))))
    };
    let up = |v: v128| i32x4_shuffle::<2, 3, 2, 3>(v, v);
    let cell = i32x4_shuffle::<0, 1, 4, 5>(pair(lo, hi, r), pair(up(lo), up(hi), up(r)));
    // `hi - lo` in f64 is NaN or <= 0 exactly when `hi > lo` fails in f32: the root itself.
    v128_bitselect(cell, r, f32x4_gt(hi, lo))
}
