//! The Adam-conditioned bisection: its inner sums and one step of four searches side by side.

use crate::kernels::lanes::{ProxLanes, ProxStop};

/// The bisection's inner loop over a contiguous run: `sum ((h*x) / (h + mu))^2`.
pub fn cond_sumsq(x: &[f32], h: &[f32], mu: f32) -> f32 {
    debug_assert_eq!(x.len(), h.len());
    let mut lanes = [0.0f32; 4];
    let n4 = x.len() / 4 * 4;
    for i in (0..n4).step_by(4) {
        for l in 0..4 {
            let q = (h[i + l] * x[i + l]) / (h[i + l] + mu);
            lanes[l] += q * q;
        }
    }
    for i in n4..x.len() {
        let q = (h[i] * x[i]) / (h[i] + mu);
        lanes[i - n4] += q * q;
    }
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
}

/// Like [`cond_sumsq`] with `hx[i] = h[i] * x[i]` precomputed (the same f32 product, so the
/// same bits): `sum (hx / (h + mu))^2`.
pub fn cond_sumsq_hx(hx: &[f32], h: &[f32], mu: f32) -> f32 {
    debug_assert_eq!(hx.len(), h.len());
    let mut lanes = [0.0f32; 4];
    let mut q4 = hx.chunks_exact(4).zip(h.chunks_exact(4));
    for (a, b) in &mut q4 {
        for l in 0..4 {
            let q = a[l] / (b[l] + mu);
            lanes[l] += q * q;
        }
    }
    let n4 = hx.len() / 4 * 4;
    for i in n4..hx.len() {
        let q = hx[i] / (h[i] + mu);
        lanes[i - n4] += q * q;
    }
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
}

/// One bisection step of the lanes of `s` that go, on four interleaved blocks (layout as in
/// [`super::prox_stats4`]): `zeta = mu * sqrt(sum (hx / (h + mu))^2)` (0 where `mu == 0`) summed in the
/// order of [`cond_sumsq_hx`], the bracket end on the side of `zeta < t` moves to `mu`,
/// `mu = (lo + hi) / 2`, then `stop` is applied. Returns whether any lane still goes.
pub fn prox_step4(hxt: &[f32], ht: &[f32], s: &mut ProxLanes, stop: ProxStop) -> bool {
    debug_assert!(hxt.len() == ht.len() && hxt.len().is_multiple_of(16));
    let mu = s.mu;
    let mut acc = [[0.0f32; 4]; 4];
    for (a, c) in hxt.chunks_exact(16).zip(ht.chunks_exact(16)) {
        for (l, lane) in acc.iter_mut().enumerate() {
            for k in 0..4 {
                let q = a[4 * l + k] / (c[4 * l + k] + mu[k]);
                lane[k] += q * q;
            }
        }
    }
    for k in 0..4 {
        if s.go[k] == 0 {
            continue;
        }
        let sum = (acc[0][k] + acc[1][k]) + (acc[2][k] + acc[3][k]);
        // mu == 0 only for the bracket [0, 0] (t = 0 or H = 0 on the block): zeta is 0 there,
        // which also avoids 0/0 on zero conditioner entries.
        let zeta = if mu[k] == 0.0 { 0.0 } else { mu[k] * sum.sqrt() };
        if zeta < s.t[k] {
            s.lo[k] = mu[k];
        } else {
            s.hi[k] = mu[k];
        }
        s.mu[k] = (s.lo[k] + s.hi[k]) / 2.0;
        s.iters[k] += 1;
        let done = match stop {
            ProxStop::Converged { max_iter, atol } => s.iters[k] >= max_iter || (s.lo[k] - s.hi[k]).abs() < atol,
            ProxStop::At(n) => s.iters[k] >= n,
        };
        if done {
            s.go[k] = 0;
        }
    }
    s.go.iter().any(|&g| g != 0)
}
