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

/// Eight consecutive columns of `B`: where row `p` of them starts is `base + p * stride` (`B` itself,
/// stride `ldb`, or its packed copy, stride 8).
#[derive(Clone, Copy)]
struct Strip {
    base: *const f32,
    stride: usize,
}

impl Strip {
    #[inline(always)]
    unsafe fn at(self, p: usize) -> *const f32 {
        self.base.add(p * self.stride)
    }
}

/// Rows `i..i+4`, columns `j..j+8` (`strip`), products `p0..p1`: 8 accumulators.
#[inline(always)]
unsafe fn tile4x8<const FRESH: bool>(
    g: &Gemm,
    ar: &[*const f32; 4],
    cr: &[*mut f32; 4],
    strip: Strip,
    j: usize,
    p0: usize,
    p1: usize,
) {
    let mut acc = [[f32x4_splat(0.0); 2]; 4];
    for r in 0..4 {
        acc[r][0] = open::<FRESH>(cr[r].add(j));
        acc[r][1] = open::<FRESH>(cr[r].add(j + 4));
    }
    let mut bp = strip.at(p0);
    let mut aps = [ar[0].add(p0 * g.a_ks), ar[1].add(p0 * g.a_ks), ar[2].add(p0 * g.a_ks), ar[3].add(p0 * g.a_ks)];
    for _ in p0..p1 {
        let b0 = ld(bp);
        let b1 = ld(bp.add(4));
        for r in 0..4 {
            let av = v128_load32_splat(aps[r] as *const u32);
            acc[r][0] = f32x4_add(acc[r][0], f32x4_mul(av, b0));
            acc[r][1] = f32x4_add(acc[r][1], f32x4_mul(av, b1));
            aps[r] = aps[r].add(g.a_ks);
        }
        bp = bp.add(strip.stride);
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

/// Bytes of `B`'s packed copy: a panel of whole 8-column strips over all `k` rows, kept to about half a
/// core's L2 so that it stays there while every row of `A` passes over it.
const PANEL_BYTES: usize = 256 << 10;

/// Rows of `A` from which packing pays: below, the copy costs more than the strided reads it saves.
const PACK_MIN_ROWS: usize = 16;

/// Columns per packed panel for a depth of `k`: whole 8-column strips, at least one.
#[inline]
fn panel_cols(k: usize) -> usize {
    (PANEL_BYTES / 4 / k.max(1) / 8).max(1) * 8
}

/// The tiles go panel by panel of `B`'s columns, every row of `A` against one panel before the next.
/// A panel's 8-column strips are first copied to contiguous `k x 8` blocks: read in place, each
/// product row of a strip is 32 bytes on its own cache line and, for a wide `B`, its own page, and
/// the register tile waits on those loads (measured in wasm on V8: 4x8 tiles over a packed
/// 576 x 1536 `B` 1.6-1.75x the rate of the same tiles in place). Only where each tile reads its
/// values and the order in which tiles run change; every element's sum is the one the contract
/// fixes, so the bits are those of the unpacked path.
fn run<const FRESH: bool>(g: &Gemm, a: &[f32], b: &[f32], c: &mut [f32]) {
    let nc = if g.m >= PACK_MIN_ROWS && g.k > 1 { panel_cols(g.k).min(g.n / 8 * 8) } else { 0 };
    let mut pack = vec![0f32; nc * g.k];
    // `A` stored transposed (`Xᵀ` of a weight gradient: 4 rows side by side, a whole row of `X` between
    // products) is read through a packed copy of each 4-row group when `B` is packed too
    let pack_a = nc > 0 && g.a_rs == 1 && g.a_ks >= 8;
    let mut apack = vec![0f32; if pack_a { 4 * g.k } else { 0 }];
    let (a, b, c) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
    let m4 = g.m / 4 * 4;
    // SAFETY: `check` bounds every index below (i < m, j < n, p < k; with `a_rs == 1` the four
    // values a + i + p * a_ks .. + 3 are rows i..i+3 < m4 of product p); packed strips are read
    // within `pack` (strip s of a panel at s * 8k, rows p < k), packed rows within `apack` (4k).
    unsafe {
        let mut j0 = 0;
        while j0 < g.n {
            // a packed panel (whole strips), else the rest of B in place
            let j1 = if nc > 0 && j0 + 8 <= g.n { (j0 + nc).min(g.n / 8 * 8) } else { g.n };
            let packed = nc > 0 && j1 <= g.n / 8 * 8;
            if packed {
                for (s, j) in (j0..j1).step_by(8).enumerate() {
                    let dst = pack.as_mut_ptr().add(s * 8 * g.k);
                    for p in 0..g.k {
                        let src = b.add(p * g.ldb + j);
                        st(dst.add(p * 8), ld(src));
                        st(dst.add(p * 8 + 4), ld(src.add(4)));
                    }
                }
            }
            let strip = |j: usize| {
                if packed {
                    Strip { base: pack.as_ptr().add((j - j0) * g.k), stride: 8 }
                } else {
                    Strip { base: b.add(j), stride: g.ldb }
                }
            };
            let mut i = 0;
            while i < m4 {
                let (ga, ar) = if pack_a {
                    // the 4 rows' values of product p side by side: one 16-byte run per p
                    let dst = apack.as_mut_ptr();
                    for p in 0..g.k {
                        st(dst.add(p * 4), ld(a.add(i + p * g.a_ks)));
                    }
                    let at = apack.as_ptr();
                    (Gemm { a_rs: 1, a_ks: 4, ..*g }, [at, at.add(1), at.add(2), at.add(3)])
                } else {
                    (*g, [a.add(i * g.a_rs), a.add((i + 1) * g.a_rs), a.add((i + 2) * g.a_rs), a.add((i + 3) * g.a_rs)])
                };
                let g = &ga;
                let cr = [c.add(i * g.ldc), c.add((i + 1) * g.ldc), c.add((i + 2) * g.ldc), c.add((i + 3) * g.ldc)];
                let mut j = g.col_start(i).max(j0);
                if packed {
                    // `upper` starts a row group at a multiple of 4: an odd half strip goes in place
                    if j % 8 != 0 && j < j1 {
                        chunks::<FRESH>(g, |p0, p1| tile4x4::<FRESH>(g, &ar, &cr, b, j, p0, p1));
                        j += 4;
                    }
                }
                while j + 8 <= j1 {
                    let sj = strip(j);
                    chunks::<FRESH>(g, |p0, p1| tile4x8::<FRESH>(g, &ar, &cr, sj, j, p0, p1));
                    j += 8;
                }
                if j + 4 <= j1 {
                    chunks::<FRESH>(g, |p0, p1| tile4x4::<FRESH>(g, &ar, &cr, b, j, p0, p1));
                    j += 4;
                }
                while j < j1 {
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
                let mut j = g.col_start(i).max(j0);
                while j + 4 <= j1 {
                    chunks::<FRESH>(g, |p0, p1| tile1x4::<FRESH>(g, ar, cr, b, j, p0, p1));
                    j += 4;
                }
                while j < j1 {
                    chunks::<FRESH>(g, |p0, p1| tile1x1::<FRESH>(g, ar, cr.add(j), b, j, p0, p1));
                    j += 1;
                }
                i += 1;
            }
            j0 = j1;
        }
    }
}
