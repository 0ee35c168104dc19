//! The GEMM kernel, `C += A · B`: calibration's Hessian update (`A = Xᵀ`, `B = X`, upper
//! triangle only) and SparseGPT's lazy block update (`A = -E`, `B = U`), and the training core's
//! matrix products (Gemm / MatMul, ConvTranspose, and through `conv_band` the convolutions).
//!
//! Contract shared by the scalar oracle and the SIMD128 path, with a separate f32 multiply and
//! add (no fused multiply-add) throughout: with `kc == 0` every computed element is
//! `c = c + a_p * b_p` for `p = 0, 1, .., k-1` in that order; with `kc > 0` the products are
//! summed in chunks of `kc` consecutive `p` (the last may be shorter), each chunk from zero in
//! order, and each chunk's sum is added to `c` in chunk order. Any tiling that keeps this
//! per-element order gives the same bits, so the SIMD path, the scalar path and any split over
//! rows (threads) agree exactly. Subtracting is adding a negated `A`: `c + (-a) * b` is
//! bit-identical to `c - a * b`.
//!
//! Why chunks: one running f32 sum of `k` products carries an error that grows with `k`; the
//! training core's weight gradients sum over every output pixel of a batch (`k` in the tens of
//! thousands), and a chunked sum's error grows with `kc + k / kc` instead, for one extra add per
//! element and chunk. Calls that split one sum over several calls (the banded convolution's
//! forward) keep `kc == 0`, whose bits do not depend on where the split falls.

use super::par::{self, SharedMut};

/// Shapes and strides of one `C += A · B` call.
///
/// `C` is `m x n` with row stride `ldc` (columns contiguous); `A` is `m x k` read at
/// `a[i * a_rs + p * a_ks]` (any strides: `Xᵀ` is a view of `X`); `B` is `k x n`, row stride
/// `ldb`, columns contiguous. With `upper`, row `i` only gets the columns
/// `j >= 4 * floor(i / 4)` (a symmetric product's upper triangle, in whole 4-row tiles).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gemm {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub a_rs: usize,
    pub a_ks: usize,
    pub ldb: usize,
    pub ldc: usize,
    pub upper: bool,
    /// Products per partial sum (see the module's contract); 0 for one running sum.
    pub kc: usize,
}

/// The chunk length of the training core's long sums (the weight gradients, over every pixel or row
/// of a batch): about the square root of the longest it meets, which balances the two levels' errors.
pub const SUM_CHUNK: usize = 128;

impl Gemm {
    /// First column row `i` receives.
    #[inline(always)]
    fn col_start(&self, i: usize) -> usize {
        if self.upper {
            (i / 4 * 4).min(self.n)
        } else {
            0
        }
    }

    /// The chunk length, and whether each chunk sums from zero (`kc > 0`) or continues `c`.
    #[inline(always)]
    fn chunking(&self) -> (usize, bool) {
        if self.kc == 0 {
            (self.k.max(1), false)
        } else {
            (self.kc, true)
        }
    }

    /// Minimum lengths of the three slices (panics in the kernels otherwise).
    fn check(&self, a: &[f32], b: &[f32], c: &[f32]) {
        if self.m == 0 || self.n == 0 {
            return;
        }
        if self.k > 0 {
            assert!(a.len() > (self.m - 1) * self.a_rs + (self.k - 1) * self.a_ks, "gemm: A too short");
            assert!(b.len() >= (self.k - 1) * self.ldb + self.n, "gemm: B too short");
        }
        assert!(c.len() >= (self.m - 1) * self.ldc + self.n, "gemm: C too short");
    }
}

/// The portable oracle: one row at a time, `p` in order within each chunk.
pub fn gemm_acc_scalar(g: &Gemm, a: &[f32], b: &[f32], c: &mut [f32]) {
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

#[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
mod simd {
    use super::Gemm;
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
    pub fn gemm_acc(g: &Gemm, a: &[f32], b: &[f32], c: &mut [f32]) {
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
}

/// The SIMD128 path (wasm32 with `+simd128`), exposed for the bit-exactness tests.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
pub fn gemm_acc_simd(g: &Gemm, a: &[f32], b: &[f32], c: &mut [f32]) {
    simd::gemm_acc(g, a, b, c)
}

/// One thread's `C += A · B`: the SIMD128 path when compiled in, else the scalar oracle.
#[inline]
pub fn gemm_acc_serial(g: &Gemm, a: &[f32], b: &[f32], c: &mut [f32]) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels")))]
    {
        simd::gemm_acc(g, a, b, c)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "scalar-kernels"))))]
    {
        gemm_acc_scalar(g, a, b, c)
    }
}

/// `C += A · B`, split over bands of rows (multiples of 4, so `upper` tiles are unchanged)
/// when threads are available. Bands write disjoint rows of `C` (`ldc >= n` is required when
/// `m > 1`), so the bits do not depend on the thread count.
pub fn gemm_acc(g: &Gemm, a: &[f32], b: &[f32], c: &mut [f32]) {
    g.check(a, b, c);
    let work = g.m.saturating_mul(g.n).saturating_mul(g.k.max(1));
    let tasks = par::tasks_for(work, 1 << 16, g.m.div_ceil(4));
    if tasks <= 1 || g.m < 8 {
        return gemm_acc_serial(g, a, b, c);
    }
    assert!(g.ldc >= g.n, "gemm: rows of C overlap");
    let band = g.m.div_ceil(tasks).div_ceil(4) * 4;
    let nb = g.m.div_ceil(band);
    let cp = SharedMut(c.as_mut_ptr());
    let clen = c.len();
    par::for_each_index(nb, |t| {
        let r0 = t * band;
        let r1 = (r0 + band).min(g.m);
        let start = r0 * g.ldc;
        let len = ((r1 - r0 - 1) * g.ldc + g.n).min(clen - start);
        // SAFETY: bands cover disjoint row ranges of C (ldc >= n), so these slices never overlap.
        let cs = unsafe { std::slice::from_raw_parts_mut(cp.get().add(start), len) };
        let sub = Gemm { m: r1 - r0, ..*g };
        // Rows r0.. of a band keep their `upper` start: r0 is a multiple of 4, and the band's
        // column start is taken relative to its own rows, so shift B/C columns accordingly.
        if g.upper {
            for (li, gi) in (r0..r1).step_by(4).enumerate() {
                let j0 = (gi / 4 * 4).min(g.n);
                let rows = (r1 - gi).min(4);
                let t = Gemm { m: rows, n: g.n - j0, upper: false, ..*g };
                if t.n == 0 {
                    continue;
                }
                let coff = li * 4 * g.ldc + j0;
                gemm_acc_serial(&t, &a[gi * g.a_rs..], &b[j0..], &mut cs[coff..]);
            }
        } else {
            gemm_acc_serial(&sub, &a[r0 * g.a_rs..], b, cs);
        }
    });
}
