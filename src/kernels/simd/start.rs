//! The Newton search's bracket and start, and the zeroed blocks, on four lanes.

use core::arch::wasm32::*;

use super::vec::{load4, store4};
use crate::kernels::lanes::RootStart;

/// [`crate::kernels::scalar::root_start_lane`] on four lanes: `([lo, hi, mu, tol], plain mask, ||H x0||)`, the
/// values meaningful where the mask is set.
#[inline(always)]
pub(super) fn root_start_lanes(stats: [v128; 5], t: v128, c: &RootStart) -> ([v128; 4], v128, v128) {
    let [sumsq, h_min, h_max, swh, swh2] = stats;
    let (eps, inf, zero) = (f32x4_splat(c.eps), f32x4_splat(f32::INFINITY), f32x4_splat(0.0));
    let a = f32x4_sqrt(sumsq);
    let d = f32x4_sub(a, t);
    let den = if c.coupling { v128_bitselect(d, eps, f32x4_ge(d, eps)) } else { f32x4_add(d, eps) };
    let lo = f32x4_div(f32x4_mul(t, h_min), den);
    let hi = f32x4_div(f32x4_mul(t, h_max), den);
    let plain = v128_and(
        v128_and(v128_and(f32x4_gt(t, zero), f32x4_lt(t, inf)), v128_and(f32x4_lt(a, inf), f32x4_gt(a, t))),
        v128_and(f32x4_gt(h_min, zero), v128_and(f32x4_lt(lo, hi), f32x4_lt(hi, inf))),
    );
    let resolution = f32x4_mul(f32x4_mul(f32x4_splat(4.0 * f32::EPSILON), hi), f32x4_div(a, d));
    // Every operand is a non-negative number in plain lanes (resolution > 0), so pmax (one
    // instruction; f32x4_max is eight in V8, for NaN and signed zeros) is f32::max there; the
    // other lanes' tolerance is not used.
    let tol = f32x4_pmax(f32x4_pmax(f32x4_mul(f32x4_sub(hi, lo), f32x4_splat(c.halvings)), f32x4_splat(c.atol * 0.5)), resolution);
    ([lo, hi, root_start_mu4([sumsq, swh, swh2, a, t, lo, hi]), tol], plain, a)
}

/// [`crate::kernels::scalar::zeroed_mu`] on four lanes: `(zeroed mask, mu)`.
#[inline(always)]
pub(super) fn zeroed_mu4(a: v128, t: v128, h_min: v128, h_max: v128, c: &RootStart, max_evals: u32) -> (v128, v128) {
    let zero = f32x4_splat(0.0);
    let ok = if c.eps > 0.0 { u32x4_splat(u32::MAX) } else { zero };
    let zeroed = v128_and(v128_and(f32x4_le(f32x4_sub(a, t), zero), f32x4_gt(t, zero)), v128_and(f32x4_gt(h_min, zero), ok));
    if !v128_any_true(zeroed) {
        return (zeroed, zero);
    }
    let eps = f32x4_splat(c.eps);
    let (lo, hi) = (f32x4_div(f32x4_mul(t, h_min), eps), f32x4_div(f32x4_mul(t, h_max), eps));
    let mid = f32x4_mul(f32x4_add(lo, hi), f32x4_splat(0.5));
    let point = if max_evals == 0 { u32x4_splat(u32::MAX) } else { f32x4_eq(lo, hi) };
    (zeroed, v128_bitselect(mid, hi, point))
}

/// [`crate::kernels::scalar::root_start_mu`] on four lanes: `[sum w, sum w h, sum w h², A, t, lo, hi]`.
#[inline(always)]
fn root_start_mu4(args: [v128; 7]) -> v128 {
    let [sumsq, swh, swh2, a, t, lo, hi] = args;
    let mid = f32x4_mul(f32x4_add(lo, hi), f32x4_splat(0.5));
    let inv = f32x4_div(f32x4_splat(1.0), sumsq);
    let m = f32x4_mul(swh, inv);
    let v = f32x4_pmax(f32x4_sub(f32x4_mul(swh2, inv), f32x4_mul(m, m)), f32x4_splat(0.0));
    let p = f32x4_sub(a, t);
    let qc = f32x4_mul(f32x4_sub(p, t), m);
    let rc = f32x4_mul(t, f32x4_sub(f32x4_mul(m, m), f32x4_mul(f32x4_splat(1.5), v)));
    let root = f32x4_sqrt(f32x4_add(f32x4_mul(qc, qc), f32x4_mul(f32x4_mul(f32x4_splat(4.0), p), rc)));
    let two = f32x4_splat(2.0);
    let up = f32x4_gt(qc, f32x4_splat(0.0));
    let num = v128_bitselect(f32x4_mul(rc, two), f32x4_sub(root, qc), up);
    let mu = f32x4_div(num, v128_bitselect(f32x4_add(qc, root), f32x4_mul(p, two), up));
    v128_bitselect(mu, mid, v128_and(f32x4_gt(mu, lo), f32x4_lt(mu, hi)))
}

pub fn root_start4(stats: &[[f32; 4]; 5], t: [f32; 4], c: &RootStart) -> Option<[[f32; 4]; 4]> {
    let (v, plain, _) = root_start_lanes(stats.map(|s| load4(&s)), load4(&t), c);
    if !i32x4_all_true(plain) {
        return None;
    }
    let mut out = [[0.0f32; 4]; 4];
    for (o, v) in out.iter_mut().zip(v) {
        store4(o, v);
    }
    Some(out)
}
