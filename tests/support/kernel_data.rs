//! Inputs the native training-kernel tests share (train_kernels, train_fuse, train_conv_band); each
//! test crate compiles this module and uses part of it, hence the dead-code allowance.
#![allow(dead_code)]

/// `n` values in [-scale, scale) from a xorshift stream seeded by `seed`: the same on every
/// platform and build, so bit-for-bit comparisons see the same inputs everywhere.
pub fn data(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) as f32 * scale
        })
        .collect()
}

/// The bit patterns of `a`, for comparisons that must be exact.
pub fn bits(a: &[f32]) -> Vec<u32> {
    a.iter().map(|v| v.to_bits()).collect()
}
