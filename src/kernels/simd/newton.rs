//! The safeguarded Newton search on SIMD128: per-block sums, and the step of four searches held
//! in registers (two quads at a time where the caller has two).

use core::arch::wasm32::*;

use super::certify::{cert_first, cert_last, cert_second, certified_root4};
use super::pin::fence;
use super::vec::{load, load4, store4};
use crate::kernels::lanes::RootLanes;

/// [`crate::kernels::scalar::root_terms`] on four lanes.
#[inline(always)]
pub(super) fn root_terms4(a: v128, h: v128, mu: v128) -> [v128; 3] {
    let r = f32x4_div(f32x4_splat(1.0), f32x4_add(h, mu));
    let q = f32x4_mul(a, r);
    let q2r = f32x4_mul(f32x4_mul(q, q), r);
    [q2r, f32x4_mul(q2r, h), f32x4_mul(q2r, r)]
}

pub fn root_sums_hx(hx: &[f32], h: &[f32], mu: f32) -> [f32; 3] {
    debug_assert_eq!(hx.len(), h.len());
    let n4 = hx.len() / 4 * 4;
    let muv = f32x4_splat(mu);
    let mut acc = [f32x4_splat(0.0); 3];
    let mut i = 0;
    while i < n4 {
        // SAFETY: i + 4 <= len of both.
        let terms = unsafe { root_terms4(load(hx, i), load(h, i), muv) };
        for (a, v) in acc.iter_mut().zip(terms) {
            *a = f32x4_add(*a, v);
        }
        i += 4;
    }
    let mut lanes = [[0.0f32; 4]; 3];
    for (l, a) in lanes.iter_mut().zip(acc) {
        store4(l, a);
    }
    // The tail goes to lanes 0.., as in the scalar kernel.
    for k in n4..hx.len() {
        let r = 1.0 / (h[k] + mu);
        let q = hx[k] * r;
        let q2r = (q * q) * r;
        for (l, v) in lanes.iter_mut().zip([q2r, q2r * h[k], q2r * r]) {
            l[k - n4] += v;
        }
    }
    lanes.map(|l| (l[0] + l[1]) + (l[2] + l[3]))
}

/// [`RootLanes`] held in registers by the quad kernels.
#[derive(Clone, Copy)]
pub(super) struct RootRegs {
    pub(super) lo: v128,
    pub(super) hi: v128,
    pub(super) mu: v128,
    pub(super) t: v128,
    pub(super) tol: v128,
    pub(super) prev: v128,
    pub(super) newt: v128,
    pub(super) lo_open: v128,
    pub(super) hi_open: v128,
    pub(super) h_min: v128,
    pub(super) h_max: v128,
    pub(super) evals: v128,
    pub(super) go: v128,
}

impl RootRegs {
    #[inline(always)]
    fn load(s: &RootLanes) -> RootRegs {
        RootRegs {
            lo: load4(&s.lo),
            hi: load4(&s.hi),
            mu: load4(&s.mu),
            t: load4(&s.t),
            tol: load4(&s.tol),
            prev: load4(&s.prev),
            newt: load4(&s.newt),
            lo_open: load4(&s.lo_open),
            hi_open: load4(&s.hi_open),
            h_min: load4(&s.h_min),
            h_max: load4(&s.h_max),
            evals: load4(&s.evals),
            go: load4(&s.go),
        }
    }

    #[inline(always)]
    fn store(&self, s: &mut RootLanes) {
        store4(&mut s.lo, self.lo);
        store4(&mut s.hi, self.hi);
        store4(&mut s.mu, self.mu);
        store4(&mut s.t, self.t);
        store4(&mut s.tol, self.tol);
        store4(&mut s.prev, self.prev);
        store4(&mut s.newt, self.newt);
        store4(&mut s.lo_open, self.lo_open);
        store4(&mut s.hi_open, self.hi_open);
        store4(&mut s.h_min, self.h_min);
        store4(&mut s.h_max, self.h_max);
        store4(&mut s.evals, self.evals);
        store4(&mut s.go, self.go);
    }

    /// [`crate::kernels::scalar::root_step_lane`] on the four lanes from their sums `[S3, Sh, S4]` at `mu`,
    /// selects for its branches. Returns whether any lane still goes.
    #[inline(always)]
    pub(super) fn step(&mut self, s3: v128, sh: v128, s4: v128, max_evals: u32) -> bool {
        let (lane, sums) = self.prepare(s3, sh, s4);
        let cert = certified_root4(lane, sums);
        self.finish(sums, cert, max_evals)
    }

    /// [`RootRegs::step`] on two quads at once, `a` with `sa` and `b` with `sb`, their chains of
    /// square roots and divisions interleaved stage by stage ([`fence`]): one quad's chain alone
    /// fills the out-of-order window while it waits on each division. Same bits as two steps.
    #[inline(always)]
    pub(super) fn step_pair(a: &mut RootRegs, b: &mut RootRegs, sa: [v128; 3], sb: [v128; 3], max_evals: u32) -> bool {
        let (la, ca) = a.prepare(sa[0], sa[1], sa[2]);
        fence([ca[4]]);
        let (lb, cb) = b.prepare(sb[0], sb[1], sb[2]);
        fence([cb[4]]);
        let fa = cert_first(la, ca);
        fence([fa[5], fa[2]]);
        let fb = cert_first(lb, cb);
        fence([fb[5], fb[2]]);
        let ga = cert_second(la, ca, fa);
        fence(ga);
        let gb = cert_second(lb, cb, fb);
        fence(gb);
        let ra = cert_last(la, fa, ga);
        let rb = cert_last(lb, fb, gb);
        a.finish(ca, ra, max_evals) | b.finish(cb, rb, max_evals)
    }

    /// The first part of [`RootRegs::step`]: the bracket update from `zeta(mu)`; returns the
    /// certificate's arguments.
    #[inline(always)]
    fn prepare(&mut self, s3: v128, sh: v128, s4: v128) -> ([v128; 7], [v128; 6]) {
        let zero = f32x4_splat(0.0);
        let (mu, t, tol, go) = (self.mu, self.t, self.tol, self.go);
        let s2 = f32x4_add(sh, f32x4_mul(mu, s3));
        let w = f32x4_sqrt(s2);
        let zeta = v128_bitselect(zero, f32x4_mul(mu, w), f32x4_eq(mu, zero));
        let below = f32x4_lt(zeta, t);
        let (to_lo, to_hi) = (v128_and(go, below), v128_andnot(go, below));
        let lo = v128_bitselect(mu, self.lo, to_lo);
        let hi = v128_bitselect(mu, self.hi, to_hi);
        let lo_open = v128_andnot(self.lo_open, to_lo);
        let hi_open = v128_andnot(self.hi_open, to_hi);
        let g = f32x4_sub(t, zeta);
        // go is all ones (-1) where searching: subtracting it counts the evaluation.
        let evals = i32x4_sub(self.evals, go);
        self.lo = lo;
        self.hi = hi;
        self.lo_open = lo_open;
        self.hi_open = hi_open;
        self.evals = evals;
        ([mu, t, tol, lo, hi, self.h_min, self.h_max], [s2, s3, sh, s4, w, g])
    }

    /// The rest of [`RootRegs::step`], after the certificate `(certified, model)`.
    #[inline(always)]
    fn finish(&mut self, sums: [v128; 6], cert: (v128, v128), max_evals: u32) -> bool {
        let zero = f32x4_splat(0.0);
        let (mu, tol, go, lo, hi, lo_open, hi_open, evals) =
            (self.mu, self.tol, self.go, self.lo, self.hi, self.lo_open, self.hi_open, self.evals);
        let [s2, s3, sh, _, w, g] = sums;
        let (certified, model) = cert;
        let certified = v128_and(certified, go);
        let moving = v128_andnot(go, certified);
        // The usual case on Adam-like conditioners: every searching lane is certified.
        if !v128_any_true(moving) {
            self.mu = v128_bitselect(model, mu, go);
            self.go = zero;
            return false;
        }
        let newton = f32x4_sub(mu, f32x4_div(f32x4_mul(s2, g), f32x4_sub(f32x4_mul(s3, g), f32x4_mul(w, sh))));
        let mid = f32x4_mul(f32x4_add(lo, hi), f32x4_splat(0.5));
        let two = f32x4_splat(2.0);
        let take = v128_and(
            v128_and(f32x4_ge(newton, lo), f32x4_le(newton, hi)),
            f32x4_le(f32x4_mul(f32x4_abs(f32x4_sub(newton, mu)), two), self.prev),
        );
        let mut next = v128_bitselect(lo, mid, v128_and(f32x4_lt(newton, lo), lo_open));
        next = v128_bitselect(hi, next, v128_and(f32x4_gt(newton, hi), hi_open));
        next = v128_bitselect(newton, next, take);
        let narrow = f32x4_le(f32x4_sub(hi, lo), f32x4_mul(tol, two));
        let next = v128_bitselect(mid, next, narrow);
        let step = f32x4_abs(f32x4_sub(next, mu));
        let ratio = f32x4_div(step, self.newt);
        let predicted = v128_and(take, f32x4_le(f32x4_mul(f32x4_mul(ratio, ratio), step), tol));
        let done =
            v128_or(v128_or(v128_or(certified, narrow), v128_or(f32x4_le(step, tol), predicted)), u32x4_ge(evals, u32x4_splat(max_evals)));
        // Certified lanes take the model's root and keep the rest (as the scalar step returns).
        self.mu = v128_bitselect(model, v128_bitselect(next, mu, go), certified);
        self.prev = v128_bitselect(step, self.prev, moving);
        self.newt = v128_bitselect(v128_and(step, take), self.newt, moving);
        self.go = v128_andnot(go, done);
        v128_any_true(self.go)
    }
}

pub fn prox_root4(hxt: &[f32], ht: &[f32], s: &mut RootLanes, max_evals: u32) -> bool {
    assert!(hxt.len() == ht.len() && hxt.len().is_multiple_of(16));
    let mu = load4(&s.mu);
    let mut acc = [[f32x4_splat(0.0); 4]; 3];
    let mut i = 0;
    while i < hxt.len() {
        for l in 0..4 {
            // SAFETY: i + 16 <= len of both.
            let terms = unsafe { root_terms4(load(hxt, i + 4 * l), load(ht, i + 4 * l), mu) };
            for (sum, v) in acc.iter_mut().zip(terms) {
                sum[l] = f32x4_add(sum[l], v);
            }
        }
        i += 16;
    }
    let [s3, sh, s4] = acc.map(|a| f32x4_add(f32x4_add(a[0], a[1]), f32x4_add(a[2], a[3])));
    let mut regs = RootRegs::load(s);
    let going = regs.step(s3, sh, s4, max_evals);
    regs.store(s);
    going
}
