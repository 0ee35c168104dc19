//! Loads, stores and lane shuffles the SIMD128 kernels share.

use core::arch::wasm32::*;

#[inline(always)]
pub(super) unsafe fn load(p: &[f32], i: usize) -> v128 {
    debug_assert!(i + 4 <= p.len());
    v128_load(p.as_ptr().add(i) as *const v128)
}

#[inline(always)]
pub(super) fn load4<T>(a: &[T; 4]) -> v128 {
    debug_assert_eq!(core::mem::size_of::<T>(), 4);
    // SAFETY: 16 readable bytes of plain 4-byte lanes; v128_load has no alignment requirement.
    unsafe { v128_load(a.as_ptr() as *const v128) }
}

#[inline(always)]
pub(super) fn store4<T>(a: &mut [T; 4], v: v128) {
    debug_assert_eq!(core::mem::size_of::<T>(), 4);
    // SAFETY: 16 writable bytes of plain 4-byte lanes.
    unsafe { v128_store(a.as_mut_ptr() as *mut v128, v) }
}

/// 4x4 transpose of 32-bit lanes.
#[inline(always)]
pub(super) fn transpose4(a: v128, b: v128, c: v128, d: v128) -> [v128; 4] {
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

/// Lane `K` of `v` in every lane.
#[inline(always)]
fn lane<const K: usize>(v: v128) -> v128 {
    i32x4_shuffle::<K, K, K, K>(v, v)
}

/// Lane `k` of `v` in every lane (`k < 4`; a constant once the quad loop is unrolled).
#[inline(always)]
pub(super) fn lane_of(v: v128, k: usize) -> v128 {
    match k {
        0 => lane::<0>(v),
        1 => lane::<1>(v),
        2 => lane::<2>(v),
        _ => lane::<3>(v),
    }
}
