//! The 2:4 keep-mask on SIMD128, sixteen values per step.

use core::mem::MaybeUninit;

use core::arch::wasm32::*;

use super::vec::{load, transpose4};
use crate::kernels::scalar;

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
