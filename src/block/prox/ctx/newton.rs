//! The Newton method's phase 1 on a gathered batch: bracket, plan, then the root search four
//! blocks to a lane group where the lengths allow.

use super::{Ctx, State};
use crate::block::prox::packed::Packed;
use crate::block::root::{self, Plan};
use crate::kernels::{self, ProxLanes, ProxStop, Reduction, RootLanes};

impl Ctx<'_, '_> {
    /// The Newton method's phase 1 on a gathered batch (layout as in [`Ctx::run_batch`]): every
    /// block is bracketed as the bisection brackets it, then searched for its root (four to a [`RootLanes`]
    /// where the lengths allow), decided without evaluating, or bisected (see [`root::plan`]).
    /// Returns the batch's share of the global stop: the step at which each bracket would be
    /// below `atol` ([`root::Stop::steps`]; a bisected block's own count).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run_batch_root(
        &self,
        states: &mut [State],
        b0: usize,
        blocks: &[usize],
        ofs: &[usize],
        xb: &mut [f32],
        hb: &[f32],
        pk: &mut Packed,
    ) -> usize {
        let n = ofs[1] - ofs[0];
        let quads = if n.is_multiple_of(4) && n > 0 && ofs.windows(2).all(|w| w[1] - w[0] == n) { blocks.len() / 4 } else { 0 };
        let max_evals = u32::try_from(self.max_iter).unwrap_or(u32::MAX);
        let nq = 4 * n;
        if quads > 0 {
            pk.hxt.resize(quads * nq, 0.0);
            pk.ht.resize(quads * nq, 0.0);
            pk.roots.clear();
            pk.lanes.clear();
            let mut bisecting = false;
            for q in 0..quads {
                let span = q * nq..(q + 1) * nq;
                kernels::prox_pack4(&xb[span.clone()], &hb[span.clone()], &mut pk.hxt[span.clone()], &mut pk.ht[span.clone()]);
                let stats = kernels::prox_stats4(&pk.hxt[span.clone()], &pk.ht[span]);
                let (mut rl, mut bl) = (RootLanes::default(), ProxLanes::default());
                let qt: [f32; 4] = std::array::from_fn(|k| self.t[blocks[4 * q + k]]);
                // Four plain searches (the usual quad): bracket and start in SIMD lanes.
                let start = if self.max_iter > 0 { kernels::root_start4(&stats, qt, &self.start) } else { None };
                if let Some(start) = start {
                    let [lo, hi, mu, _] = start;
                    rl = RootLanes::quad(&start, qt, &stats);
                    for k in 0..4 {
                        let s = State { lo: lo[k], hi: hi[k], mu: mu[k], iters: 0, keep: 1.0, active: true, root: false };
                        states[blocks[4 * q + k] - b0] = s;
                    }
                    pk.roots.push(rl);
                    pk.lanes.push(bl);
                    continue;
                }
                let [sumsq, h_min, h_max, ..] = stats;
                for k in 0..4 {
                    let b = blocks[4 * q + k];
                    let tb = self.t[b];
                    let hx_norm = sumsq[k].sqrt();
                    let mut s = self.bracket(hx_norm, h_min[k], h_max[k], tb);
                    match root::plan(s.lo, s.hi, s.keep, hx_norm, h_min[k], tb, self.max_iter) {
                        Plan::Midpoint => {}
                        Plan::Upper => s.mu = s.hi,
                        Plan::Search => self.search(&mut rl, k, &s, stats.map(|v| v[k]), tb),
                        Plan::Bisect => {
                            (bl.lo[k], bl.hi[k], bl.mu[k], bl.t[k], bl.go[k]) = (s.lo, s.hi, s.mu, tb, u32::MAX);
                            bisecting = true;
                        }
                    }
                    states[b - b0] = s;
                }
                pk.roots.push(rl);
                pk.lanes.push(bl);
            }
            pk.search_roots(nq, max_evals);
            if bisecting {
                pk.step_lanes(nq, ProxStop::Converged { max_iter: max_evals, atol: self.atol });
            }
            for (q, (rl, bl)) in pk.roots.iter().zip(&pk.lanes).enumerate() {
                for k in 0..4 {
                    let s = &mut states[blocks[4 * q + k] - b0];
                    // A search or a bisection evaluates at least once (max_iter > 0 for both).
                    if rl.evals[k] > 0 {
                        (s.mu, s.root) = (rl.mu[k], true);
                    } else if bl.iters[k] > 0 {
                        (s.lo, s.hi, s.mu, s.iters) = (bl.lo[k], bl.hi[k], bl.mu[k], bl.iters[k] as usize);
                    }
                }
            }
        }
        // The other blocks, one at a time, on `H * x0` in place.
        let rest = ofs[4 * quads];
        for (x, h) in xb[rest..].iter_mut().zip(&hb[rest..]) {
            *x *= h;
        }
        let hx: &[f32] = xb;
        for (i, &b) in blocks.iter().enumerate().skip(4 * quads) {
            let (hxb, hbb) = (&hx[ofs[i]..ofs[i + 1]], &hb[ofs[i]..ofs[i + 1]]);
            let tb = self.t[b];
            let sumsq = kernels::reduce_chunk(Reduction::SumSq, hxb);
            let hx_norm = sumsq.sqrt();
            let (h_min, h_max) = (kernels::reduce_chunk(Reduction::Min, hbb), kernels::reduce_chunk(Reduction::Max, hbb));
            let mut s = self.bracket(hx_norm, h_min, h_max, tb);
            match root::plan(s.lo, s.hi, s.keep, hx_norm, h_min, tb, self.max_iter) {
                Plan::Midpoint => {}
                Plan::Upper => s.mu = s.hi,
                Plan::Search => {
                    let mut rl = RootLanes::default();
                    let [swh, swh2] = kernels::scalar::hx_moments(hxb, hbb);
                    self.search(&mut rl, 0, &s, [sumsq, h_min, h_max, swh, swh2], tb);
                    while rl.go[0] != 0 {
                        let sums = kernels::root_sums_hx(hxb, hbb, rl.mu[0]);
                        kernels::scalar::root_step_lane(&mut rl, 0, sums, max_evals);
                    }
                    (s.mu, s.root) = (rl.mu[0], true);
                }
                Plan::Bisect => loop {
                    Self::step(&mut s, hxb, hbb, tb);
                    if s.iters >= self.max_iter || self.converged(&s) {
                        break;
                    }
                },
            }
            states[b - b0] = s;
        }
        // Bisected blocks stop (phase 1) as in the bisection method and continue to the global
        // stop in phase 2; the others need no phase 2 (`iters = MAX`), their count comes from
        // their bracket's width.
        let mut global = 0;
        for &b in blocks {
            let s = &mut states[b - b0];
            let k = if s.iters > 0 {
                if self.converged(s) {
                    s.iters
                } else {
                    self.max_iter
                }
            } else {
                s.iters = usize::MAX;
                self.stop.steps(s.hi - s.lo)
            };
            global = global.max(k);
        }
        global
    }
}
