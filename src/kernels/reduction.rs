//! The block reductions and their NaN-propagating `min`/`max`, shared by both backends.

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
