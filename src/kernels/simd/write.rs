//! The Adam step's final write on SIMD128.

use core::arch::wasm32::*;

use super::vec::load;
use crate::kernels::scalar;

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
