//! The SIMD128 GEMM, `C += A · B` (the contract and the scalar oracle: [`crate::kernels::gemm`]):
//! 4x8 and 4x4 register tiles of f32x4 vectors, then 1x4 and 1x1 for the remainders, each
//! element's products still summed in the contract's order (a separate multiply and add).

use crate::kernels::gemm_shape::Gemm;
use core::arch::wasm32::*;

#[inline(always)]
unsafe fn ld(p: *const f32) -> v128 {
    v128_load(p as *const v128)
}
#[inline(always)]
unsafe fn st(p: *mut f32, v: v128) {
    v128_store(p as *mut v128, v)
}

/// A chunk's accumulator: zero when chunks sum from zero (`FRESH`), else `c` itself.
#[inline(always)]
unsafe fn open<const FRESH: bool>(p: *const f32) -> v128 {
    if FRESH {
        f32x4_splat(0.0)
    } else {
        ld(p)
    }
}
/// Ends a chunk: its sum added to `c` (`FRESH`), or the running sum stored back.
#[inline(always)]
unsafe fn close<const FRESH: bool>(p: *mut f32, acc: v128) {
    st(p, if FRESH { f32x4_add(ld(p), acc) } else { acc })
}

/// Rows `i..i+4`, columns `j..j+8`, products `p0..p1`: 8 accumulators.
#[inline(always)]
unsafe fn tile4x8<const FRESH: bool>(
    g: &Gemm,
    ar: &[*const f32; 4],
    cr: &[*mut f32; 4],
    b: *const f32,
    j: usize,
    p0: usize,
    p1: usize,
) {
    let mut acc = [[f32x4_splat(0.0); 2]; 4];
    for r in 0..4 {
        acc[r][0] = open::<FRESH>(cr[r].add(j));
        acc[r][1] = open::<FRESH>(cr[r].add(j + 4));
    }
    for p in p0..p1 {
        let bp = b.add(p * g.ldb + j);
        let b0 = ld(bp);
        let b1 = ld(bp.add(4));
        let off = p * g.a_ks;
        for r in 0..4 {
            let av = f32x4_splat(*ar[r].add(off));
            acc[r][0] = f32x4_add(acc[r][0], f32x4_mul(av, b0));
            acc[r][1] = f32x4_add(acc[r][1], f32x4_mul(av, b1));
        }
    }
    for r in 0..4 {
        close::<FRESH>(cr[r].add(j), acc[r][0]);
        close::<FRESH>(cr[r].add(j + 4), acc[r][1]);
    }
}

/// Rows `i..i+4`, columns `j..j+4`, products `p0..p1`.
#[inline(always)]
unsafe fn tile4x4<const FRESH: bool>(
    g: &Gemm,
    ar: &[*const f32; 4],
    cr: &[*mut f32; 4],
    b: *const f32,
    j: usize,
    p0: usize,
    p1: usize,
) {
    let mut acc = [f32x4_splat(0.0); 4];
    for r in 0..4 {
        acc[r] = open::<FRESH>(cr[r].add(j));
    }
    for p in p0..p1 {
        let b0 = ld(b.add(p * g.ldb + j));
        let off = p * g.a_ks;
        for r in 0..4 {
            acc[r] = f32x4_add(acc[r], f32x4_mul(f32x4_splat(*ar[r].add(off)), b0));
        }
    }
    for r in 0..4 {
        close::<FRESH>(cr[r].add(j), acc[r]);
    }
}

/// One row, columns `j..j+4`, products `p0..p1`.
#[inline(always)]
unsafe fn tile1x4<const FRESH: bool>(g: &Gemm, ar: *const f32, cr: *mut f32, b: *const f32, j: usize, p0: usize, p1: usize) {
    let mut acc = open::<FRESH>(cr.add(j));
    for p in p0..p1 {
        acc = f32x4_add(acc, f32x4_mul(f32x4_splat(*ar.add(p * g.a_ks)), ld(b.add(p * g.ldb + j))));
    }
    close::<FRESH>(cr.add(j), acc);
}

/// One element, products `p0..p1`, for the columns left over from the vectors.
#[inline(always)]
unsafe fn tile1x1<const FRESH: bool>(g: &Gemm, ar: *const f32, cp: *mut f32, b: *const f32, j: usize, p0: usize, p1: usize) {
    let mut s = if FRESH { 0.0 } else { *cp };
    for p in p0..p1 {
        s += *ar.add(p * g.a_ks) * *b.add(p * g.ldb + j);
    }
    *cp = if FRESH { *cp + s } else { s };
}

/// Runs `tile(p0, p1)` over the chunks of `0..k`: one call over all of `k` for a running sum,
/// so that path is the plain loop it always was.
#[inline(always)]
fn chunks<const FRESH: bool>(g: &Gemm, mut tile: impl FnMut(usize, usize)) {
    if FRESH {
        for p0 in (0..g.k).step_by(g.kc) {
            tile(p0, (p0 + g.kc).min(g.k));
        }
    } else {
        tile(0, g.k);
    }
}

/// Register tile of 4 rows x 8 columns (8 accumulators), then 4 x 4, then single columns;
/// leftover rows go one at a time with 4-wide vectors. Each tile runs the chunks of `p`
/// one after another.
pub fn gemm_acc_serial(g: &Gemm, a: &[f32], b: &[f32], c: &mut [f32]) {
    g.check(a, b, c);
    if g.kc == 0 {
        run::<false>(g, a, b, c)
    } else {
        run::<true>(g, a, b, c)
    }
}

fn run<const FRESH: bool>(g: &Gemm, a: &[f32], b: &[f32], c: &mut [f32]) {
    let (a, b, c) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
    let m4 = g.m / 4 * 4;
    // SAFETY: `check` bounds every index below (i < m, j < n, p < k).
    unsafe {
        let mut i = 0;
        while i < m4 {
            let ar = [a.add(i * g.a_rs), a.add((i + 1) * g.a_rs), a.add((i + 2) * g.a_rs), a.add((i + 3) * g.a_rs)];
            let cr = [c.add(i * g.ldc), c.add((i + 1) * g.ldc), c.add((i + 2) * g.ldc), c.add((i + 3) * g.ldc)];
            let mut j = g.col_start(i);
            while j + 8 <= g.n {
                chunks::<FRESH>(g, |p0, p1| tile4x8::<FRESH>(g, &ar, &cr, b, j, p0, p1));
                j += 8;
            }
            if j + 4 <= g.n {
                chunks::<FRESH>(g, |p0, p1| tile4x4::<FRESH>(g, &ar, &cr, b, j, p0, p1));
                j += 4;
            }
            while j < g.n {
                for r in 0..4 {
                    chunks::<FRESH>(g, |p0, p1| tile1x1::<FRESH>(g, ar[r], cr[r].add(j), b, j, p0, p1));
                }
                j += 1;
            }
            i += 4;
        }
        while i < g.m {
            let ar = a.add(i * g.a_rs);
            let cr = c.add(i * g.ldc);
            let mut j = g.col_start(i);
            while j + 4 <= g.n {
                chunks::<FRESH>(g, |p0, p1| tile1x4::<FRESH>(g, ar, cr, b, j, p0, p1));
                j += 4;
            }
            while j < g.n {
                chunks::<FRESH>(g, |p0, p1| tile1x1::<FRESH>(g, ar, cr.add(j), b, j, p0, p1));
                j += 1;
            }
            i += 1;
        }
    }
}
