//! The safeguarded Newton search of the Adam step: its per-block sums and one step of four
//! searches side by side.

use super::certify::certified_root;
use crate::kernels::lanes::RootLanes;

/// One element's terms of [`root_sums_hx`]: `q² r`, `q² r h` and `q² r r` with
/// `r = 1 / (h + mu)`, `q = hx r`.
#[inline(always)]
fn root_terms(hx: f32, h: f32, mu: f32) -> [f32; 3] {
    let r = 1.0 / (h + mu);
    let q = hx * r;
    let q2r = (q * q) * r;
    [q2r, q2r * h, q2r * r]
}

/// The sums one Newton step needs, for one block at `mu` (`r = 1 / (h + mu)`, `q² r` with
/// `q = hx * r`, one division per element): `[S3, Sh, S4] = [sum q² r, sum (q² r) h,
/// sum (q² r) r]`, each in the lane order of [`super::cond_sumsq_hx`] (`sum q² = Sh + mu S3`).
pub fn root_sums_hx(hx: &[f32], h: &[f32], mu: f32) -> [f32; 3] {
    debug_assert_eq!(hx.len(), h.len());
    let mut lanes = [[0.0f32; 4]; 3];
    for (i, (&a, &b)) in hx.iter().zip(h).enumerate() {
        for (l, v) in lanes.iter_mut().zip(root_terms(a, b, mu)) {
            l[i % 4] += v;
        }
    }
    lanes.map(|l| (l[0] + l[1]) + (l[2] + l[3]))
}

/// The safeguarded Newton step of lane `k` from its sums `[S3, Sh, S4]` at `mu` (see
/// `block::root` for the algebra): `S2 = Sh + mu S3`, `zeta = mu sqrt(S2)` moves the bracket
/// end on its side to `mu` (the bisection's test), then `mu - S2 g / (S3 g - sqrt(S2) Sh)` with
/// `g = t - zeta` is taken if it stays in the bracket and at most halves the previous step;
/// otherwise the open bracket end it overshoots, else the midpoint. Stops once the root is
/// certified within `tol` of the model's ([`certified_root`]), the bracket is within `2 tol`
/// (taking its midpoint), the step within `tol`, the error predicted after two Newton steps
/// (`s (s / s_prev)²`, quadratic convergence) within `tol`, or after `max_evals`.
#[inline(always)]
pub fn root_step_lane(s: &mut RootLanes, k: usize, sums: [f32; 3], max_evals: u32) {
    let [s3, sh, s4] = sums;
    let (mu, t) = (s.mu[k], s.t[k]);
    let s2 = sh + mu * s3;
    let w = s2.sqrt();
    let zeta = if mu == 0.0 { 0.0 } else { mu * w };
    if zeta < t {
        s.lo[k] = mu;
        s.lo_open[k] = 0;
    } else {
        s.hi[k] = mu;
        s.hi_open[k] = 0;
    }
    let (lo, hi, tol) = (s.lo[k], s.hi[k], s.tol[k]);
    let g = t - zeta;
    s.evals[k] += 1;
    let (certified, model) = certified_root([mu, t, tol, lo, hi, s.h_min[k], s.h_max[k]], [s2, s3, sh, s4, w, g]);
    if certified {
        s.mu[k] = model;
        s.go[k] = 0;
        return;
    }
    let newton = mu - (s2 * g) / (s3 * g - w * sh);
    let mid = (lo + hi) * 0.5;
    let take = newton >= lo && newton <= hi && (newton - mu).abs() * 2.0 <= s.prev[k];
    let next = if take {
        newton
    } else if newton > hi && s.hi_open[k] != 0 {
        hi
    } else if newton < lo && s.lo_open[k] != 0 {
        lo
    } else {
        mid
    };
    let narrow = hi - lo <= tol * 2.0;
    let next = if narrow { mid } else { next };
    let step = (next - mu).abs();
    let ratio = step / s.newt[k];
    let predicted = take && ratio * ratio * step <= tol;
    s.mu[k] = next;
    s.prev[k] = step;
    s.newt[k] = if take { step } else { 0.0 };
    if narrow || step <= tol || predicted || s.evals[k] >= max_evals {
        s.go[k] = 0;
    }
}

/// One evaluation and safeguarded Newton step of the lanes of `s` that go, on four interleaved
/// blocks (layout of [`super::prox_stats4`]); the per-lane sums are those of [`root_sums_hx`], bit for
/// bit, and the step is [`super::root_step_lane`]'s. Returns whether any lane still goes.
pub fn prox_root4(hxt: &[f32], ht: &[f32], s: &mut RootLanes, max_evals: u32) -> bool {
    debug_assert!(hxt.len() == ht.len() && hxt.len().is_multiple_of(16));
    let mut acc = [[[0.0f32; 4]; 4]; 3];
    for (a, c) in hxt.chunks_exact(16).zip(ht.chunks_exact(16)) {
        for l in 0..4 {
            for k in 0..4 {
                let terms = root_terms(a[4 * l + k], c[4 * l + k], s.mu[k]);
                for (sum, v) in acc.iter_mut().zip(terms) {
                    sum[l][k] += v;
                }
            }
        }
    }
    for k in 0..4 {
        if s.go[k] != 0 {
            let sums = acc.map(|v| (v[0][k] + v[1][k]) + (v[2][k] + v[3][k]));
            root_step_lane(s, k, sums, max_evals);
        }
    }
    s.go.iter().any(|&g| g != 0)
}
