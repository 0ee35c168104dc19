//! The context of one proximal call (its parts, thresholds and options) and the batched runs of
//! blocks it makes: bracket, bisection or Newton search, in gathered batches of blocks.

use super::packed::Packed;
use super::part::{Bracket, Part};
use crate::block::root::{self, Method, Plan};
use crate::kernels::{self, nan_max, ProxLanes, ProxStop, Reduction, RootLanes};

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

    /// Processes blocks `b0 .. b0 + states.len()` in batches; returns phase 1's `max_b k_b`.
    pub(super) fn run_chunk(&self, states: &mut [State], b0: usize, target: Option<usize>) -> usize {
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
