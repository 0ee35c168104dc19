//! N:M pattern names and the enumeration of the valid 1-D patterns (C(m, n) rows of m).

use crate::bail;
use crate::core::error::{Error, ErrorKind, Result};

/// Most rows `compute_valid_1d_patterns` (and the enumeration oracle) will materialise.
pub const MAX_PATTERN_ROWS: u128 = 1 << 20;
/// Most bytes (`rows * m`) `compute_valid_1d_patterns` will materialise.
pub const MAX_PATTERN_BYTES: u128 = 1 << 26;

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

/// Checks `1 <= m` and `n <= m` (`invalid_nm_pattern`, docs/errors.md).
pub fn check_nm(m: usize, n: usize) -> Result<()> {
    if m < 1 {
        bail!(InvalidNmPattern, "N:M pattern needs m >= 1, got m = {m}");
    }
    if n > m {
        bail!(InvalidNmPattern, "N:M pattern needs 0 <= n <= m, got n = {n} > m = {m}");
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
