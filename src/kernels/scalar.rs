//! Portable kernels: the reference that the SIMD kernels must reproduce bit for bit.

use super::Reduction;

/// One element's contribution to a reduction.
#[inline(always)]
fn map(op: Reduction, x: f32) -> f32 {
    match op {
        Reduction::SumAbs | Reduction::MaxAbs => x.abs(),
        Reduction::SumSq => x * x,
        Reduction::Min | Reduction::Max => x,
    }
}

/// Reduces one contiguous chunk with 4 interleaved lanes: element `i` goes to lane `i % 4`,
/// lanes combine as `(l0 + l1) + (l2 + l3)`. This order is the contract with the SIMD kernel.
#[inline]
pub fn reduce_chunk(op: Reduction, chunk: &[f32]) -> f32 {
    let mut lanes = [op.identity(); 4];
    let mut quads = chunk.chunks_exact(4);
    for q in &mut quads {
        for l in 0..4 {
            lanes[l] = op.combine(lanes[l], map(op, q[l]));
        }
    }
    for (l, &x) in quads.remainder().iter().enumerate() {
        lanes[l] = op.combine(lanes[l], map(op, x));
    }
    op.combine(op.combine(lanes[0], lanes[1]), op.combine(lanes[2], lanes[3]))
}

pub fn reduce_chunks(op: Reduction, row: &[f32], chunk: usize, acc: &mut [f32], acc_stride: usize) {
    debug_assert!(chunk > 0 && row.len() % chunk == 0);
    for (j, c) in row.chunks_exact(chunk).enumerate() {
        let a = &mut acc[j * acc_stride];
        *a = op.combine(*a, reduce_chunk(op, c));
    }
}

pub fn scale_chunks(row: &mut [f32], chunk: usize, factors: &[f32], f_stride: usize) {
    debug_assert!(chunk > 0 && row.len() % chunk == 0);
    for (j, c) in row.chunks_exact_mut(chunk).enumerate() {
        let f = factors[j * f_stride];
        for x in c {
            *x *= f;
        }
    }
}

pub fn cond_sumsq(x: &[f32], h: &[f32], mu: f32) -> f32 {
    debug_assert_eq!(x.len(), h.len());
    let mut lanes = [0.0f32; 4];
    let n4 = x.len() / 4 * 4;
    for i in (0..n4).step_by(4) {
        for l in 0..4 {
            let q = (h[i + l] * x[i + l]) / (h[i + l] + mu);
            lanes[l] += q * q;
        }
    }
    for i in n4..x.len() {
        let q = (h[i] * x[i]) / (h[i] + mu);
        lanes[i - n4] += q * q;
    }
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
}
