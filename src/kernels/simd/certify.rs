//! The certified stop of the Newton search on four lanes, in three stages that the paired step
//! interleaves.

use core::arch::wasm32::*;

/// [`crate::kernels::scalar::certified_root`] on four lanes: `(certified mask, model root)`.
#[inline(always)]
pub(super) fn certified_root4(lane: [v128; 7], sums: [v128; 6]) -> (v128, v128) {
    let first = cert_first(lane, sums);
    let second = cert_second(lane, sums, first);
    cert_last(lane, first, second)
}

/// [`certified_root4`] up to its first divisions:
/// `[inv, inv_s2, dn, wide, span, d_min, d_max, den]`.
#[inline(always)]
pub(super) fn cert_first(lane: [v128; 7], sums: [v128; 6]) -> [v128; 8] {
    let [mu, _, tol, _, _, h_min, h_max] = lane;
    let [s2, s3, sh, _, w, g] = sums;
    let one = f32x4_splat(1.0);
    let den = f32x4_sub(f32x4_mul(s3, g), f32x4_mul(w, sh));
    let (inv, inv_s2) = (f32x4_div(one, den), f32x4_div(one, s2));
    let dn = f32x4_neg(f32x4_mul(f32x4_mul(s2, g), inv));
    let wide = f32x4_mul(f32x4_abs(dn), f32x4_splat(1.125));
    let span = f32x4_add(wide, tol);
    let low = f32x4_sub(mu, span);
    let (d_min, d_max) = (f32x4_add(h_min, low), f32x4_add(h_max, low));
    [inv, inv_s2, dn, wide, span, d_min, d_max, den]
}

/// [`certified_root4`]'s remainder bound and model curvature: `[bound, half]`.
#[inline(always)]
pub(super) fn cert_second(lane: [v128; 7], sums: [v128; 6], first: [v128; 8]) -> [v128; 2] {
    let [_, t, _, _, _, h_min, h_max] = lane;
    let [s2, s3, _, s4, _, _] = sums;
    let [inv, inv_s2, _, _, span, d_min, d_max, _] = first;
    let one = f32x4_splat(1.0);
    let y_max = f32x4_div(one, d_min);
    let r = f32x4_div(f32x4_sub(h_max, h_min), f32x4_mul(d_min, d_max));
    let m3 = f32x4_mul(f32x4_mul(f32x4_add(f32x4_mul(f32x4_splat(2.25), y_max), f32x4_mul(f32x4_splat(3.0), r)), r), r);
    let u_hi = f32x4_add(one, f32x4_mul(f32x4_mul(s3, span), inv_s2));
    let cube = f32x4_mul(f32x4_mul(span, span), span);
    let bound =
        f32x4_mul(f32x4_mul(f32x4_mul(f32x4_mul(u_hi, m3), cube), f32x4_mul(t, s2)), f32x4_mul(f32x4_abs(inv), f32x4_splat(0.333_333_34)));
    let half =
        f32x4_mul(f32x4_mul(f32x4_mul(f32x4_splat(-1.5), t), f32x4_sub(f32x4_mul(s2, s4), f32x4_mul(s3, s3))), f32x4_mul(inv, inv_s2));
    [bound, half]
}

/// [`certified_root4`]'s model root and its test.
#[inline(always)]
pub(super) fn cert_last(lane: [v128; 7], first: [v128; 8], second: [v128; 2]) -> (v128, v128) {
    let [mu, _, tol, lo, hi, _, _] = lane;
    let [_, _, dn, wide, _, d_min, _, den] = first;
    let [bound, half] = second;
    let (zero, one) = (f32x4_splat(0.0), f32x4_splat(1.0));
    let dh = f32x4_div(dn, f32x4_add(one, f32x4_mul(half, dn)));
    let (dm, dp) = (f32x4_sub(dh, tol), f32x4_add(dh, tol));
    let qm = f32x4_add(f32x4_sub(dm, dn), f32x4_mul(half, f32x4_mul(dm, dm)));
    let qp = f32x4_add(f32x4_sub(dp, dn), f32x4_mul(half, f32x4_mul(dp, dp)));
    let model = f32x4_add(mu, dh);
    let fits = v128_and(
        v128_and(f32x4_lt(den, zero), f32x4_gt(d_min, zero)),
        v128_and(f32x4_le(f32x4_abs(dh), wide), v128_and(f32x4_ge(model, lo), f32x4_le(model, hi))),
    );
    let ok = v128_and(fits, v128_and(f32x4_lt(f32x4_add(qm, bound), zero), f32x4_gt(f32x4_sub(qp, bound), zero)));
    (ok, model)
}
