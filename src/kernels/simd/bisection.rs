//! The Adam-conditioned bisection on SIMD128: its inner sums and one step of four searches.

use core::arch::wasm32::*;

use super::vec::{load, load4, store4};
use crate::kernels::lanes::{ProxLanes, ProxStop};

pub fn cond_sumsq(x: &[f32], h: &[f32], mu: f32) -> f32 {
    debug_assert_eq!(x.len(), h.len());
    let n4 = x.len() / 4 * 4;
    let muv = f32x4_splat(mu);
    let mut acc = f32x4_splat(0.0);
    let mut i = 0;
    while i < n4 {
        // SAFETY: i + 4 <= len of both.
        let (xv, hv) = unsafe { (load(x, i), load(h, i)) };
        let q = f32x4_div(f32x4_mul(hv, xv), f32x4_add(hv, muv));
        acc = f32x4_add(acc, f32x4_mul(q, q));
        i += 4;
    }
    finish_cond(acc, n4, |k| (h[k] * x[k]) / (h[k] + mu), x.len())
}

pub fn cond_sumsq_hx(hx: &[f32], h: &[f32], mu: f32) -> f32 {
    debug_assert_eq!(hx.len(), h.len());
    let n4 = hx.len() / 4 * 4;
    let muv = f32x4_splat(mu);
    let mut acc = f32x4_splat(0.0);
    let mut i = 0;
    while i < n4 {
        // SAFETY: i + 4 <= len of both.
        let (av, hv) = unsafe { (load(hx, i), load(h, i)) };
        let q = f32x4_div(av, f32x4_add(hv, muv));
        acc = f32x4_add(acc, f32x4_mul(q, q));
        i += 4;
    }
    finish_cond(acc, n4, |k| hx[k] / (h[k] + mu), hx.len())
}

#[inline(always)]
fn finish_cond(acc: v128, n4: usize, q: impl Fn(usize) -> f32, n: usize) -> f32 {
    let mut lanes =
        [f32x4_extract_lane::<0>(acc), f32x4_extract_lane::<1>(acc), f32x4_extract_lane::<2>(acc), f32x4_extract_lane::<3>(acc)];
    for k in n4..n {
        let v = q(k);
        lanes[k - n4] += v * v;
    }
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
}

pub fn prox_step4(hxt: &[f32], ht: &[f32], s: &mut ProxLanes, stop: ProxStop) -> bool {
    assert!(hxt.len() == ht.len() && hxt.len().is_multiple_of(16));
    let mu = load4(&s.mu);
    let mut acc = [f32x4_splat(0.0); 4];
    let mut i = 0;
    while i < hxt.len() {
        for (l, a) in acc.iter_mut().enumerate() {
            // SAFETY: i + 16 <= len of both.
            let (x, h) = unsafe { (load(hxt, i + 4 * l), load(ht, i + 4 * l)) };
            let q = f32x4_div(x, f32x4_add(h, mu));
            *a = f32x4_add(*a, f32x4_mul(q, q));
        }
        i += 16;
    }
    let sum = f32x4_add(f32x4_add(acc[0], acc[1]), f32x4_add(acc[2], acc[3]));
    let zero = f32x4_splat(0.0);
    let zeta = v128_bitselect(zero, f32x4_mul(mu, f32x4_sqrt(sum)), f32x4_eq(mu, zero));
    let go = load4(&s.go);
    let below = f32x4_lt(zeta, load4(&s.t));
    let lo = v128_bitselect(mu, load4(&s.lo), v128_and(go, below));
    let hi = v128_bitselect(mu, load4(&s.hi), v128_andnot(go, below));
    // x * 0.5 is x / 2 exactly (both are the correctly rounded half).
    let mu = v128_bitselect(f32x4_mul(f32x4_add(lo, hi), f32x4_splat(0.5)), mu, go);
    // go is all ones (-1) where stepping: subtracting it counts the step.
    let iters = i32x4_sub(load4(&s.iters), go);
    let done = match stop {
        ProxStop::Converged { max_iter, atol } => {
            v128_or(u32x4_ge(iters, u32x4_splat(max_iter)), f32x4_lt(f32x4_abs(f32x4_sub(lo, hi)), f32x4_splat(atol)))
        }
        ProxStop::At(n) => u32x4_ge(iters, u32x4_splat(n)),
    };
    let go = v128_andnot(go, done);
    store4(&mut s.lo, lo);
    store4(&mut s.hi, hi);
    store4(&mut s.mu, mu);
    store4(&mut s.iters, iters);
    store4(&mut s.go, go);
    v128_any_true(go)
}
