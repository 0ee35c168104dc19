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
//! with rayon (features `threads` / `native-threads`) or sequentially: one code path.
//!
//! Reduction order is fixed and identical in both implementations (4 interleaved lanes per
//! contiguous chunk, combined as `(l0 + l1) + (l2 + l3)`, then added to the accumulator), so the
//! SIMD and scalar results are bit-for-bit equal.

pub mod gemm;
pub mod gemm_f64;
pub mod order;
pub mod par;
pub mod scalar;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
pub mod simd;

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
/// `ht` likewise): `sum hx^2`, `min h`, `max h`, each folded in the order of [`reduce_chunk`]
/// (4 interleaved lanes, then `(l0 + l1) + (l2 + l3)`), so with the same bits as that function
/// applied to each block on its own. The block length must be a multiple of 4.
#[inline]
pub fn prox_stats4(hxt: &[f32], ht: &[f32]) -> [[f32; 4]; 3] {
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
