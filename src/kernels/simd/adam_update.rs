//! The training core's Adam update on SIMD128: four elements a step, each lane the scalar
//! kernel's operations in its order (IEEE multiply, add, divide and square root are correctly
//! rounded in either form, and wasm has no fused multiply-add), hence its bits.

use core::arch::wasm32::*;

use super::super::scalar::{adam_update as adam_update_scalar, AdamCoefs};
use super::vec::load;

/// What [`super::super::scalar::adam_update`] computes.
pub fn adam_update(c: &AdamCoefs, w: &mut [f32], m: &mut [f32], v: &mut [f32], g: &[f32], keep: Option<&[u8]>) {
    let n = w.len();
    assert!(m.len() == n && v.len() == n && g.len() == n && keep.is_none_or(|k| k.len() == n));
    let s = f32x4_splat;
    let (b1, b2, omb1, omb2) = (s(c.beta1), s(c.beta2), s(1.0 - c.beta1), s(1.0 - c.beta2));
    let (bc1, bc2, eps, lr, wd) = (s(c.bc1), s(c.bc2), s(c.eps), s(c.lr), s(c.weight_decay));
    let n4 = n / 4 * 4;
    let mut i = 0;
    while i < n4 {
        // SAFETY: i + 4 <= n, the length of every slice (asserted above); wasm loads and stores
        // need no alignment.
        unsafe {
            let (gi, mi, vi, wi) = (load(g, i), load(m, i), load(v, i), load(w, i));
            let m2 = f32x4_add(f32x4_mul(b1, mi), f32x4_mul(omb1, gi));
            let v2 = f32x4_add(f32x4_mul(b2, vi), f32x4_mul(f32x4_mul(omb2, gi), gi));
            let mhat = f32x4_div(m2, bc1);
            let vhat = f32x4_div(v2, bc2);
            let step = f32x4_mul(lr, f32x4_add(f32x4_div(mhat, f32x4_add(f32x4_sqrt(vhat), eps)), f32x4_mul(wd, wi)));
            let w2 = f32x4_sub(wi, step);
            let (mut m2, mut v2, mut w2) = (m2, v2, w2);
            if let Some(k) = keep {
                // all ones where the element trains: its new values; else the old moments and 0
                let bytes = u32::from_le_bytes([k[i], k[i + 1], k[i + 2], k[i + 3]]);
                let kv = u32x4_extend_low_u16x8(u16x8_extend_low_u8x16(u32x4(bytes, 0, 0, 0)));
                let on = u32x4_ne(kv, u32x4_splat(0));
                m2 = v128_bitselect(m2, mi, on);
                v2 = v128_bitselect(v2, vi, on);
                w2 = v128_and(w2, on);
            }
            v128_store(m.as_mut_ptr().add(i) as *mut v128, m2);
            v128_store(v.as_mut_ptr().add(i) as *mut v128, v2);
            v128_store(w.as_mut_ptr().add(i) as *mut v128, w2);
        }
        i += 4;
    }
    adam_update_scalar(c, &mut w[n4..], &mut m[n4..], &mut v[n4..], &g[n4..], keep.map(|k| &k[n4..]));
}
