//! Input-channel permutation search for N:M sparsity (the idea of NVIDIA ASP's permutation
//! search, Pool & Yu 2021): reordering the columns (input channels) of a weight before grouping
//! them in `m` changes which elements share a group, and so how much magnitude an `m:n` mask can
//! keep. A good permutation keeps more magnitude at the same sparsity.
//!
//! Applying a permutation to a layer's input channels must be matched by the same permutation
//! of the producer's output channels (or of the input activations), which is the caller's job.
//!
//! # Algorithm
//! Greedy pairwise channel swaps: for every pair of groups `(g, h)`, evaluate all `m * m` swaps
//! of one column of `g` with one column of `h`, apply the best if it raises the kept magnitude,
//! and repeat full sweeps until one makes no swap or `max_sweeps` is reached.
//!
//! A swap only changes its two groups. Per column slot we cache, for each row, the loss of
//! removing it from its group and the `n`-th largest of the others, so a candidate swap costs
//! `O(rows)` (two `max(0, v - t)` per row).
//!
//! # Complexity and limits
//! One sweep is `O(cols^2 * rows)` time (about `cols^2 / 2` candidate swaps of `rows` work each,
//! plus `O(rows * m log m)` per applied swap); memory is one extra `f32` per weight element plus
//! the column-major magnitudes (`2 * 4 * rows * cols` bytes). The quadratic term makes wide
//! weights expensive (bench/README.md has times for two sizes): bound the work with
//! `max_sweeps`. The result is a local optimum of single swaps (no regressions or stripe-group
//! exhaustive search as in ASP's later versions), deterministic for a given input.

use super::one_d::{kept_magnitude, mn_1d_best};
use crate::bail;
use crate::core::alloc::try_alloc;
use crate::core::error::Result;
use crate::core::shape::check_len;

/// Outcome of [`search_permutation`].
#[derive(Clone, Debug, PartialEq)]
pub struct PermutationResult {
    /// New column order: column `j` of the permuted weight is column `perm[j]` of the input.
    pub perm: Vec<usize>,
    /// `sum |x|` kept by the best `m:n` mask of the input (f64, NaN counts 0).
    pub kept_before: f64,
    /// `sum |x|` kept by the best `m:n` mask of the permuted weight; never below `kept_before`.
    pub kept_after: f64,
    /// Swaps applied.
    pub swaps: usize,
    /// Sweeps run (the last one made no swap unless `max_sweeps` stopped the search).
    pub sweeps: usize,
}

/// Kept magnitude of the best `m:n` mask of a `(rows, cols)` matrix.
///
/// Errors: as [`mn_1d_best`].
pub fn nm_kept_magnitude(values: &[f32], rows: usize, cols: usize, m: usize, n: usize) -> Result<f64> {
    let mask = mn_1d_best(values, rows, cols, m, n)?;
    Ok(kept_magnitude(values, &mask))
}

/// The `(rows, cols)` matrix with its columns reordered: `out[r][j] = values[r][perm[j]]`.
///
/// Errors: wrong length -> `ShapeMismatch`; `perm` not a permutation of `0..cols` ->
/// `InvalidArguments`.
pub fn permute_columns(values: &[f32], rows: usize, cols: usize, perm: &[usize]) -> Result<Vec<f32>> {
    check_len("permute_columns", values.len(), rows, cols)?;
    check_permutation(perm, cols)?;
    let mut out = Vec::with_capacity(values.len());
    if cols > 0 {
        for row in values.chunks_exact(cols) {
            out.extend(perm.iter().map(|&p| row[p]));
        }
    }
    Ok(out)
}

/// The inverse permutation (to undo [`permute_columns`]).
///
/// Errors: `perm` not a permutation of `0..perm.len()` -> `InvalidArguments`.
pub fn invert_permutation(perm: &[usize]) -> Result<Vec<usize>> {
    check_permutation(perm, perm.len())?;
    let mut inv = vec![0; perm.len()];
    for (j, &p) in perm.iter().enumerate() {
        inv[p] = j;
    }
    Ok(inv)
}

fn check_permutation(perm: &[usize], len: usize) -> Result<()> {
    if perm.len() != len {
        bail!(InvalidArguments, "permutation has {} entries, expected {len}", perm.len());
    }
    let mut seen = vec![false; len];
    for &p in perm {
        if p >= len || std::mem::replace(&mut seen[p], true) {
            bail!(InvalidArguments, "not a permutation of 0..{len}: entry {p} is out of range or repeated");
        }
    }
    Ok(())
}

/// Search state: magnitudes in the current column order, column-major, plus per-slot caches.
struct State {
    rows: usize,
    m: usize,
    n: usize,
    /// `|W[r, perm[slot]]|` at `slot * rows + r` (NaN stored as 0).
    mag: Vec<f32>,
    /// Per slot and row: the `n`-th largest magnitude of the slot's group without the slot.
    thresh: Vec<f32>,
    /// Per slot: `sum_r (topn(group without slot) - topn(group))`, <= 0.
    loss: Vec<f64>,
    scratch: Vec<f32>,
}

impl State {
    /// Recomputes the caches of group `g` after its columns changed. `O(rows * m log m)`.
    fn rebuild(&mut self, g: usize) {
        let (rows, m, n) = (self.rows, self.m, self.n);
        let base = g * m;
        self.loss[base..base + m].fill(0.0);
        for r in 0..rows {
            self.scratch.clear();
            self.scratch.extend((0..m).map(|k| self.mag[(base + k) * rows + r]));
            self.scratch.sort_unstable_by(|a, b| b.total_cmp(a));
            let (nth, next) = (self.scratch[n - 1], self.scratch[n]);
            for k in 0..m {
                let v = self.mag[(base + k) * rows + r];
                // v is among the kept iff it is >= the n-th largest (a tie with it costs nothing:
                // an equal value takes its place).
                let (t, l) = if v >= nth { (next, f64::from(next) - f64::from(v)) } else { (nth, 0.0) };
                self.thresh[(base + k) * rows + r] = t;
                self.loss[base + k] += l;
            }
        }
    }

    /// Gain of swapping slot `a` (group of `a`) with slot `b` (another group).
    fn gain(&self, a: usize, b: usize) -> f64 {
        let rows = self.rows;
        let (ma, mb) = (&self.mag[a * rows..(a + 1) * rows], &self.mag[b * rows..(b + 1) * rows]);
        let (ta, tb) = (&self.thresh[a * rows..(a + 1) * rows], &self.thresh[b * rows..(b + 1) * rows]);
        let mut add = 0.0f32;
        let mut acc = 0.0f64;
        for (chunk, ((&xa, &xb), (&sa, &sb))) in ma.iter().zip(mb).zip(ta.iter().zip(tb)).enumerate() {
            // b's value enters a's group, a's value enters b's group.
            add += (xb - sa).max(0.0) + (xa - sb).max(0.0);
            if chunk % 64 == 63 {
                acc += f64::from(add);
                add = 0.0;
            }
        }
        acc + f64::from(add) + self.loss[a] + self.loss[b]
    }

    fn swap(&mut self, a: usize, b: usize) {
        let rows = self.rows;
        let (lo, hi) = (a.min(b), a.max(b));
        let (left, right) = self.mag.split_at_mut(hi * rows);
        left[lo * rows..(lo + 1) * rows].swap_with_slice(&mut right[..rows]);
    }
}

/// A sweep budget given as a JS number: an integer in [0, 1e6].
pub fn sweeps_from_f64(x: f64) -> Result<usize> {
    if !(x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x <= 1e6) {
        bail!(InvalidArguments, "maxSweeps must be an integer in [0, 1e6], got {x}");
    }
    Ok(x as usize)
}

/// Searches a column permutation of a `(rows, cols)` weight that raises the magnitude kept by
/// its best `m:n` mask (groups of `m` consecutive columns); see the module doc for the
/// algorithm, its cost and limits. Deterministic. Returns the identity when nothing helps
/// (`n == 0`, `n == m`, one group, or a local optimum already).
///
/// Errors: wrong length -> `ShapeMismatch`; `n > m` or `m < 1` -> `InvalidNmPattern`;
/// `cols % m != 0` -> `InvalidNmShape`.
pub fn search_permutation(values: &[f32], rows: usize, cols: usize, m: usize, n: usize, max_sweeps: usize) -> Result<PermutationResult> {
    let kept_before = nm_kept_magnitude(values, rows, cols, m, n)?; // validates everything
    let identity = PermutationResult { perm: (0..cols).collect(), kept_before, kept_after: kept_before, swaps: 0, sweeps: 0 };
    let groups = cols / m;
    if n == 0 || n == m || groups < 2 || rows == 0 || max_sweeps == 0 {
        return Ok(identity);
    }
    let mut mag = try_alloc(values.len(), 0.0f32)?;
    for (r, row) in values.chunks_exact(cols).enumerate() {
        for (c, &x) in row.iter().enumerate() {
            mag[c * rows + r] = if x.is_nan() { 0.0 } else { x.abs() };
        }
    }
    let mut st =
        State { rows, m, n, mag, thresh: try_alloc(values.len(), 0.0)?, loss: try_alloc(cols, 0.0)?, scratch: Vec::with_capacity(m) };
    for g in 0..groups {
        st.rebuild(g);
    }
    // Accept only gains clearly above f32 rounding noise, so sweeps cannot cycle.
    let min_gain = kept_before.abs() * 1e-7 + f64::from(f32::MIN_POSITIVE);
    let mut perm: Vec<usize> = (0..cols).collect();
    let (mut swaps, mut sweeps) = (0, 0);
    while sweeps < max_sweeps {
        sweeps += 1;
        let mut changed = false;
        for g in 0..groups {
            for h in g + 1..groups {
                let mut best: Option<(f64, usize, usize)> = None;
                for a in g * m..(g + 1) * m {
                    for b in h * m..(h + 1) * m {
                        let gain = st.gain(a, b);
                        if gain > best.map_or(min_gain, |x| x.0) {
                            best = Some((gain, a, b));
                        }
                    }
                }
                if let Some((_, a, b)) = best {
                    st.swap(a, b);
                    perm.swap(a, b);
                    st.rebuild(g);
                    st.rebuild(h);
                    swaps += 1;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let permuted = permute_columns(values, rows, cols, &perm)?;
    let kept_after = nm_kept_magnitude(&permuted, rows, cols, m, n)?;
    if kept_after < kept_before {
        // Only reachable through rounding of near-zero gains; never return a worse order.
        return Ok(PermutationResult { sweeps, ..identity });
    }
    Ok(PermutationResult { perm, kept_before, kept_after, swaps, sweeps })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::error::ErrorKind;

    #[test]
    fn finds_the_obvious_swap() {
        // Row: groups [9, 8, 0, 0] [7, 6, 0, 0]: 2:4 keeps 9+8+7+6 already; make it need a swap:
        // [9, 8, 7, 6] [0, 0, 0, 0] keeps 17; swapping 7,6 into the second group keeps 30.
        let w = [9.0, 8.0, 7.0, 6.0, 0.0, 0.0, 0.0, 0.0];
        let res = search_permutation(&w, 1, 8, 4, 2, 10).unwrap();
        assert_eq!(res.kept_before, 17.0);
        assert_eq!(res.kept_after, 30.0);
        let p = permute_columns(&w, 1, 8, &res.perm).unwrap();
        assert_eq!(nm_kept_magnitude(&p, 1, 8, 4, 2).unwrap(), 30.0);
        let inv = invert_permutation(&res.perm).unwrap();
        assert_eq!(permute_columns(&p, 1, 8, &inv).unwrap(), w.to_vec());
    }

    #[test]
    fn trivial_patterns_and_errors() {
        let w = [1.0f32; 16];
        assert_eq!(search_permutation(&w, 2, 8, 4, 4, 5).unwrap().perm, (0..8).collect::<Vec<_>>());
        assert_eq!(search_permutation(&w, 2, 8, 4, 5, 5).unwrap_err().kind(), ErrorKind::InvalidNmPattern);
        assert_eq!(search_permutation(&w, 2, 8, 3, 1, 5).unwrap_err().kind(), ErrorKind::InvalidNmShape);
        assert_eq!(search_permutation(&w, 3, 8, 4, 2, 5).unwrap_err().kind(), ErrorKind::ShapeMismatch);
        assert_eq!(permute_columns(&w, 2, 8, &[0; 8]).unwrap_err().kind(), ErrorKind::InvalidArguments);
        assert_eq!(invert_permutation(&[1, 2]).unwrap_err().kind(), ErrorKind::InvalidArguments);
    }
}
