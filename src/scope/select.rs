//! Top-k selection of block scores: the one ordering every "keep the k best" decision uses.
//!
//! Order: larger score first; NaN ranks below every number (a NaN block is pruned before any
//! other); equal scores go to the lower position. The order is total, so the selection never
//! depends on the algorithm. Linear time per group (`select_nth_unstable_by`).

use std::cmp::Ordering;

/// `Less` when `(a, ia)` ranks before (is kept before) `(b, ib)`.
#[inline]
pub fn rank_cmp(a: f32, ia: usize, b: f32, ib: usize) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => ia.cmp(&ib),
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => b.partial_cmp(&a).unwrap_or(Ordering::Equal).then(ia.cmp(&ib)),
    }
}

/// Marks in `keep` (same length as `scores`, zero-filled by the caller) the `k` best scores.
/// `scratch` is reused between calls.
pub fn top_k(scores: &[f32], k: usize, keep: &mut [u8], scratch: &mut Vec<usize>) {
    let n = scores.len();
    if k >= n {
        keep.iter_mut().for_each(|x| *x = 1);
        return;
    }
    if k == 0 {
        return;
    }
    scratch.clear();
    scratch.extend(0..n);
    scratch.select_nth_unstable_by(k - 1, |&a, &b| rank_cmp(scores[a], a, scores[b], b));
    for &i in &scratch[..k] {
        keep[i] = 1;
    }
}

/// The `k`-th best score (1-based) of `scores` in the order above; `k = 0` gives +Infinity.
pub fn kth_best(scores: &[f32], k: usize, scratch: &mut Vec<usize>) -> f32 {
    if k == 0 {
        return f32::INFINITY;
    }
    scratch.clear();
    scratch.extend(0..scores.len());
    let (_, kth, _) = scratch.select_nth_unstable_by(k - 1, |&a, &b| rank_cmp(scores[a], a, scores[b], b));
    scores[*kth]
}
