//! Chunked reductions of a contiguous row, in the lane order both backends share.

use crate::kernels::reduction::Reduction;

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

/// For each `chunk`-long piece `j` of the contiguous `row`, folds its reduction into
/// `acc[j * acc_stride]`. `row.len()` is a multiple of `chunk`.
pub fn reduce_chunks(op: Reduction, row: &[f32], chunk: usize, acc: &mut [f32], acc_stride: usize) {
    debug_assert!(chunk > 0 && row.len().is_multiple_of(chunk));
    // Monomorphic loops for the sums (what the native build autovectorizes). Both are the
    // contract's order: reduce_chunk([x]) is map(x), and for 4 elements every lane starts at
    // 0 + map(x_l) = map(x_l) (map of a sum is never -0.0).
    if matches!(op, Reduction::SumSq | Reduction::SumAbs) && (chunk == 1 || chunk == 4) {
        let m = |x: f32| if op == Reduction::SumSq { x * x } else { x.abs() };
        if chunk == 1 {
            if op == Reduction::SumSq {
                for (j, &x) in row.iter().enumerate() {
                    acc[j * acc_stride] += x * x;
                }
            } else {
                for (j, &x) in row.iter().enumerate() {
                    acc[j * acc_stride] += x.abs();
                }
            }
        } else {
            for (j, c) in row.chunks_exact(4).enumerate() {
                acc[j * acc_stride] += (m(c[0]) + m(c[1])) + (m(c[2]) + m(c[3]));
            }
        }
        return;
    }
    for (j, c) in row.chunks_exact(chunk).enumerate() {
        let a = &mut acc[j * acc_stride];
        *a = op.combine(*a, reduce_chunk(op, c));
    }
}
