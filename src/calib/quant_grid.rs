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
//! symmetric scale: `max|w| / (2^(bits-1) - 1)` keeps 0 and `±max|w|` on the grid with signed
//! codes and no zero point (onnxruntime's per-channel int8 form); the one extra negative code
//! `-2^(bits-1)` is allowed for values the compensation pushes below `-max|w|`. Asymmetric:
//! the range `[min(w, 0), max(w, 0)]` over `2^bits - 1` steps, zero point rounded, so 0 is
//! always exactly on the grid (a pruned weight stays exactly 0). Rounding is to nearest, ties
//! to even (as `torch.round` and onnxruntime's quantizers).

use crate::bail;
use crate::core::error::Result;

/// The grid's shape: bits, symmetry and group length (`None`: one group per row).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuantGrid {
    pub bits: u32,
    pub sym: bool,
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
    /// Checks `bits` (2..=8) and `group` (>= 1) as given by a caller; `what` names the call.
    pub fn new(bits: i64, group: Option<i64>, sym: bool, what: &str) -> Result<QuantGrid> {
        if !(2..=8).contains(&bits) {
            bail!(InvalidArguments, "{what}: bits must be an integer in 2..=8, got {bits}");
        }
        let group = match group {
            None => None,
            Some(g) if g >= 1 => Some(g as usize),
            Some(g) => bail!(InvalidArguments, "{what}: group must be an integer >= 1 (columns per scale along the inputs), got {g}"),
        };
        Ok(QuantGrid { bits: bits as u32, sym, group })
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
    pub fn params(&self, values: impl Iterator<Item = f32>) -> GroupParams {
        let (mut lo, mut hi) = (0.0f32, 0.0f32);
        for v in values {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        let half = 1i32 << (self.bits - 1);
        if self.sym {
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

    /// The code of `x` and its dequantized value `(code - zero) * scale`.
    #[inline]
    pub fn quantize(&self, x: f32, p: GroupParams) -> (i8, f32) {
        let half = (1i32 << (self.bits - 1)) as f32;
        let (lo, hi) = (-half, half - 1.0);
        // `as i8` saturates and maps NaN to 0: no input can make this panic.
        let c = ((x / p.scale).round_ties_even() + p.zero as f32).clamp(lo, hi);
        (c as i8, (c - p.zero as f32) * p.scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_is_on_every_grid_and_the_range_within_half_a_step() {
        let xs = [0.3f32, -1.7, 0.9];
        for bits in 2..=8 {
            for sym in [true, false] {
                let g = QuantGrid { bits, sym, group: None };
                let p = g.params(xs.into_iter());
                let (c0, z) = g.quantize(0.0, p);
                assert_eq!((c0, z), (p.zero, 0.0), "bits {bits} sym {sym}");
                for x in xs {
                    let (_, m) = g.quantize(x, p);
                    // Asymmetric: the rounded zero point may shift an end of the range by half a step.
                    let tol = if sym { 0.5001 } else { 1.0001 };
                    assert!((m - x).abs() <= tol * p.scale, "bits {bits} sym {sym}: {x} -> {m}");
                }
            }
        }
    }
}
