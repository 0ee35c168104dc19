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
/// the lower index, NaN ranks below every number (the order of [`crate::nm::magnitude_key`]).
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
