//! The Adam-conditioned group-lasso proximal step, solved per block by bisection on `mu`
//! exactly as the seed does it (bracket, midpoint, global `atol` stop).
//!
//! For block `b` with weights `x0`, diagonal conditioner `H > 0` and threshold `t`, the prox
//! of `t * ||x_b||` in the `H` metric is `x = H x0 / (H + mu)` with `mu * ||H x0 / (H + mu)|| = t`.
//! The seed brackets `mu` in `[t * min H / den, t * max H / den]` with `D = ||H x0|| - t` and runs
//! `max_iter` midpoint steps, stopping early when *every* block's bracket is narrower than
//! `atol`. Each block's bracket evolves independently of the others; only the stop is global.
//! So this runs each block to its own convergence while its data is hot in cache, takes the
//! global stop `K = max_b k_b`, and continues the blocks that stopped earlier up to `K`: the
//! same iterates as the seed's whole-tensor loop, without 20 passes over the weights.

use crate::error::Result;
use crate::kernels::{self, nan_max, nan_min, par, Reduction};
use crate::layout::{Strided, Tiling};
use crate::param::try_alloc;

/// BlockSpec's final write, the seed's `(H / (H + mu)) * x`; where `H + mu == 0` (a zero
/// conditioner entry with `mu = 0`, i.e. a zero threshold) the seed's 0/0 is defined as no
/// change.
#[inline]
pub fn scaled_spec(x: f32, h: f32, mu: f32) -> f32 {
    let d = h + mu;
    if d == 0.0 {
        x
    } else {
        (h / d) * x
    }
}

/// BlockCoupling's final write, the seed's `x * H / (H + mu)`, with the same 0/0 definition.
#[inline]
pub fn scaled_coupling(x: f32, h: f32, mu: f32) -> f32 {
    let d = h + mu;
    if d == 0.0 {
        x
    } else {
        x * h / d
    }
}

/// The two bracket denominators of the seed (a quirk the conformance cases pin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bracket {
    /// `BlockSpec`: `den = max(D, 0) + eps`.
    BlockSpec,
    /// `BlockCoupling`: `den = max(D, eps)`.
    Coupling,
}

/// One spec's share of the (joint) blocks.
pub struct Part<'a> {
    pub tiling: &'a Tiling,
    pub x_layout: &'a Strided,
    pub x: &'a [f32],
    pub h_layout: &'a Strided,
    pub h: &'a [f32],
    /// Aligned grid index -> this spec's grid index (`None`: identity).
    pub map: Option<&'a [usize]>,
}

#[derive(Clone, Copy)]
struct State {
    lo: f32,
    hi: f32,
    mu: f32,
    iters: usize,
    /// Survivor factor: 0 for `D <= 0`.
    keep: f32,
    /// Phase 1: still stepping.
    active: bool,
}

/// Elements gathered per batch: the batch's blocks iterate together (iteration-outer loop), so
/// the bisections of different blocks overlap in the pipeline instead of each waiting on its
/// own division/square-root latency, and their data stays in L1.
const BATCH_ELEMS: usize = 4096;

struct Ctx<'a, 'p> {
    parts: &'a [Part<'p>],
    t: &'a [f32],
    max_iter: usize,
    atol: f32,
    eps: f32,
    bracket: Bracket,
}

impl Ctx<'_, '_> {
    fn gather(&self, b: usize, xb: &mut Vec<f32>, hb: &mut Vec<f32>) {
        for p in self.parts {
            let sb = p.map.map_or(b, |m| m[b]);
            p.tiling.gather_block(p.x_layout, p.x, sb, xb);
            p.tiling.gather_block(p.h_layout, p.h, sb, hb);
        }
    }

    #[inline]
    fn converged(&self, s: &State) -> bool {
        (s.lo - s.hi).abs() < self.atol
    }

    /// One midpoint step; `hx = h * x` (the seed's `(h * x) / (h + mu)`, same bits).
    #[inline]
    fn step(s: &mut State, hx: &[f32], h: &[f32], tb: f32) {
        // mu == 0 only when the bracket is [0, 0] (t = 0 or H = 0 on the block); zeta is then 0,
        // which also avoids the seed's 0/0 on zero conditioner entries.
        let zeta = if s.mu == 0.0 { 0.0 } else { s.mu * kernels::cond_sumsq_hx(hx, h, s.mu).sqrt() };
        Self::update(s, zeta, tb);
    }

    /// The bracket update of one bisection step, given `zeta(mu)`.
    #[inline]
    fn update(s: &mut State, zeta: f32, tb: f32) {
        // Selects, not branches: the comparison is a coin flip, a branch would mispredict half
        // of the time.
        let low = zeta < tb;
        s.lo = if low { s.mu } else { s.lo };
        s.hi = if low { s.hi } else { s.mu };
        s.mu = (s.lo + s.hi) / 2.0;
        s.iters += 1;
    }

    /// Steps four blocks of `n` elements each (`hx`, `h`: the four blocks one after the other) as
    /// `step` would, lane `k` being block `blocks[k]`: same divisions, same lanes `j % 4`, same
    /// `(l0 + l1) + (l2 + l3)`, so the same bits. Phase 1 (`target = None`) runs each lane until
    /// it is inactive; phase 2 until it has `K` iterations.
    #[allow(clippy::too_many_arguments)]
    fn run_quad(&self, states: &mut [State], b0: usize, blocks: &[usize], hx: &[f32], h: &[f32], n: usize, target: Option<usize>, scratch: &mut Vec<f32>) {
        // Element-major, block-minor: element j of block k at [4 j + k].
        scratch.clear();
        scratch.resize(8 * n, 0.0);
        let (hxt, ht) = scratch.split_at_mut(4 * n);
        for k in 0..4 {
            for j in 0..n {
                hxt[4 * j + k] = hx[k * n + j];
                ht[4 * j + k] = h[k * n + j];
            }
        }
        let t: [f32; 4] = std::array::from_fn(|k| self.t[blocks[k]]);
        // The four states live in locals for the whole loop (written back at the end).
        let mut st: [State; 4] = std::array::from_fn(|k| states[blocks[k] - b0]);
        loop {
            let go: [bool; 4] = std::array::from_fn(|k| match target {
                None => st[k].active,
                Some(kk) => st[k].iters < kk,
            });
            if !go.iter().any(|&g| g) {
                break;
            }
            let mu: [f32; 4] = std::array::from_fn(|k| st[k].mu);
            // acc[l][k]: lane l (elements j with j % 4 == l) of block k; static indices keep the
            // accumulators in registers and let the compiler vectorize over k.
            let mut acc = [[0.0f32; 4]; 4];
            for (a, c) in hxt.chunks_exact(16).zip(ht.chunks_exact(16)) {
                for (l, lane) in acc.iter_mut().enumerate() {
                    for k in 0..4 {
                        let q = a[4 * l + k] / (c[4 * l + k] + mu[k]);
                        lane[k] += q * q;
                    }
                }
            }
            for (k, s) in st.iter_mut().enumerate() {
                if !go[k] {
                    continue;
                }
                let sum = (acc[0][k] + acc[1][k]) + (acc[2][k] + acc[3][k]);
                let zeta = if s.mu == 0.0 { 0.0 } else { s.mu * sum.sqrt() };
                Self::update(s, zeta, t[k]);
                if target.is_none() && (s.iters >= self.max_iter || self.converged(s)) {
                    s.active = false;
                }
            }
        }
        for (k, s) in st.into_iter().enumerate() {
            states[blocks[k] - b0] = s;
        }
    }

    /// Runs a gathered batch (`blocks[i]` at `xb/hb[ofs[i]..ofs[i+1]]`, `xb` turned into `hx`):
    /// phase 1 brackets and steps each block until its own convergence or `max_iter`; phase 2
    /// (`target = Some(K)`) steps every block up to `K`. Returns phase 1's `max_b k_b`.
    fn run_batch(&self, states: &mut [State], b0: usize, blocks: &[usize], ofs: &[usize], xb: &mut [f32], hb: &[f32], target: Option<usize>) -> usize {
        for (x, h) in xb.iter_mut().zip(hb) {
            *x *= h;
        }
        let hx: &[f32] = xb;
        if target.is_none() {
            for (i, &b) in blocks.iter().enumerate() {
                let (hxb, hbb) = (&hx[ofs[i]..ofs[i + 1]], &hb[ofs[i]..ofs[i + 1]]);
                let hx_norm = kernels::reduce_chunk(Reduction::SumSq, hxb).sqrt();
                let h_min = hbb.iter().fold(f32::INFINITY, |a, &h| nan_min(a, h));
                let h_max = hbb.iter().fold(f32::NEG_INFINITY, |a, &h| nan_max(a, h));
                let tb = self.t[b];
                let d = hx_norm - tb;
                let den = match self.bracket {
                    Bracket::BlockSpec => nan_max(d, 0.0) + self.eps,
                    Bracket::Coupling => nan_max(d, self.eps),
                };
                let lo = nan_max((tb * h_min) / den, 0.0);
                let hi = nan_max((tb * h_max) / den, 0.0);
                states[b - b0] = State {
                    lo,
                    hi,
                    mu: (lo + hi) / 2.0,
                    iters: 0,
                    // A zero threshold is the identity (no shrinkage, whatever H): the seed
                    // would zero a block with ||H x|| = 0, or write NaN where H = 0.
                    keep: if d <= 0.0 && tb != 0.0 { 0.0 } else { 1.0 },
                    active: self.max_iter > 0,
                };
            }
        }
        // Blocks of one length that is a multiple of 4 go four at a time (lanes = blocks), with
        // the per-block arithmetic and summation order of `step`: the same iterates, bit for bit,
        // without a horizontal sum and a call per block and iteration.
        let n0 = ofs[1] - ofs[0];
        let quads = if n0 % 4 == 0 && n0 > 0 && ofs.windows(2).all(|w| w[1] - w[0] == n0) { blocks.len() / 4 } else { 0 };
        if quads > 0 {
            let mut scratch = Vec::with_capacity(8 * n0);
            for q in 0..quads {
                let span = ofs[4 * q]..ofs[4 * q + 4];
                self.run_quad(states, b0, &blocks[4 * q..4 * q + 4], &hx[span.clone()], &hb[span], n0, target, &mut scratch);
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
                if self.converged(s) { s.iters } else { self.max_iter }
            })
            .max()
            .unwrap_or(0)
    }

    /// Processes blocks `b0 .. b0 + states.len()` in batches; returns phase 1's `max_b k_b`.
    fn run_chunk(&self, states: &mut [State], b0: usize, target: Option<usize>) -> usize {
        let (mut xb, mut hb) = (Vec::new(), Vec::new());
        let (mut blocks, mut ofs) = (Vec::new(), vec![0usize]);
        let mut global = 0;
        for b in b0..b0 + states.len() {
            if let Some(k) = target {
                if states[b - b0].iters >= k {
                    continue;
                }
            }
            self.gather(b, &mut xb, &mut hb);
            blocks.push(b);
            ofs.push(xb.len());
            if xb.len() >= BATCH_ELEMS {
                global = global.max(self.run_batch(states, b0, &blocks, &ofs, &mut xb, &hb, target));
                xb.clear();
                hb.clear();
                blocks.clear();
                ofs.truncate(1);
            }
        }
        if !blocks.is_empty() {
            global = global.max(self.run_batch(states, b0, &blocks, &ofs, &mut xb, &hb, target));
        }
        global
    }
}

/// Returns `mu` per block and the survivor factors (1 keeps, 0 for `D <= 0`), both indexed by
/// the aligned grid. Blocks are independent until the global stop, so chunks of blocks run in
/// parallel (with threads) with the same per-block iterates as the sequential loop.
pub fn bisect(parts: &[Part], t: &[f32], max_iter: usize, atol: f32, eps: f32, bracket: Bracket) -> Result<(Vec<f32>, Vec<f32>)> {
    let nb = t.len();
    let init = State { lo: 0.0, hi: 0.0, mu: 0.0, iters: 0, keep: 1.0, active: false };
    let mut states: Vec<State> = try_alloc(nb, init)?;
    let ctx = Ctx { parts, t, max_iter, atol, eps, bracket };
    let per_block: usize = parts.iter().map(|p| p.tiling.numel_per_block()).sum::<usize>().max(1);
    let tasks = par::tasks_for(nb * per_block * max_iter.max(1), 1 << 16, nb);
    let chunk = nb.div_ceil(tasks.max(1)).max(1);

    // Phase 1: bracket every block and run it until its own bracket is below atol.
    let global = par::map_chunks_mut(&mut states, chunk, |i, st| ctx.run_chunk(st, i * chunk, None))
        .into_iter()
        .max()
        .unwrap_or(0);
    // Phase 2: the seed only stops when all blocks are converged; continue the early ones.
    if states.iter().any(|s| s.iters < global) {
        par::map_chunks_mut(&mut states, chunk, |i, st| ctx.run_chunk(st, i * chunk, Some(global)));
    }
    let mu = states.iter().map(|s| s.mu).collect();
    let keep = states.iter().map(|s| s.keep).collect();
    Ok((mu, keep))
}
