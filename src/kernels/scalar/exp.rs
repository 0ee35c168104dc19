//! `exp` and the logistic sigmoid in f32, as the training core's Softmax, Sigmoid (SiLU) and Exp
//! compute them: Cody-Waite reduction by `ln 2` and Cephes' degree-6 polynomial (S. L. Moshier,
//! `expf.c`), within an ulp of the exact value over the whole range, the sigmoid within 2
//! (tests/activation_kernels.rs checks both against f64 on every 97th float). Separate f32 multiplies and
//! adds in a fixed order and no library call: the SIMD128 lanes ([`super::super::simd`]) give these
//! bits, four at a time, where the f64 `exp` this replaced went through libm an element at a time,
//! and no build's libm can change them.

const LOG2E: f32 = std::f32::consts::LOG2_E;
/// `ln 2` split in two: the high part, 0.693359375, has 9 significant bits, so `n * LN2_HI` is
/// exact for the `|n| <= 150` the clamp allows, and the reduction loses nothing there.
pub(crate) const LN2_HI: f32 = 0.693_359_4;
pub(crate) const LN2_LO: f32 = -2.121_944_4e-4;
/// Below, the result rounds to 0; above, to infinity (the clamp keeps the scale's exponent in range).
pub(crate) const X_MIN: f32 = -104.0;
pub(crate) const X_MAX: f32 = 89.0;
/// Cephes' coefficients for `(e^r - 1 - r) / r^2` on `|r| <= ln 2 / 2`, highest degree first (its
/// last, 5.0000001e-1, is 0.5 in f32).
pub(crate) const P: [f32; 6] = [1.987_569_1e-4, 1.398_199_9e-3, 8.333_452e-3, 4.166_579_6e-2, 1.666_666_5e-1, 0.5];

/// The polynomial with coefficients `c` (highest degree first) at `v`, by Horner's rule.
#[inline(always)]
pub(crate) fn horner(c: &[f32], v: f32) -> f32 {
    let mut q = c[0];
    for k in &c[1..] {
        q = q * v + k;
    }
    q
}

/// `2^n` for `-126 <= n <= 127`, from its exponent bits.
#[inline(always)]
fn pow2(n: i32) -> f32 {
    f32::from_bits(((n + 127) as u32) << 23)
}

/// `e^x` (NaN stays the same NaN; below about -103.97 it is 0, above about 88.72 infinity).
#[inline]
pub fn exp_f32(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    // The lanes' pmax / pmin: the bound where x is beyond it, else x.
    let x = if x < X_MIN { X_MIN } else { x };
    let x = if X_MAX < x { X_MAX } else { x };
    let n = (x * LOG2E).round_ties_even();
    let r = (x - n * LN2_HI) - n * LN2_LO;
    let p = (horner(&P, r) * (r * r) + r) + 1.0;
    // 2^n in two factors, each a normal float: the product rounds once, into the subnormals too.
    let ni = n as i32;
    let n1 = ni >> 1;
    (p * pow2(n1)) * pow2(ni - n1)
}

/// `ys[i] = e^(ys[i] - shift)` (Softmax's terms after its maximum; Exp with `shift = 0`).
pub fn exp_in_place(ys: &mut [f32], shift: f32) {
    for y in ys {
        *y = exp_f32(*y - shift);
    }
}

/// `1 / (1 + e^-x)` of one element, as `e^x / (1 + e^x)` below 0: `e^-x` would overflow before the
/// result reaches the subnormals.
#[inline]
pub fn sigmoid_f32(x: f32) -> f32 {
    let e = exp_f32(-x.abs());
    let d = 1.0 + e;
    if x >= 0.0 {
        1.0 / d
    } else {
        e / d
    }
}

/// `ys[i] = 1 / (1 + e^-ys[i])`.
pub fn sigmoid_in_place(ys: &mut [f32]) {
    for y in ys {
        *y = sigmoid_f32(*y);
    }
}
