//! `wasm32` SIMD128 kernels. Same lane order as [`super::scalar`], hence the same bits.
//!
//! `min`/`max` use `f32x4.min/max` only for NaN propagation and pick the operand with a compare,
//! so signed zeros resolve exactly as [`super::nan_max`]/[`super::nan_min`] do (`max(-0, +0)` is
//! the first operand), not as wasm's `f32x4.max` does.

use core::mem::MaybeUninit;

use super::{scalar, BlockRun, ProxLanes, ProxStop, QuadSearch, Reduction, RootLanes, RootStart, QUADS_MAX};
use core::arch::wasm32::*;

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
fn combine4(op: Reduction, a: v128, b: v128) -> v128 {
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
fn horizontal4(op: Reduction, a: v128, b: v128, c: v128, d: v128) -> v128 {
    fold4(|u, v| combine4(op, u, v), [a, b, c, d])
}

/// [`horizontal4`] with `op` as the combination: `ab = [a01, a23, b01, b23]`, `cd` likewise,
/// then lane `k` is `op(v_k01, v_k23)`.
#[inline(always)]
fn fold4(op: impl Fn(v128, v128) -> v128, v: [v128; 4]) -> v128 {
    let ab = op(i32x4_shuffle::<0, 2, 4, 6>(v[0], v[1]), i32x4_shuffle::<1, 3, 5, 7>(v[0], v[1]));
    let cd = op(i32x4_shuffle::<0, 2, 4, 6>(v[2], v[3]), i32x4_shuffle::<1, 3, 5, 7>(v[2], v[3]));
    op(i32x4_shuffle::<0, 2, 4, 6>(ab, cd), i32x4_shuffle::<1, 3, 5, 7>(ab, cd))
}

#[inline(always)]
unsafe fn load(p: &[f32], i: usize) -> v128 {
    debug_assert!(i + 4 <= p.len());
    v128_load(p.as_ptr().add(i) as *const v128)
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

pub fn scale_chunks(row: &mut [f32], chunk: usize, factors: &[f32], f_stride: usize) {
    debug_assert!(chunk > 0 && row.len().is_multiple_of(chunk));
    let nch = row.len() / chunk;
    if chunk < 4 {
        if chunk == 1 && f_stride == 1 {
            let mut j = 0;
            while j + 4 <= nch {
                // SAFETY: j + 4 <= row.len() = nch <= factors.len().
                unsafe {
                    let p = row.as_mut_ptr().add(j) as *mut v128;
                    v128_store(p, f32x4_mul(v128_load(p), load(factors, j)));
                }
                j += 4;
            }
            for j in j..nch {
                row[j] *= factors[j];
            }
            return;
        }
        for (j, c) in row.chunks_exact_mut(chunk).enumerate() {
            let f = factors[j * f_stride];
            for x in c {
                *x *= f;
            }
        }
        return;
    }
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
    finish_cond(acc, n4, |k| (h[k] * x[k]) / (h[k] + mu), x.len())
}

pub fn cond_sumsq_hx(hx: &[f32], h: &[f32], mu: f32) -> f32 {
    debug_assert_eq!(hx.len(), h.len());
    let n4 = hx.len() / 4 * 4;
    let muv = f32x4_splat(mu);
    let mut acc = f32x4_splat(0.0);
    let mut i = 0;
    while i < n4 {
        // SAFETY: i + 4 <= len of both.
        let (av, hv) = unsafe { (load(hx, i), load(h, i)) };
        let q = f32x4_div(av, f32x4_add(hv, muv));
        acc = f32x4_add(acc, f32x4_mul(q, q));
        i += 4;
    }
    finish_cond(acc, n4, |k| hx[k] / (h[k] + mu), hx.len())
}

#[inline(always)]
fn finish_cond(acc: v128, n4: usize, q: impl Fn(usize) -> f32, n: usize) -> f32 {
    let mut lanes =
        [f32x4_extract_lane::<0>(acc), f32x4_extract_lane::<1>(acc), f32x4_extract_lane::<2>(acc), f32x4_extract_lane::<3>(acc)];
    for k in n4..n {
        let v = q(k);
        lanes[k - n4] += v * v;
    }
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
}

/// 4x4 transpose of 32-bit lanes.
#[inline(always)]
fn transpose4(a: v128, b: v128, c: v128, d: v128) -> [v128; 4] {
    let t0 = i32x4_shuffle::<0, 4, 1, 5>(a, b);
    let t1 = i32x4_shuffle::<2, 6, 3, 7>(a, b);
    let t2 = i32x4_shuffle::<0, 4, 1, 5>(c, d);
    let t3 = i32x4_shuffle::<2, 6, 3, 7>(c, d);
    [
        i32x4_shuffle::<0, 1, 4, 5>(t0, t2),
        i32x4_shuffle::<2, 3, 6, 7>(t0, t2),
        i32x4_shuffle::<0, 1, 4, 5>(t1, t3),
        i32x4_shuffle::<2, 3, 6, 7>(t1, t3),
    ]
}

pub fn nm24_mask(values: &[f32], mask: &mut [u8]) {
    // SAFETY: initialised bytes seen as possibly-uninitialised ones; only 0/1 are written.
    nm24_mask_uninit(values, unsafe { &mut *(mask as *mut [u8] as *mut [MaybeUninit<u8>]) })
}

/// Keys ordered like `nm::magnitude_key` for signed compares: `|bits|`, NaN -> -1 (below `|0|`).
/// NaN is found with a float compare: an integer `|bits| > inf` would be turned by LLVM into
/// an unsigned compare, which wasm lacks and V8 emulates in four instructions.
#[inline(always)]
fn keys4_signed(v: v128) -> v128 {
    v128_or(v128_and(v, i32x4_splat(0x7fff_ffff)), f32x4_ne(v, v))
}

/// Sixteen values (four groups) per step, one pass: keys, the six pairwise compares of each
/// group (groups side by side after a 4x4 transpose), the keep test, and the bytes put back in
/// element order with shifts. Only add/sub/shift/and/or after the compares: narrowing and byte
/// shuffles compile (LLVM, then V8) to long sequences here.
pub fn nm24_mask_uninit(values: &[f32], mask: &mut [MaybeUninit<u8>]) {
    debug_assert!(values.len() == mask.len() && values.len().is_multiple_of(4));
    let n16 = values.len() / 16 * 16;
    let mut i = 0;
    while i < n16 {
        // SAFETY: i + 16 <= values.len() == mask.len().
        unsafe {
            // k[e] = element e of the 4 groups (lane g = group g).
            let [k0, k1, k2, k3] = transpose4(
                keys4_signed(load(values, i)),
                keys4_signed(load(values, i + 4)),
                keys4_signed(load(values, i + 8)),
                keys4_signed(load(values, i + 12)),
            );
            // p_ij (i < j) = -1 when j beats i (strictly larger key); else i beats j (tie to the
            // lower index). Element e is kept when fewer than 2 others beat it; each t_e below
            // has its sign bit set exactly then.
            let p01 = i32x4_gt(k1, k0);
            let p02 = i32x4_gt(k2, k0);
            let p03 = i32x4_gt(k3, k0);
            let p12 = i32x4_gt(k2, k1);
            let p13 = i32x4_gt(k3, k1);
            let p23 = i32x4_gt(k3, k2);
            // e=0 is beaten by j where p0j: kept iff p01 + p02 + p03 >= -1.
            let t0 = i32x4_sub(i32x4_splat(-2), i32x4_add(i32x4_add(p01, p02), p03));
            // e=1: by 0 unless p01, by 2 if p12, by 3 if p13: kept iff p12 + p13 - p01 >= 0.
            let t1 = i32x4_sub(i32x4_sub(p01, p12), i32x4_sub(p13, i32x4_splat(-1)));
            // e=2: by 0 unless p02, by 1 unless p12, by 3 if p23: kept iff p23 - p02 - p12 > 0.
            let t2 = i32x4_sub(i32x4_add(p02, p12), p23);
            // e=3: by 0, 1, 2 unless p03, p13, p23: kept iff p03 + p13 + p23 <= -2.
            let t3 = i32x4_add(i32x4_add(p03, p13), i32x4_sub(p23, i32x4_splat(-1)));
            // Lane g holds group g's four mask bytes, element e in byte e (little-endian).
            let b0 = u32x4_shr(t0, 31);
            let b1 = v128_and(u32x4_shr(t1, 23), i32x4_splat(0x100));
            let b2 = v128_and(u32x4_shr(t2, 15), i32x4_splat(0x1_0000));
            let b3 = i32x4_shl(u32x4_shr(t3, 31), 24);
            v128_store(mask.as_mut_ptr().add(i) as *mut v128, v128_or(v128_or(b0, b1), v128_or(b2, b3)));
        }
        i += 16;
    }
    scalar::nm24_mask_uninit(&values[n16..], &mut mask[n16..]);
}

#[inline(always)]
fn load4<T>(a: &[T; 4]) -> v128 {
    debug_assert_eq!(core::mem::size_of::<T>(), 4);
    // SAFETY: 16 readable bytes of plain 4-byte lanes; v128_load has no alignment requirement.
    unsafe { v128_load(a.as_ptr() as *const v128) }
}

#[inline(always)]
fn store4<T>(a: &mut [T; 4], v: v128) {
    debug_assert_eq!(core::mem::size_of::<T>(), 4);
    // SAFETY: 16 writable bytes of plain 4-byte lanes.
    unsafe { v128_store(a.as_mut_ptr() as *mut v128, v) }
}

pub fn prox_write(x: &mut [f32], h: &[f32], chunk: usize, mu_keep: &[(f32, f32)], step: usize) {
    assert!(chunk > 0 && x.len() == h.len() && x.len().is_multiple_of(chunk));
    if !chunk.is_multiple_of(4) {
        return scalar::prox_write(x, h, chunk, mu_keep, step);
    }
    let zero = f32x4_splat(0.0);
    for j in 0..x.len() / chunk {
        let (mu, keep) = mu_keep[j * step];
        let (muv, keepv) = (f32x4_splat(mu), f32x4_splat(keep));
        let mut i = j * chunk;
        while i < (j + 1) * chunk {
            // SAFETY: i + 4 <= (j + 1) * chunk <= len of both.
            unsafe {
                let (xv, hv) = (load(x, i), load(h, i));
                let d = f32x4_add(hv, muv);
                let scaled = v128_bitselect(xv, f32x4_mul(f32x4_div(hv, d), xv), f32x4_eq(d, zero));
                v128_store(x.as_mut_ptr().add(i) as *mut v128, f32x4_mul(scaled, keepv));
            }
            i += 4;
        }
    }
}

pub fn prox_pack4(x: &[f32], h: &[f32], hxt: &mut [f32], ht: &mut [f32]) {
    let n = x.len() / 4;
    assert!(n.is_multiple_of(4) && h.len() == 4 * n && hxt.len() == 4 * n && ht.len() == 4 * n);
    let mut j = 0;
    while j < n {
        // SAFETY: k n + j + 4 <= 4 n for the loads; 4 (j + r) + 4 <= 4 n for the stores.
        unsafe {
            let tx = transpose4(load(x, j), load(x, n + j), load(x, 2 * n + j), load(x, 3 * n + j));
            let th = transpose4(load(h, j), load(h, n + j), load(h, 2 * n + j), load(h, 3 * n + j));
            for r in 0..4 {
                v128_store(ht.as_mut_ptr().add(4 * (j + r)) as *mut v128, th[r]);
                v128_store(hxt.as_mut_ptr().add(4 * (j + r)) as *mut v128, f32x4_mul(th[r], tx[r]));
            }
        }
        j += 4;
    }
}

pub fn prox_stats4(hxt: &[f32], ht: &[f32]) -> [[f32; 4]; 5] {
    assert!(hxt.len() == ht.len() && hxt.len().is_multiple_of(16));
    let mut sq = [f32x4_splat(0.0); 4];
    let mut lo = [f32x4_splat(f32::INFINITY); 4];
    let mut hi = [f32x4_splat(f32::NEG_INFINITY); 4];
    let (mut m1, mut m2) = ([f32x4_splat(0.0); 4], [f32x4_splat(0.0); 4]);
    let mut i = 0;
    while i < hxt.len() {
        for l in 0..4 {
            // SAFETY: i + 16 <= len of both.
            let (a, c) = unsafe { (load(hxt, i + 4 * l), load(ht, i + 4 * l)) };
            let w = f32x4_mul(a, a);
            sq[l] = f32x4_add(sq[l], w);
            lo[l] = combine4(Reduction::Min, lo[l], c);
            hi[l] = combine4(Reduction::Max, hi[l], c);
            let wh = f32x4_mul(w, c);
            m1[l] = f32x4_add(m1[l], wh);
            m2[l] = f32x4_add(m2[l], f32x4_mul(wh, c));
        }
        i += 16;
    }
    let fold = |v: [v128; 4], op: Reduction| -> [f32; 4] {
        let mut out = [0.0f32; 4];
        store4(&mut out, combine4(op, combine4(op, v[0], v[1]), combine4(op, v[2], v[3])));
        out
    };
    let sum = Reduction::SumSq;
    [fold(sq, sum), fold(lo, Reduction::Min), fold(hi, Reduction::Max), fold(m1, sum), fold(m2, sum)]
}

pub fn prox_step4(hxt: &[f32], ht: &[f32], s: &mut ProxLanes, stop: ProxStop) -> bool {
    assert!(hxt.len() == ht.len() && hxt.len().is_multiple_of(16));
    let mu = load4(&s.mu);
    let mut acc = [f32x4_splat(0.0); 4];
    let mut i = 0;
    while i < hxt.len() {
        for (l, a) in acc.iter_mut().enumerate() {
            // SAFETY: i + 16 <= len of both.
            let (x, h) = unsafe { (load(hxt, i + 4 * l), load(ht, i + 4 * l)) };
            let q = f32x4_div(x, f32x4_add(h, mu));
            *a = f32x4_add(*a, f32x4_mul(q, q));
        }
        i += 16;
    }
    let sum = f32x4_add(f32x4_add(acc[0], acc[1]), f32x4_add(acc[2], acc[3]));
    let zero = f32x4_splat(0.0);
    let zeta = v128_bitselect(zero, f32x4_mul(mu, f32x4_sqrt(sum)), f32x4_eq(mu, zero));
    let go = load4(&s.go);
    let below = f32x4_lt(zeta, load4(&s.t));
    let lo = v128_bitselect(mu, load4(&s.lo), v128_and(go, below));
    let hi = v128_bitselect(mu, load4(&s.hi), v128_andnot(go, below));
    // x * 0.5 is x / 2 exactly (both are the correctly rounded half).
    let mu = v128_bitselect(f32x4_mul(f32x4_add(lo, hi), f32x4_splat(0.5)), mu, go);
    // go is all ones (-1) where stepping: subtracting it counts the step.
    let iters = i32x4_sub(load4(&s.iters), go);
    let done = match stop {
        ProxStop::Converged { max_iter, atol } => {
            v128_or(u32x4_ge(iters, u32x4_splat(max_iter)), f32x4_lt(f32x4_abs(f32x4_sub(lo, hi)), f32x4_splat(atol)))
        }
        ProxStop::At(n) => u32x4_ge(iters, u32x4_splat(n)),
    };
    let go = v128_andnot(go, done);
    store4(&mut s.lo, lo);
    store4(&mut s.hi, hi);
    store4(&mut s.mu, mu);
    store4(&mut s.iters, iters);
    store4(&mut s.go, go);
    v128_any_true(go)
}

/// [`scalar::root_terms`] on four lanes.
#[inline(always)]
fn root_terms4(a: v128, h: v128, mu: v128) -> [v128; 3] {
    let r = f32x4_div(f32x4_splat(1.0), f32x4_add(h, mu));
    let q = f32x4_mul(a, r);
    let q2r = f32x4_mul(f32x4_mul(q, q), r);
    [q2r, f32x4_mul(q2r, h), f32x4_mul(q2r, r)]
}

pub fn root_sums_hx(hx: &[f32], h: &[f32], mu: f32) -> [f32; 3] {
    debug_assert_eq!(hx.len(), h.len());
    let n4 = hx.len() / 4 * 4;
    let muv = f32x4_splat(mu);
    let mut acc = [f32x4_splat(0.0); 3];
    let mut i = 0;
    while i < n4 {
        // SAFETY: i + 4 <= len of both.
        let terms = unsafe { root_terms4(load(hx, i), load(h, i), muv) };
        for (a, v) in acc.iter_mut().zip(terms) {
            *a = f32x4_add(*a, v);
        }
        i += 4;
    }
    let mut lanes = [[0.0f32; 4]; 3];
    for (l, a) in lanes.iter_mut().zip(acc) {
        store4(l, a);
    }
    // The tail goes to lanes 0.., as in the scalar kernel.
    for k in n4..hx.len() {
        let r = 1.0 / (h[k] + mu);
        let q = hx[k] * r;
        let q2r = (q * q) * r;
        for (l, v) in lanes.iter_mut().zip([q2r, q2r * h[k], q2r * r]) {
            l[k - n4] += v;
        }
    }
    lanes.map(|l| (l[0] + l[1]) + (l[2] + l[3]))
}

/// [`RootLanes`] held in registers by the quad kernels.
#[derive(Clone, Copy)]
struct RootRegs {
    lo: v128,
    hi: v128,
    mu: v128,
    t: v128,
    tol: v128,
    prev: v128,
    newt: v128,
    lo_open: v128,
    hi_open: v128,
    h_min: v128,
    h_max: v128,
    evals: v128,
    go: v128,
}

impl RootRegs {
    #[inline(always)]
    fn load(s: &RootLanes) -> RootRegs {
        RootRegs {
            lo: load4(&s.lo),
            hi: load4(&s.hi),
            mu: load4(&s.mu),
            t: load4(&s.t),
            tol: load4(&s.tol),
            prev: load4(&s.prev),
            newt: load4(&s.newt),
            lo_open: load4(&s.lo_open),
            hi_open: load4(&s.hi_open),
            h_min: load4(&s.h_min),
            h_max: load4(&s.h_max),
            evals: load4(&s.evals),
            go: load4(&s.go),
        }
    }

    #[inline(always)]
    fn store(&self, s: &mut RootLanes) {
        store4(&mut s.lo, self.lo);
        store4(&mut s.hi, self.hi);
        store4(&mut s.mu, self.mu);
        store4(&mut s.t, self.t);
        store4(&mut s.tol, self.tol);
        store4(&mut s.prev, self.prev);
        store4(&mut s.newt, self.newt);
        store4(&mut s.lo_open, self.lo_open);
        store4(&mut s.hi_open, self.hi_open);
        store4(&mut s.h_min, self.h_min);
        store4(&mut s.h_max, self.h_max);
        store4(&mut s.evals, self.evals);
        store4(&mut s.go, self.go);
    }

    /// [`scalar::root_step_lane`] on the four lanes from their sums `[S3, Sh, S4]` at `mu`,
    /// selects for its branches. Returns whether any lane still goes.
    #[inline(always)]
    fn step(&mut self, s3: v128, sh: v128, s4: v128, max_evals: u32) -> bool {
        let (lane, sums) = self.prepare(s3, sh, s4);
        let cert = certified_root4(lane, sums);
        self.finish(sums, cert, max_evals)
    }

    /// [`RootRegs::step`] on two quads at once, `a` with `sa` and `b` with `sb`, their chains of
    /// square roots and divisions interleaved stage by stage ([`fence`]): one quad's chain alone
    /// fills the out-of-order window while it waits on each division. Same bits as two steps.
    #[inline(always)]
    fn step_pair(a: &mut RootRegs, b: &mut RootRegs, sa: [v128; 3], sb: [v128; 3], max_evals: u32) -> bool {
        let (la, ca) = a.prepare(sa[0], sa[1], sa[2]);
        fence([ca[4]]);
        let (lb, cb) = b.prepare(sb[0], sb[1], sb[2]);
        fence([cb[4]]);
        let fa = cert_first(la, ca);
        fence([fa[5], fa[2]]);
        let fb = cert_first(lb, cb);
        fence([fb[5], fb[2]]);
        let ga = cert_second(la, ca, fa);
        fence(ga);
        let gb = cert_second(lb, cb, fb);
        fence(gb);
        let ra = cert_last(la, fa, ga);
        let rb = cert_last(lb, fb, gb);
        a.finish(ca, ra, max_evals) | b.finish(cb, rb, max_evals)
    }

    /// The first part of [`RootRegs::step`]: the bracket update from `zeta(mu)`; returns the
    /// certificate's arguments.
    #[inline(always)]
    fn prepare(&mut self, s3: v128, sh: v128, s4: v128) -> ([v128; 7], [v128; 6]) {
        let zero = f32x4_splat(0.0);
        let (mu, t, tol, go) = (self.mu, self.t, self.tol, self.go);
        let s2 = f32x4_add(sh, f32x4_mul(mu, s3));
        let w = f32x4_sqrt(s2);
        let zeta = v128_bitselect(zero, f32x4_mul(mu, w), f32x4_eq(mu, zero));
        let below = f32x4_lt(zeta, t);
        let (to_lo, to_hi) = (v128_and(go, below), v128_andnot(go, below));
        let lo = v128_bitselect(mu, self.lo, to_lo);
        let hi = v128_bitselect(mu, self.hi, to_hi);
        let lo_open = v128_andnot(self.lo_open, to_lo);
        let hi_open = v128_andnot(self.hi_open, to_hi);
        let g = f32x4_sub(t, zeta);
        // go is all ones (-1) where searching: subtracting it counts the evaluation.
        let evals = i32x4_sub(self.evals, go);
        self.lo = lo;
        self.hi = hi;
        self.lo_open = lo_open;
        self.hi_open = hi_open;
        self.evals = evals;
        ([mu, t, tol, lo, hi, self.h_min, self.h_max], [s2, s3, sh, s4, w, g])
    }

    /// The rest of [`RootRegs::step`], after the certificate `(certified, model)`.
    #[inline(always)]
    fn finish(&mut self, sums: [v128; 6], cert: (v128, v128), max_evals: u32) -> bool {
        let zero = f32x4_splat(0.0);
        let (mu, tol, go, lo, hi, lo_open, hi_open, evals) =
            (self.mu, self.tol, self.go, self.lo, self.hi, self.lo_open, self.hi_open, self.evals);
        let [s2, s3, sh, _, w, g] = sums;
        let (certified, model) = cert;
        let certified = v128_and(certified, go);
        let moving = v128_andnot(go, certified);
        // The usual case on Adam-like conditioners: every searching lane is certified.
        if !v128_any_true(moving) {
            self.mu = v128_bitselect(model, mu, go);
            self.go = zero;
            return false;
        }
        let newton = f32x4_sub(mu, f32x4_div(f32x4_mul(s2, g), f32x4_sub(f32x4_mul(s3, g), f32x4_mul(w, sh))));
        let mid = f32x4_mul(f32x4_add(lo, hi), f32x4_splat(0.5));
        let two = f32x4_splat(2.0);
        let take = v128_and(
            v128_and(f32x4_ge(newton, lo), f32x4_le(newton, hi)),
            f32x4_le(f32x4_mul(f32x4_abs(f32x4_sub(newton, mu)), two), self.prev),
        );
        let mut next = v128_bitselect(lo, mid, v128_and(f32x4_lt(newton, lo), lo_open));
        next = v128_bitselect(hi, next, v128_and(f32x4_gt(newton, hi), hi_open));
        next = v128_bitselect(newton, next, take);
        let narrow = f32x4_le(f32x4_sub(hi, lo), f32x4_mul(tol, two));
        let next = v128_bitselect(mid, next, narrow);
        let step = f32x4_abs(f32x4_sub(next, mu));
        let ratio = f32x4_div(step, self.newt);
        let predicted = v128_and(take, f32x4_le(f32x4_mul(f32x4_mul(ratio, ratio), step), tol));
        let done =
            v128_or(v128_or(v128_or(certified, narrow), v128_or(f32x4_le(step, tol), predicted)), u32x4_ge(evals, u32x4_splat(max_evals)));
        // Certified lanes take the model's root and keep the rest (as the scalar step returns).
        self.mu = v128_bitselect(model, v128_bitselect(next, mu, go), certified);
        self.prev = v128_bitselect(step, self.prev, moving);
        self.newt = v128_bitselect(v128_and(step, take), self.newt, moving);
        self.go = v128_andnot(go, done);
        v128_any_true(self.go)
    }
}

/// [`scalar::certified_root`] on four lanes: `(certified mask, model root)`.
#[inline(always)]
fn certified_root4(lane: [v128; 7], sums: [v128; 6]) -> (v128, v128) {
    let first = cert_first(lane, sums);
    let second = cert_second(lane, sums, first);
    cert_last(lane, first, second)
}

/// [`certified_root4`] up to its first divisions:
/// `[inv, inv_s2, dn, wide, span, d_min, d_max, den]`.
#[inline(always)]
fn cert_first(lane: [v128; 7], sums: [v128; 6]) -> [v128; 8] {
    let [mu, _, tol, _, _, h_min, h_max] = lane;
    let [s2, s3, sh, _, w, g] = sums;
    let one = f32x4_splat(1.0);
    let den = f32x4_sub(f32x4_mul(s3, g), f32x4_mul(w, sh));
    let (inv, inv_s2) = (f32x4_div(one, den), f32x4_div(one, s2));
    let dn = f32x4_neg(f32x4_mul(f32x4_mul(s2, g), inv));
    let wide = f32x4_mul(f32x4_abs(dn), f32x4_splat(1.125));
    let span = f32x4_add(wide, tol);
    let low = f32x4_sub(mu, span);
    let (d_min, d_max) = (f32x4_add(h_min, low), f32x4_add(h_max, low));
    [inv, inv_s2, dn, wide, span, d_min, d_max, den]
}

/// [`certified_root4`]'s remainder bound and model curvature: `[bound, half]`.
#[inline(always)]
fn cert_second(lane: [v128; 7], sums: [v128; 6], first: [v128; 8]) -> [v128; 2] {
    let [_, t, _, _, _, h_min, h_max] = lane;
    let [s2, s3, _, s4, _, _] = sums;
    let [inv, inv_s2, _, _, span, d_min, d_max, _] = first;
    let one = f32x4_splat(1.0);
    let y_max = f32x4_div(one, d_min);
    let r = f32x4_div(f32x4_sub(h_max, h_min), f32x4_mul(d_min, d_max));
    let m3 = f32x4_mul(f32x4_mul(f32x4_add(f32x4_mul(f32x4_splat(2.25), y_max), f32x4_mul(f32x4_splat(3.0), r)), r), r);
    let u_hi = f32x4_add(one, f32x4_mul(f32x4_mul(s3, span), inv_s2));
    let cube = f32x4_mul(f32x4_mul(span, span), span);
    let bound =
        f32x4_mul(f32x4_mul(f32x4_mul(f32x4_mul(u_hi, m3), cube), f32x4_mul(t, s2)), f32x4_mul(f32x4_abs(inv), f32x4_splat(0.333_333_34)));
    let half =
        f32x4_mul(f32x4_mul(f32x4_mul(f32x4_splat(-1.5), t), f32x4_sub(f32x4_mul(s2, s4), f32x4_mul(s3, s3))), f32x4_mul(inv, inv_s2));
    [bound, half]
}

/// [`certified_root4`]'s model root and its test.
#[inline(always)]
fn cert_last(lane: [v128; 7], first: [v128; 8], second: [v128; 2]) -> (v128, v128) {
    let [mu, _, tol, lo, hi, _, _] = lane;
    let [_, _, dn, wide, _, d_min, _, den] = first;
    let [bound, half] = second;
    let (zero, one) = (f32x4_splat(0.0), f32x4_splat(1.0));
    let dh = f32x4_div(dn, f32x4_add(one, f32x4_mul(half, dn)));
    let (dm, dp) = (f32x4_sub(dh, tol), f32x4_add(dh, tol));
    let qm = f32x4_add(f32x4_sub(dm, dn), f32x4_mul(half, f32x4_mul(dm, dm)));
    let qp = f32x4_add(f32x4_sub(dp, dn), f32x4_mul(half, f32x4_mul(dp, dp)));
    let model = f32x4_add(mu, dh);
    let fits = v128_and(
        v128_and(f32x4_lt(den, zero), f32x4_gt(d_min, zero)),
        v128_and(f32x4_le(f32x4_abs(dh), wide), v128_and(f32x4_ge(model, lo), f32x4_le(model, hi))),
    );
    let ok = v128_and(fits, v128_and(f32x4_lt(f32x4_add(qm, bound), zero), f32x4_gt(f32x4_sub(qp, bound), zero)));
    (ok, model)
}

pub fn prox_root4(hxt: &[f32], ht: &[f32], s: &mut RootLanes, max_evals: u32) -> bool {
    assert!(hxt.len() == ht.len() && hxt.len().is_multiple_of(16));
    let mu = load4(&s.mu);
    let mut acc = [[f32x4_splat(0.0); 4]; 3];
    let mut i = 0;
    while i < hxt.len() {
        for l in 0..4 {
            // SAFETY: i + 16 <= len of both.
            let terms = unsafe { root_terms4(load(hxt, i + 4 * l), load(ht, i + 4 * l), mu) };
            for (sum, v) in acc.iter_mut().zip(terms) {
                sum[l] = f32x4_add(sum[l], v);
            }
        }
        i += 16;
    }
    let [s3, sh, s4] = acc.map(|a| f32x4_add(f32x4_add(a[0], a[1]), f32x4_add(a[2], a[3])));
    let mut regs = RootRegs::load(s);
    let going = regs.step(s3, sh, s4, max_evals);
    regs.store(s);
    going
}

/// [`scalar::root_start_lane`] on four lanes: `([lo, hi, mu, tol], plain mask, ||H x0||)`, the
/// values meaningful where the mask is set.
#[inline(always)]
fn root_start_lanes(stats: [v128; 5], t: v128, c: &RootStart) -> ([v128; 4], v128, v128) {
    let [sumsq, h_min, h_max, swh, swh2] = stats;
    let (eps, inf, zero) = (f32x4_splat(c.eps), f32x4_splat(f32::INFINITY), f32x4_splat(0.0));
    let a = f32x4_sqrt(sumsq);
    let d = f32x4_sub(a, t);
    let den = if c.coupling { v128_bitselect(d, eps, f32x4_ge(d, eps)) } else { f32x4_add(d, eps) };
    let lo = f32x4_div(f32x4_mul(t, h_min), den);
    let hi = f32x4_div(f32x4_mul(t, h_max), den);
    let plain = v128_and(
        v128_and(v128_and(f32x4_gt(t, zero), f32x4_lt(t, inf)), v128_and(f32x4_lt(a, inf), f32x4_gt(a, t))),
        v128_and(f32x4_gt(h_min, zero), v128_and(f32x4_lt(lo, hi), f32x4_lt(hi, inf))),
    );
    let resolution = f32x4_mul(f32x4_mul(f32x4_splat(4.0 * f32::EPSILON), hi), f32x4_div(a, d));
    // Every operand is a non-negative number in plain lanes (resolution > 0), so pmax (one
    // instruction; f32x4_max is eight in V8, for NaN and signed zeros) is f32::max there; the
    // other lanes' tolerance is not used.
    let tol = f32x4_pmax(f32x4_pmax(f32x4_mul(f32x4_sub(hi, lo), f32x4_splat(c.halvings)), f32x4_splat(c.atol * 0.5)), resolution);
    ([lo, hi, root_start_mu4([sumsq, swh, swh2, a, t, lo, hi]), tol], plain, a)
}

/// [`scalar::zeroed_mu`] on four lanes: `(zeroed mask, mu)`.
#[inline(always)]
fn zeroed_mu4(a: v128, t: v128, h_min: v128, h_max: v128, c: &RootStart, max_evals: u32) -> (v128, v128) {
    let zero = f32x4_splat(0.0);
    let ok = if c.eps > 0.0 { u32x4_splat(u32::MAX) } else { zero };
    let zeroed = v128_and(v128_and(f32x4_le(f32x4_sub(a, t), zero), f32x4_gt(t, zero)), v128_and(f32x4_gt(h_min, zero), ok));
    if !v128_any_true(zeroed) {
        return (zeroed, zero);
    }
    let eps = f32x4_splat(c.eps);
    let (lo, hi) = (f32x4_div(f32x4_mul(t, h_min), eps), f32x4_div(f32x4_mul(t, h_max), eps));
    let mid = f32x4_mul(f32x4_add(lo, hi), f32x4_splat(0.5));
    let point = if max_evals == 0 { u32x4_splat(u32::MAX) } else { f32x4_eq(lo, hi) };
    (zeroed, v128_bitselect(mid, hi, point))
}

/// [`scalar::root_start_mu`] on four lanes: `[sum w, sum w h, sum w h², A, t, lo, hi]`.
#[inline(always)]
fn root_start_mu4(args: [v128; 7]) -> v128 {
    let [sumsq, swh, swh2, a, t, lo, hi] = args;
    let mid = f32x4_mul(f32x4_add(lo, hi), f32x4_splat(0.5));
    let inv = f32x4_div(f32x4_splat(1.0), sumsq);
    let m = f32x4_mul(swh, inv);
    let v = f32x4_pmax(f32x4_sub(f32x4_mul(swh2, inv), f32x4_mul(m, m)), f32x4_splat(0.0));
    let p = f32x4_sub(a, t);
    let qc = f32x4_mul(f32x4_sub(p, t), m);
    let rc = f32x4_mul(t, f32x4_sub(f32x4_mul(m, m), f32x4_mul(f32x4_splat(1.5), v)));
    let root = f32x4_sqrt(f32x4_add(f32x4_mul(qc, qc), f32x4_mul(f32x4_mul(f32x4_splat(4.0), p), rc)));
    let two = f32x4_splat(2.0);
    let up = f32x4_gt(qc, f32x4_splat(0.0));
    let num = v128_bitselect(f32x4_mul(rc, two), f32x4_sub(root, qc), up);
    let mu = f32x4_div(num, v128_bitselect(f32x4_add(qc, root), f32x4_mul(p, two), up));
    v128_bitselect(mu, mid, v128_and(f32x4_gt(mu, lo), f32x4_lt(mu, hi)))
}

pub fn root_start4(stats: &[[f32; 4]; 5], t: [f32; 4], c: &RootStart) -> Option<[[f32; 4]; 4]> {
    let (v, plain, _) = root_start_lanes(stats.map(|s| load4(&s)), load4(&t), c);
    if !i32x4_all_true(plain) {
        return None;
    }
    let mut out = [[0.0f32; 4]; 4];
    for (o, v) in out.iter_mut().zip(v) {
        store4(o, v);
    }
    Some(out)
}

/// Lane `K` of `v` in every lane.
#[inline(always)]
fn lane<const K: usize>(v: v128) -> v128 {
    i32x4_shuffle::<K, K, K, K>(v, v)
}

/// [`scalar::bisection_iterate`] on four lanes: the same f64 operations, two lanes at a time.
#[inline(always)]
fn bisection_iterate4(lo: v128, hi: v128, r: v128, k: usize, cells: f64) -> v128 {
    if k == 0 {
        return f32x4_mul(f32x4_add(lo, hi), f32x4_splat(0.5));
    }
    if k >= 48 {
        return r;
    }
    let (c, top, per) = (f64x2_splat(cells), f64x2_splat(cells - 1.0), f64x2_splat(1.0 / cells));
    // Lanes 0 and 1 of the arguments; the result in lanes 0 and 1.
    let pair = |lo: v128, hi: v128, r: v128| -> v128 {
        let (lo64, r64) = (f64x2_promote_low_f32x4(lo), f64x2_promote_low_f32x4(r));
        let w = f64x2_sub(f64x2_promote_low_f32x4(hi), lo64);
        let j = f64x2_floor(f64x2_mul(f64x2_div(f64x2_sub(r64, lo64), w), c));
        // f64::clamp(0, cells - 1): pmax/pmin pick by `<` alone, so NaN passes through as there.
        let j = f64x2_pmin(f64x2_pmax(j, f64x2_splat(0.0)), top);
        // w / cells: cells is a power of two (at most 2^47 here), so the product is exact.
        f32x4_demote_f64x2_zero(f64x2_add(lo64, f64x2_mul(f64x2_add(j, f64x2_splat(0.5)), f64x2_mul(w, per))))
    };
    let up = |v: v128| i32x4_shuffle::<2, 3, 2, 3>(v, v);
    let cell = i32x4_shuffle::<0, 1, 4, 5>(pair(lo, hi, r), pair(up(lo), up(hi), up(r)));
    // `hi - lo` in f64 is NaN or <= 0 exactly when `hi > lo` fails in f32: the root itself.
    v128_bitselect(cell, r, f32x4_gt(hi, lo))
}

pub fn adam_run(x: &mut [f32], h: &[f32], run: &BlockRun, t: &[f32], s: &QuadSearch, ok: &mut [bool]) {
    run.check(x.len(), h.len(), t.len(), ok.len());
    // The usual block shapes with constant loop bounds (fully unrolled), the others generic (0).
    match (run.rows, run.vecs) {
        (4, 1) => adam_run_in::<4, 1>(x, h, run, t, s, ok),
        (1, 1) => adam_run_in::<1, 1>(x, h, run, t, s, ok),
        (2, 1) => adam_run_in::<2, 1>(x, h, run, t, s, ok),
        (8, 1) => adam_run_in::<8, 1>(x, h, run, t, s, ok),
        (1, 2) => adam_run_in::<1, 2>(x, h, run, t, s, ok),
        (2, 2) => adam_run_in::<2, 2>(x, h, run, t, s, ok),
        _ => adam_run_in::<0, 0>(x, h, run, t, s, ok),
    }
}

/// A block of a [`BlockRun`] seen by the SIMD kernel: its first row in `x` and `h` and the
/// shape, with a visitor over its element vectors in the packed order.
#[derive(Clone, Copy)]
struct RunBlock {
    x: *mut f32,
    h: *const f32,
    xs: usize,
    hs: usize,
    rows: usize,
    vecs: usize,
}

impl RunBlock {
    /// `f(x + offset, h + offset)` for every element vector, in element order.
    #[inline(always)]
    fn each(&self, mut f: impl FnMut(*mut f32, *const f32)) {
        for r in 0..self.rows {
            for v in 0..self.vecs {
                // SAFETY: BlockRun::check (called first by adam_run) bounds every row of every
                // block of the run; the pointers are only formed here, inside those rows.
                unsafe { f(self.x.add(r * self.xs + 4 * v), self.h.add(r * self.hs + 4 * v)) }
            }
        }
    }

    /// `[sum w, min h, max h, sum w h, sum w h²]` (`w = (h x)²`) per lane (element index mod
    /// 4). `pmin`/`pmax` (one instruction each, where the NaN-propagating min/max take several)
    /// are `nan_min`/`nan_max` on numbers, ties included (the first operand is kept); a NaN
    /// conditioner makes `sum w` NaN, which no plain search has, so such a quad is refused
    /// before `min h`/`max h` are used.
    #[inline(always)]
    fn stats(&self) -> [v128; 5] {
        let (mut sq, mut lo, mut hi) = (f32x4_splat(0.0), f32x4_splat(f32::INFINITY), f32x4_splat(f32::NEG_INFINITY));
        let (mut m1, mut m2) = (f32x4_splat(0.0), f32x4_splat(0.0));
        self.each(|x, h| {
            // SAFETY: see `each`.
            let (xv, hv) = unsafe { (v128_load(x as *const v128), v128_load(h as *const v128)) };
            let a = f32x4_mul(hv, xv);
            let w = f32x4_mul(a, a);
            sq = f32x4_add(sq, w);
            lo = f32x4_pmin(lo, hv);
            hi = f32x4_pmax(hi, hv);
            let wh = f32x4_mul(w, hv);
            m1 = f32x4_add(m1, wh);
            m2 = f32x4_add(m2, f32x4_mul(wh, hv));
        });
        [sq, lo, hi, m1, m2]
    }

    /// `[S3, Sh, S4]` per lane at `mu` ([`root_terms4`] of `h x`, the product [`prox_pack4`]
    /// stores).
    #[inline(always)]
    fn sums(&self, mu: v128) -> [v128; 3] {
        let (mut s3, mut sh, mut s4) = (f32x4_splat(0.0), f32x4_splat(0.0), f32x4_splat(0.0));
        self.each(|x, h| {
            // SAFETY: see `each`.
            let (xv, hv) = unsafe { (v128_load(x as *const v128), v128_load(h as *const v128)) };
            let [a, b, c] = root_terms4(f32x4_mul(hv, xv), hv, mu);
            s3 = f32x4_add(s3, a);
            sh = f32x4_add(sh, b);
            s4 = f32x4_add(s4, c);
        });
        [s3, sh, s4]
    }

    /// `x <- ((h / (h + mu)) x) keep` ([`prox_write`]; `h + mu > 0` here).
    #[inline(always)]
    fn write_keep(&self, mu: v128, keep: v128) {
        self.each(|x, h| {
            // SAFETY: see `each`; each block is written by one lane only.
            unsafe {
                let (xv, hv) = (v128_load(x as *const v128), v128_load(h as *const v128));
                v128_store(x as *mut v128, f32x4_mul(f32x4_mul(f32x4_div(hv, f32x4_add(hv, mu)), xv), keep));
            }
        });
    }

    /// `x <- (h / (h + mu)) x` ([`prox_write`] with `keep = 1`; `h + mu > 0` here).
    #[inline(always)]
    fn write(&self, mu: v128) {
        self.each(|x, h| {
            // SAFETY: see `each`; each block is written by one lane only.
            unsafe {
                let (xv, hv) = (v128_load(x as *const v128), v128_load(h as *const v128));
                v128_store(x as *mut v128, f32x4_mul(f32x4_div(hv, f32x4_add(hv, mu)), xv));
            }
        });
    }
}

/// The four blocks' per-lane sums (or statistics), each written to memory as soon as its block is
/// done. V8 places pure values next to their first use: without the stores, every block's first
/// sum was folded before any second one was formed, each element's reciprocal and conditioner
/// spilled in between, and the statistics' loads of all four blocks came before any arithmetic.
/// One vector at a time into an uninitialised local, the four blocks written out (4096², 4×4:
/// Chromium 45.9 → 40.0 ms, Node 53.1 → 41.6 ms, with the same stores for the statistics).
#[inline(always)]
fn pinned<const N: usize>(block: impl Fn(usize) -> [v128; N]) -> [[v128; N]; 4] {
    let mut out = MaybeUninit::<[[v128; N]; 4]>::uninit();
    let p = out.as_mut_ptr().cast::<v128>();
    // Written out rather than a loop, which LLVM kept (with a branch per block on `k`).
    // SAFETY: element k of a local array of four.
    unsafe {
        store_kept(p, block(0));
        store_kept(p.add(N), block(1));
        store_kept(p.add(2 * N), block(2));
        store_kept(p.add(3 * N), block(3));
    }
    // SAFETY: every vector was written above (not zeroed first: that was a memset per quad).
    unsafe { out.assume_init() }
}

/// Volatile stores of `v` at `p..p + N`, one vector at a time (a whole `[v128; N]` went through
/// a copy): stores the engines keep where they are.
///
/// # Safety
/// `p..p + N` must be valid for writes.
#[inline(always)]
unsafe fn store_kept<const N: usize>(p: *mut v128, v: [v128; N]) {
    for (j, x) in v.into_iter().enumerate() {
        // SAFETY: inside p..p + N (the caller's contract).
        unsafe { core::ptr::write_volatile(p.add(j), x) };
    }
}

/// Stores `v` where nothing reads it. The engines place a pure SIMD value just before its first
/// use; a store is a use that keeps its place in the instruction stream, so the values computed
/// before a fence come before the code after it (see [`RootRegs::step_pair`]).
#[inline(always)]
fn fence<const N: usize>(v: [v128; N]) {
    let mut sink = MaybeUninit::<[v128; N]>::uninit();
    // SAFETY: a local array of N vectors.
    unsafe { store_kept(sink.as_mut_ptr().cast::<v128>(), v) }
}

/// The first `n` elements of `buf` as initialised values.
///
/// # Safety
/// `buf[..n]` must all have been written.
#[inline(always)]
unsafe fn written<T, const N: usize>(buf: &mut [MaybeUninit<T>; N], n: usize) -> &mut [T] {
    assert!(n <= N);
    // SAFETY: MaybeUninit<T> has T's layout; the caller has written the first n.
    unsafe { core::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<T>(), n) }
}

/// Lane `k` of `v` in every lane (`k < 4`; a constant once the quad loop is unrolled).
#[inline(always)]
fn lane_of(v: v128, k: usize) -> v128 {
    match k {
        0 => lane::<0>(v),
        1 => lane::<1>(v),
        2 => lane::<2>(v),
        _ => lane::<3>(v),
    }
}

/// The run's quads, one phase at a time over all of them: statistics, bracket and start (refused
/// unless each lane is a plain search or a zeroed block), then evaluations and steps
/// iteration-outer until every search stops, then the read-off and the write. The per-quad parts
/// (start, step, read-off) are long dependency chains of divisions and square roots; with the
/// quads' chains next to each other in the instruction stream they overlap (Chromium, 4096², 4×4:
/// 55 → 46 ms), and the steps go two at a time ([`RootRegs::step_pair`]). Measured and left out
/// (each slower in Chromium, most also in Node): the starts two at a time, the steps four at a
/// time, the next run's statistics inside this run's write or evaluations, reading one value per
/// row of the next run during the start or the write (wasm has no prefetch). `R x 4V` blocks
/// (`R = 0`: the run's own shape), one function per shape.
#[inline(never)]
fn adam_run_in<const R: usize, const V: usize>(x: &mut [f32], h: &[f32], run: &BlockRun, t: &[f32], s: &QuadSearch, ok: &mut [bool]) {
    let (rows, vecs) = if R == 0 { (run.rows, run.vecs) } else { (R, V) };
    let (xp, hp) = (x.as_mut_ptr(), h.as_ptr());
    let (width, last) = (4 * vecs, run.blocks - 1);
    let at = |offset: usize| RunBlock {
        // SAFETY: inside x and h (BlockRun::check).
        x: unsafe { xp.add(run.x_at + offset) },
        h: unsafe { hp.add(run.h_at + offset) },
        xs: run.x_stride,
        hs: run.h_stride,
        rows,
        vecs,
    };
    // The four blocks of quad q (BlockRun::block_at with the shape's constant width, a shift
    // rather than a multiply): a whole quad's are `width` apart, one offset for the four.
    let quad = |q: usize| -> [RunBlock; 4] {
        let first = 4 * q;
        if first + 3 <= last {
            let base = first * width;
            [at(base), at(base + width), at(base + 2 * width), at(base + 3 * width)]
        } else {
            std::array::from_fn(|k| at((first + k).min(last) * width))
        }
    };
    let quads = run.quads();
    let zero = f32x4_splat(0.0);
    let ones = u32x4_splat(u32::MAX);
    // The per-quad arrays start unwritten: each is written for every quad of the run before it
    // is read (zeroing them was ≈ 11 KiB of stores per run; Chromium 38.2 → 37.3 ms).
    let mut sums = [MaybeUninit::<[v128; 5]>::uninit(); QUADS_MAX];
    let mut regs = [MaybeUninit::<RootRegs>::uninit(); QUADS_MAX];
    let mut brackets = [MaybeUninit::<[v128; 2]>::uninit(); QUADS_MAX];
    // Zeroed blocks' masks and `mu` (lanes that are not searched).
    let mut zeroed = [MaybeUninit::<(v128, v128)>::uninit(); QUADS_MAX];
    let mut mus = [MaybeUninit::<v128>::uninit(); QUADS_MAX];
    // Each phase runs over all the run's quads before the next one starts: the per-quad tails
    // (start, step, read-off) are long chains of divisions and square roots that only overlap
    // when the neighbouring quads' chains sit next to them in the instruction stream.
    for (q, st) in sums.iter_mut().enumerate().take(quads) {
        let blocks = quad(q);
        let [a, b, c, d] = pinned(|k| blocks[k].stats());
        // Folded four blocks at once, in prox_stats4's order.
        st.write([
            horizontal4(Reduction::SumSq, a[0], b[0], c[0], d[0]),
            fold4(|u, v| f32x4_pmin(u, v), [a[1], b[1], c[1], d[1]]),
            fold4(|u, v| f32x4_pmax(u, v), [a[2], b[2], c[2], d[2]]),
            horizontal4(Reduction::SumSq, a[3], b[3], c[3], d[3]),
            horizontal4(Reduction::SumSq, a[4], b[4], c[4], d[4]),
        ]);
    }
    // SAFETY: written above for every quad.
    let sums = unsafe { written(&mut sums, quads) };
    for q in 0..quads {
        // A whole quad's thresholds are consecutive (one load; `t` has one per block of the
        // run); a last partial quad repeats its last block's.
        let tv = match t.get(4 * q..4 * q + 4).and_then(|qt| <&[f32; 4]>::try_from(qt).ok()) {
            Some(qt) => load4(qt),
            None => load4(&std::array::from_fn::<f32, 4, _>(|k| t[run.block(q, k)])),
        };
        let ([lo, hi, mu, tol], plain, a) = root_start_lanes(sums[q], tv, &s.start);
        let [h_min, h_max] = [sums[q][1], sums[q][2]];
        let (zm, zmu) = zeroed_mu4(a, tv, h_min, h_max, &s.start, s.max_evals);
        // Each lane a plain search or a zeroed block, else the quad is refused.
        let taken = i32x4_all_true(v128_or(plain, zm));
        ok[q] = taken;
        // Without a branch: a refused quad's lanes do not go (nothing of it is written).
        let go = if taken { v128_andnot(ones, zm) } else { zero };
        let prev = f32x4_sub(hi, lo);
        regs[q].write(RootRegs { lo, hi, mu, t: tv, tol, prev, newt: zero, lo_open: ones, hi_open: ones, h_min, h_max, evals: zero, go });
        brackets[q].write([lo, hi]);
        zeroed[q].write((zm, zmu));
    }
    // SAFETY: written above for every quad.
    let (regs, brackets, zeroed) = unsafe { (written(&mut regs, quads), written(&mut brackets, quads), written(&mut zeroed, quads)) };
    let mut any = true;
    while any {
        any = false;
        for (q, rg) in regs.iter().enumerate().take(quads) {
            if !v128_any_true(rg.go) {
                continue;
            }
            let mu = rg.mu;
            let blocks = quad(q);
            let [a, b, c, d] = pinned(|k| blocks[k].sums(lane_of(mu, k)));
            sums[q][..3].copy_from_slice(&[
                horizontal4(Reduction::SumSq, a[0], b[0], c[0], d[0]),
                horizontal4(Reduction::SumSq, a[1], b[1], c[1], d[1]),
                horizontal4(Reduction::SumSq, a[2], b[2], c[2], d[2]),
            ]);
        }
        // Searching quads two at a time (see RootRegs::step_pair).
        let mut pending: Option<usize> = None;
        for q in 0..quads {
            if !v128_any_true(regs[q].go) {
                continue;
            }
            let Some(p) = pending.take() else {
                pending = Some(q);
                continue;
            };
            let (head, tail) = regs.split_at_mut(q);
            let (sp, sq) = (&sums[p], &sums[q]);
            any |= RootRegs::step_pair(&mut head[p], &mut tail[0], [sp[0], sp[1], sp[2]], [sq[0], sq[1], sq[2]], s.max_evals);
        }
        if let Some(p) = pending {
            let sm = &sums[p];
            any |= regs[p].step(sm[0], sm[1], sm[2], s.max_evals);
        }
    }
    // Every quad, without a branch: a refused quad's lanes are idle (read off, not written).
    for q in 0..quads {
        let (zm, zmu) = zeroed[q];
        mus[q].write(v128_bitselect(zmu, bisection_iterate4(brackets[q][0], brackets[q][1], regs[q].mu, s.k_stop, s.cells), zm));
    }
    // SAFETY: written above for every quad.
    let mus = unsafe { written(&mut mus, quads) };
    for q in 0..quads {
        if !ok[q] {
            continue;
        }
        let (mu, zm) = (mus[q], zeroed[q].0);
        // Zeroed lanes are multiplied by 0 after the scaling, as prox_write does.
        let keep = v128_any_true(zm).then(|| v128_bitselect(zero, f32x4_splat(1.0), zm));
        let blocks = quad(q);
        for (k, b) in blocks.iter().enumerate().take(run.lanes(q)) {
            match keep {
                None => b.write(lane_of(mu, k)),
                Some(keep) => b.write_keep(lane_of(mu, k), lane_of(keep, k)),
            }
        }
    }
}
