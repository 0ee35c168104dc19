//! The quantization grid of `gptq` and `roundToNearest` (docs/API.md, "Quantization"): `bits`
//! in 2..=8, one scale (and with `sym: false` one zero point) per row, or per group of `group`
//! consecutive columns along the reduction axis (GPTQ's `groupsize`).
//!
//! Codes are signed in `[-2^(bits-1), 2^(bits-1) - 1]` and a value dequantizes as
//! `(code - zero) * scale` in f32 (ONNX DequantizeLinear's arithmetic; `zero` is 0 when
//! symmetric). A writer of unsigned storage (uint4 MatMulNBits, uint8) adds `2^(bits-1)` to
//! codes and zero points alike: the dequantized values do not change.
//!
//! Parameters follow the quantizer of GPTQ's `quant.py` (IST-DASLab/gptq), except the
//! symmetric scale, which has two conventions:
//! - the default, `max|w| / (2^(bits-1) - 1)`, keeps 0 and `±max|w|` on the grid with signed
//!   codes and no zero point (onnxruntime's per-channel int8 form); the one extra negative code
//!   `-2^(bits-1)` is allowed for values the compensation pushes below `-max|w|`;
//! - `full` (all `2^bits` codes, onnxruntime's blockwise 4-bit quantizer behind MatMulNBits:
//!   `range2scale` in onnxruntime/core/mlas/lib/q4_dq.cpp): the group's value of largest
//!   magnitude `e` (the negative one on a tie) is code `-2^(bits-1)` exactly, `scale = e /
//!   -2^(bits-1)`, negative when `e` is positive. The grid is `[-2^(bits-1), 2^(bits-1) - 1] x
//!   scale`: one more level than the default and a step `(2^(bits-1) - 1) / 2^(bits-1)` of its
//!   (7/8 at 4 bits), at the price of clamping the top step on the side opposite `e`.
//!
//! Asymmetric: the range `[min(w, 0), max(w, 0)]` over `2^bits - 1` steps, zero point rounded,
//! so 0 is always exactly on the grid (a pruned weight stays exactly 0). Rounding is to
//! nearest, ties to even (as `torch.round`); the value of code `zero` is +0.0 whatever the
//! scale's sign.

use crate::bail;
use crate::core::error::Result;

/// The grid's shape: bits, symmetry, the symmetric scale's convention (`full`: all `2^bits`
/// codes, see the module doc) and group length (`None`: one group per row).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuantGrid {
    pub bits: u32,
    pub sym: bool,
    pub full: bool,
    pub group: Option<usize>,
}

/// Scale and zero point of one row's group.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroupParams {
    pub scale: f32,
    /// Signed zero point (0 when symmetric), in code units.
    pub zero: i8,
}

impl QuantGrid {
    /// Checks `bits` (2..=8), `group` (>= 1) and that `full` comes with `sym` as given by a
    /// caller; `what` names the call.
    pub fn new(bits: i64, group: Option<i64>, sym: bool, full: bool, what: &str) -> Result<QuantGrid> {
        if !(2..=8).contains(&bits) {
            bail!(InvalidArguments, "{what}: bits must be an integer in 2..=8, got {bits}");
        }
        if full && !sym {
            bail!(
                InvalidArguments,
                "{what}: fullRange is a symmetric grid's convention (sym: true); an asymmetric grid already uses all 2^bits codes"
            );
        }
        let group = match group {
            None => None,
            Some(g) if g >= 1 => Some(g as usize),
            Some(g) => bail!(InvalidArguments, "{what}: group must be an integer >= 1 (columns per scale along the inputs), got {g}"),
        };
        Ok(QuantGrid { bits: bits as u32, sym, full, group })
    }

    /// Columns per group for a view of `cols` columns (the whole row without a group).
    pub fn group_len(&self, cols: usize) -> usize {
        self.group.unwrap_or(cols).clamp(1, cols.max(1))
    }

    /// Groups per row.
    pub fn groups(&self, cols: usize) -> usize {
        cols.div_ceil(self.group_len(cols))
    }

    /// Largest positive code, `2^(bits-1) - 1`.
    fn qmax(&self) -> f32 {
        ((1i32 << (self.bits - 1)) - 1) as f32
    }

    /// Scale and zero point of one group from its current values (finite). An all-zero group
    /// (or one so small that its scale underflows) gets scale 1: its values round to code 0.
    /// With `full` the scale is negative when the group's extreme value is positive.
    pub fn params(&self, values: impl Iterator<Item = f32>) -> GroupParams {
        let (mut lo, mut hi) = (0.0f32, 0.0f32);
        for v in values {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        let half = 1i32 << (self.bits - 1);
        if self.sym {
            if self.full {
                // onnxruntime's choice on a tie: the negative extreme (then the scale is positive).
                let e = if hi > -lo { hi } else { lo };
                let s = e / -(half as f32);
                let ok = s != 0.0 && s.is_finite();
                return GroupParams { scale: if ok { s } else { 1.0 }, zero: 0 };
            }
            let s = hi.max(-lo) / self.qmax();
            GroupParams { scale: if s > 0.0 && s.is_finite() { s } else { 1.0 }, zero: 0 }
        } else {
            let steps = ((1i32 << self.bits) - 1) as f32;
            let s = (hi - lo) / steps;
            let scale = if s > 0.0 && s.is_finite() { s } else { 1.0 };
            // Unsigned zero point in [0, 2^bits - 1], stored shifted like the codes.
            let zu = (-lo / scale).round_ties_even().clamp(0.0, steps) as i32;
            GroupParams { scale, zero: (zu - half) as i8 }
        }
    }

    /// The code of `x` and its dequantized value `(code - zero) * scale` (+0.0 for code `zero`).
    #[inline]
    pub fn quantize(&self, x: f32, p: GroupParams) -> (i8, f32) {
        let half = (1i32 << (self.bits - 1)) as f32;
        let (lo, hi) = (-half, half - 1.0);
        // `as i8` saturates and maps NaN to 0: no input can make this panic.
        let c = ((x / p.scale).round_ties_even() + p.zero as f32).clamp(lo, hi);
        // `+ 0.0`: a negative scale (full grid) would make the grid's zero -0.0; a pruned weight
        // stays the same +0.0 bits it was written as.
        (c as i8, (c - p.zero as f32) * p.scale + 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_is_on_every_grid_and_the_range_within_half_a_step() {
        let xs = [0.3f32, -1.7, 0.9];
        for bits in 2..=8 {
            for (sym, full) in [(true, false), (true, true), (false, false)] {
                let g = QuantGrid { bits, sym, full, group: None };
                let p = g.params(xs.into_iter());
                let (c0, z) = g.quantize(0.0, p);
                assert_eq!((c0, z.to_bits()), (p.zero, 0.0f32.to_bits()), "bits {bits} sym {sym} full {full}");
                for x in xs {
                    let (_, m) = g.quantize(x, p);
                    // Asymmetric: the rounded zero point may shift an end of the range by half a
                    // step; full: 0.9 lies past the last code on the side opposite -1.7 at 2 bits.
                    let tol = if sym && !full { 0.5001 } else { 1.0001 };
                    assert!((m - x).abs() <= tol * p.scale.abs(), "bits {bits} sym {sym} full {full}: {x} -> {m}");
                }
            }
        }
    }

    /// onnxruntime's 16-level 4-bit grid: the extreme is code -8 exactly, with the scale's sign
    /// following it, and a value of the other sign reaches code 7 (the 15-level grid would
    /// give the extreme code ±7 and a scale of max|w| / 7).
    #[test]
    fn full_grid_puts_the_extreme_on_the_lowest_code() {
        let g = QuantGrid { bits: 4, sym: true, full: true, group: None };
        for (xs, scale) in [([0.8f32, -0.3, 0.7], -0.1f32), ([-0.8, 0.3, 0.7], 0.1)] {
            let p = g.params(xs.into_iter());
            assert_eq!(p, GroupParams { scale, zero: 0 });
            let codes: Vec<i8> = xs.iter().map(|&x| g.quantize(x, p).0).collect();
            assert_eq!(codes[0], -8);
            assert_eq!(g.quantize(xs[0], p).1, xs[0]);
            assert_eq!(codes[2], 7 * scale.signum() as i8);
        }
        // Past the last step on the other side: clamped to code 7.
        let p = g.params([-0.8f32, 0.79].into_iter());
        assert_eq!(g.quantize(0.79, p).0, 7);
        assert_eq!(g.params([0.0f32; 3].into_iter()).scale, 1.0);
        assert!(QuantGrid::new(4, None, false, true, "t").is_err());
    }
}
