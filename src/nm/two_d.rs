//! Transposable 2:4 masks (ASP's `m4n2_2d_greedy` / `m4n2_2d_best`): every 4x4 tile of the
//! matrix keeps 2 elements in each of its rows **and** columns, so the mask is 2:4 both for the
//! weight and for its transpose (the backward pass's `W^T` can use sparse tensor cores too).
//!
//! Magnitudes are ranked as in [`crate::nm`]: `|-0.0| == 0`, NaN below every number.

use crate::bail;
use crate::core::alloc::try_alloc;
use crate::core::error::Result;
use crate::core::shape::check_len;
use crate::kernels::order::magnitude_key;

/// The 6 row patterns of a 2:4 row in `itertools.combinations(range(4), 2)` order, as bit masks
/// (bit `c` set = column `c` kept).
const ROW_PATTERNS: [u8; 6] = [0b0011, 0b0101, 0b1001, 0b0110, 0b1010, 0b1100];

/// Number of 4x4 tiles with exactly 2 kept per row and per column.
pub const NUM_2D_PATTERNS: usize = 90;

/// The 90 valid 4x4 tiles, each as the 4 indices into [`ROW_PATTERNS`] of its rows, ordered
/// lexicographically by those indices (row 0 most significant). `m4n2_2d_best` breaks ties
/// toward the earlier tile of this order.
pub const VALID_2D_PATTERNS: [[u8; 4]; NUM_2D_PATTERNS] = {
    let mut out = [[0u8; 4]; NUM_2D_PATTERNS];
    let mut count = 0;
    let mut code = 0;
    while code < 6 * 6 * 6 * 6 {
        let rows = [code / 216, (code / 36) % 6, (code / 6) % 6, code % 6];
        let mut col_counts = [0u8; 4];
        let mut r = 0;
        while r < 4 {
            let mut c = 0;
            while c < 4 {
                col_counts[c] += (ROW_PATTERNS[rows[r]] >> c) & 1;
                c += 1;
            }
            r += 1;
        }
        if col_counts[0] == 2 && col_counts[1] == 2 && col_counts[2] == 2 && col_counts[3] == 2 {
            out[count] = [rows[0] as u8, rows[1] as u8, rows[2] as u8, rows[3] as u8];
            count += 1;
        }
        code += 1;
    }
    assert!(count == NUM_2D_PATTERNS);
    out
};

/// The 90 valid tiles as flat 0/1 keep-masks, `(90, 4, 4)` row-major, in the order of
/// [`VALID_2D_PATTERNS`].
pub fn valid_2d_patterns() -> Vec<u8> {
    VALID_2D_PATTERNS.iter().flat_map(|rows| rows.iter().flat_map(|&p| (0..4).map(move |c| (ROW_PATTERNS[p as usize] >> c) & 1))).collect()
}

/// Checks the matrix for tiling: length, and both dimensions multiples of 4.
fn check_tiles(context: &str, len: usize, rows: usize, cols: usize) -> Result<()> {
    check_len(context, len, rows, cols)?;
    if !rows.is_multiple_of(4) || !cols.is_multiple_of(4) {
        bail!(
            InvalidNmShape,
            "{context}: transposable 2:4 masks tile the matrix in 4x4 blocks, so rows and columns \
             must be multiples of 4, got [{rows}, {cols}] (after the ASP reshape)"
        );
    }
    Ok(())
}

/// Runs `tile_mask` on every 4x4 tile (gathered row-major) and scatters its 16-bit keep mask
/// (bit `4*r + c`) into the full keep-mask.
fn for_each_tile(values: &[f32], rows: usize, cols: usize, mut tile_mask: impl FnMut(&[f32; 16]) -> u16) -> Result<Vec<u8>> {
    let mut mask = try_alloc(values.len(), 0u8)?;
    let mut tile = [0.0f32; 16];
    for tr in (0..rows).step_by(4) {
        for tc in (0..cols).step_by(4) {
            for r in 0..4 {
                let at = (tr + r) * cols + tc;
                tile[4 * r..4 * r + 4].copy_from_slice(&values[at..at + 4]);
            }
            let bits = tile_mask(&tile);
            for r in 0..4 {
                let at = (tr + r) * cols + tc;
                for c in 0..4 {
                    mask[at + c] = ((bits >> (4 * r + c)) & 1) as u8;
                }
            }
        }
    }
    Ok(mask)
}

/// Best of the 90 tiles: maximises the kept `sum |x|` (f64; NaN counts 0), then keeps fewer
/// NaN; ties to the earlier tile of [`VALID_2D_PATTERNS`].
fn best_tile(tile: &[f32; 16]) -> u16 {
    // Score of each row pattern in each row: (sum of the 2 kept |x|, NaN count).
    let mut pair = [[(0.0f64, 0u8); 6]; 4];
    for r in 0..4 {
        for (p, &bits) in ROW_PATTERNS.iter().enumerate() {
            let mut s = (0.0, 0);
            for c in 0..4 {
                if (bits >> c) & 1 == 1 {
                    let x = tile[4 * r + c];
                    if x.is_nan() {
                        s.1 += 1;
                    } else {
                        s.0 += f64::from(x.abs());
                    }
                }
            }
            pair[r][p] = s;
        }
    }
    let mut best = 0;
    let mut best_score = (f64::NEG_INFINITY, 0u8);
    for (i, rows) in VALID_2D_PATTERNS.iter().enumerate() {
        let (mut sum, mut nan) = (0.0f64, 0u8);
        for r in 0..4 {
            let (s, n) = pair[r][rows[r] as usize];
            sum += s;
            nan += n;
        }
        if sum > best_score.0 || (sum == best_score.0 && nan < best_score.1) {
            best = i;
            best_score = (sum, nan);
        }
    }
    tile_bits(&VALID_2D_PATTERNS[best])
}

fn tile_bits(rows: &[u8; 4]) -> u16 {
    rows.iter().enumerate().fold(0, |acc, (r, &p)| acc | (u16::from(ROW_PATTERNS[p as usize]) << (4 * r)))
}

/// ASP's greedy on one tile: visit the 16 entries by decreasing `|x|` (ties to the lower
/// row-major index) and keep one while its row and its column hold fewer than 2.
///
/// The greedy can get stuck with 7 (or 6) kept, e.g. when a 3x3 corner takes 6 entries before
/// the 4th row and column meet at one cell; ASP leaves such a tile under-full. We replace it with
/// the best tile instead, so every tile keeps exactly 2 per row and column.
fn greedy_tile(tile: &[f32; 16]) -> u16 {
    let mut order: [(u32, u8); 16] = [(0, 0); 16];
    for (i, o) in order.iter_mut().enumerate() {
        *o = (magnitude_key(tile[i]), i as u8);
    }
    order.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let (mut row_n, mut col_n) = ([0u8; 4], [0u8; 4]);
    let (mut bits, mut kept) = (0u16, 0);
    for &(_, i) in &order {
        let (r, c) = (usize::from(i / 4), usize::from(i % 4));
        if row_n[r] < 2 && col_n[c] < 2 {
            row_n[r] += 1;
            col_n[c] += 1;
            bits |= 1 << i;
            kept += 1;
        }
    }
    if kept == 8 {
        bits
    } else {
        best_tile(tile)
    }
}

/// Transposable 2:4 keep-mask of a `(rows, cols)` matrix by ASP's greedy per 4x4 tile (see
/// `greedy_tile` for the one deviation: stuck tiles fall back to the best tile).
///
/// Errors: wrong length -> `ShapeMismatch`; rows or cols not multiples of 4 -> `InvalidNmShape`.
pub fn m4n2_2d_greedy(values: &[f32], rows: usize, cols: usize) -> Result<Vec<u8>> {
    check_tiles("m4n2_2d_greedy", values.len(), rows, cols)?;
    for_each_tile(values, rows, cols, greedy_tile)
}

/// Transposable 2:4 keep-mask of a `(rows, cols)` matrix: per 4x4 tile, the one of the 90 valid
/// tiles that keeps the largest `sum |x|` (exhaustive, 360 additions per tile).
///
/// Errors: wrong length -> `ShapeMismatch`; rows or cols not multiples of 4 -> `InvalidNmShape`.
pub fn m4n2_2d_best(values: &[f32], rows: usize, cols: usize) -> Result<Vec<u8>> {
    check_tiles("m4n2_2d_best", values.len(), rows, cols)?;
    for_each_tile(values, rows, cols, best_tile)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::error::ErrorKind;

    #[test]
    fn ninety_distinct_valid_tiles() {
        let p = valid_2d_patterns();
        assert_eq!(p.len(), 90 * 16);
        let mut seen = std::collections::HashSet::new();
        for t in p.chunks_exact(16) {
            for i in 0..4 {
                assert_eq!((0..4).map(|j| t[4 * i + j]).sum::<u8>(), 2);
                assert_eq!((0..4).map(|j| t[4 * j + i]).sum::<u8>(), 2);
            }
            assert!(seen.insert(t.to_vec()));
        }
    }

    #[test]
    fn greedy_stuck_tile_falls_back_to_best() {
        // Large values on a 3x3 corner minus its diagonal, then (0,0): greedy keeps 7.
        let mut t = [0.01f32; 16];
        for r in 1..4 {
            for c in 1..4 {
                if r != c {
                    t[4 * r + c] = 10.0;
                }
            }
        }
        t[0] = 5.0;
        let greedy = m4n2_2d_greedy(&t, 4, 4).unwrap();
        assert_eq!(greedy.iter().map(|&b| u32::from(b)).sum::<u32>(), 8);
        assert_eq!(greedy, m4n2_2d_best(&t, 4, 4).unwrap());
    }

    #[test]
    fn best_beats_or_ties_greedy_and_errors() {
        let v: Vec<f32> = (0..64).map(|i| ((i * 37 % 23) as f32 - 11.0) * 0.5).collect();
        let g = m4n2_2d_greedy(&v, 8, 8).unwrap();
        let b = m4n2_2d_best(&v, 8, 8).unwrap();
        assert!(crate::nm::kept_magnitude(&v, &b) >= crate::nm::kept_magnitude(&v, &g));
        assert_eq!(m4n2_2d_best(&v, 4, 16).unwrap().len(), 64);
        assert_eq!(m4n2_2d_best(&v, 2, 32).unwrap_err().kind(), ErrorKind::InvalidNmShape);
        assert_eq!(m4n2_2d_greedy(&v, 8, 4).unwrap_err().kind(), ErrorKind::ShapeMismatch);
    }
}
