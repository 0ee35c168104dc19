//! Chunked reductions of a contiguous row on SIMD128, and the lane-wise combinations the quad
//! kernels fold with.

use core::arch::wasm32::*;

use super::vec::load;
use crate::kernels::reduction::Reduction;
use crate::kernels::scalar;

#[inline(always)]
fn map4(op: Reduction, v: v128) -> v128 {
    match op {
        Reduction::SumAbs | Reduction::MaxAbs => f32x4_abs(v),
        Reduction::SumSq => f32x4_mul(v, v),
        Reduction::Min | Reduction::Max => v,
    }
}

/// Lane-wise [`Reduction::combine`], bit-exact with the scalar one.
#[inline(always)]
pub(super) fn combine4(op: Reduction, a: v128, b: v128) -> v128 {
    match op {
        Reduction::SumAbs | Reduction::SumSq => f32x4_add(a, b),
        // a >= b (both numbers) -> a; otherwise max(a, b), which is b or NaN.
        Reduction::MaxAbs | Reduction::Max => v128_bitselect(a, f32x4_max(a, b), f32x4_ge(a, b)),
        Reduction::Min => v128_bitselect(a, f32x4_min(a, b), f32x4_le(a, b)),
    }
}

#[inline(always)]
fn horizontal(op: Reduction, v: v128) -> f32 {
    let l = [f32x4_extract_lane::<0>(v), f32x4_extract_lane::<1>(v), f32x4_extract_lane::<2>(v), f32x4_extract_lane::<3>(v)];
    op.combine(op.combine(l[0], l[1]), op.combine(l[2], l[3]))
}

/// `[(a0 . a1) . (a2 . a3), (b0 . b1) . (b2 . b3), ..]` for four vectors: four horizontal
/// reductions at once, in the contract's order.
#[inline(always)]
pub(super) fn horizontal4(op: Reduction, a: v128, b: v128, c: v128, d: v128) -> v128 {
    fold4(|u, v| combine4(op, u, v), [a, b, c, d])
}

/// [`horizontal4`] with `op` as the combination: `ab = [a01, a23, b01, b23]`, `cd` likewise,
/// then lane `k` is `op(v_k01, v_k23)`.
#[inline(always)]
pub(super) fn fold4(op: impl Fn(v128, v128) -> v128, v: [v128; 4]) -> v128 {
    let ab = op(i32x4_shuffle::<0, 2, 4, 6>(v[0], v[1]), i32x4_shuffle::<1, 3, 5, 7>(v[0], v[1]));
    let cd = op(i32x4_shuffle::<0, 2, 4, 6>(v[2], v[3]), i32x4_shuffle::<1, 3, 5, 7>(v[2], v[3]));
    op(i32x4_shuffle::<0, 2, 4, 6>(ab, cd), i32x4_shuffle::<1, 3, 5, 7>(ab, cd))
}

#[inline]
pub fn reduce_chunk(op: Reduction, c: &[f32]) -> f32 {
    if c.len() < 4 {
        return scalar::reduce_chunk(op, c);
    }
    let id = op.identity();
    let mut acc = f32x4_splat(id);
    let n4 = c.len() / 4 * 4;
    let mut i = 0;
    while i < n4 {
        // SAFETY: i + 4 <= n4 <= c.len().
        acc = combine4(op, acc, map4(op, unsafe { load(c, i) }));
        i += 4;
    }
    if n4 < c.len() {
        // The remainder goes to lanes 0.., exactly as the scalar kernel does.
        let mut lanes =
            [f32x4_extract_lane::<0>(acc), f32x4_extract_lane::<1>(acc), f32x4_extract_lane::<2>(acc), f32x4_extract_lane::<3>(acc)];
        for (l, &x) in c[n4..].iter().enumerate() {
            let m = match op {
                Reduction::SumAbs | Reduction::MaxAbs => x.abs(),
                Reduction::SumSq => x * x,
                _ => x,
            };
            lanes[l] = op.combine(lanes[l], m);
        }
        return op.combine(op.combine(lanes[0], lanes[1]), op.combine(lanes[2], lanes[3]));
    }
    horizontal(op, acc)
}

pub fn reduce_chunks(op: Reduction, row: &[f32], chunk: usize, acc: &mut [f32], acc_stride: usize) {
    debug_assert!(chunk > 0 && row.len().is_multiple_of(chunk));
    let nch = row.len() / chunk;
    match chunk {
        1 => {
            // One element per block (e.g. 128x1 blocks walked along their rows): a vertical
            // update; reduce_chunk([x]) is map(x) exactly.
            let mut j = 0;
            if acc_stride == 1 {
                while j + 4 <= nch {
                    // SAFETY: j + 4 <= row.len() and <= acc.len() (acc covers every chunk).
                    unsafe {
                        let p = acc.as_mut_ptr().add(j) as *mut v128;
                        v128_store(p, combine4(op, v128_load(p), map4(op, load(row, j))));
                    }
                    j += 4;
                }
            }
            for j in j..nch {
                let a = &mut acc[j * acc_stride];
                *a = op.combine(*a, scalar::reduce_chunk(op, &row[j..j + 1]));
            }
        }
        4 => {
            // Four blocks per step: four loads, one 4x4 transpose-and-reduce.
            let mut j = 0;
            while j + 4 <= nch {
                // SAFETY: 4 * (j + 4) <= row.len().
                let r = unsafe {
                    horizontal4(
                        op,
                        map4(op, load(row, 4 * j)),
                        map4(op, load(row, 4 * j + 4)),
                        map4(op, load(row, 4 * j + 8)),
                        map4(op, load(row, 4 * j + 12)),
                    )
                };
                if acc_stride == 1 {
                    // SAFETY: j + 4 <= nch <= acc.len().
                    unsafe {
                        let p = acc.as_mut_ptr().add(j) as *mut v128;
                        v128_store(p, combine4(op, v128_load(p), r));
                    }
                } else {
                    let lanes =
                        [f32x4_extract_lane::<0>(r), f32x4_extract_lane::<1>(r), f32x4_extract_lane::<2>(r), f32x4_extract_lane::<3>(r)];
                    for (l, &v) in lanes.iter().enumerate() {
                        let a = &mut acc[(j + l) * acc_stride];
                        *a = op.combine(*a, v);
                    }
                }
                j += 4;
            }
            for j in j..nch {
                let v = map4(op, unsafe { load(row, 4 * j) });
                let a = &mut acc[j * acc_stride];
                *a = op.combine(*a, horizontal(op, v));
            }
        }
        _ => {
            for (j, c) in row.chunks_exact(chunk).enumerate() {
                let a = &mut acc[j * acc_stride];
                *a = op.combine(*a, reduce_chunk(op, c));
            }
        }
    }
}
