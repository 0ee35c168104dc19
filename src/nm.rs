//! N:M magnitude sparsity, after NVIDIA ASP (seed 004): every group of `m` consecutive elements
//! of a row keeps its `n` largest magnitudes.
//!
//! All masks returned here are **keep-masks** (1 keeps, 0 prunes), flat and row-major.
//!
//! # Ordering of magnitudes
//! Elements are ranked by `|x|` with a total order: `|-0.0| == |0.0|`, `+inf` is the largest
//! magnitude and a **NaN ranks below every number** (NaN entries are pruned first). Equal
//! magnitudes go to the lower index, which is exactly "the first maximising pattern in
//! `itertools.combinations` order" of the seed. No comparison here is ever unordered.

use crate::bail;
use crate::error::{Error, ErrorKind, Result};
use crate::nm2d;
use std::cmp::Ordering;

/// Most rows `compute_valid_1d_patterns` (and the enumeration oracle) will materialise.
pub const MAX_PATTERN_ROWS: u128 = 1 << 20;
/// Most bytes (`rows * m`) `compute_valid_1d_patterns` will materialise.
pub const MAX_PATTERN_BYTES: u128 = 1 << 26;

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
fn rank_cmp(a: (u32, usize), b: (u32, usize)) -> Ordering {
    b.0.cmp(&a.0).then(a.1.cmp(&b.1))
}

/// Parses an N:M pattern name: `(true, m, n)` iff `pattern` fully matches `m(\d+)n(\d+)_1d`
/// (ASCII digits), else `(false, 0, 0)`. Numbers too large for `usize` are rejected too.
pub fn get_nmprune_info(pattern: &str) -> (bool, usize, usize) {
    fn parse(p: &str) -> Option<(usize, usize)> {
        let rest = p.strip_prefix('m')?.strip_suffix("_1d")?;
        let (m, n) = rest.split_once('n')?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(m) || !digits(n) {
            return None;
        }
        Some((m.parse().ok()?, n.parse().ok()?))
    }
    match parse(pattern) {
        Some((m, n)) => (true, m, n),
        None => (false, 0, 0),
    }
}

/// Checks `1 <= m` and `n <= m` (the seed's `invalid_nm_pattern`).
pub fn check_nm(m: usize, n: usize) -> Result<()> {
    if m < 1 {
        bail!(InvalidNmPattern, "N:M pattern needs m >= 1, got m = {m}");
    }
    if n > m {
        bail!(
            InvalidNmPattern,
            "N:M pattern needs 0 <= n <= m, got n = {n} > m = {m}"
        );
    }
    Ok(())
}

/// `C(m, n)`, or `None` once it exceeds `cap` (the count grows monotonically in the loop).
fn binomial_capped(m: usize, n: usize, cap: u128) -> Option<u128> {
    let k = n.min(m - n) as u128;
    let m = m as u128;
    let mut c: u128 = 1;
    for i in 0..k {
        // c * (m - i) / (i + 1) is exact: c * (m-i) is i+1 consecutive-factor product / i!.
        c = c.checked_mul(m - i)? / (i + 1);
        if c > cap {
            return None;
        }
    }
    Some(c)
}

/// Number of valid 1-D patterns `C(m, n)`, validated and bounded so that materialising them
/// cannot exhaust (wasm) memory.
fn pattern_count(m: usize, n: usize) -> Result<usize> {
    check_nm(m, n)?;
    let cap = MAX_PATTERN_ROWS.min(MAX_PATTERN_BYTES / m as u128);
    match binomial_capped(m, n, cap) {
        Some(c) => Ok(c as usize),
        None => Err(Error::new(
            ErrorKind::InvalidNmPattern,
            format!(
                "m{m}n{n}: C({m}, {n}) patterns of {m} elements exceed the enumeration limit \
                 ({MAX_PATTERN_ROWS} rows, {MAX_PATTERN_BYTES} bytes); use mn_1d_best, which \
                 does not enumerate"
            ),
        )),
    }
}

/// All 0/1 vectors of length `m` with `n` ones, flat `(C(m,n), m)` row-major, in the order of
/// `itertools.combinations(range(m), n)` (lexicographic over the kept index tuples).
///
/// Errors: `n > m` or `m < 1`, or more than [`MAX_PATTERN_ROWS`] rows / [`MAX_PATTERN_BYTES`]
/// bytes -> `InvalidNmPattern`.
pub fn compute_valid_1d_patterns(m: usize, n: usize) -> Result<Vec<u8>> {
    let count = pattern_count(m, n)?;
    let mut out = Vec::with_capacity(count * m);
    // Kept indices, advanced like an odometer in lexicographic order.
    let mut idx: Vec<usize> = (0..n).collect();
    loop {
        let start = out.len();
        out.resize(start + m, 0);
        for &i in &idx {
            out[start + i] = 1;
        }
        // Rightmost position that can still move right.
        let Some(p) = (0..n).rev().find(|&p| idx[p] < m - n + p) else {
            break;
        };
        idx[p] += 1;
        for q in p + 1..n {
            idx[q] = idx[q - 1] + 1;
        }
    }
    debug_assert_eq!(out.len(), count * m);
    Ok(out)
}

/// `rows * cols`, checked against `len` (`ShapeMismatch` on overflow or a wrong length).
pub(crate) fn check_len(context: &str, len: usize, rows: usize, cols: usize) -> Result<()> {
    match rows.checked_mul(cols) {
        Some(numel) if numel == len => Ok(()),
        Some(numel) => Err(Error::length_mismatch(context, &[rows, cols], numel, len)),
        None => bail!(
            ShapeMismatch,
            "{context}: shape [{rows}, {cols}] overflows usize"
        ),
    }
}

/// ASP's `reshape_1d`: the `(rows, cols)` matrix as groups of `m`, `(rows * ceil(cols/m), m)`,
/// rows right-padded with zeros when `cols % m != 0`.
///
/// Returns `(groups, groups_shape, padded_shape)` with `padded_shape = [rows, ceil(cols/m)*m]`.
/// Errors: wrong length -> `ShapeMismatch`; `m == 0` -> `InvalidNmPattern`.
pub fn reshape_1d(
    values: &[f32],
    rows: usize,
    cols: usize,
    m: usize,
) -> Result<(Vec<f32>, [usize; 2], [usize; 2])> {
    check_len("reshape_1d", values.len(), rows, cols)?;
    if m == 0 {
        bail!(
            InvalidNmPattern,
            "reshape_1d: group size m must be >= 1, got 0"
        );
    }
    let padded_cols = cols.div_ceil(m) * m;
    let Some(total) = rows.checked_mul(padded_cols) else {
        bail!(
            ShapeMismatch,
            "reshape_1d: padded shape [{rows}, {padded_cols}] overflows usize"
        );
    };
    let mut out = vec![0.0f32; total];
    if cols > 0 {
        for (dst, src) in out
            .chunks_exact_mut(padded_cols)
            .zip(values.chunks_exact(cols))
        {
            dst[..cols].copy_from_slice(src);
        }
    }
    Ok((out, [rows * (padded_cols / m), m], [rows, padded_cols]))
}

/// Validates a `(rows, cols)` matrix for an `m:n` 1-D mask: length, pattern, `cols % m == 0`.
fn check_nm_matrix(
    context: &str,
    len: usize,
    rows: usize,
    cols: usize,
    m: usize,
    n: usize,
) -> Result<()> {
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

/// Writes the keep-mask of one group: the `n` largest magnitudes, ties to the lower index.
///
/// Small groups (`m <= 8`, which covers 2:4 and 4:8) count for each element how many others
/// outrank it (at most 64 integer compares, branch-light); larger groups use an introselect on
/// the total order, linear on average. Neither enumerates patterns.
#[inline]
fn top_n_group(group: &[f32], n: usize, mask: &mut [u8], scratch: &mut Vec<(u32, usize)>) {
    let m = group.len();
    if n == 0 || n >= m {
        mask.fill(u8::from(n >= m));
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
            mask[i] = u8::from(beaten_by < n);
        }
        return;
    }
    scratch.clear();
    scratch.extend(
        group
            .iter()
            .enumerate()
            .map(|(i, &x)| (magnitude_key(x), i)),
    );
    scratch.select_nth_unstable_by(n - 1, |&a, &b| rank_cmp(a, b));
    mask.fill(0);
    for &(_, i) in &scratch[..n] {
        mask[i] = 1;
    }
}

/// The best `m:n` keep-mask of a `(rows, cols)` matrix: in each group of `m` consecutive
/// elements of a row, keep the `n` largest `|x|`, ties to the lower index (see the module doc
/// for `-0.0` and NaN). Linear time per group; no pattern enumeration, so any `m` works.
///
/// Errors: wrong length -> `ShapeMismatch`; `n > m` or `m < 1` -> `InvalidNmPattern`;
/// `cols % m != 0` -> `InvalidNmShape`.
pub fn mn_1d_best(values: &[f32], rows: usize, cols: usize, m: usize, n: usize) -> Result<Vec<u8>> {
    check_nm_matrix("mn_1d_best", values.len(), rows, cols, m, n)?;
    let mut mask = vec![0u8; values.len()];
    if values.is_empty() {
        return Ok(mask);
    }
    // Whole groups per task (rows of groups are independent): parallel with threads.
    let groups = values.len() / m;
    let tasks = crate::kernels::par::tasks_for(values.len(), 1 << 18, groups);
    let per = groups.div_ceil(tasks) * m;
    crate::kernels::par::zip_chunks(values, per, &mut mask, per, |_, v, mk| {
        if m == 4 && n == 2 {
            crate::kernels::nm24_mask(v, mk);
            return;
        }
        let mut scratch = Vec::new();
        for (g, mk) in v.chunks_exact(m).zip(mk.chunks_exact_mut(m)) {
            top_n_group(g, n, mk, &mut scratch);
        }
    });
    Ok(mask)
}

/// The best 2:4 keep-mask of a `(rows, cols)` matrix: `mn_1d_best(values, rows, cols, 4, 2)`.
pub fn m4n2_1d(values: &[f32], rows: usize, cols: usize) -> Result<Vec<u8>> {
    mn_1d_best(values, rows, cols, 4, 2)
}

/// Exact sum of non-negative finite `f32` values, as a 320-bit fixed-point integer whose least
/// significant bit is worth `2^-149` (the smallest subnormal): f32 magnitudes need 277 bits, the
/// rest is headroom for carries. Used by the enumeration oracle so that ties are decided on exact
/// sums, not on rounded ones.
#[derive(Clone, Copy, PartialEq, Eq, Default, Debug)]
struct ExactSum([u64; 5]); // little-endian limbs

impl ExactSum {
    fn add(&mut self, x: f32) {
        debug_assert!(x.is_finite() && x >= 0.0);
        let bits = x.to_bits();
        let exp = (bits >> 23) & 0xff;
        let frac = u128::from(bits & 0x7f_ffff);
        // x = mant * 2^(shift - 149), with mant < 2^24 and shift <= 253.
        let (mant, shift) = if exp == 0 {
            (frac, 0)
        } else {
            (frac | 0x80_0000, exp - 1)
        };
        let mut add = mant << (shift % 64); // < 2^87
        let mut carry = 0u128;
        for limb in &mut self.0[(shift / 64) as usize..] {
            let s = u128::from(*limb) + u128::from(add as u64) + carry;
            *limb = s as u64;
            carry = s >> 64;
            add >>= 64;
            if add == 0 && carry == 0 {
                break;
            }
        }
    }
}

impl Ord for ExactSum {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.iter().rev().cmp(other.0.iter().rev())
    }
}

impl PartialOrd for ExactSum {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Score of one candidate pattern for the oracle: more `+inf` kept, then the larger exact sum
/// of the finite kept magnitudes, then fewer NaN kept (NaN ranks below every number).
fn pattern_score(group: &[f32], pattern: &[u8]) -> (usize, ExactSum, std::cmp::Reverse<usize>) {
    let (mut inf, mut nan, mut sum) = (0usize, 0usize, ExactSum::default());
    for (&x, &p) in group.iter().zip(pattern) {
        if p == 0 {
            continue;
        }
        let a = x.abs();
        if a.is_nan() {
            nan += 1;
        } else if a.is_infinite() {
            inf += 1;
        } else {
            sum.add(a);
        }
    }
    (inf, sum, std::cmp::Reverse(nan))
}

/// The seed's brute-force `mn_1d_best`, kept as the test oracle: for each group, the first
/// pattern of [`compute_valid_1d_patterns`] order that maximises the **exact** sum of `|kept|`
/// (infinities and NaN ordered as in the module doc). `O(C(m,n) * m)` per group.
///
/// Errors: as [`mn_1d_best`], plus `InvalidNmPattern` when `C(m, n)` exceeds the enumeration
/// limit.
pub fn mn_1d_best_enumerate(
    values: &[f32],
    rows: usize,
    cols: usize,
    m: usize,
    n: usize,
) -> Result<Vec<u8>> {
    check_nm_matrix("mn_1d_best_enumerate", values.len(), rows, cols, m, n)?;
    let patterns = compute_valid_1d_patterns(m, n)?;
    let mut mask = vec![0u8; values.len()];
    for (g, mk) in values.chunks_exact(m).zip(mask.chunks_exact_mut(m)) {
        let mut best: Option<(_, &[u8])> = None;
        for p in patterns.chunks_exact(m) {
            let score = pattern_score(g, p);
            // Strictly greater only: ties keep the earlier pattern.
            if best.as_ref().is_none_or(|(s, _)| score > *s) {
                best = Some((score, p));
            }
        }
        if let Some((_, p)) = best {
            mk.copy_from_slice(p);
        }
    }
    Ok(mask)
}

/// The patterns `create_asp_mask` understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AspPattern {
    /// `m{M}n{N}_1d`: keep `n` of every `m` along the grouped dimension.
    OneD { m: usize, n: usize },
    /// `m4n2_2d_greedy`: transposable 2:4 by ASP's greedy per 4x4 tile.
    TwoDGreedy,
    /// `m4n2_2d_best`: transposable 2:4, best of the 90 valid 4x4 tiles.
    TwoDBest,
}

impl AspPattern {
    /// Parses a pattern name; anything unknown is `UnsupportedPattern`. `n > m` is reported
    /// later, by the mask functions, as `InvalidNmPattern` (as in the seed).
    pub fn parse(pattern: &str) -> Result<Self> {
        match pattern {
            "m4n2_2d_greedy" => return Ok(AspPattern::TwoDGreedy),
            "m4n2_2d_best" => return Ok(AspPattern::TwoDBest),
            _ => {}
        }
        match get_nmprune_info(pattern) {
            (true, m, n) => Ok(AspPattern::OneD { m, n }),
            _ => bail!(
                UnsupportedPattern,
                "unsupported sparsity pattern {pattern:?}: expected 'm{{M}}n{{N}}_1d' \
                 (e.g. 'm4n2_1d'), 'm4n2_2d_greedy' or 'm4n2_2d_best'"
            ),
        }
    }

    /// The keep-mask of a `(rows, cols)` matrix, groups along the columns.
    pub fn mask_2d(self, values: &[f32], rows: usize, cols: usize) -> Result<Vec<u8>> {
        match self {
            AspPattern::OneD { m, n } => mn_1d_best(values, rows, cols, m, n),
            AspPattern::TwoDGreedy => nm2d::m4n2_2d_greedy(values, rows, cols),
            AspPattern::TwoDBest => nm2d::m4n2_2d_best(values, rows, cols),
        }
    }
}

/// Where element `flat` of a tensor of `shape` lands in ASP's 2-D matrix, and that matrix's
/// shape. 1-D `(L)` -> `(1, L)`; 2-D as is; 3-D `(K,C,R)` -> `permute(0,2,1)` -> `(K*R, C)`;
/// 4-D `(K,C,R,S)` -> `permute(2,3,0,1)` -> `(R*S*K, C)`. Groups therefore run along the input
/// channels `C` of conv weights.
pub struct AspLayout {
    pub rows: usize,
    pub cols: usize,
    shape: [usize; 4],
    ndim: usize,
}

impl AspLayout {
    /// Errors: rank not in 1..=4 -> `InvalidNmShape`; shape overflow -> `ShapeMismatch`.
    pub fn new(shape: &[usize]) -> Result<Self> {
        let (rows, cols) = match *shape {
            [l] => (Some(1), l),
            [r, c] => (Some(r), c),
            [k, c, r] => (k.checked_mul(r), c),
            [k, c, r, s] => (r.checked_mul(s).and_then(|rs| rs.checked_mul(k)), c),
            _ => bail!(
                InvalidNmShape,
                "create_asp_mask supports 1-D, 2-D, 3-D (K,C,R) and 4-D (K,C,R,S) tensors, \
                 got rank {} (shape {shape:?})",
                shape.len()
            ),
        };
        // A zero-sized dim does not make the other products safe: check both.
        let Some(rows) = rows.filter(|r| r.checked_mul(cols).is_some()) else {
            bail!(
                ShapeMismatch,
                "create_asp_mask: shape {shape:?} overflows usize"
            );
        };
        let mut s = [1usize; 4];
        s[..shape.len()].copy_from_slice(shape);
        Ok(AspLayout {
            rows,
            cols,
            shape: s,
            ndim: shape.len(),
        })
    }

    /// Calls `f(tensor_flat, matrix_flat)` for every element, in tensor order.
    pub fn for_each(&self, mut f: impl FnMut(usize, usize)) {
        let [d0, d1, d2, d3] = self.shape;
        match self.ndim {
            1 | 2 => (0..d0 * d1).for_each(|i| f(i, i)),
            3 => {
                // (k, c, r) -> row k*R + r, col c
                let mut t = 0;
                for k in 0..d0 {
                    for c in 0..d1 {
                        for r in 0..d2 {
                            f(t, (k * d2 + r) * d1 + c);
                            t += 1;
                        }
                    }
                }
            }
            _ => {
                // (k, c, r, s) -> row (r*S + s)*K + k, col c
                let mut t = 0;
                for k in 0..d0 {
                    for c in 0..d1 {
                        for r in 0..d2 {
                            for s in 0..d3 {
                                f(t, ((r * d3 + s) * d0 + k) * d1 + c);
                                t += 1;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// ASP's `create_mask`: the keep-mask of `values` (a tensor of `shape`, row-major) for
/// `pattern`, returned in the tensor's own layout. The tensor is first viewed as ASP's 2-D
/// matrix (see [`AspLayout`]) so that groups run along dim 1 (input channels of conv weights).
///
/// Errors: unknown pattern -> `UnsupportedPattern`; rank not 1-4, `C % m != 0` (or, for the
/// 2-D patterns, rows or `C` not a multiple of 4) -> `InvalidNmShape`; `n > m` ->
/// `InvalidNmPattern`; `values.len()` not the product of `shape` -> `ShapeMismatch`.
pub fn create_asp_mask(values: &[f32], shape: &[usize], pattern: &str) -> Result<Vec<u8>> {
    let pat = AspPattern::parse(pattern)?;
    let layout = AspLayout::new(shape)?;
    let numel = layout.rows * layout.cols;
    if numel != values.len() {
        return Err(Error::length_mismatch(
            "create_asp_mask",
            shape,
            numel,
            values.len(),
        ));
    }
    let contiguous = shape.len() <= 2;
    let matrix = if contiguous {
        std::borrow::Cow::Borrowed(values)
    } else {
        let mut mat = vec![0.0f32; numel];
        layout.for_each(|t, m| mat[m] = values[t]);
        std::borrow::Cow::Owned(mat)
    };
    let mask2d = pat.mask_2d(&matrix, layout.rows, layout.cols)?;
    if contiguous {
        return Ok(mask2d);
    }
    let mut mask = vec![0u8; numel];
    layout.for_each(|t, m| mask[t] = mask2d[m]);
    Ok(mask)
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
    values
        .iter()
        .zip(mask)
        .filter(|&(x, &k)| k != 0 && !x.is_nan())
        .map(|(x, _)| f64::from(x.abs()))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            p,
            vec![1, 1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1, 1]
        );
        assert_eq!(compute_valid_1d_patterns(3, 0).unwrap(), vec![0, 0, 0]);
        assert_eq!(compute_valid_1d_patterns(8, 4).unwrap().len(), 70 * 8);
        assert_eq!(
            compute_valid_1d_patterns(4, 5).unwrap_err().kind,
            ErrorKind::InvalidNmPattern
        );
        assert_eq!(
            compute_valid_1d_patterns(0, 0).unwrap_err().kind,
            ErrorKind::InvalidNmPattern
        );
        let huge = compute_valid_1d_patterns(64, 32).unwrap_err();
        assert_eq!(huge.kind, ErrorKind::InvalidNmPattern);
        assert!(huge.message.contains("limit"), "{}", huge.message);
        assert!(compute_valid_1d_patterns(usize::MAX, 1).is_err());
    }

    #[test]
    fn top_n_ties_nan_and_negative_zero() {
        let v = [
            -0.0,
            0.0,
            0.0,
            0.0,
            f32::NAN,
            1.0,
            f32::NAN,
            0.0,
            2.0,
            -2.0,
            2.0,
            -2.0,
        ];
        let mask = m4n2_1d(&v, 1, 12).unwrap();
        assert_eq!(mask, vec![1, 1, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0]);
        // The large-group path (select) agrees with the small-group path.
        let v16: Vec<f32> = (0..16).map(|i| [3.0, -3.0, f32::NAN, 0.0][i % 4]).collect();
        let mask16 = mn_1d_best(&v16, 1, 16, 16, 7).unwrap();
        assert_eq!(mask16, vec![1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0]);
    }

    #[test]
    fn oracle_uses_exact_sums() {
        // {1e30, 1e-30} beats {1e30, 0}, although both round to 1e30 in f64.
        let v = [1e30, 0.0, 1e-30, 0.0];
        assert_eq!(
            mn_1d_best_enumerate(&v, 1, 4, 4, 2).unwrap(),
            vec![1, 0, 1, 0]
        );
        assert_eq!(mn_1d_best(&v, 1, 4, 4, 2).unwrap(), vec![1, 0, 1, 0]);
        let mut a = ExactSum::default();
        a.add(f32::MAX);
        a.add(f32::MAX);
        let mut b = ExactSum::default();
        b.add(f32::MAX);
        b.add(f32::from_bits(1));
        assert!(a > b);
    }

    #[test]
    fn mn_1d_best_errors() {
        let v = [0.0f32; 12];
        assert_eq!(
            mn_1d_best(&v, 2, 6, 4, 2).unwrap_err().kind,
            ErrorKind::InvalidNmShape
        );
        assert_eq!(
            mn_1d_best(&v, 3, 4, 4, 5).unwrap_err().kind,
            ErrorKind::InvalidNmPattern
        );
        assert_eq!(
            mn_1d_best(&v, 3, 4, 0, 0).unwrap_err().kind,
            ErrorKind::InvalidNmPattern
        );
        assert_eq!(
            mn_1d_best(&v, 3, 3, 4, 2).unwrap_err().kind,
            ErrorKind::ShapeMismatch
        );
        assert_eq!(
            mn_1d_best(&v, usize::MAX, 2, 4, 2).unwrap_err().kind,
            ErrorKind::ShapeMismatch
        );
        assert_eq!(mn_1d_best(&[], 0, 8, 4, 2).unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn reshape_pads_rows() {
        let v: Vec<f32> = (1..=6).map(|x| x as f32).collect();
        let (g, gs, ps) = reshape_1d(&v, 2, 3, 2).unwrap();
        assert_eq!(g, vec![1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0, 0.0]);
        assert_eq!((gs, ps), ([4, 2], [2, 4]));
        assert_eq!(
            reshape_1d(&v, 2, 3, 0).unwrap_err().kind,
            ErrorKind::InvalidNmPattern
        );
    }

    #[test]
    fn asp_mask_conv_groups_along_input_channels() {
        // (K=1, C=4, R=2): groups are the 4 channels at each tap r.
        let v = [1.0, 8.0, 2.0, 7.0, 3.0, 6.0, 4.0, 5.0];
        let mask = create_asp_mask(&v, &[1, 4, 2], "m4n2_1d").unwrap();
        // tap 0: channels hold 1,2,3,4 -> keep c=2,3; tap 1: 8,7,6,5 -> keep c=0,1.
        assert_eq!(mask, vec![0, 1, 0, 1, 1, 0, 1, 0]);
        let e = |s: &[usize], p: &str| create_asp_mask(&v, s, p).unwrap_err().kind;
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
