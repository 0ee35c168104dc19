//! Seeded weights for the training tests: a linear congruential stream in [-a, a) (the same
//! values on every platform, no dependency), and a float initializer filled from it.
#![allow(dead_code)]

use sparsekit_wasm::train::InitSpec;

/// `n` values in [-a, a) from `seed`.
pub fn lcg(seed: u64, n: usize, a: f32) -> Vec<f32> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 33) as f32 / (1u64 << 31) as f32 * 2.0 - 1.0) * a
        })
        .collect()
}

/// A float initializer of `dims` filled by [`lcg`].
pub fn init(name: &str, dims: &[usize], seed: u64, a: f32) -> InitSpec {
    InitSpec { name: name.into(), dims: dims.to_vec(), floats: Some(lcg(seed, dims.iter().product(), a)), ints: None }
}
