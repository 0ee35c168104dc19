//! Chunked scaling of a contiguous row on SIMD128.

use core::arch::wasm32::*;

use super::vec::load;

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
