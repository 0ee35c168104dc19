//! Four blocks interleaved lane by lane, and their statistics, on SIMD128.

use core::arch::wasm32::*;

use super::reduce::combine4;
use super::vec::{load, store4, transpose4};
use crate::kernels::reduction::Reduction;

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
