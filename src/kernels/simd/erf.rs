//! `erf` on SIMD128: four elements a step, each lane the scalar kernel's operations in its order
//! (see [`super::super::scalar`]'s `erf`), hence its bits.

use core::arch::wasm32::*;

use super::super::scalar::erf::{CENTRE, LARGE, ONE_FROM, SMALL, SPLIT};
use super::super::scalar::erf_in_place as erf_scalar;
use super::exp::{exp4, horner};
use super::vec::load;

/// `erf` of four lanes.
#[inline(always)]
fn erf4(x: v128) -> v128 {
    let s = f32x4_splat;
    let nan = f32x4_ne(x, x);
    let ax = f32x4_abs(x);
    let small = f32x4_mul(ax, horner(&SMALL, f32x4_mul(ax, ax)));
    let xc = f32x4_pmin(f32x4_pmax(ax, s(SPLIT)), s(ONE_FROM));
    let e = exp4(f32x4_neg(f32x4_mul(xc, xc)));
    let large = f32x4_sub(s(1.0), f32x4_mul(e, horner(&LARGE, f32x4_sub(f32x4_div(s(1.0), xc), s(CENTRE)))));
    let y = v128_bitselect(small, large, f32x4_lt(ax, s(SPLIT)));
    // copysign: the magnitude's bits with x's sign bit
    let signed = v128_or(v128_and(y, s(f32::from_bits(0x7fff_ffff))), v128_and(x, s(-0.0)));
    v128_bitselect(x, signed, nan)
}

/// What [`super::super::scalar::erf_in_place`] computes.
pub fn erf_in_place(ys: &mut [f32]) {
    let n4 = ys.len() / 4 * 4;
    let mut i = 0;
    while i < n4 {
        // SAFETY: i + 4 <= ys.len(); wasm loads and stores need no alignment.
        unsafe {
            let v = erf4(load(ys, i));
            v128_store(ys.as_mut_ptr().add(i) as *mut v128, v);
        }
        i += 4;
    }
    erf_scalar(&mut ys[n4..]);
}
