//! The context of one proximal call (its parts, thresholds and options) and the steps every
//! path shares (bracket, bisection step, Newton start). The batched runs it makes are one file
//! each: [`batch`] (gathered batches, the bisection), [`quads`] (four blocks to a lane group),
//! [`newton`] (the Newton search's phase 1).

mod batch;
mod newton;
mod quads;

use super::part::{Bracket, Part};
use crate::block::root::{self, Method};
use crate::kernels::{self, nan_max, RootLanes};

#[derive(Clone, Copy)]
pub(super) struct State {
    pub(super) lo: f32,
    pub(super) hi: f32,
    pub(super) mu: f32,
    pub(super) iters: usize,
    /// Survivor factor: 0 for `D <= 0`.
    pub(super) keep: f32,
    /// Phase 1: still stepping.
    pub(super) active: bool,
    /// Newton method: `mu` holds the root, to be turned into the bisection's iterate once the
    /// global stop is known ([`root::bisection_iterate`]).
    pub(super) root: bool,
}

/// Elements gathered per batch: the batch's blocks iterate together (iteration-outer loop), so
/// the bisections of different blocks overlap in the pipeline instead of each waiting on its
/// own division/square-root latency, and their data stays in L1.
pub(super) const BATCH_ELEMS: usize = 4096;

pub(super) struct Ctx<'a, 'p> {
    pub(super) parts: &'a [Part<'p>],
    pub(super) t: &'a [f32],
    pub(super) max_iter: usize,
    pub(super) atol: f32,
    pub(super) eps: f32,
    pub(super) bracket: Bracket,
    pub(super) method: Method,
    /// Newton: `2^-(max_iter + 1)`, the global stop per bracket (see [`root`]) and the
    /// constants of [`kernels::root_start4`].
    pub(super) halvings: f32,
    pub(super) stop: root::Stop,
    pub(super) start: kernels::RootStart,
}

impl<'a, 'p> Ctx<'a, 'p> {
    pub(super) fn new(parts: &'a [Part<'p>], t: &'a [f32], max_iter: usize, atol: f32, eps: f32, bracket: Bracket, method: Method) -> Self {
        let halvings = root::halvings(max_iter);
        let start = kernels::RootStart { eps, coupling: bracket == Bracket::Coupling, halvings, atol };
        Ctx { parts, t, max_iter, atol, eps, bracket, method, halvings, stop: root::Stop::new(max_iter, atol), start }
    }

    pub(super) fn gather(&self, b: usize, xb: &mut Vec<f32>, hb: &mut Vec<f32>) {
        for p in self.parts {
            let sb = p.map.map_or(b, |m| m[b]);
            p.tiling.gather_block(p.x_layout, p.x, sb, xb);
            p.tiling.gather_block(p.h_layout, p.h, sb, hb);
        }
    }

    #[inline]
    pub(super) fn converged(&self, s: &State) -> bool {
        (s.lo - s.hi).abs() < self.atol
    }

    /// One midpoint step; `hx = h * x` (the definition's `(h * x) / (h + mu)`, same bits).
    #[inline]
    pub(super) fn step(s: &mut State, hx: &[f32], h: &[f32], tb: f32) {
        // mu == 0 only when the bracket is [0, 0] (t = 0 or H = 0 on the block); zeta is then 0,
        // which also avoids the definition's 0/0 on zero conditioner entries.
        let zeta = if s.mu == 0.0 { 0.0 } else { s.mu * kernels::cond_sumsq_hx(hx, h, s.mu).sqrt() };
        Self::update(s, zeta, tb);
    }

    /// The bracket update of one bisection step, given `zeta(mu)`.
    #[inline]
    pub(super) fn update(s: &mut State, zeta: f32, tb: f32) {
        // Selects, not branches: the comparison is a coin flip, a branch would mispredict half
        // of the time.
        let low = zeta < tb;
        s.lo = if low { s.mu } else { s.lo };
        s.hi = if low { s.hi } else { s.mu };
        s.mu = (s.lo + s.hi) / 2.0;
        s.iters += 1;
    }

    /// Lane `k` of `rl` starts the Newton search of a block bracketed as `s` (a `Plan::Search`),
    /// from its statistics `[sum (hx)², min H, max H, sum (hx)² H, sum (hx)² H²]` and threshold
    /// `tb`: the tolerance and start every path gives such a block, so its bits do not depend on
    /// the path.
    pub(super) fn search(&self, rl: &mut RootLanes, k: usize, s: &State, stats: [f32; 5], tb: f32) {
        let [sumsq, h_min, h_max, swh, swh2] = stats;
        let hx_norm = sumsq.sqrt();
        let tol = root::tolerance(s.lo, s.hi, hx_norm, tb, self.halvings, self.atol);
        let mu = kernels::scalar::root_start_mu(sumsq, swh, swh2, hx_norm, tb, s.lo, s.hi);
        rl.search(k, s.lo, s.hi, mu, tb, tol, h_min, h_max);
    }

    /// Phase 1's bracket of one block, from `||H x0||`, `min H`, `max H`.
    pub(super) fn bracket(&self, hx_norm: f32, h_min: f32, h_max: f32, tb: f32) -> State {
        let d = hx_norm - tb;
        let den = match self.bracket {
            Bracket::BlockSpec => nan_max(d, 0.0) + self.eps,
            Bracket::Coupling => nan_max(d, self.eps),
        };
        let lo = nan_max((tb * h_min) / den, 0.0);
        let hi = nan_max((tb * h_max) / den, 0.0);
        State {
            lo,
            hi,
            mu: (lo + hi) / 2.0,
            iters: 0,
            // A zero threshold is the identity (no shrinkage, whatever H): the formula taken
            // literally would zero a block with ||H x|| = 0, or write NaN where H = 0.
            keep: if d <= 0.0 && tb != 0.0 { 0.0 } else { 1.0 },
            active: self.max_iter > 0,
            root: false,
        }
    }
}
