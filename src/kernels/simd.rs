//! `wasm32` SIMD128 kernels. Same lane order as [`super::scalar`], hence the same bits.

use super::{scalar, Reduction};
use core::arch::wasm32::*;

#[inline(always)]
fn map4(op: Reduction, v: v128) -> v128 {
    match op {
        Reduction::SumAbs | Reduction::MaxAbs => f32x4_abs(v),
        Reduction::SumSq => f32x4_mul(v, v),
        Reduction::Min | Reduction::Max => v,
    }
}

#[inline(always)]
fn combine4(op: Reduction, a: v128, b: v128) -> v128 {
    match op {
        Reduction::SumAbs | Reduction::SumSq => f32x4_add(a, b),
        // wasm's f32x4.max/min propagate NaN, as Reduction::combine does.
        Reduction::MaxAbs | Reduction::Max => f32x4_max(a, b),
        Reduction::Min => f32x4_min(a, b),
    }
}

#[inline(always)]
fn horizontal(op: Reduction, v: v128) -> f32 {
    let l = [
        f32x4_extract_lane::<0>(v),
        f32x4_extract_lane::<1>(v),
        f32x4_extract_lane::<2>(v),
        f32x4_extract_lane::<3>(v),
    ];
    op.combine(op.combine(l[0], l[1]), op.combine(l[2], l[3]))
}

#[inline(always)]
unsafe fn load(p: &[f32], i: usize) -> v128 {
    debug_assert!(i + 4 <= p.len());
    v128_load(p.as_ptr().add(i) as *const v128)
}

#[inline]
fn reduce_chunk(op: Reduction, c: &[f32]) -> f32 {
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
        let mut tail = [id; 4];
        for (l, &x) in c[n4..].iter().enumerate() {
            tail[l] = match op {
                Reduction::SumAbs | Reduction::MaxAbs => x.abs(),
                Reduction::SumSq => x * x,
                _ => x,
            };
        }
        let t = f32x4(tail[0], tail[1], tail[2], tail[3]);
        acc = combine4(op, acc, t);
    }
    horizontal(op, acc)
}

pub fn reduce_chunks(op: Reduction, row: &[f32], chunk: usize, acc: &mut [f32], acc_stride: usize) {
    debug_assert!(chunk > 0 && row.len() % chunk == 0);
    if chunk == 4 {
        // One vector per chunk: the most common fine-grained block width.
        for (j, c) in row.chunks_exact(4).enumerate() {
            let v = map4(op, unsafe { load(c, 0) });
            let a = &mut acc[j * acc_stride];
            *a = op.combine(*a, horizontal(op, v));
        }
        return;
    }
    for (j, c) in row.chunks_exact(chunk).enumerate() {
        let a = &mut acc[j * acc_stride];
        *a = op.combine(*a, reduce_chunk(op, c));
    }
}

pub fn scale_chunks(row: &mut [f32], chunk: usize, factors: &[f32], f_stride: usize) {
    debug_assert!(chunk > 0 && row.len() % chunk == 0);
    for (j, c) in row.chunks_exact_mut(chunk).enumerate() {
        let f = factors[j * f_stride];
        let fv = f32x4_splat(f);
        let n4 = c.len() / 4 * 4;
        let mut i = 0;
        while i < n4 {
            // SAFETY: i + 4 <= c.len(); unaligned loads/stores are allowed in wasm.
            unsafe {
                let p = c.as_mut_ptr().add(i) as *mut v128;
                v128_store(p, f32x4_mul(v128_load(p), fv));
            }
            i += 4;
        }
        for x in &mut c[n4..] {
            *x *= f;
        }
    }
}

pub fn cond_sumsq(x: &[f32], h: &[f32], mu: f32) -> f32 {
    debug_assert_eq!(x.len(), h.len());
    let n4 = x.len() / 4 * 4;
    let muv = f32x4_splat(mu);
    let mut acc = f32x4_splat(0.0);
    let mut i = 0;
    while i < n4 {
        // SAFETY: i + 4 <= len of both.
        let (xv, hv) = unsafe { (load(x, i), load(h, i)) };
        let q = f32x4_div(f32x4_mul(hv, xv), f32x4_add(hv, muv));
        acc = f32x4_add(acc, f32x4_mul(q, q));
        i += 4;
    }
    let mut lanes = [
        f32x4_extract_lane::<0>(acc),
        f32x4_extract_lane::<1>(acc),
        f32x4_extract_lane::<2>(acc),
        f32x4_extract_lane::<3>(acc),
    ];
    for k in n4..x.len() {
        let q = (h[k] * x[k]) / (h[k] + mu);
        lanes[k - n4] += q * q;
    }
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
}
