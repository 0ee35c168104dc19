//! N:M magnitude sparsity, after NVIDIA ASP (docs/API.md, "N:M masks"): every group of `m` consecutive elements
//! of a row keeps its `n` largest magnitudes.
//!
//! All masks returned here are **keep-masks** (1 keeps, 0 prunes), flat and row-major.
//!
//! # Ordering of magnitudes
//! Elements are ranked by `|x|` with a total order: `|-0.0| == |0.0|`, `+inf` is the largest
//! magnitude and a **NaN ranks below every number** (NaN entries are pruned first). Equal
//! magnitudes go to the lower index, which is exactly "the first maximising pattern in
//! `itertools.combinations` order" of the N:M definition (tests/data/sparsekit-cases/README.md). No comparison here is ever unordered.

use super::pattern::check_nm;
use crate::bail;
use crate::core::alloc::{try_alloc, try_with_capacity};
use crate::core::error::Result;
use crate::core::shape::check_len;
use crate::kernels::order::{magnitude_key, rank_cmp};
use std::mem::MaybeUninit;

/// ASP's `reshape_1d`: the `(rows, cols)` matrix as groups of `m`, `(rows * ceil(cols/m), m)`,
/// rows right-padded with zeros when `cols % m != 0`.
///
/// Returns `(groups, groups_shape, padded_shape)` with `padded_shape = [rows, ceil(cols/m)*m]`.
/// Errors: wrong length -> `ShapeMismatch`; `m == 0` -> `InvalidNmPattern`.
pub fn reshape_1d(values: &[f32], rows: usize, cols: usize, m: usize) -> Result<(Vec<f32>, [usize; 2], [usize; 2])> {
    check_len("reshape_1d", values.len(), rows, cols)?;
    if m == 0 {
        bail!(InvalidNmPattern, "reshape_1d: group size m must be >= 1, got 0");
    }
    let padded_cols = cols.div_ceil(m) * m;
    let Some(total) = rows.checked_mul(padded_cols) else {
        bail!(ShapeMismatch, "reshape_1d: padded shape [{rows}, {padded_cols}] overflows usize");
    };
    let mut out = try_alloc(total, 0.0f32)?;
    if cols > 0 {
        for (dst, src) in out.chunks_exact_mut(padded_cols).zip(values.chunks_exact(cols)) {
            dst[..cols].copy_from_slice(src);
        }
    }
    Ok((out, [rows * (padded_cols / m), m], [rows, padded_cols]))
}

/// Validates a `(rows, cols)` matrix for an `m:n` 1-D mask: length, pattern, `cols % m == 0`.
fn check_nm_matrix(context: &str, len: usize, rows: usize, cols: usize, m: usize, n: usize) -> Result<()> {
    check_len(context, len, rows, cols)?;
    check_nm(m, n)?;
    if !cols.is_multiple_of(m) {
        bail!(
            InvalidNmShape,
            "{context}: the number of columns ({cols}) must be a multiple of m = {m} \
             (groups of m consecutive elements of a row)"
        );
    }
    Ok(())
}

/// Writes the keep-mask of one group (every byte of `mask`): the `n` largest magnitudes, ties
/// to the lower index.
///
/// Small groups (`m <= 8`, which covers 2:4 and 4:8) count for each element how many others
/// outrank it (at most 64 integer compares, branch-light); larger groups use an introselect on
/// the total order, linear on average. Neither enumerates patterns.
#[inline]
fn top_n_group(group: &[f32], n: usize, mask: &mut [MaybeUninit<u8>], scratch: &mut Vec<(u32, usize)>) {
    let m = group.len();
    if n == 0 || n >= m {
        for b in mask.iter_mut() {
            b.write(u8::from(n >= m));
        }
        return;
    }
    if m <= 8 {
        let mut keys = [0u32; 8];
        for (k, &x) in keys.iter_mut().zip(group) {
            *k = magnitude_key(x);
        }
        for i in 0..m {
            let ki = keys[i];
            // Elements that beat i: strictly larger, or equal and at a lower index.
            let mut beaten_by = 0usize;
            for (j, &kj) in keys[..m].iter().enumerate() {
                beaten_by += usize::from(kj > ki || (kj == ki && j < i));
            }
            mask[i].write(u8::from(beaten_by < n));
        }
        return;
    }
    scratch.clear();
    scratch.extend(group.iter().enumerate().map(|(i, &x)| (magnitude_key(x), i)));
    scratch.select_nth_unstable_by(n - 1, |&a, &b| rank_cmp(a, b));
    for b in mask.iter_mut() {
        b.write(0);
    }
    for &(_, i) in &scratch[..n] {
        mask[i].write(1);
    }
}

/// The best `m:n` keep-mask of a `(rows, cols)` matrix: in each group of `m` consecutive
/// elements of a row, keep the `n` largest `|x|`, ties to the lower index (see the module doc
/// for `-0.0` and NaN). Linear time per group; no pattern enumeration, so any `m` works.
///
/// One pass over the weights; the only allocation is the returned mask, written once (no
/// zero-fill first). 2:4 runs the SIMD kernel over whole groups of four.
///
/// Errors: wrong length -> `ShapeMismatch`; `n > m` or `m < 1` -> `InvalidNmPattern`;
/// `cols % m != 0` -> `InvalidNmShape`.
pub fn mn_1d_best(values: &[f32], rows: usize, cols: usize, m: usize, n: usize) -> Result<Vec<u8>> {
    check_nm_matrix("mn_1d_best", values.len(), rows, cols, m, n)?;
    let len = values.len();
    let mut mask = try_with_capacity::<u8>(len)?;
    mask_groups(values, m, n, &mut mask.spare_capacity_mut()[..len]);
    // SAFETY: `mask_groups` writes every byte of the first `len`.
    unsafe { mask.set_len(len) };
    Ok(mask)
}

/// The `m:n` keep-mask of `values` (whole groups of `m`, `values.len() % m == 0`, `n <= m`)
/// into `out` (same length), every byte written. Groups are independent: with threads, runs of
/// groups go to different workers.
fn mask_groups(values: &[f32], m: usize, n: usize, out: &mut [MaybeUninit<u8>]) {
    debug_assert!(m > 0 && values.len().is_multiple_of(m) && out.len() == values.len());
    let len = values.len();
    if len == 0 {
        return;
    }
    let groups = len / m;
    let tasks = crate::kernels::par::tasks_for(len, 1 << 18, groups);
    let per = groups.div_ceil(tasks) * m;
    crate::kernels::par::zip_chunks(values, per, out, per, |_, v, mk| {
        if m == 4 && n == 2 {
            crate::kernels::nm24_mask_uninit(v, mk);
            return;
        }
        let mut scratch = Vec::new();
        for (g, mk) in v.chunks_exact(m).zip(mk.chunks_exact_mut(m)) {
            top_n_group(g, n, mk, &mut scratch);
        }
    });
}

/// Values per chunk of the streamed functions: 1 MiB of `f32` and 256 KiB of mask, still in
/// cache when the kernel reads what the copy in wrote, and few enough chunks (≈ 170 for a
/// 4096×11008 weight) that the per-chunk calls into JS do not count. A chunk is one task in the
/// threaded build ([`crate::kernels::par::tasks_for`] splits from 2^18 values): the copies in and
/// out are sequential anyway.
const STREAM_CHUNK: usize = 1 << 18;

/// [`mn_1d_best`] over `len` values that live elsewhere (a JS `Float32Array`): `read(start,
/// buf)` fills `buf` with values `start..start + buf.len()`, `write(start, mask)` receives the
/// keep-mask of that range. One fixed buffer of [`STREAM_CHUNK`] values, so no copy as large
/// as the weight is made and wasm memory does not grow with it; the ranges come in order and
/// cover `0..len` exactly. Everything is checked before the first `read`: on an error nothing
/// is read or written.
pub fn mn_1d_best_streamed(
    len: usize,
    rows: usize,
    cols: usize,
    m: usize,
    n: usize,
    mut read: impl FnMut(usize, &mut [f32]),
    mut write: impl FnMut(usize, &[u8]),
) -> Result<()> {
    check_nm_matrix("mn_1d_best", len, rows, cols, m, n)?;
    // A whole number of groups per chunk (groups never straddle rows: cols % m == 0).
    let step = (STREAM_CHUNK / m).max(1) * m;
    let cap = step.min(len);
    let mut buf = try_alloc(cap, 0.0f32)?;
    let mut mask = try_alloc(cap, 0u8)?;
    let mut start = 0;
    while start < len {
        let k = step.min(len - start);
        read(start, &mut buf[..k]);
        // SAFETY: `u8` and `MaybeUninit<u8>` have the same layout and every `u8` is a valid
        // `MaybeUninit<u8>`; `mask_groups` only writes initialised bytes through it.
        let out = unsafe { &mut *(&mut mask[..k] as *mut [u8] as *mut [MaybeUninit<u8>]) };
        mask_groups(&buf[..k], m, n, out);
        write(start, &mask[..k]);
        start += k;
    }
    Ok(())
}

/// [`fill`] over `len` values read a chunk at a time (see [`mn_1d_best_streamed`]).
pub fn fill_streamed(len: usize, mut read: impl FnMut(usize, &mut [f32])) -> Result<f64> {
    if len == 0 {
        return Ok(0.0);
    }
    let mut buf = try_alloc(STREAM_CHUNK.min(len), 0.0f32)?;
    let (mut start, mut nnz) = (0, 0usize);
    while start < len {
        let k = STREAM_CHUNK.min(len - start);
        read(start, &mut buf[..k]);
        nnz += buf[..k].iter().filter(|&&x| x != 0.0).count();
        start += k;
    }
    Ok(nnz as f64 / len as f64)
}

/// The best 2:4 keep-mask of a `(rows, cols)` matrix: `mn_1d_best(values, rows, cols, 4, 2)`.
pub fn m4n2_1d(values: &[f32], rows: usize, cols: usize) -> Result<Vec<u8>> {
    mn_1d_best(values, rows, cols, 4, 2)
}

/// Fraction of non-zero elements, `count_nonzero(x) / numel(x)`, in `[0, 1]`. `-0.0` counts as
/// zero and NaN as non-zero (as `torch.count_nonzero`). An empty tensor gives `0.0` (it has no
/// non-zeros; torch would give NaN from 0/0).
pub fn fill(values: &[f32]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let nnz = values.iter().filter(|&&x| x != 0.0).count();
    nnz as f64 / values.len() as f64
}

/// Sum of `|x|` over the kept elements (`mask != 0`), in f64; NaN entries count as 0.
pub fn kept_magnitude(values: &[f32], mask: &[u8]) -> f64 {
    values.iter().zip(mask).filter(|&(x, &k)| k != 0 && !x.is_nan()).map(|(x, _)| f64::from(x.abs())).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_masks_and_fill_equal_the_whole_array_ones() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            ((seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 4.0
        };
        // More than one chunk, a partial last chunk, ties, zeros, NaN; m not dividing the chunk.
        for (rows, cols, m, n) in [(3usize, 174_776, 4usize, 2usize), (5, 1 << 17, 4, 2), (7, 3 * 12_345, 3, 1), (2, 0, 4, 2)] {
            let len = rows * cols;
            let mut x: Vec<f32> = (0..len).map(|_| (rnd() * 8.0).round() / 8.0).collect();
            if len > 100 {
                x[17] = f32::NAN;
                x[99] = -0.0;
            }
            let whole = mn_1d_best(&x, rows, cols, m, n).unwrap();
            let mut streamed = vec![7u8; len];
            let mut next = 0;
            mn_1d_best_streamed(
                len,
                rows,
                cols,
                m,
                n,
                |s, buf| buf.copy_from_slice(&x[s..s + buf.len()]),
                |s, mk| {
                    assert_eq!(s, next, "ranges in order, without gaps");
                    streamed[s..s + mk.len()].copy_from_slice(mk);
                    next = s + mk.len();
                },
            )
            .unwrap();
            assert_eq!(next, len);
            assert_eq!(streamed, whole, "{rows}x{cols} {m}:{n}");
            let f = fill_streamed(len, |s, buf| buf.copy_from_slice(&x[s..s + buf.len()])).unwrap();
            assert_eq!(f.to_bits(), fill(&x).to_bits());
        }
    }

    #[test]
    fn streamed_mask_errors_before_reading_anything() {
        let touched = std::cell::Cell::new(false);
        let read = |_: usize, _: &mut [f32]| touched.set(true);
        let write = |_: usize, _: &[u8]| touched.set(true);
        let e = mn_1d_best_streamed(10, 2, 4, 4, 2, read, write).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::ShapeMismatch);
        let e = mn_1d_best_streamed(12, 2, 6, 4, 2, read, write).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidNmShape);
        let e = mn_1d_best_streamed(8, 2, 4, 4, 5, read, write).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidNmPattern);
        assert!(!touched.get());
    }
    use crate::nm::{compute_valid_1d_patterns, create_asp_mask, get_nmprune_info};
    use crate::ErrorKind;

    #[test]
    fn nmprune_info_parses_only_full_1d_patterns() {
        assert_eq!(get_nmprune_info("m4n2_1d"), (true, 4, 2));
        assert_eq!(get_nmprune_info("m16n8_1d"), (true, 16, 8));
        assert_eq!(get_nmprune_info("m04n2_1d"), (true, 4, 2));
        for bad in [
            "dense",
            "m4n2_2d",
            "2:4 sparsity",
            "m4n2_1d ",
            "xm4n2_1d",
            "mn2_1d",
            "m4n_1d",
            "m4n2",
            "m-4n2_1d",
            "m4n+2_1d",
            "m4n2_1dd",
            "m99999999999999999999999n2_1d",
            "",
        ] {
            assert_eq!(get_nmprune_info(bad), (false, 0, 0), "{bad}");
        }
    }

    #[test]
    fn patterns_follow_combinations_order() {
        let p = compute_valid_1d_patterns(4, 2).unwrap();
        assert_eq!(p, vec![1, 1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1, 1]);
        assert_eq!(compute_valid_1d_patterns(3, 0).unwrap(), vec![0, 0, 0]);
        assert_eq!(compute_valid_1d_patterns(8, 4).unwrap().len(), 70 * 8);
        assert_eq!(compute_valid_1d_patterns(4, 5).unwrap_err().kind(), ErrorKind::InvalidNmPattern);
        assert_eq!(compute_valid_1d_patterns(0, 0).unwrap_err().kind(), ErrorKind::InvalidNmPattern);
        let huge = compute_valid_1d_patterns(64, 32).unwrap_err();
        assert_eq!(huge.kind(), ErrorKind::InvalidNmPattern);
        assert!(huge.message().contains("limit"), "{}", huge.message());
        assert!(compute_valid_1d_patterns(usize::MAX, 1).is_err());
    }

    #[test]
    fn top_n_ties_nan_and_negative_zero() {
        let v = [-0.0, 0.0, 0.0, 0.0, f32::NAN, 1.0, f32::NAN, 0.0, 2.0, -2.0, 2.0, -2.0];
        let mask = m4n2_1d(&v, 1, 12).unwrap();
        assert_eq!(mask, vec![1, 1, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0]);
        // The large-group path (select) agrees with the small-group path.
        let v16: Vec<f32> = (0..16).map(|i| [3.0, -3.0, f32::NAN, 0.0][i % 4]).collect();
        let mask16 = mn_1d_best(&v16, 1, 16, 16, 7).unwrap();
        assert_eq!(mask16, vec![1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0]);
    }

    #[test]
    fn mn_1d_best_errors() {
        let v = [0.0f32; 12];
        assert_eq!(mn_1d_best(&v, 2, 6, 4, 2).unwrap_err().kind(), ErrorKind::InvalidNmShape);
        assert_eq!(mn_1d_best(&v, 3, 4, 4, 5).unwrap_err().kind(), ErrorKind::InvalidNmPattern);
        assert_eq!(mn_1d_best(&v, 3, 4, 0, 0).unwrap_err().kind(), ErrorKind::InvalidNmPattern);
        assert_eq!(mn_1d_best(&v, 3, 3, 4, 2).unwrap_err().kind(), ErrorKind::ShapeMismatch);
        assert_eq!(mn_1d_best(&v, usize::MAX, 2, 4, 2).unwrap_err().kind(), ErrorKind::ShapeMismatch);
        assert_eq!(mn_1d_best(&[], 0, 8, 4, 2).unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn reshape_pads_rows() {
        let v: Vec<f32> = (1..=6).map(|x| x as f32).collect();
        let (g, gs, ps) = reshape_1d(&v, 2, 3, 2).unwrap();
        assert_eq!(g, vec![1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0, 0.0]);
        assert_eq!((gs, ps), ([4, 2], [2, 4]));
        assert_eq!(reshape_1d(&v, 2, 3, 0).unwrap_err().kind(), ErrorKind::InvalidNmPattern);
    }

    #[test]
    fn asp_mask_conv_groups_along_input_channels() {
        // (K=1, C=4, R=2): groups are the 4 channels at each tap r.
        let v = [1.0, 8.0, 2.0, 7.0, 3.0, 6.0, 4.0, 5.0];
        let mask = create_asp_mask(&v, &[1, 4, 2], "m4n2_1d").unwrap();
        // tap 0: channels hold 1,2,3,4 -> keep c=2,3; tap 1: 8,7,6,5 -> keep c=0,1.
        assert_eq!(mask, vec![0, 1, 0, 1, 1, 0, 1, 0]);
        let e = |s: &[usize], p: &str| create_asp_mask(&v, s, p).unwrap_err().kind();
        assert_eq!(e(&[1, 4, 2], "m4n2_2d"), ErrorKind::UnsupportedPattern);
        assert_eq!(e(&[8, 1, 1, 1, 1], "m4n2_1d"), ErrorKind::InvalidNmShape);
        assert_eq!(e(&[], "m4n2_1d"), ErrorKind::InvalidNmShape);
        assert_eq!(e(&[2, 2, 2], "m4n2_1d"), ErrorKind::InvalidNmShape);
        assert_eq!(e(&[3, 4], "m4n2_1d"), ErrorKind::ShapeMismatch);
        assert_eq!(e(&[usize::MAX, 0, 4], "m4n2_1d"), ErrorKind::ShapeMismatch);
        assert_eq!(e(&[8], "m4n5_1d"), ErrorKind::InvalidNmPattern);
    }

    #[test]
    fn fill_counts_nonzeros() {
        assert_eq!(fill(&[]), 0.0);
        assert_eq!(fill(&[0.0, -0.0, f32::NAN, 1.0]), 0.5);
    }
}
