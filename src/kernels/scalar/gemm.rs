//! The portable f32 GEMM, `C += A · B`: the oracle of the contract in [`crate::kernels::gemm`]
//! (one row at a time, `p` in order within each chunk), and what runs off SIMD128.

use crate::kernels::gemm_shape::Gemm;

/// One thread's `C += A · B`, the oracle: one row at a time, `p` in order within each chunk.
pub fn gemm_acc_serial(g: &Gemm, a: &[f32], b: &[f32], c: &mut [f32]) {
    g.check(a, b, c);
    let (kc, fresh) = g.chunking();
    let mut part = vec![0.0f32; if fresh { g.n } else { 0 }];
    for i in 0..g.m {
        let j0 = g.col_start(i);
        let row = &mut c[i * g.ldc + j0..i * g.ldc + g.n];
        for p0 in (0..g.k).step_by(kc) {
            let acc: &mut [f32] = if fresh { &mut part[j0..] } else { &mut *row };
            if fresh {
                acc.fill(0.0);
            }
            for p in p0..(p0 + kc).min(g.k) {
                let av = a[i * g.a_rs + p * g.a_ks];
                let brow = &b[p * g.ldb + j0..p * g.ldb + g.n];
                // p outer, j inner: each element still sees p in order (and natively this
                // autovectorizes without changing any element's sequence of operations).
                for (x, &bv) in acc.iter_mut().zip(brow) {
                    *x += av * bv;
                }
            }
            if fresh {
                row.iter_mut().zip(&part[j0..]).for_each(|(r, &s)| *r += s);
            }
        }
    }
}

/// Rows of `g` over columns `j0..j1` of `B` given packed (`Gemm::pack_panel`'s layout): each strip
/// is a `k x 8` matrix of row stride 8, so the oracle runs on it as on `B` itself.
pub fn gemm_acc_panel(g: &Gemm, a: &[f32], pack: &[f32], j0: usize, j1: usize, c: &mut [f32]) {
    g.check_panel(a, pack, j0, j1, c);
    for (s, j) in (j0..j1).step_by(8).enumerate() {
        let strip = Gemm { n: 8, ldb: 8, ..*g };
        gemm_acc_serial(&strip, a, &pack[s * 8 * g.k..(s + 1) * 8 * g.k], &mut c[j..]);
    }
}
