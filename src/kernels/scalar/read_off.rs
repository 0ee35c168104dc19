//! The bisection's iterate read off a block's root (what `'bisection'` would have stopped at).

/// The bisection's iterate after `k` steps (`cells = 2^k`) on `[lo, hi]` for a block whose root
/// is `r`: the middle of the `2^-k` cell of the bracket that holds `r` (see `block::root`), in
/// f64; past 48 steps the cell is below f32 resolution and the root itself is returned.
#[inline]
pub fn bisection_iterate(lo: f32, hi: f32, r: f32, k: usize, cells: f64) -> f32 {
    if k == 0 {
        return (lo + hi) / 2.0;
    }
    let (lo64, w) = (f64::from(lo), f64::from(hi) - f64::from(lo));
    if k >= 48 || w.is_nan() || w <= 0.0 {
        return r;
    }
    let j = ((f64::from(r) - lo64) / w * cells).floor().clamp(0.0, cells - 1.0);
    (lo64 + (j + 0.5) * (w / cells)) as f32
}
