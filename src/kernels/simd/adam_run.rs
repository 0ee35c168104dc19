//! The fused Newton soft threshold on a run of blocks on SIMD128, one phase at a time over all
//! of the run's quads.

use core::mem::MaybeUninit;

use core::arch::wasm32::*;

use super::newton::{root_terms4, RootRegs};
use super::pin::{pinned, written};
use super::read_off::bisection_iterate4;
use super::reduce::{fold4, horizontal4};
use super::start::{root_start_lanes, zeroed_mu4};
use super::vec::{lane_of, load4};
use crate::kernels::block_run::{BlockRun, QuadSearch, QUADS_MAX};
use crate::kernels::reduction::Reduction;

pub fn adam_run(x: &mut [f32], h: &[f32], run: &BlockRun, t: &[f32], s: &QuadSearch, ok: &mut [bool]) {
    run.check(x.len(), h.len(), t.len(), ok.len());
    // The usual block shapes with constant loop bounds (fully unrolled), the others generic (0).
    match (run.rows, run.vecs) {
        (4, 1) => adam_run_in::<4, 1>(x, h, run, t, s, ok),
        (1, 1) => adam_run_in::<1, 1>(x, h, run, t, s, ok),
        (2, 1) => adam_run_in::<2, 1>(x, h, run, t, s, ok),
        (8, 1) => adam_run_in::<8, 1>(x, h, run, t, s, ok),
        (1, 2) => adam_run_in::<1, 2>(x, h, run, t, s, ok),
        (2, 2) => adam_run_in::<2, 2>(x, h, run, t, s, ok),
        _ => adam_run_in::<0, 0>(x, h, run, t, s, ok),
    }
}

/// A block of a [`BlockRun`] seen by the SIMD kernel: its first row in `x` and `h` and the
/// shape, with a visitor over its element vectors in the packed order.
#[derive(Clone, Copy)]
struct RunBlock {
    x: *mut f32,
    h: *const f32,
    xs: usize,
    hs: usize,
    rows: usize,
    vecs: usize,
}

impl RunBlock {
    /// `f(x + offset, h + offset)` for every element vector, in element order.
    #[inline(always)]
    fn each(&self, mut f: impl FnMut(*mut f32, *const f32)) {
        for r in 0..self.rows {
            for v in 0..self.vecs {
                // SAFETY: BlockRun::check (called first by adam_run) bounds every row of every
                // block of the run; the pointers are only formed here, inside those rows.
                unsafe { f(self.x.add(r * self.xs + 4 * v), self.h.add(r * self.hs + 4 * v)) }
            }
        }
    }

    /// `[sum w, min h, max h, sum w h, sum w h²]` (`w = (h x)²`) per lane (element index mod
    /// 4). `pmin`/`pmax` (one instruction each, where the NaN-propagating min/max take several)
    /// are `nan_min`/`nan_max` on numbers, ties included (the first operand is kept); a NaN
    /// conditioner makes `sum w` NaN, which no plain search has, so such a quad is refused
    /// before `min h`/`max h` are used.
    #[inline(always)]
    fn stats(&self) -> [v128; 5] {
        let (mut sq, mut lo, mut hi) = (f32x4_splat(0.0), f32x4_splat(f32::INFINITY), f32x4_splat(f32::NEG_INFINITY));
        let (mut m1, mut m2) = (f32x4_splat(0.0), f32x4_splat(0.0));
        self.each(|x, h| {
            // SAFETY: see `each`.
            let (xv, hv) = unsafe { (v128_load(x as *const v128), v128_load(h as *const v128)) };
            let a = f32x4_mul(hv, xv);
            let w = f32x4_mul(a, a);
            sq = f32x4_add(sq, w);
            lo = f32x4_pmin(lo, hv);
            hi = f32x4_pmax(hi, hv);
            let wh = f32x4_mul(w, hv);
            m1 = f32x4_add(m1, wh);
            m2 = f32x4_add(m2, f32x4_mul(wh, hv));
        });
        [sq, lo, hi, m1, m2]
    }

    /// `[S3, Sh, S4]` per lane at `mu` ([`root_terms4`] of `h x`, the product [`super::prox_pack4`]
    /// stores).
    #[inline(always)]
    fn sums(&self, mu: v128) -> [v128; 3] {
        let (mut s3, mut sh, mut s4) = (f32x4_splat(0.0), f32x4_splat(0.0), f32x4_splat(0.0));
        self.each(|x, h| {
            // SAFETY: see `each`.
            let (xv, hv) = unsafe { (v128_load(x as *const v128), v128_load(h as *const v128)) };
            let [a, b, c] = root_terms4(f32x4_mul(hv, xv), hv, mu);
            s3 = f32x4_add(s3, a);
            sh = f32x4_add(sh, b);
            s4 = f32x4_add(s4, c);
        });
        [s3, sh, s4]
    }

    /// `x <- ((h / (h + mu)) x) keep` ([`super::prox_write`]; `h + mu > 0` here).
    #[inline(always)]
    fn write_keep(&self, mu: v128, keep: v128) {
        self.each(|x, h| {
            // SAFETY: see `each`; each block is written by one lane only.
            unsafe {
                let (xv, hv) = (v128_load(x as *const v128), v128_load(h as *const v128));
                v128_store(x as *mut v128, f32x4_mul(f32x4_mul(f32x4_div(hv, f32x4_add(hv, mu)), xv), keep));
            }
        });
    }

    /// `x <- (h / (h + mu)) x` ([`super::prox_write`] with `keep = 1`; `h + mu > 0` here).
    #[inline(always)]
    fn write(&self, mu: v128) {
        self.each(|x, h| {
            // SAFETY: see `each`; each block is written by one lane only.
            unsafe {
                let (xv, hv) = (v128_load(x as *const v128), v128_load(h as *const v128));
                v128_store(x as *mut v128, f32x4_mul(f32x4_div(hv, f32x4_add(hv, mu)), xv));
            }
        });
    }
}

/// The run's quads, one phase at a time over all of them: statistics, bracket and start (refused
/// unless each lane is a plain search or a zeroed block), then evaluations and steps
/// iteration-outer until every search stops, then the read-off and the write. The per-quad parts
/// (start, step, read-off) are long dependency chains of divisions and square roots; with the
/// quads' chains next to each other in the instruction stream they overlap, and the steps go two
/// at a time ([`RootRegs::step_pair`]). Measured and left out (each slower in Chromium, most also
/// in Node; bench/README.md has the figures): the starts two at a time, the steps four at a
/// time, the next run's statistics inside this run's write or evaluations, reading one value per
/// row of the next run during the start or the write (wasm has no prefetch). `R x 4V` blocks
/// (`R = 0`: the run's own shape), one function per shape.
#[inline(never)]
fn adam_run_in<const R: usize, const V: usize>(x: &mut [f32], h: &[f32], run: &BlockRun, t: &[f32], s: &QuadSearch, ok: &mut [bool]) {
    let (rows, vecs) = if R == 0 { (run.rows, run.vecs) } else { (R, V) };
    let (xp, hp) = (x.as_mut_ptr(), h.as_ptr());
    let (width, last) = (4 * vecs, run.blocks - 1);
    let at = |offset: usize| RunBlock {
        // SAFETY: inside x and h (BlockRun::check).
        x: unsafe { xp.add(run.x_at + offset) },
        h: unsafe { hp.add(run.h_at + offset) },
        xs: run.x_stride,
        hs: run.h_stride,
        rows,
        vecs,
    };
    // The four blocks of quad q (BlockRun::block_at with the shape's constant width, a shift
    // rather than a multiply): a whole quad's are `width` apart, one offset for the four.
    let quad = |q: usize| -> [RunBlock; 4] {
        let first = 4 * q;
        if first + 3 <= last {
            let base = first * width;
            [at(base), at(base + width), at(base + 2 * width), at(base + 3 * width)]
        } else {
            std::array::from_fn(|k| at((first + k).min(last) * width))
        }
    };
    let quads = run.quads();
    let zero = f32x4_splat(0.0);
    let ones = u32x4_splat(u32::MAX);
    // The per-quad arrays start unwritten: each is written for every quad of the run before it
    // is read (zeroing them was ≈ 11 KiB of stores per run, a cost bench/README.md measures).
    let mut sums = [MaybeUninit::<[v128; 5]>::uninit(); QUADS_MAX];
    let mut regs = [MaybeUninit::<RootRegs>::uninit(); QUADS_MAX];
    let mut brackets = [MaybeUninit::<[v128; 2]>::uninit(); QUADS_MAX];
    // Zeroed blocks' masks and `mu` (lanes that are not searched).
    let mut zeroed = [MaybeUninit::<(v128, v128)>::uninit(); QUADS_MAX];
    let mut mus = [MaybeUninit::<v128>::uninit(); QUADS_MAX];
    // Each phase runs over all the run's quads before the next one starts: the per-quad tails
    // (start, step, read-off) are long chains of divisions and square roots that only overlap
    // when the neighbouring quads' chains sit next to them in the instruction stream.
    for (q, st) in sums.iter_mut().enumerate().take(quads) {
        let blocks = quad(q);
        let [a, b, c, d] = pinned(|k| blocks[k].stats());
        // Folded four blocks at once, in prox_stats4's order.
        st.write([
            horizontal4(Reduction::SumSq, a[0], b[0], c[0], d[0]),
            fold4(|u, v| f32x4_pmin(u, v), [a[1], b[1], c[1], d[1]]),
            fold4(|u, v| f32x4_pmax(u, v), [a[2], b[2], c[2], d[2]]),
            horizontal4(Reduction::SumSq, a[3], b[3], c[3], d[3]),
            horizontal4(Reduction::SumSq, a[4], b[4], c[4], d[4]),
        ]);
    }
    // SAFETY: written above for every quad.
    let sums = unsafe { written(&mut sums, quads) };
    for q in 0..quads {
        // A whole quad's thresholds are consecutive (one load; `t` has one per block of the
        // run); a last partial quad repeats its last block's.
        let tv = match t.get(4 * q..4 * q + 4).and_then(|qt| <&[f32; 4]>::try_from(qt).ok()) {
            Some(qt) => load4(qt),
            None => load4(&std::array::from_fn::<f32, 4, _>(|k| t[run.block(q, k)])),
        };
        let ([lo, hi, mu, tol], plain, a) = root_start_lanes(sums[q], tv, &s.start);
        let [h_min, h_max] = [sums[q][1], sums[q][2]];
        let (zm, zmu) = zeroed_mu4(a, tv, h_min, h_max, &s.start, s.max_evals);
        // Each lane a plain search or a zeroed block, else the quad is refused.
        let taken = i32x4_all_true(v128_or(plain, zm));
        ok[q] = taken;
        // Without a branch: a refused quad's lanes do not go (nothing of it is written).
        let go = if taken { v128_andnot(ones, zm) } else { zero };
        let prev = f32x4_sub(hi, lo);
        regs[q].write(RootRegs { lo, hi, mu, t: tv, tol, prev, newt: zero, lo_open: ones, hi_open: ones, h_min, h_max, evals: zero, go });
        brackets[q].write([lo, hi]);
        zeroed[q].write((zm, zmu));
    }
    // SAFETY: written above for every quad.
    let (regs, brackets, zeroed) = unsafe { (written(&mut regs, quads), written(&mut brackets, quads), written(&mut zeroed, quads)) };
    let mut any = true;
    while any {
        any = false;
        for (q, rg) in regs.iter().enumerate().take(quads) {
            if !v128_any_true(rg.go) {
                continue;
            }
            let mu = rg.mu;
            let blocks = quad(q);
            let [a, b, c, d] = pinned(|k| blocks[k].sums(lane_of(mu, k)));
            sums[q][..3].copy_from_slice(&[
                horizontal4(Reduction::SumSq, a[0], b[0], c[0], d[0]),
                horizontal4(Reduction::SumSq, a[1], b[1], c[1], d[1]),
                horizontal4(Reduction::SumSq, a[2], b[2], c[2], d[2]),
            ]);
        }
        // Searching quads two at a time (see RootRegs::step_pair).
        let mut pending: Option<usize> = None;
        for q in 0..quads {
            if !v128_any_true(regs[q].go) {
                continue;
            }
            let Some(p) = pending.take() else {
                pending = Some(q);
                continue;
            };
            let (head, tail) = regs.split_at_mut(q);
            let (sp, sq) = (&sums[p], &sums[q]);
            any |= RootRegs::step_pair(&mut head[p], &mut tail[0], [sp[0], sp[1], sp[2]], [sq[0], sq[1], sq[2]], s.max_evals);
        }
        if let Some(p) = pending {
            let sm = &sums[p];
            any |= regs[p].step(sm[0], sm[1], sm[2], s.max_evals);
        }
    }
    // Every quad, without a branch: a refused quad's lanes are idle (read off, not written).
    for q in 0..quads {
        let (zm, zmu) = zeroed[q];
        mus[q].write(v128_bitselect(zmu, bisection_iterate4(brackets[q][0], brackets[q][1], regs[q].mu, s.k_stop, s.cells), zm));
    }
    // SAFETY: written above for every quad.
    let mus = unsafe { written(&mut mus, quads) };
    for q in 0..quads {
        if !ok[q] {
            continue;
        }
        let (mu, zm) = (mus[q], zeroed[q].0);
        // Zeroed lanes are multiplied by 0 after the scaling, as prox_write does.
        let keep = v128_any_true(zm).then(|| v128_bitselect(zero, f32x4_splat(1.0), zm));
        let blocks = quad(q);
        for (k, b) in blocks.iter().enumerate().take(run.lanes(q)) {
            match keep {
                None => b.write(lane_of(mu, k)),
                Some(keep) => b.write_keep(lane_of(mu, k), lane_of(keep, k)),
            }
        }
    }
}
