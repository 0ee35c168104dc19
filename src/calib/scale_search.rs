//! The scale search of GPTQ's quantizer (IST-DASLab/gptq `quant.py`, `find_params` with
//! `mse=True`): a group's range is shrunk over a grid of factors and the parameters with the
//! least `sum |w - q(w)|^2.4` over the group are kept. A round-to-nearest grid spends its
//! extreme codes on the group's single largest value; a slightly smaller step often rounds the
//! rest of the group closer at the price of clipping that value. The result is a grid of the
//! same form ([`QuantGrid`]: symmetric scales with or without `full`, or a zero point), so the
//! writers store it unchanged (MatMulNBits takes any scale per block), and 0 stays exactly on
//! it (code = zero point).

use super::quant_grid::{GroupParams, QuantGrid};

/// Shrink factors `1, 0.99, ..., 0.21` (`quant.py`: `grid=100`, `maxshrink=.8`).
const STEPS: usize = 100;
const MAX_SHRINK: f32 = 0.8;
/// The error's exponent (`quant.py`: `norm=2.4`).
const NORM: f32 = 2.4;

/// The parameters of one group (finite `values`) with the least shrunk-range error; the
/// unshrunk [`QuantGrid::params`] on a tie.
pub(crate) fn search_params(grid: &QuantGrid, values: &[f32]) -> GroupParams {
    let base = grid.params(values.iter().copied());
    let (mut lo, mut hi) = (0.0f32, 0.0f32);
    for &v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo == hi {
        return base;
    }
    let err = |p: GroupParams| values.iter().map(|&x| (x - grid.quantize(x, p).1).abs().powf(NORM)).sum::<f32>();
    let (mut best, mut best_err) = (base, err(base));
    for i in 1..(MAX_SHRINK * STEPS as f32) as usize {
        let f = 1.0 - i as f32 / STEPS as f32;
        // The shrunk range's own parameters: symmetric grids scale with it, the asymmetric one
        // also moves its zero point.
        let p = if grid.sym { GroupParams { scale: base.scale * f, zero: 0 } } else { grid.params([lo * f, hi * f].into_iter()) };
        if !(p.scale != 0.0 && p.scale.is_finite()) {
            continue;
        }
        let e = err(p);
        if e < best_err {
            (best, best_err) = (p, e);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A group spread over [-0.9, 0.9] with one value a little past it: the search clips that
    /// value for a finer step on the rest, and lowers the error it minimises.
    #[test]
    fn shrinks_for_an_outlier_and_never_loses() {
        let xs: Vec<f32> = (0..31).map(|i| ((i * 7 % 31) as f32 - 15.0) * 0.06).chain([1.15]).collect();
        for (sym, full) in [(true, true), (true, false), (false, false)] {
            let g = QuantGrid { bits: 4, sym, full, group: None };
            let (b, s) = (g.params(xs.iter().copied()), search_params(&g, &xs));
            let err = |p| xs.iter().map(|&x| (x - g.quantize(x, p).1).abs().powf(NORM)).sum::<f32>();
            assert!(err(s) < err(b), "sym {sym} full {full}: {s:?} vs {b:?}");
            assert!(s.scale.abs() < b.scale.abs());
            assert_eq!(g.quantize(0.0, s).1.to_bits(), 0.0f32.to_bits());
        }
        // Nothing to gain on a group of equal magnitudes, nor on an all-zero one.
        let g = QuantGrid { bits: 4, sym: true, full: true, group: None };
        assert_eq!(search_params(&g, &[0.5, -0.5, 0.5]), g.params([0.5f32, -0.5, 0.5].into_iter()));
        assert_eq!(search_params(&g, &[0.0; 4]).scale, 1.0);
    }
}
