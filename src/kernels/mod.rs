//! Inner loops of the library, behind one small interface.
//!
//! Everything the core does to weight elements goes through these functions: per-chunk
//! reductions of a row (block norms, min/max), per-chunk scaling (masks, multipliers) and the
//! inner loop of the Adam-conditioned bisection. [`scalar`] is the portable implementation and
//! the test oracle; [`simd`] is the `wasm32` SIMD128 implementation (selected at compile time
//! with `+simd128`). Natively the scalar code is what runs (LLVM autovectorizes it).
//!
//! With the cargo feature `scalar-kernels` the scalar implementation is used everywhere (the
//! bench builds a wasm of it to measure what SIMD128 buys). [`par`] runs closures over chunks
//! with rayon (features `threads` / `native-threads`) or sequentially: one code path; with the
//! bench-only feature `task-trace` it records each task's worker and span ([`task_trace`]).
//!
//! Reduction order is fixed and identical in both implementations (4 interleaved lanes per
//! contiguous chunk, combined as `(l0 + l1) + (l2 + l3)`, then added to the accumulator), so the
//! SIMD and scalar results are bit-for-bit equal.

pub mod gemm;
pub mod gemm_f64;
pub mod im2col;
pub mod order;
pub mod par;
pub mod scalar;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
pub mod simd;
#[cfg(all(feature = "task-trace", any(feature = "threads", feature = "native-threads")))]
pub mod task_trace;

/// True when the SIMD128 kernels are compiled in (else the scalar ones run).
pub const SIMD: bool = cfg!(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")));

/// A block reduction. Sums accumulate in `f32`; NaN propagates through every reduction
/// (as `torch.amin/amax/vector_norm` do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    /// `sum |x|` (the L1 norm).
    SumAbs,
    /// `sum x^2` (the square of the L2 norm).
    SumSq,
    /// `max |x|` (the L∞ norm).
    MaxAbs,
    /// `min x`.
    Min,
    /// `max x`.
    Max,
}

impl Reduction {
    /// The value an accumulator starts from.
    #[inline]
    pub fn identity(self) -> f32 {
        match self {
            Reduction::SumAbs | Reduction::SumSq | Reduction::MaxAbs => 0.0,
            Reduction::Min => f32::INFINITY,
            Reduction::Max => f32::NEG_INFINITY,
        }
    }

    /// Combines two partial results (NaN-propagating for min/max).
    #[inline]
    pub fn combine(self, a: f32, b: f32) -> f32 {
        match self {
            Reduction::SumAbs | Reduction::SumSq => a + b,
            Reduction::MaxAbs | Reduction::Max => nan_max(a, b),
            Reduction::Min => nan_min(a, b),
        }
    }
}

/// `max` that propagates NaN (unlike `f32::max`), like wasm's `f32.max`.
#[inline]
pub fn nan_max(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a >= b {
        a
    } else {
        b
    }
}

/// `min` that propagates NaN (unlike `f32::min`), like wasm's `f32.min`.
#[inline]
pub fn nan_min(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a <= b {
        a
    } else {
        b
    }
}

/// For each `chunk`-long piece `j` of the contiguous `row`, folds its reduction into
/// `acc[j * acc_stride]`. `row.len()` is a multiple of `chunk`.
#[inline]
pub fn reduce_chunks(op: Reduction, row: &[f32], chunk: usize, acc: &mut [f32], acc_stride: usize) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
    {
        simd::reduce_chunks(op, row, chunk, acc, acc_stride)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels"))))]
    {
        scalar::reduce_chunks(op, row, chunk, acc, acc_stride)
    }
}

/// Multiplies each `chunk`-long piece `j` of the contiguous `row` by `factors[j * f_stride]`.
#[inline]
pub fn scale_chunks(row: &mut [f32], chunk: usize, factors: &[f32], f_stride: usize) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
    {
        simd::scale_chunks(row, chunk, factors, f_stride)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels"))))]
    {
        scalar::scale_chunks(row, chunk, factors, f_stride)
    }
}

/// The bisection's inner loop over a contiguous run: `sum ((h*x) / (h + mu))^2`.
#[inline]
pub fn cond_sumsq(x: &[f32], h: &[f32], mu: f32) -> f32 {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
    {
        simd::cond_sumsq(x, h, mu)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels"))))]
    {
        scalar::cond_sumsq(x, h, mu)
    }
}

/// The reduction of one contiguous chunk (4 interleaved lanes, see the module doc).
#[inline]
pub fn reduce_chunk(op: Reduction, chunk: &[f32]) -> f32 {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
    {
        simd::reduce_chunk(op, chunk)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels"))))]
    {
        scalar::reduce_chunk(op, chunk)
    }
}

/// Like [`cond_sumsq`] with `hx[i] = h[i] * x[i]` precomputed (the same f32 product, so the
/// same bits): `sum (hx / (h + mu))^2`.
#[inline]
pub fn cond_sumsq_hx(hx: &[f32], h: &[f32], mu: f32) -> f32 {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
    {
        simd::cond_sumsq_hx(hx, h, mu)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels"))))]
    {
        scalar::cond_sumsq_hx(hx, h, mu)
    }
}

/// 2:4 keep-mask of consecutive groups of 4: in each group the 2 largest `|x|` are kept, ties to
/// the lower index, NaN ranks below every number (the order of [`crate::kernels::order::magnitude_key`]).
/// `values.len() == mask.len()`, a multiple of 4.
#[inline]
pub fn nm24_mask(values: &[f32], mask: &mut [u8]) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
    {
        simd::nm24_mask(values, mask)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels"))))]
    {
        scalar::nm24_mask(values, mask)
    }
}

/// [`nm24_mask`] into uninitialised storage (every byte is written): the caller allocates the
/// output without zero-filling it first.
#[inline]
pub fn nm24_mask_uninit(values: &[f32], mask: &mut [core::mem::MaybeUninit<u8>]) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
    {
        simd::nm24_mask_uninit(values, mask)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels"))))]
    {
        scalar::nm24_mask_uninit(values, mask)
    }
}

/// Four bisection states side by side, lane `k` being one block (the Adam-conditioned step,
/// see `block::prox`). Blocks go in fours so that one SIMD division serves four blocks, and
/// many such groups are stepped in turn so that their dependency chains (divide, sum, square
/// root, compare, halve) overlap instead of each waiting on its own latency.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[repr(C, align(16))]
pub struct ProxLanes {
    pub lo: [f32; 4],
    pub hi: [f32; 4],
    pub mu: [f32; 4],
    pub t: [f32; 4],
    pub iters: [u32; 4],
    /// `u32::MAX` for a lane that still steps, 0 for one that stopped.
    pub go: [u32; 4],
}

/// When a lane of [`prox_step4`] stops stepping.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ProxStop {
    /// At `max_iter` steps or once its bracket is narrower than `atol` (the seed's test).
    Converged { max_iter: u32, atol: f32 },
    /// At exactly this many steps.
    At(u32),
}

/// Interleaves four consecutive blocks of `n` elements (`x`, `h`: `4 n` long, block `k` at
/// `[k n ..]`, `n % 4 == 0`) into the layout of [`prox_step4`]: `ht[4 j + k] = h`,
/// `hxt[4 j + k] = h * x` (the seed's `H * x0`, the same f32 product).
#[inline]
pub fn prox_pack4(x: &[f32], h: &[f32], hxt: &mut [f32], ht: &mut [f32]) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
    {
        simd::prox_pack4(x, h, hxt, ht)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels"))))]
    {
        scalar::prox_pack4(x, h, hxt, ht)
    }
}

/// The final write of BlockSpec's Adam step on a contiguous row: piece `j` (`chunk` long) of
/// `x` belongs to the block of `mu_keep[j * step] = (mu, keep)`, and each element becomes
/// `((H / (H + mu)) * x) * keep` (`x * keep` where `H + mu == 0`, see
/// [`scalar::prox_scaled`]).
#[inline]
pub fn prox_write(x: &mut [f32], h: &[f32], chunk: usize, mu_keep: &[(f32, f32)], step: usize) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
    {
        simd::prox_write(x, h, chunk, mu_keep, step)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels"))))]
    {
        scalar::prox_write(x, h, chunk, mu_keep, step)
    }
}

/// Per-lane statistics of four interleaved blocks (`hxt[4 j + k]` = element `j` of block `k`,
/// `ht` likewise): `[sum w, min h, max h, sum w h, sum w h²]` with `w = (hx)²`, each folded in
/// the order of [`reduce_chunk`] (4 interleaved lanes, then `(l0 + l1) + (l2 + l3)`), so with the
/// same bits as that function (and [`scalar::hx_moments`]) applied to each block on its own. The
/// two moments of `h` weighted by `w` give the Newton search its start
/// ([`scalar::root_start_mu`]). The block length must be a multiple of 4.
#[inline]
pub fn prox_stats4(hxt: &[f32], ht: &[f32]) -> [[f32; 4]; 5] {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
    {
        simd::prox_stats4(hxt, ht)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels"))))]
    {
        scalar::prox_stats4(hxt, ht)
    }
}

/// One bisection step of the lanes of `s` that go, on four interleaved blocks (layout as in
/// [`prox_stats4`]): `zeta = mu * sqrt(sum (hx / (h + mu))^2)` (0 where `mu == 0`) summed in the
/// order of [`cond_sumsq_hx`], the bracket end on the side of `zeta < t` moves to `mu`,
/// `mu = (lo + hi) / 2`, then `stop` is applied. Returns whether any lane still goes.
#[inline]
pub fn prox_step4(hxt: &[f32], ht: &[f32], s: &mut ProxLanes, stop: ProxStop) -> bool {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
    {
        simd::prox_step4(hxt, ht, s, stop)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels"))))]
    {
        scalar::prox_step4(hxt, ht, s, stop)
    }
}

/// Four safeguarded Newton searches side by side, lane `k` being one block (the default method
/// of the Adam-conditioned step, see `block::root`). `[lo, hi]` always holds the root (or the
/// bracket end it is clamped to); a `*_open` end has not been evaluated yet, so a Newton step
/// beyond it may land on it instead of bisecting.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[repr(C, align(16))]
pub struct RootLanes {
    pub lo: [f32; 4],
    pub hi: [f32; 4],
    pub mu: [f32; 4],
    pub t: [f32; 4],
    /// Accepted error in `mu`: a step (or half bracket) at most this long ends the search.
    pub tol: [f32; 4],
    /// Length of the previous step (the bracket width before the first one).
    pub prev: [f32; 4],
    /// Length of the previous step if it was a Newton step, else 0.
    pub newt: [f32; 4],
    pub lo_open: [u32; 4],
    pub hi_open: [u32; 4],
    /// `min h` and `max h` of the block: they bound how far the Taylor model of one evaluation
    /// can be off (the certified stop of [`scalar::root_step_lane`]).
    pub h_min: [f32; 4],
    pub h_max: [f32; 4],
    pub evals: [u32; 4],
    /// `u32::MAX` for a lane that still searches, 0 for one that stopped.
    pub go: [u32; 4],
}

impl RootLanes {
    /// Lane `k` starts a search of the root in `[lo, hi]` from `mu`, for threshold `t`, within
    /// `tol`, on a block whose conditioners lie in `[h_min, h_max]`.
    #[allow(clippy::too_many_arguments)]
    pub fn search(&mut self, k: usize, lo: f32, hi: f32, mu: f32, t: f32, tol: f32, h_min: f32, h_max: f32) {
        (self.lo[k], self.hi[k], self.mu[k], self.t[k], self.tol[k]) = (lo, hi, mu, t, tol);
        (self.h_min[k], self.h_max[k]) = (h_min, h_max);
        self.prev[k] = hi - lo;
        (self.lo_open[k], self.hi_open[k], self.go[k]) = (u32::MAX, u32::MAX, u32::MAX);
    }

    /// Four searches from [`root_start4`]'s `[lo, hi, mu, tol]`, thresholds `t` and the
    /// quad's [`prox_stats4`].
    pub fn quad(start: &[[f32; 4]; 4], t: [f32; 4], stats: &[[f32; 4]; 5]) -> RootLanes {
        let mut rl = RootLanes::default();
        let [lo, hi, mu, tol] = start;
        for k in 0..4 {
            rl.search(k, lo[k], hi[k], mu[k], t[k], tol[k], stats[1][k], stats[2][k]);
        }
        rl
    }
}

/// The sums one Newton step needs, for one block at `mu` (`r = 1 / (h + mu)`, `q² r` with
/// `q = hx * r`, one division per element): `[S3, Sh, S4] = [sum q² r, sum (q² r) h,
/// sum (q² r) r]`, each in the lane order of [`cond_sumsq_hx`] (`sum q² = Sh + mu S3`).
#[inline]
pub fn root_sums_hx(hx: &[f32], h: &[f32], mu: f32) -> [f32; 3] {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
    {
        simd::root_sums_hx(hx, h, mu)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels"))))]
    {
        scalar::root_sums_hx(hx, h, mu)
    }
}

/// One evaluation and safeguarded Newton step of the lanes of `s` that go, on four interleaved
/// blocks (layout of [`prox_stats4`]); the per-lane sums are those of [`root_sums_hx`], bit for
/// bit, and the step is [`scalar::root_step_lane`]'s. Returns whether any lane still goes.
#[inline]
pub fn prox_root4(hxt: &[f32], ht: &[f32], s: &mut RootLanes, max_evals: u32) -> bool {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
    {
        simd::prox_root4(hxt, ht, s, max_evals)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels"))))]
    {
        scalar::prox_root4(hxt, ht, s, max_evals)
    }
}

/// Consecutive blocks of one block row of a 2-D array, read and written in place, rows
/// contiguous: row `r` of block `i` is `x[x_at + r x_stride + 4 vecs i ..][..4 vecs]`, its
/// conditioners `h[h_at + r h_stride + 4 vecs i ..]`. Element `j` of a block is row
/// `j / (4 vecs)`, column `j % (4 vecs)`: the order in which [`prox_pack4`] lays out gathered
/// blocks, so [`adam_run`] sums what the packed kernels sum, in the same order. The blocks go
/// four to a quad; a last partial quad repeats its last block in the lanes it lacks (searched,
/// not written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockRun {
    pub x_at: usize,
    pub h_at: usize,
    pub x_stride: usize,
    pub h_stride: usize,
    pub rows: usize,
    /// Block width / 4.
    pub vecs: usize,
    /// Blocks in the run, `1..=4 QUADS_MAX`.
    pub blocks: usize,
}

/// Quads per [`adam_run`] call at most: the SIMD kernel runs each phase over all of them (4096²,
/// 4×4 in Chromium: 42.1 ms with 16, 41.3 ms with 32, 41.9 ms with 64, Node 47.6 ms with 64).
pub const QUADS_MAX: usize = 32;

impl BlockRun {
    /// Quads of four blocks (the last one may be partial).
    pub fn quads(&self) -> usize {
        self.blocks.div_ceil(4)
    }

    /// The run's block in lane `i` of quad `q`: lanes past the run's end repeat its last block.
    #[inline(always)]
    pub fn block(&self, q: usize, i: usize) -> usize {
        (4 * q + i).min(self.blocks - 1)
    }

    /// [`BlockRun::block`] as offsets of its first row in `x` and `h`.
    #[inline(always)]
    pub fn block_at(&self, q: usize, i: usize) -> (usize, usize) {
        let b = self.block(q, i) * 4 * self.vecs;
        (self.x_at + b, self.h_at + b)
    }

    /// Lanes of quad `q` that are blocks of the run (the others are not written).
    #[inline(always)]
    pub fn lanes(&self, q: usize) -> usize {
        (self.blocks - 4 * q).min(4)
    }

    /// Panics unless the run is well-formed, lies inside `x` and `h`, and `t`/`ok` fit it; both
    /// implementations of [`adam_run`] call it first (the SIMD one then reads and writes
    /// unchecked).
    fn check(&self, x_len: usize, h_len: usize, t_len: usize, ok_len: usize) {
        assert!(t_len == self.blocks && ok_len == self.quads(), "thresholds or results do not fit the run");
        assert!(self.rows > 0 && self.vecs > 0 && (1..=4 * QUADS_MAX).contains(&self.blocks), "malformed block run");
        let span = self.vecs.checked_mul(4).and_then(|w| self.blocks.checked_mul(w));
        let end = |at: usize, stride: usize| {
            stride.checked_mul(self.rows - 1).and_then(|o| o.checked_add(at)).and_then(|o| span.and_then(|w| o.checked_add(w)))
        };
        assert!(end(self.x_at, self.x_stride).is_some_and(|e| e <= x_len), "block run outside the weights");
        assert!(end(self.h_at, self.h_stride).is_some_and(|e| e <= h_len), "block run outside the conditioners");
    }
}

/// The search of [`adam_run`]: the start's constants, `maxIter`, and the global stop `k_stop`
/// at which the bisection's iterate is read off the root (`cells = 2^min(k_stop, 64)`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuadSearch {
    pub start: RootStart,
    pub max_evals: u32,
    pub k_stop: usize,
    pub cells: f64,
}

/// The Newton method's whole soft threshold on a run of blocks in place, for each quad of four
/// blocks that are plain searches or zeroed blocks: statistics ([`prox_stats4`]), bracket and
/// start ([`scalar::root_start_lane`]; [`scalar::zeroed_mu`] for a zeroed block, which is not
/// searched), the search ([`prox_root4`] until every lane stops), the bisection's iterate at
/// `k_stop` read off each root ([`scalar::bisection_iterate`]) and the write
/// `x <- ((h / (h + mu)) x) keep` ([`prox_write`]), with those kernels' bits, reading the blocks
/// where they lie instead of gathering and packing them. `t[i]` is block `i`'s threshold. `ok[q]`
/// tells whether quad `q` was done; where it is `false` (a lane is neither) nothing of that quad
/// was written and the caller takes the general path for its blocks.
#[inline]
pub fn adam_run(x: &mut [f32], h: &[f32], run: &BlockRun, t: &[f32], s: &QuadSearch, ok: &mut [bool]) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
    {
        simd::adam_run(x, h, run, t, s, ok)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels"))))]
    {
        scalar::adam_run(x, h, run, t, s, ok)
    }
}

/// What [`root_start4`] needs besides the blocks' statistics: the bracket's `eps` and
/// denominator kind, and the search tolerance's terms (see `block::root::tolerance`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RootStart {
    pub eps: f32,
    /// `den = max(D, eps)` (BlockCoupling) rather than `max(D, 0) + eps` (BlockSpec).
    pub coupling: bool,
    /// `2^-(max_iter + 1)`.
    pub halvings: f32,
    pub atol: f32,
}

/// The seed's bracket and the Newton search's start for four blocks at once, from their
/// [`prox_stats4`] and thresholds: `[lo, hi, mu, tol]` per lane, `mu` being
/// [`scalar::root_start_mu`], with the arithmetic of the one-block path (`block::prox` bracket,
/// `block::root::tolerance`),
/// or `None` unless every lane is a plain search (threshold > 0, `||H x0|| > t`, `min H > 0`,
/// everything finite, `lo < hi`): the other blocks take the one-lane path.
#[inline]
pub fn root_start4(stats: &[[f32; 4]; 5], t: [f32; 4], c: &RootStart) -> Option<[[f32; 4]; 4]> {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
    {
        simd::root_start4(stats, t, c)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels"))))]
    {
        scalar::root_start4(stats, t, c)
    }
}
