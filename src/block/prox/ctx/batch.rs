//! A gathered batch of blocks run to phase 1's stop (or phase 2's target) by the bisection, and
//! a chunk of the grid cut into such batches.

use super::{Ctx, State, BATCH_ELEMS};
use crate::block::prox::packed::Packed;
use crate::block::root::Method;
use crate::kernels::{self, Reduction};

impl Ctx<'_, '_> {
    /// Runs a gathered batch (`blocks[i]` at `xb/hb[ofs[i]..ofs[i+1]]`; `xb` is scratch):
    /// phase 1 brackets and steps each block until its own convergence or `max_iter`; phase 2
    /// (`target = Some(K)`) steps every block up to `K`. Returns phase 1's `max_b k_b`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run_batch(
        &self,
        states: &mut [State],
        b0: usize,
        blocks: &[usize],
        ofs: &[usize],
        xb: &mut [f32],
        hb: &[f32],
        target: Option<usize>,
        pk: &mut Packed,
    ) -> usize {
        if self.method == Method::Newton && target.is_none() {
            return self.run_batch_root(states, b0, blocks, ofs, xb, hb, pk);
        }
        let n0 = ofs[1] - ofs[0];
        let quads = if n0.is_multiple_of(4) && n0 > 0 && ofs.windows(2).all(|w| w[1] - w[0] == n0) { blocks.len() / 4 } else { 0 };
        // Blocks of one length that is a multiple of 4 go four at a time (lanes = blocks), with
        // the per-block arithmetic and summation order of `step`: the same iterates, bit for bit.
        if quads > 0 {
            self.run_quads(states, b0, blocks, ofs, xb, hb, quads, target, pk);
        }
        // The other blocks, one at a time, on `H * x0` in place.
        let rest = ofs[4 * quads];
        for (x, h) in xb[rest..].iter_mut().zip(&hb[rest..]) {
            *x *= h;
        }
        let hx: &[f32] = xb;
        if target.is_none() {
            for (i, &b) in blocks.iter().enumerate().skip(4 * quads) {
                let (hxb, hbb) = (&hx[ofs[i]..ofs[i + 1]], &hb[ofs[i]..ofs[i + 1]]);
                let hx_norm = kernels::reduce_chunk(Reduction::SumSq, hxb).sqrt();
                let (h_min, h_max) = (kernels::reduce_chunk(Reduction::Min, hbb), kernels::reduce_chunk(Reduction::Max, hbb));
                states[b - b0] = self.bracket(hx_norm, h_min, h_max, self.t[b]);
            }
        }
        let mut any = true;
        while any {
            any = false;
            for (i, &b) in blocks.iter().enumerate().skip(4 * quads) {
                let s = &mut states[b - b0];
                let go = match target {
                    None => s.active,
                    Some(k) => s.iters < k,
                };
                if !go {
                    continue;
                }
                Self::step(s, &hx[ofs[i]..ofs[i + 1]], &hb[ofs[i]..ofs[i + 1]], self.t[b]);
                if target.is_none() && (s.iters >= self.max_iter || self.converged(s)) {
                    s.active = false;
                }
                any = true;
            }
        }
        if target.is_some() {
            return 0;
        }
        // A block that never converges (NaN bracket) keeps the global loop running to max_iter.
        blocks
            .iter()
            .map(|&b| {
                let s = &states[b - b0];
                if self.converged(s) {
                    s.iters
                } else {
                    self.max_iter
                }
            })
            .max()
            .unwrap_or(0)
    }

    /// Processes blocks `b0 .. b0 + states.len()` in batches; returns phase 1's `max_b k_b`.
    pub(in crate::block::prox) fn run_chunk(&self, states: &mut [State], b0: usize, target: Option<usize>) -> usize {
        let (mut xb, mut hb) = (Vec::new(), Vec::new());
        let mut pk = Packed::default();
        let (mut blocks, mut ofs) = (Vec::new(), vec![0usize]);
        let mut global = 0;
        let end = b0 + states.len();
        // Phase 1 on one spec without index map visits every block in grid order: consecutive
        // runs of blocks are gathered at once.
        if let ([p], None) = (self.parts, target) {
            let n = p.tiling.numel_per_block();
            if p.map.is_none() && n > 0 {
                let per_batch = BATCH_ELEMS.div_ceil(n).max(1);
                let mut lo = b0;
                while lo < end {
                    let hi = (lo + per_batch).min(end);
                    p.tiling.gather_blocks(p.x_layout, p.x, lo, hi, &mut xb);
                    p.tiling.gather_blocks(p.h_layout, p.h, lo, hi, &mut hb);
                    blocks.clear();
                    blocks.extend(lo..hi);
                    ofs.clear();
                    ofs.extend((0..=hi - lo).map(|i| i * n));
                    global = global.max(self.run_batch(states, b0, &blocks, &ofs, &mut xb, &hb, target, &mut pk));
                    lo = hi;
                }
                return global;
            }
        }
        for b in b0..end {
            if let Some(k) = target {
                if states[b - b0].iters >= k {
                    continue;
                }
            }
            self.gather(b, &mut xb, &mut hb);
            blocks.push(b);
            ofs.push(xb.len());
            if xb.len() >= BATCH_ELEMS {
                global = global.max(self.run_batch(states, b0, &blocks, &ofs, &mut xb, &hb, target, &mut pk));
                xb.clear();
                hb.clear();
                blocks.clear();
                ofs.truncate(1);
            }
        }
        if !blocks.is_empty() {
            global = global.max(self.run_batch(states, b0, &blocks, &ofs, &mut xb, &hb, target, &mut pk));
        }
        global
    }
}
