//! Test oracles: slow, obviously-correct reference implementations the fast code is checked
//! against. They live with the tests, not in the library.
#![allow(dead_code)]

use sparsekit_wasm::nm::compute_valid_1d_patterns;
use sparsekit_wasm::Result;
use std::cmp::Ordering;

/// Exact sum of non-negative finite `f32` values, as a 320-bit fixed-point integer whose least
/// significant bit is worth `2^-149` (the smallest subnormal): f32 magnitudes need 277 bits, the
/// rest is headroom for carries. Used by the enumeration oracle so that ties are decided on exact
/// sums, not on rounded ones.
#[derive(Clone, Copy, PartialEq, Eq, Default, Debug)]
pub struct ExactSum([u64; 5]); // little-endian limbs

impl ExactSum {
    pub fn add(&mut self, x: f32) {
        debug_assert!(x.is_finite() && x >= 0.0);
        let bits = x.to_bits();
        let exp = (bits >> 23) & 0xff;
        let frac = u128::from(bits & 0x7f_ffff);
        // x = mant * 2^(shift - 149), with mant < 2^24 and shift <= 253.
        let (mant, shift) = if exp == 0 { (frac, 0) } else { (frac | 0x80_0000, exp - 1) };
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

/// The brute-force `mn_1d_best` of the N:M definition (docs/API.md), kept as the test oracle: for each group, the first
/// pattern of [`compute_valid_1d_patterns`] order that maximises the **exact** sum of `|kept|`
/// (infinities and NaN ordered as in the module doc). `O(C(m,n) * m)` per group.
///
/// Errors: as [`mn_1d_best`], plus `InvalidNmPattern` when `C(m, n)` exceeds the enumeration
/// limit.
pub fn mn_1d_best_enumerate(values: &[f32], rows: usize, cols: usize, m: usize, n: usize) -> Result<Vec<u8>> {
    // The same argument checks (and errors) as the fast path: it refuses exactly what we must.
    sparsekit_wasm::nm::mn_1d_best(values, rows, cols, m, n)?;
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
