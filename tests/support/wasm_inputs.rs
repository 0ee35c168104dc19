//! Inputs and the equality the SIMD128-against-scalar tests share (`tests/wasm_*.rs`): every
//! comparison is bit for bit, any NaN equal to any NaN.
#![allow(dead_code)]

/// Bit-equal, or NaN on both sides.
pub fn same(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

/// Deterministic inputs with the awkward values: signed zeros, NaN, infinities, ties.
pub fn inputs(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed | 1;
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            match s % 23 {
                0 => 0.0,
                1 => -0.0,
                2 if i % 97 == 0 => f32::NAN,
                3 if i % 89 == 0 => f32::INFINITY,
                4 if i % 83 == 0 => f32::NEG_INFINITY,
                5 => 0.5,
                6 => -0.5,
                _ => ((s >> 11) as f32 / (1u64 << 53) as f32) * 4.0 - 2.0,
            }
        })
        .collect()
}
