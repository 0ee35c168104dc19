//! Bisection four blocks to a lane group: a batch's equal-length blocks packed and stepped as
//! quads, iteration-outer.

use super::{Ctx, State};
use crate::block::prox::packed::Packed;
use crate::kernels::{self, ProxLanes, ProxStop};

impl Ctx<'_, '_> {
    /// Runs the batch's first `4 * quads` blocks (all `n` long, `n % 4 == 0`; `x` the gathered
    /// weights) four to a [`ProxLanes`], element-major inside each quad (`[4 j + k]` = element
    /// `j` of block `k`).
    /// Iteration-outer over all the quads: each quad's step is one dependency chain, and the
    /// quads' chains overlap. Per block it is the arithmetic of [`Ctx::step`], bit for bit.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run_quads(
        &self,
        states: &mut [State],
        b0: usize,
        blocks: &[usize],
        ofs: &[usize],
        x: &[f32],
        h: &[f32],
        quads: usize,
        target: Option<usize>,
        pk: &mut Packed,
    ) {
        let n = ofs[1] - ofs[0];
        let nq = 4 * n;
        // Fully overwritten below: resized, not cleared (no zero-fill per batch).
        pk.hxt.resize(quads * nq, 0.0);
        pk.ht.resize(quads * nq, 0.0);
        for q in 0..quads {
            let span = q * nq..(q + 1) * nq;
            kernels::prox_pack4(&x[span.clone()], &h[span.clone()], &mut pk.hxt[span.clone()], &mut pk.ht[span]);
        }
        let max_iter = u32::try_from(self.max_iter).unwrap_or(u32::MAX);
        let stop = match target {
            None => ProxStop::Converged { max_iter, atol: self.atol },
            Some(k) => ProxStop::At(u32::try_from(k).unwrap_or(u32::MAX)),
        };
        pk.lanes.clear();
        for q in 0..quads {
            let qb = &blocks[4 * q..4 * q + 4];
            let (qx, qh) = (&pk.hxt[q * nq..(q + 1) * nq], &pk.ht[q * nq..(q + 1) * nq]);
            if target.is_none() {
                let [sumsq, h_min, h_max, ..] = kernels::prox_stats4(qx, qh);
                for k in 0..4 {
                    states[qb[k] - b0] = self.bracket(sumsq[k].sqrt(), h_min[k], h_max[k], self.t[qb[k]]);
                }
            }
            let st: [State; 4] = std::array::from_fn(|k| states[qb[k] - b0]);
            let go = |s: &State| match target {
                None => s.active,
                Some(k) => s.iters < k,
            };
            pk.lanes.push(ProxLanes {
                lo: st.map(|s| s.lo),
                hi: st.map(|s| s.hi),
                mu: st.map(|s| s.mu),
                t: std::array::from_fn(|k| self.t[qb[k]]),
                iters: st.map(|s| s.iters as u32),
                go: st.map(|s| if go(&s) { u32::MAX } else { 0 }),
            });
        }
        pk.step_lanes(nq, stop);
        for (q, lanes) in pk.lanes.iter().enumerate() {
            for k in 0..4 {
                let s = &mut states[blocks[4 * q + k] - b0];
                s.lo = lanes.lo[k];
                s.hi = lanes.hi[k];
                s.mu = lanes.mu[k];
                s.iters = lanes.iters[k] as usize;
                if target.is_none() {
                    s.active = false;
                }
            }
        }
    }
}
