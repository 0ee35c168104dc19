//! The Newton method in one pass over a 2-D spec's weights: each run of blocks is searched and
//! written while it is in cache, with no per-block state kept over the whole grid and no second
//! pass reading weights and conditioners again. With contiguous rows and a block width that is a
//! multiple of 4 the blocks are read and written where they lie ([`kernels::adam_run`], quads of
//! plain searches and zeroed blocks; any other quad, and every other layout, is gathered into a
//! batch, searched and scattered back by [`run_batch`]), with the same bits either way.
//!
//! What makes this possible is that the bisection's global stop `K` (the step at which every bracket
//! is below `atol`, else `maxIter`) is known before any block is searched: it is `maxIter` when
//! `atol = 0`, 0 when `maxIter = 0`, and otherwise `maxIter` as soon as one block's bracket is
//! wide enough to need every step ([`root::Stop::steps`]), which a probe of the first batch
//! finds for real data. With `K` known, a searched block's result is the bisection's iterate read
//! off its root ([`root::bisection_iterate`]), and a bisected (degenerate) block steps straight
//! to `K`: the same per-block values as the two-phase path in [`super`], so the same bits. When
//! the probe cannot decide, the caller takes that two-phase path.
//!
//! Threads take slabs of block rows: every block is computed alone from the same `K`, and the
//! slabs write disjoint rows, so any thread count gives the same bits.

use super::ctx::{Ctx, BATCH_ELEMS};
use super::packed::Packed;
use crate::block::root::{self, Plan};
use crate::kernels::{self, par, ProxLanes, ProxStop, RootLanes};
use crate::layout::{Strided, Tiling};

/// A block's result once its bracket is known.
#[derive(Clone, Copy)]
enum Kind {
    /// `mu` is final (midpoint, upper end).
    Fixed,
    /// `mu` comes from the Newton lanes: the root, then the bisection iterate at `K`.
    Root,
    /// `mu` comes from the bisection lanes, stepped to `K`.
    Bisect,
}

/// A 2-D block grid over a mutable weight and its conditioners, addressed by raw pointer so that
/// slab tasks can write their own rows.
struct Grid<'a> {
    tiling: &'a Tiling,
    x_layout: &'a Strided,
    x: par::SharedMut<f32>,
    h_layout: &'a Strided,
    h: &'a [f32],
}

impl Grid<'_> {
    /// Visits block rows of blocks `lo..hi` (grid row-major) as `(offset in the weight, index in
    /// the batch buffer)`: `block[1]` elements each, stride `x_layout.stride[1]` in the weight.
    #[inline(always)]
    fn for_rows(&self, lo: usize, hi: usize, mut f: impl FnMut(usize, usize)) {
        let (g1, bh, bw) = (self.tiling.grid[1], self.tiling.block[0], self.tiling.block[1]);
        let (s0, s1) = (self.x_layout.stride[0], self.x_layout.stride[1]);
        // The grid position advances without a division per block.
        let (mut gr, mut gc) = (lo / g1, lo % g1);
        for i in 0..hi - lo {
            let base = gr * bh * s0 + gc * bw * s1;
            for r in 0..bh {
                f(base + r * s0, (i * bh + r) * bw);
            }
            gc += 1;
            if gc == g1 {
                (gr, gc) = (gr + 1, 0);
            }
        }
    }

    /// Copies blocks `lo..hi` of the weight into `out`, as [`Tiling::gather_blocks`] lays them.
    fn gather_x(&self, lo: usize, hi: usize, out: &mut Vec<f32>) {
        let (bw, s1) = (self.tiling.block[1], self.x_layout.stride[1]);
        out.resize((hi - lo) * self.tiling.numel_per_block(), 0.0);
        let p = self.x.get();
        let dst = out.as_mut_ptr();
        self.for_rows(lo, hi, |o, d| {
            // SAFETY: the layout lies inside the weight (checked by the caller), `d + bw` inside
            // `out`; only this task writes these weight elements (its slab of block rows).
            unsafe {
                if s1 == 1 {
                    copy_row(p.add(o), dst.add(d), bw);
                } else {
                    for i in 0..bw {
                        *dst.add(d + i) = *p.add(o + i * s1);
                    }
                }
            }
        });
    }

    /// Writes `vals` (laid out as [`Grid::gather_x`] reads) back to blocks `lo..hi`.
    fn scatter_x(&self, lo: usize, hi: usize, vals: &[f32]) {
        let (bw, s1) = (self.tiling.block[1], self.x_layout.stride[1]);
        assert!(vals.len() >= (hi - lo) * self.tiling.numel_per_block());
        let p = self.x.get();
        let src = vals.as_ptr();
        self.for_rows(lo, hi, |o, d| {
            // SAFETY: as in `gather_x`; the layout does not alias (checked by the caller).
            unsafe {
                if s1 == 1 {
                    copy_row(src.add(d), p.add(o), bw);
                } else {
                    for i in 0..bw {
                        *p.add(o + i * s1) = *src.add(d + i);
                    }
                }
            }
        });
    }
}

/// Copies `n` floats as 16-byte moves (one SIMD load/store each in wasm) and single ones: a
/// `memcpy` call per short block row costs more than the row.
///
/// # Safety
/// `src..src + n` readable, `dst..dst + n` writable, not overlapping.
#[inline(always)]
unsafe fn copy_row(src: *const f32, dst: *mut f32, n: usize) {
    let mut i = 0;
    while i + 4 <= n {
        (dst.add(i) as *mut [f32; 4]).write_unaligned((src.add(i) as *const [f32; 4]).read_unaligned());
        i += 4;
    }
    while i < n {
        *dst.add(i) = *src.add(i);
        i += 1;
    }
}

/// Whether the fused pass applies: one 2-D spec whose blocks go four to a SIMD quad.
pub(super) fn applies(tiling: &Tiling, x_layout: &Strided, h_layout: &Strided) -> bool {
    let n = tiling.numel_per_block();
    tiling.grid.len() == 2 && x_layout.ndim() == 2 && h_layout.ndim() == 2 && n > 0 && n.is_multiple_of(4) && tiling.numblk() > 0
}

/// The global stop when it is known without searching, else `None` (see the module doc).
fn known_stop(ctx: &Ctx, g: &Grid) -> Option<usize> {
    if ctx.max_iter == 0 || ctx.atol == 0.0 {
        return Some(ctx.max_iter);
    }
    // The first batch's whole quads, with the statistics of the search itself (same bits).
    let n = g.tiling.numel_per_block();
    let quads = (BATCH_ELEMS.div_ceil(n).max(1).min(g.tiling.numblk()) / 4).max(1).min(g.tiling.numblk() / 4);
    if quads == 0 {
        return None;
    }
    let (mut xb, mut hb) = (Vec::new(), Vec::new());
    g.gather_x(0, 4 * quads, &mut xb);
    g.tiling.gather_blocks(g.h_layout, g.h, 0, 4 * quads, &mut hb);
    let (mut hxt, mut ht) = (vec![0.0; 4 * n], vec![0.0; 4 * n]);
    let wide = (0..quads).any(|q| {
        let span = q * 4 * n..(q + 1) * 4 * n;
        kernels::prox_pack4(&xb[span.clone()], &hb[span], &mut hxt, &mut ht);
        let [sumsq, h_min, h_max, ..] = kernels::prox_stats4(&hxt, &ht);
        (0..4).any(|k| {
            let (hx_norm, tb) = (sumsq[k].sqrt(), ctx.t[4 * q + k]);
            let s = ctx.bracket(hx_norm, h_min[k], h_max[k], tb);
            // Bisected blocks count by their convergence; every other one by its bracket.
            root::plan(s.lo, s.hi, s.keep, hx_norm, h_min[k], tb, ctx.max_iter) != Plan::Bisect
                && ctx.stop.steps(s.hi - s.lo) >= ctx.max_iter
        })
    });
    wide.then_some(ctx.max_iter)
}

/// Per-task buffers, reused across batches.
#[derive(Default)]
struct Scratch {
    xb: Vec<f32>,
    hb: Vec<f32>,
    mu_keep: Vec<(f32, f32)>,
    /// Each block's initial bracket (the search narrows its lanes' copy).
    brackets: Vec<(f32, f32)>,
    kinds: Vec<Kind>,
    pk: Packed,
}

/// Searches blocks `lo..hi` (a multiple of 4 apart, or the grid's end) and writes their result.
fn run_batch(ctx: &Ctx, g: &Grid, lo: usize, hi: usize, k_stop: usize, cells: f64, sc: &mut Scratch) {
    let n = g.tiling.numel_per_block();
    let nq = 4 * n;
    g.gather_x(lo, hi, &mut sc.xb);
    g.tiling.gather_blocks(g.h_layout, g.h, lo, hi, &mut sc.hb);
    let nb = hi - lo;
    // A last partial quad is padded with copies of its first block (searched, never written).
    let quads = nb.div_ceil(4);
    let pad = quads * nq;
    sc.xb.resize(pad, 0.0);
    sc.hb.resize(pad, 0.0);
    for e in nb * n..pad {
        (sc.xb[e], sc.hb[e]) = (sc.xb[e % n + (nb - 1) * n], sc.hb[e % n + (nb - 1) * n]);
    }
    let pk = &mut sc.pk;
    pk.hxt.resize(pad, 0.0);
    pk.ht.resize(pad, 0.0);
    pk.roots.clear();
    pk.lanes.clear();
    sc.mu_keep.clear();
    sc.brackets.clear();
    sc.kinds.clear();
    let max_evals = u32::try_from(ctx.max_iter).unwrap_or(u32::MAX);
    let block_t = |i: usize| ctx.t[lo + i.min(nb - 1)];
    let (mut searching, mut bisecting) = (false, false);
    for q in 0..quads {
        let span = q * nq..(q + 1) * nq;
        kernels::prox_pack4(&sc.xb[span.clone()], &sc.hb[span.clone()], &mut pk.hxt[span.clone()], &mut pk.ht[span.clone()]);
        let stats = kernels::prox_stats4(&pk.hxt[span.clone()], &pk.ht[span]);
        let qt: [f32; 4] = std::array::from_fn(|k| block_t(4 * q + k));
        let (mut rl, mut bl) = (RootLanes::default(), ProxLanes::default());
        let start = if ctx.max_iter > 0 { kernels::root_start4(&stats, qt, &ctx.start) } else { None };
        if let Some(start) = start {
            let [l, h, ..] = start;
            rl = RootLanes::quad(&start, qt, &stats);
            for k in 0..4 {
                sc.mu_keep.push((0.0, 1.0));
                sc.brackets.push((l[k], h[k]));
                sc.kinds.push(Kind::Root);
            }
            searching = true;
        } else {
            let [sumsq, h_min, h_max, ..] = stats;
            for k in 0..4 {
                let tb = qt[k];
                let hx_norm = sumsq[k].sqrt();
                let mut s = ctx.bracket(hx_norm, h_min[k], h_max[k], tb);
                let kind = match root::plan(s.lo, s.hi, s.keep, hx_norm, h_min[k], tb, ctx.max_iter) {
                    Plan::Midpoint => Kind::Fixed,
                    Plan::Upper => {
                        s.mu = s.hi;
                        Kind::Fixed
                    }
                    Plan::Search => {
                        ctx.search(&mut rl, k, &s, stats.map(|v| v[k]), tb);
                        searching = true;
                        Kind::Root
                    }
                    Plan::Bisect => {
                        (bl.lo[k], bl.hi[k], bl.mu[k], bl.t[k], bl.go[k]) = (s.lo, s.hi, s.mu, tb, u32::MAX);
                        bisecting = true;
                        Kind::Bisect
                    }
                };
                sc.mu_keep.push((s.mu, s.keep));
                sc.brackets.push((s.lo, s.hi));
                sc.kinds.push(kind);
            }
        }
        pk.roots.push(rl);
        pk.lanes.push(bl);
    }
    if searching {
        pk.search_roots(nq, max_evals);
    }
    // Degenerate blocks: the defining bisection, straight to the global stop.
    if bisecting {
        pk.step_lanes(nq, ProxStop::At(u32::try_from(k_stop).unwrap_or(u32::MAX)));
    }
    for (i, (mk, kind)) in sc.mu_keep.iter_mut().zip(&sc.kinds).enumerate().take(nb) {
        let (q, k) = (i / 4, i % 4);
        match kind {
            Kind::Fixed => {}
            Kind::Root => {
                let (l, h) = sc.brackets[i];
                mk.0 = root::bisection_iterate(l, h, pk.roots[q].mu[k], k_stop, cells);
            }
            Kind::Bisect => mk.0 = pk.lanes[q].mu[k],
        }
    }
    let len = nb * n;
    kernels::prox_write(&mut sc.xb[..len], &sc.hb[..len], n, &sc.mu_keep[..nb], 1);
    g.scatter_x(lo, hi, &sc.xb[..len]);
}

/// The Newton method's soft threshold of one spec, in place: `data` through `x_layout` (must not
/// alias) is replaced by `x H / (H + mu)` per block (0 for non-survivors), as the two-phase path
/// and its final write give. Returns `false`, having written nothing, when the fused pass does
/// not apply ([`applies`]) or the global stop is not known up front.
#[allow(clippy::too_many_arguments)]
pub(super) fn solve_in_place(ctx: &Ctx, tiling: &Tiling, x_layout: &Strided, data: &mut [f32], h_layout: &Strided, h: &[f32]) -> bool {
    if !applies(tiling, x_layout, h_layout) {
        return false;
    }
    assert!(x_layout.cosize().is_some_and(|c| c <= data.len()), "layout outside the data");
    let g = Grid { tiling, x_layout, x: par::SharedMut(data.as_mut_ptr()), h_layout, h };
    let Some(k_stop) = known_stop(ctx, &g) else {
        return false;
    };
    let cells = 2f64.powi(i32::try_from(k_stop.min(64)).unwrap_or(64));
    let n = tiling.numel_per_block();
    // A multiple of 4 blocks per batch: only a slab's last batch has a partial quad.
    let per_batch = BATCH_ELEMS.div_ceil(n).next_multiple_of(4);
    let (g0, g1) = (tiling.grid[0], tiling.grid[1]);
    let passes = ctx.max_iter.clamp(1, 4);
    let tasks = par::tasks_for(tiling.numblk() * n * passes, 1 << 16, g0);
    let per = g0.div_ceil(tasks.max(1)).max(1);
    let direct = in_place(tiling, x_layout, h_layout);
    par::for_each_index(g0.div_ceil(per), |s| {
        let (lo, hi) = (s * per * g1, ((s + 1) * per).min(g0) * g1);
        let mut sc = Scratch::default();
        if direct {
            run_slab_in_place(ctx, &g, data.len(), s * per..((s + 1) * per).min(g0), k_stop, cells, &mut sc);
            return;
        }
        let mut b = lo;
        while b < hi {
            let e = (b + per_batch).min(hi);
            run_batch(ctx, &g, b, e, k_stop, cells, &mut sc);
            b = e;
        }
    });
    true
}

/// Whether blocks can be read and written where they lie ([`kernels::adam_run`]): rows of the
/// weight and of the conditioners contiguous, block width a multiple of 4.
fn in_place(tiling: &Tiling, x_layout: &Strided, h_layout: &Strided) -> bool {
    x_layout.stride[1] == 1 && h_layout.stride[1] == 1 && tiling.block[1].is_multiple_of(4)
}

/// The block rows `rows` (a slab), in runs of up to `4 QUADS_MAX` blocks by
/// [`kernels::adam_run`] on the slab's own rows of the weight; a quad with a block that is
/// neither a plain search nor a zeroed block goes through [`run_batch`], with the same bits.
fn run_slab_in_place(ctx: &Ctx, g: &Grid, x_len: usize, rows: std::ops::Range<usize>, k_stop: usize, cells: f64, sc: &mut Scratch) {
    const RUN: usize = 4 * kernels::QUADS_MAX;
    let (g1, bh, bw) = (g.tiling.grid[1], g.tiling.block[0], g.tiling.block[1]);
    let (xs, hs) = (g.x_layout.stride[0], g.h_layout.stride[0]);
    // The slab's rows of the weight: rows of one slab never share memory with another's (the
    // layout has contiguous rows and does not alias, so xs >= the row's extent).
    let base = rows.start * bh * xs;
    let end = ((rows.end * bh - 1) * xs + g.x_layout.shape[1]).min(x_len);
    let search = kernels::QuadSearch { start: ctx.start, max_evals: u32::try_from(ctx.max_iter).unwrap_or(u32::MAX), k_stop, cells };
    let mut ok = [false; kernels::QUADS_MAX];
    for gr in rows {
        let mut c0 = 0;
        while c0 < g1 {
            let blocks = (g1 - c0).min(RUN);
            let run = kernels::BlockRun {
                x_at: gr * bh * xs + c0 * bw - base,
                h_at: gr * bh * hs + c0 * bw,
                x_stride: xs,
                h_stride: hs,
                rows: bh,
                vecs: bw / 4,
                blocks,
            };
            let b0 = gr * g1 + c0;
            let ok = &mut ok[..run.quads()];
            // SAFETY: `base..end` are this slab's rows (disjoint from every other task's, see
            // above); the slice lives only for this call, and run_batch below writes the same
            // rows through the grid's pointer only after it is gone.
            {
                let x = unsafe { std::slice::from_raw_parts_mut(g.x.get().add(base), end - base) };
                kernels::adam_run(x, g.h, &run, &ctx.t[b0..b0 + blocks], &search, ok);
            }
            for (q, done) in ok.iter().enumerate() {
                if !done {
                    let b = b0 + 4 * q;
                    run_batch(ctx, g, b, b + run.lanes(q), k_stop, cells, sc);
                }
            }
            c0 += blocks;
        }
    }
}
