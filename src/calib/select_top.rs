//! SparseGPT's unstructured selection of one block: keep the `keep` largest scores, ties to the
//! lower row-major index. That is a total order, so the kept set is unique and any method that
//! finds it gives the same mask. Large blocks split the work over bands of rows: a histogram of
//! the top 16 bits of every score's order key finds the bucket holding the boundary, and only
//! that bucket is ordered (sequentially); small ones order the whole block.

use crate::core::alloc::{try_alloc, try_collect, try_with_capacity};
use crate::core::error::Result;
use crate::kernels::par;

/// Bits of the order key that pick a histogram bucket.
const BITS: u32 = 16;
/// Below this many elements the block is ordered whole (the histogram would cost more).
const MIN_SPLIT: usize = 1 << 16;

/// Writes `mask[r * cols + i1 + c]` for `r < rows`, `c < wd`: 1 for the `keep` largest
/// `score(r, c)` under `f64::total_cmp`, ties to the lower `r * wd + c`; 0 for the others.
pub(crate) fn select_top<F>(score: F, rows: usize, wd: usize, keep: usize, mask: &mut [u8], cols: usize, i1: usize) -> Result<()>
where
    F: Fn(usize, usize) -> f64 + Sync,
{
    if rows * wd < MIN_SPLIT {
        select_sorted(&score, rows, wd, keep, mask, cols, i1)
    } else {
        select_histogram(&score, rows, wd, keep, mask, cols, i1)
    }
}

/// An unsigned key with the order of `f64::total_cmp`.
#[inline(always)]
fn order_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

/// Descending key, then ascending index.
fn cmp(a: &(u64, u32), b: &(u64, u32)) -> std::cmp::Ordering {
    b.0.cmp(&a.0).then(a.1.cmp(&b.1))
}

/// The whole block ordered (partially) at once.
pub(crate) fn select_sorted<F: Fn(usize, usize) -> f64>(
    score: &F,
    rows: usize,
    wd: usize,
    keep: usize,
    mask: &mut [u8],
    cols: usize,
    i1: usize,
) -> Result<()> {
    let numel = rows * wd;
    let mut idx: Vec<(u64, u32)> = try_collect((0..numel as u32).map(|t| (order_key(score(t as usize / wd, t as usize % wd)), t)))?;
    if keep > 0 && keep < numel {
        idx.select_nth_unstable_by(keep - 1, cmp);
    }
    for r in 0..rows {
        mask[r * cols + i1..r * cols + i1 + wd].fill(0);
    }
    for &(_, t) in &idx[..keep.min(numel)] {
        mask[(t as usize / wd) * cols + i1 + t as usize % wd] = 1;
    }
    Ok(())
}

/// Keys and per-band histograms in parallel, the boundary bucket ordered alone, the mask
/// written in parallel.
pub(crate) fn select_histogram<F: Fn(usize, usize) -> f64 + Sync>(
    score: &F,
    rows: usize,
    wd: usize,
    keep: usize,
    mask: &mut [u8],
    cols: usize,
    i1: usize,
) -> Result<()> {
    let numel = rows * wd;
    let keep = keep.min(numel);
    let shift = 64 - BITS;
    let mut keys = try_alloc(numel, 0u64)?;
    let band = rows.div_ceil(par::tasks_for(numel, 1 << 14, rows));
    let hists = par::map_chunks_mut(&mut keys, band * wd, |t, chunk| -> Result<Vec<u32>> {
        let mut h = try_alloc(1 << BITS, 0u32)?;
        for (q, k) in chunk.iter_mut().enumerate() {
            *k = order_key(score(t * band + q / wd, q % wd));
            h[(*k >> shift) as usize] += 1;
        }
        Ok(h)
    });
    let mut hist = try_alloc(1 << BITS, 0usize)?;
    for h in hists {
        for (a, &b) in hist.iter_mut().zip(h?.iter()) {
            *a += b as usize;
        }
    }
    // From the top bucket down: `above` elements rank above bucket `b`, which holds the boundary.
    let (mut above, mut b) = (0usize, hist.len());
    while b > 0 {
        b -= 1;
        if above + hist[b] >= keep {
            break;
        }
        above += hist[b];
    }
    let need = keep - above;
    let bucket = b as u64;
    par::zip_chunks(&keys, band * wd, &mut mask[..rows * cols], band * cols, |_, kc, mc| {
        for (rl, krow) in kc.chunks_exact(wd).enumerate() {
            for (m, &k) in mc[rl * cols + i1..rl * cols + i1 + wd].iter_mut().zip(krow) {
                *m = (k >> shift > bucket) as u8;
            }
        }
    });
    if need > 0 {
        let mut cand: Vec<(u64, u32)> = try_with_capacity(hist[b])?;
        cand.extend(keys.iter().enumerate().filter(|(_, &k)| k >> shift == bucket).map(|(t, &k)| (k, t as u32)));
        if need < cand.len() {
            cand.select_nth_unstable_by(need - 1, cmp);
        }
        for &(_, t) in &cand[..need] {
            mask[(t as usize / wd) * cols + i1 + t as usize % wd] = 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The histogram path keeps exactly the set the full ordering keeps: many ties (a few
    /// distinct values), spread values, every boundary, offsets inside wider mask rows.
    #[test]
    fn histogram_equals_sorted() {
        let mut s = 88172645463325252u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for &(rows, wd, distinct) in &[(300, 250, 5u64), (257, 300, 1 << 40), (1024, 64, 1)] {
            let vals: Vec<f64> = (0..rows * wd).map(|_| (next() % distinct) as f64 * 0.37).collect();
            let score = |r: usize, c: usize| vals[r * wd + c];
            let (cols, i1) = (wd + 9, 5);
            for keep in [0, 1, rows * wd / 3, rows * wd / 2, rows * wd - 1, rows * wd] {
                let mut a = vec![7u8; rows * cols];
                let mut b = vec![7u8; rows * cols];
                select_sorted(&score, rows, wd, keep, &mut a, cols, i1).unwrap();
                select_histogram(&score, rows, wd, keep, &mut b, cols, i1).unwrap();
                assert!(a == b, "rows {rows} wd {wd} distinct {distinct} keep {keep}");
                assert_eq!(a.iter().filter(|&&m| m == 1).count(), keep);
            }
        }
    }
}
