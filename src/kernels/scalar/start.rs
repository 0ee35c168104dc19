//! The Newton search's bracket and start from a block's statistics, and the blocks that need no
//! search (zeroed).

use crate::kernels::lanes::RootStart;

/// The Newton search's start from a block's moments: `sum w = A²`, `sum w h`, `sum w h²`
/// (`w = (hx)²`), `a = A`, threshold `t`, inside the bracket `(lo, hi)`. With `m` and `V` the
/// `w`-weighted mean and variance of `h`, `1 / sqrt(S2) = (m + mu - 1.5 V / (m + mu)) / A` to
/// second order in the spread of `h` around `m` (exact for constant `H`), so the root of
/// `1 / sqrt(S2) = mu / t` is near the positive root of
/// `(A - t) mu² + (A - 2t) m mu - t (m² - 1.5 V) = 0`, taken in the form that subtracts no two
/// like terms. On Adam-like conditioners it lies close enough to the root for one evaluation to
/// certify it ([`super::certified_root`]; how close on the bench's data: bench/README.md). Anything outside
/// `(lo, hi)` (or NaN) falls back to the bracket's midpoint.
#[inline(always)]
pub fn root_start_mu(sumsq: f32, swh: f32, swh2: f32, a: f32, t: f32, lo: f32, hi: f32) -> f32 {
    let mid = (lo + hi) * 0.5;
    let inv = 1.0 / sumsq;
    let m = swh * inv;
    let v = swh2 * inv - m * m;
    // pmax(v, 0): a negative variance (rounding) is 0, NaN stays NaN.
    let v = if v < 0.0 { 0.0 } else { v };
    let p = a - t;
    let qc = (p - t) * m;
    let rc = t * (m * m - 1.5 * v);
    let root = (qc * qc + (4.0 * p) * rc).sqrt();
    let (num, den) = if qc > 0.0 { (rc * 2.0, qc + root) } else { (root - qc, p * 2.0) };
    let mu = num / den;
    if mu > lo && mu < hi {
        mu
    } else {
        mid
    }
}

/// The defining bisection's bracket (docs/API.md, "The soft threshold") and the Newton search's start for four blocks at once, from their
/// [`super::prox_stats4`] and thresholds: `[lo, hi, mu, tol]` per lane, `mu` being
/// [`super::root_start_mu`], with the arithmetic of the one-block path (`block::prox` bracket,
/// `block::root::tolerance`),
/// or `None` unless every lane is a plain search (threshold > 0, `||H x0|| > t`, `min H > 0`,
/// everything finite, `lo < hi`): the other blocks take the one-lane path.
pub fn root_start4(stats: &[[f32; 4]; 5], t: [f32; 4], c: &RootStart) -> Option<[[f32; 4]; 4]> {
    let mut out = [[0.0f32; 4]; 4];
    for k in 0..4 {
        [out[0][k], out[1][k], out[2][k], out[3][k]] = root_start_lane(stats, k, t[k], c)?;
    }
    Some(out)
}

/// [`root_start4`]'s lane `k`: `[lo, hi, mu, tol]`, or `None` unless it is a plain search.
#[inline(always)]
pub fn root_start_lane(stats: &[[f32; 4]; 5], k: usize, tk: f32, c: &RootStart) -> Option<[f32; 4]> {
    let a = stats[0][k].sqrt();
    let d = a - tk;
    let den = if c.coupling {
        if d >= c.eps {
            d
        } else {
            c.eps
        }
    } else {
        d + c.eps
    };
    let (lo, hi) = ((tk * stats[1][k]) / den, (tk * stats[2][k]) / den);
    let plain = tk > 0.0 && tk < f32::INFINITY && a < f32::INFINITY && a > tk && stats[1][k] > 0.0 && lo < hi && hi < f32::INFINITY;
    if !plain {
        return None;
    }
    let resolution = 4.0 * f32::EPSILON * hi * (a / d);
    let tol = ((hi - lo) * c.halvings).max(c.atol * 0.5).max(resolution);
    let mu = root_start_mu(stats[0][k], stats[3][k], stats[4][k], a, tk, lo, hi);
    Some([lo, hi, mu, tol])
}

/// A block the step zeroes (`||H x0|| <= t`, `t > 0`) whose result needs no search: with
/// `min H > 0` and `eps > 0` the bracket is `[t min H / eps, t max H / eps]` and the block is
/// written `((h / (h + mu)) x) 0` with `mu` its upper end, or its midpoint where it is a point or
/// there is no iteration (`block::root::plan`'s order, and `block::prox`'s bracket). Returns that
/// `mu`, or `None` (the block is not zeroed, or its case is left to the general path).
#[inline(always)]
pub fn zeroed_mu(a: f32, t: f32, h_min: f32, h_max: f32, c: &RootStart, max_evals: u32) -> Option<f32> {
    if !(a - t <= 0.0 && t > 0.0 && h_min > 0.0 && c.eps > 0.0) {
        return None;
    }
    let (lo, hi) = ((t * h_min) / c.eps, (t * h_max) / c.eps);
    Some(if max_evals == 0 || lo == hi { (lo + hi) * 0.5 } else { hi })
}
