//! `erf` in f32, as the training core's Erf and Gelu compute it (the GELU of BERT-style encoders).
//! Two pieces, fitted by weighted least squares on Chebyshev nodes (bench/train/erf-fit.py): below
//! 1, `erf(x) = x P(x^2)`; from 1, `erf(x) = 1 - e^(-x^2) Q(1/x - 0.625)`, the second factor being
//! `erfc(x) e^(x^2)`, smooth in `1/x` (the form of Sun's fdlibm `erf`, with other polynomials); from
//! 4 on the result rounds to 1. Within 2 ulp of the exact value (tests/activation_kernels.rs,
//! against f64 on every 97th float). Separate f32 multiplies and adds in a fixed order and the
//! kernels' own [`super::exp_f32`]: the SIMD128 lanes give these bits, where the f64 `erf` this
//! replaced went through libm an element at a time.

use super::exp::{exp_f32, horner};

/// `P(t)`, `t = x^2`, highest degree first (the fit's last is `erf'(0)`, 2 / sqrt(pi), in f32).
pub(crate) const SMALL: [f32; 7] =
    [7.898_130_6e-5, -8.024_331e-4, 5.190_051e-3, -2.685_480_8e-2, 0.112_836_12, -0.376_126_3, std::f32::consts::FRAC_2_SQRT_PI];
/// `Q(v)`, `v = 1/x - CENTRE`, highest degree first.
pub(crate) const LARGE: [f32; 11] = [
    -3.821_636_7e-2,
    2.580_322_3e-2,
    6.328_990_7e-3,
    -2.685_427_5e-2,
    4.301_172_5e-2,
    -4.695_001e-2,
    2.334_105_2e-2,
    4.376_721e-2,
    -0.172_394_95,
    0.382_283_78,
    0.305_953,
];
/// The centre of `1/x` over `[1, 4]`: Horner's sums stay small in f32.
pub(crate) const CENTRE: f32 = 0.625;
/// The pieces' meeting point, and where the result has become 1.
pub(crate) const SPLIT: f32 = 1.0;
pub(crate) const ONE_FROM: f32 = 4.0;

/// `erf(x)` (NaN stays the same NaN; signed zeros and the signs of the infinities kept).
#[inline]
pub fn erf_f32(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    let ax = x.abs();
    let small = ax * horner(&SMALL, ax * ax);
    // The lanes' pmax / pmin: the bound where |x| is beyond it.
    let xc = if ax < SPLIT { SPLIT } else { ax };
    let xc = if ONE_FROM < xc { ONE_FROM } else { xc };
    let large = 1.0 - exp_f32(-(xc * xc)) * horner(&LARGE, 1.0 / xc - CENTRE);
    (if ax < SPLIT { small } else { large }).copysign(x)
}

/// `ys[i] = erf(ys[i])`.
pub fn erf_in_place(ys: &mut [f32]) {
    for y in ys {
        *y = erf_f32(*y);
    }
}
