//! The f32 `exp`, sigmoid and `erf` of the training core's activations against f64, over the whole
//! range: every 97th float from -110 to 95 (each sign's bit patterns in order), and the edges by
//! name. The SIMD128 lanes' bits against these are checked in `wasm_kernels.rs`.

use sparsekit_wasm::test_support::{erf_f32, exp_f32, scalar, sigmoid_f32};

/// Distance in units in the last place between two finite f32 of the same sign (0 for equal).
fn ulps(a: f32, b: f32) -> u32 {
    if a == b {
        return 0;
    }
    assert!(a.is_finite() && b.is_finite() && a.is_sign_negative() == b.is_sign_negative(), "{a} vs {b}");
    a.to_bits().abs_diff(b.to_bits())
}

/// Every 97th f32 from `lo` to `hi` (both finite), by bit pattern.
fn floats(lo: f32, hi: f32) -> impl Iterator<Item = f32> {
    let neg = (0..=lo.to_bits() & 0x7fff_ffff).rev().step_by(97).map(|b| -f32::from_bits(b));
    let pos = (0..=hi.to_bits()).step_by(97).map(f32::from_bits);
    neg.chain(pos)
}

#[test]
fn exp_within_one_ulp_of_f64() {
    let (mut worst, mut at, mut seen) = (0u32, 0f32, 0usize);
    for x in floats(-110.0, 95.0) {
        let want = (x as f64).exp() as f32;
        let got = exp_f32(x);
        // Where the exact value is subnormal an ulp is absolute (2^-149): count it the same way.
        let d = if want == 0.0 || got == 0.0 { want.to_bits().abs_diff(got.to_bits()) } else { ulps(got, want) };
        if d > worst {
            (worst, at) = (d, x);
        }
        seen += 1;
    }
    assert!(seen > 20_000_000, "{seen} values");
    eprintln!("exp: at most {worst} ulps (at {at:e}) over {seen} values");
    assert!(worst <= 1, "exp off by {worst} ulps at {at:e}");
}

#[test]
fn exp_edges() {
    assert_eq!(exp_f32(0.0), 1.0);
    assert_eq!(exp_f32(-0.0), 1.0);
    assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
    assert_eq!(exp_f32(88.8), f32::INFINITY);
    assert_eq!(exp_f32(f32::NEG_INFINITY).to_bits(), 0);
    assert_eq!(exp_f32(-200.0).to_bits(), 0);
    assert!(exp_f32(f32::NAN).is_nan());
    assert!(ulps(exp_f32(88.72), (88.72f32 as f64).exp() as f32) <= 1, "the largest finite results");
    assert!((exp_f32(-103.0).to_bits()).abs_diff(((-103.0f32 as f64).exp() as f32).to_bits()) <= 1, "a subnormal result");
    assert!(exp_f32(-103.0) > 0.0);
    let mut ys = [1.0f32, 2.0, f32::NEG_INFINITY, 0.5, 3.0];
    scalar::exp_in_place(&mut ys, 3.0);
    assert_eq!(ys, [exp_f32(-2.0), exp_f32(-1.0), 0.0, exp_f32(-2.5), 1.0]);
}

#[test]
fn sigmoid_within_two_ulps_of_f64() {
    let mut worst = (0u32, 0f32);
    for x in floats(-110.0, 95.0) {
        let want = (1.0 / (1.0 + (-(x as f64)).exp())) as f32;
        let got = sigmoid_f32(x);
        let d = if want == 0.0 || got == 0.0 { want.to_bits().abs_diff(got.to_bits()) } else { ulps(got, want) };
        if d > worst.0 {
            worst = (d, x);
        }
    }
    eprintln!("sigmoid: at most {} ulps (at {:e})", worst.0, worst.1);
    assert!(worst.0 <= 2, "sigmoid off by {} ulps at {:e}", worst.0, worst.1);
    assert_eq!(sigmoid_f32(f32::INFINITY), 1.0);
    assert_eq!(sigmoid_f32(f32::NEG_INFINITY), 0.0);
    assert_eq!(sigmoid_f32(0.0), 0.5);
}

#[test]
fn erf_within_two_ulps_of_f64() {
    let mut worst = (0u32, 0f32);
    for x in floats(-110.0, 95.0) {
        let (want, got) = (libm::erf(x as f64) as f32, erf_f32(x));
        let d = if want == 0.0 { want.to_bits().abs_diff(got.to_bits()) } else { ulps(got, want) };
        if d > worst.0 {
            worst = (d, x);
        }
    }
    eprintln!("erf: at most {} ulps (at {:e})", worst.0, worst.1);
    assert!(worst.0 <= 2, "erf off by {} ulps at {:e}", worst.0, worst.1);
    assert_eq!(erf_f32(f32::INFINITY), 1.0);
    assert_eq!(erf_f32(f32::NEG_INFINITY), -1.0);
    assert_eq!(erf_f32(-0.0).to_bits(), (-0.0f32).to_bits());
    assert!(erf_f32(f32::NAN).is_nan());
    let mut ys = [0.5f32, -1.0, 3.0, 10.0, -0.0];
    scalar::erf_in_place(&mut ys);
    assert_eq!(ys.map(f32::to_bits), [0.5f32, -1.0, 3.0, 10.0, -0.0].map(|x| erf_f32(x).to_bits()));
}
