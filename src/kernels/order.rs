//! The magnitude order every N:M and top-k selection uses: a total order on `|x|` (NaN lowest),
//! ties to the lower index.

use std::cmp::Ordering;

/// Sort key of a magnitude: larger key = larger `|x|`; NaN maps to 0, below `|0.0|` (key 1).
///
/// Clearing the sign bit of a non-NaN float gives bits that increase with `|x|` (IEEE 754
/// ordering of non-negative floats), so integer comparison is a total order on magnitudes.
#[inline]
pub fn magnitude_key(x: f32) -> u32 {
    if x.is_nan() {
        0
    } else {
        (x.to_bits() & 0x7fff_ffff) + 1
    }
}

/// Total order for ranking: larger magnitude first, then lower index first.
#[inline]
pub fn rank_cmp(a: (u32, usize), b: (u32, usize)) -> Ordering {
    b.0.cmp(&a.0).then(a.1.cmp(&b.1))
}
