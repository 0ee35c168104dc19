//! `exp` and the logistic sigmoid on SIMD128: four elements a step, each lane the scalar kernel's
//! operations in its order (see [`super::super::scalar`]'s `exp`), hence its bits.

use core::arch::wasm32::*;

use super::super::scalar::exp::{LN2_HI, LN2_LO, P, X_MAX, X_MIN};
use super::super::scalar::{exp_in_place as exp_scalar, sigmoid_in_place as sigmoid_scalar};
use super::vec::load;

/// The scalar `horner` on four lanes.
#[inline(always)]
pub(super) fn horner(c: &[f32], v: v128) -> v128 {
    let mut q = f32x4_splat(c[0]);
    for &k in &c[1..] {
        q = f32x4_add(f32x4_mul(q, v), f32x4_splat(k));
    }
    q
}

/// `e^x` of four lanes.
#[inline(always)]
pub(super) fn exp4(x: v128) -> v128 {
    let s = f32x4_splat;
    let nan = f32x4_ne(x, x);
    // pmax / pmin: the bound where the lane is beyond it, else the lane (NaN lanes kept, then replaced).
    let xc = f32x4_pmin(f32x4_pmax(x, s(X_MIN)), s(X_MAX));
    let n = f32x4_nearest(f32x4_mul(xc, s(std::f32::consts::LOG2_E)));
    let r = f32x4_sub(f32x4_sub(xc, f32x4_mul(n, s(LN2_HI))), f32x4_mul(n, s(LN2_LO)));
    let p = f32x4_add(f32x4_add(f32x4_mul(horner(&P, r), f32x4_mul(r, r)), r), s(1.0));
    let ni = i32x4_trunc_sat_f32x4(n);
    let n1 = i32x4_shr(ni, 1);
    let pow2 = |k: v128| i32x4_shl(i32x4_add(k, i32x4_splat(127)), 23);
    let y = f32x4_mul(f32x4_mul(p, pow2(n1)), pow2(i32x4_sub(ni, n1)));
    v128_bitselect(x, y, nan)
}

/// What [`super::super::scalar::exp_in_place`] computes.
pub fn exp_in_place(ys: &mut [f32], shift: f32) {
    let n4 = ys.len() / 4 * 4;
    let sh = f32x4_splat(shift);
    let mut i = 0;
    while i < n4 {
        // SAFETY: i + 4 <= ys.len(); wasm loads and stores need no alignment.
        unsafe {
            let v = exp4(f32x4_sub(load(ys, i), sh));
            v128_store(ys.as_mut_ptr().add(i) as *mut v128, v);
        }
        i += 4;
    }
    exp_scalar(&mut ys[n4..], shift);
}

/// What [`super::super::scalar::sigmoid_in_place`] computes.
pub fn sigmoid_in_place(ys: &mut [f32]) {
    let n4 = ys.len() / 4 * 4;
    let one = f32x4_splat(1.0);
    let mut i = 0;
    while i < n4 {
        // SAFETY: as in exp_in_place.
        unsafe {
            let x = load(ys, i);
            let e = exp4(f32x4_neg(f32x4_abs(x)));
            let d = f32x4_add(one, e);
            let y = v128_bitselect(f32x4_div(one, d), f32x4_div(e, d), f32x4_ge(x, f32x4_splat(0.0)));
            v128_store(ys.as_mut_ptr().add(i) as *mut v128, y);
        }
        i += 4;
    }
    sigmoid_scalar(&mut ys[n4..]);
}
