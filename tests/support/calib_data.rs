//! Generated data for the calibration property tests (tests/calib_props.rs, tests/gptq_props.rs):
//! one pseudo-random stream and one way to turn inputs into a Hessian, so both suites draw the
//! same numbers from the same seeds.

use sparsekit_wasm::calib::Hessian;

/// Deterministic pseudo-random numbers in [-1, 1) (xorshift over a scrambled seed).
pub(crate) fn rand_vec(seed: u64, n: usize) -> Vec<f32> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// The Hessian of the rows of `x` (`n x cols`, row-major).
pub(crate) fn hessian_of(x: &[f32], cols: usize) -> Hessian {
    let mut h = Hessian::new(cols).unwrap();
    h.add_rows(x, x.len() / cols).unwrap();
    h
}
