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

/// Consecutive columns of `B`: where row `p` of them starts is `base + p * stride` (`B` itself,
/// stride `ldb`, or a packed strip of 8, stride 8).
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
    /// The same rows, `cols` columns further.
    #[inline(always)]
    unsafe fn right(self, cols: usize) -> Strip {
        Strip { base: self.base.add(cols), ..self }
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

/// One row, columns `j..j+4` (`strip`, its first four columns), products `p0..p1`.
#[inline(always)]
unsafe fn tile1x4<const FRESH: bool>(g: &Gemm, ar: *const f32, cr: *mut f32, strip: Strip, j: usize, p0: usize, p1: usize) {
    let mut acc = open::<FRESH>(cr.add(j));
    for p in p0..p1 {
        acc = f32x4_add(acc, f32x4_mul(f32x4_splat(*ar.add(p * g.a_ks)), ld(strip.at(p))));
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
/// one after another. From 16 rows on (`Gemm::panel_cols`), `B`'s whole 8-column strips are read
/// through packed copies, a panel at a time (`panel`), and the last columns in place.
pub fn gemm_acc_serial(g: &Gemm, a: &[f32], b: &[f32], c: &mut [f32]) {
    g.check(a, b, c);
    if g.kc == 0 {
        run::<false>(g, a, b, c)
    } else {
        run::<true>(g, a, b, c)
    }
}

/// Rows of `g` over columns `j0..j1` of `B` given packed (`Gemm::pack_panel`'s layout): what the
/// threads' row bands run, each over the one copy the caller made.
pub fn gemm_acc_panel(g: &Gemm, a: &[f32], pack: &[f32], j0: usize, j1: usize, c: &mut [f32]) {
    g.check_panel(a, pack, j0, j1, c);
    if g.kc == 0 {
        panel::<false>(g, a, pack, j0, j1, c)
    } else {
        panel::<true>(g, a, pack, j0, j1, c)
    }
}

fn run<const FRESH: bool>(g: &Gemm, a: &[f32], b: &[f32], c: &mut [f32]) {
    let mut packed_to = 0;
    if let Some(nc) = g.panel_cols() {
        let mut pack = vec![0f32; nc * g.k];
        packed_to = g.strip_cols();
        let mut j0 = 0;
        while j0 < packed_to {
            let j1 = (j0 + nc).min(packed_to);
            g.pack_panel(b, j0, j1, &mut pack);
            panel::<FRESH>(g, a, &pack, j0, j1, c);
            j0 = j1;
        }
    }
    in_place::<FRESH>(g, a, b, c, packed_to);
}

/// Why packing: read in place, each product row of an 8-column strip is 32 bytes on its own cache
/// line and, for a wide `B`, its own page, and the register tile waits on those loads (measured in
/// wasm on V8: 4x8 tiles over a packed 576 x 1536 `B` at 1.6-1.75x the rate of the same tiles in
/// place). Every row of `A` passes over a panel before the next one is packed; a transposed `A`
/// (`Xᵀ` of a weight gradient: 4 rows side by side, a row of `X` between products) is read through
/// a packed copy of each 4-row group too. Only where a tile reads its values and the order in which
/// tiles run change: every element is the sum the contract fixes, so the bits are the in-place path's.
fn panel<const FRESH: bool>(g: &Gemm, a: &[f32], pack: &[f32], j0: usize, j1: usize, c: &mut [f32]) {
    let pack_a = g.a_rs == 1 && g.a_ks >= 8;
    let mut apack = vec![0f32; if pack_a { 4 * g.k } else { 0 }];
    let (a, c) = (a.as_ptr(), c.as_mut_ptr());
    let m4 = g.m / 4 * 4;
    let strip = |j: usize| Strip { base: pack[(j - j0) / 8 * 8 * g.k..].as_ptr(), stride: 8 };
    // SAFETY: `check_panel` bounds the reads of A (rows < m, products < k; with `a_rs == 1` the four
    // values a + i + p * a_ks .. + 3 are rows i..i+3 < m4 of product p) and the writes of C
    // (columns < j1); strip s of the panel is read within pack[s * 8k .. (s + 1) * 8k], and the
    // packed 4-row group within apack (4k).
    unsafe {
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
            let cr = [c.add(i * g.ldc), c.add((i + 1) * g.ldc), c.add((i + 2) * g.ldc), c.add((i + 3) * g.ldc)];
            for j in (j0..j1).step_by(8) {
                let sj = strip(j);
                chunks::<FRESH>(g, |p0, p1| tile4x8::<FRESH>(&ga, &ar, &cr, sj, j, p0, p1));
            }
            i += 4;
        }
        while i < g.m {
            let ar = a.add(i * g.a_rs);
            let cr = c.add(i * g.ldc);
            for j in (j0..j1).step_by(8) {
                let sj = strip(j);
                chunks::<FRESH>(g, |p0, p1| tile1x4::<FRESH>(g, ar, cr, sj, j, p0, p1));
                chunks::<FRESH>(g, |p0, p1| tile1x4::<FRESH>(g, ar, cr, sj.right(4), j + 4, p0, p1));
            }
            i += 1;
        }
    }
}

/// Columns `j_lo..n` of `C` with `B` read where it lies.
fn in_place<const FRESH: bool>(g: &Gemm, a: &[f32], b: &[f32], c: &mut [f32], j_lo: usize) {
    let (a, b, c) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
    let m4 = g.m / 4 * 4;
    let col = |j: usize| Strip { base: b.wrapping_add(j), stride: g.ldb };
    // SAFETY: `check` bounds every index below (i < m, j < n, p < k).
    unsafe {
        let mut i = 0;
        while i < m4 {
            let ar = [a.add(i * g.a_rs), a.add((i + 1) * g.a_rs), a.add((i + 2) * g.a_rs), a.add((i + 3) * g.a_rs)];
            let cr = [c.add(i * g.ldc), c.add((i + 1) * g.ldc), c.add((i + 2) * g.ldc), c.add((i + 3) * g.ldc)];
            let mut j = g.col_start(i).max(j_lo);
            while j + 8 <= g.n {
                chunks::<FRESH>(g, |p0, p1| tile4x8::<FRESH>(g, &ar, &cr, col(j), j, p0, p1));
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
            let mut j = g.col_start(i).max(j_lo);
            while j + 4 <= g.n {
                chunks::<FRESH>(g, |p0, p1| tile1x4::<FRESH>(g, ar, cr, col(j), j, p0, p1));
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
