//! The GEMM kernel, `C += A · B`: SparseGPT's lazy block update (`A = -E`, `B = U`) and the
//! training core's matrix products (Gemm / MatMul, ConvTranspose, and through `conv_band` the
//! convolutions), and the Hessian's update for narrow inputs (`A = Xᵀ`, `B = X`, `upper`: the
//! upper triangle); wider inputs go through its own tiled kernel ([`super::syrk`]).
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
//! element and chunk. A call that continues a sum begun by another (the banded convolution's
//! forward, a band of channels per call) gives the bits of one call over the whole depth when it
//! starts on a chunk boundary (each band is whole chunks) or when `kc == 0`.

use super::par::{self, SharedMut};

pub use super::gemm_shape::Gemm;
/// The portable oracle of the contract above (the scalar backend's serial GEMM).
pub use super::scalar::gemm_acc_serial as gemm_acc_scalar;

/// The chunk length of the training core's long sums (the weight gradients, over every pixel or row
/// of a batch): about the square root of the longest it meets, which balances the two levels' errors.
pub const SUM_CHUNK: usize = 128;

/// One thread's `C += A · B` on the backend `kernels` chose (the SIMD128 tiles, else the
/// scalar oracle).
#[inline]
pub fn gemm_acc_serial(g: &Gemm, a: &[f32], b: &[f32], c: &mut [f32]) {
    super::imp::gemm_acc_serial(g, a, b, c)
}

/// `C += A · B`, split over bands of rows (multiples of 4, so `upper` tiles are unchanged)
/// when threads are available. Bands write disjoint rows of `C` (`ldc >= n` is required when
/// `m > 1`), so the bits do not depend on the thread count. Where the backend reads `B` packed
/// (`Gemm::panel_cols`), each panel is packed once here and the bands share it: a band of a few
/// rows gets the packed reads without a copy of its own. A product with too few rows for such bands
/// splits its columns instead ([`column_tasks`]).
pub fn gemm_acc(g: &Gemm, a: &[f32], b: &[f32], c: &mut [f32]) {
    g.check(a, b, c);
    let work = g.m.saturating_mul(g.n).saturating_mul(g.k.max(1));
    let tasks = par::tasks_for(work, 1 << 16, g.m.div_ceil(4));
    if tasks <= 1 || g.m < 8 {
        return gemm_acc_serial(g, a, b, c);
    }
    assert!(g.ldc >= g.n, "gemm: rows of C overlap");
    let Some(nc) = g.panel_cols() else {
        return bands(g, tasks, c, |sub, r0, cs| band_in_place(g, sub, r0, a, b, cs));
    };
    let packed_to = g.strip_cols();
    if g.m.div_ceil(tasks) < MIN_BAND_ROWS && packed_to >= 16 {
        return column_tasks(g, tasks, a, b, c, packed_to);
    }
    let mut pack = vec![0f32; nc * g.k];
    let mut j0 = 0;
    while j0 < packed_to {
        let j1 = (j0 + nc).min(packed_to);
        g.pack_panel(b, j0, j1, &mut pack);
        bands(g, tasks, c, |sub, r0, cs| super::imp::gemm_acc_panel(sub, &a[r0 * g.a_rs..], &pack, j0, j1, cs));
        j0 = j1;
    }
    if packed_to < g.n {
        let rest = Gemm { n: g.n - packed_to, ..*g };
        bands(&rest, tasks, &mut c[packed_to..], |sub, r0, cs| gemm_acc_serial(sub, &a[r0 * g.a_rs..], &b[packed_to..], cs));
    }
}

/// Rows per band below which [`gemm_acc`] splits the columns instead: a band this thin (a batch of
/// ~100 token rows cut 16 ways gives bands of 8) spends its hand-outs, one per panel of `B`, on a
/// few microseconds of work each (MiniLM's 768-deep products: panels of 80 columns, 5 per product).
const MIN_BAND_ROWS: usize = 16;

/// `C += A · B` for a product with few rows: about `tasks` tasks of whole 8-column strips, each
/// packing its own strips of `B` and running every row of `A` over them, one hand-out for the
/// whole product and the packing itself split too. Tasks share `C`'s rows, so each works on a
/// copy of its columns, written back after; the columns past the last whole strip are read in
/// place. Every element is the packed panel's sum: the bits of [`gemm_acc_serial`].
fn column_tasks(g: &Gemm, tasks: usize, a: &[f32], b: &[f32], c: &mut [f32], packed_to: usize) {
    let strips = packed_to / 8;
    let per = strips.div_ceil(tasks.min(strips)) * 8;
    let mut blocks: Vec<Vec<f32>> = vec![Vec::new(); packed_to.div_ceil(per)];
    let c_in: &[f32] = c;
    par::map_chunks_mut(&mut blocks, 1, |t, slot| {
        let (j0, j1) = (t * per, ((t + 1) * per).min(packed_to));
        let w = j1 - j0;
        let mut pack = vec![0f32; w * g.k];
        g.pack_panel(b, j0, j1, &mut pack);
        let mut cb = vec![0f32; g.m * w];
        for (i, row) in cb.chunks_exact_mut(w).enumerate() {
            row.copy_from_slice(&c_in[i * g.ldc + j0..][..w]);
        }
        super::imp::gemm_acc_panel(&Gemm { n: w, ldc: w, ..*g }, a, &pack, 0, w, &mut cb);
        slot[0] = cb;
    });
    for (t, cb) in blocks.iter().enumerate() {
        let w = cb.len() / g.m;
        for (i, row) in cb.chunks_exact(w).enumerate() {
            c[i * g.ldc + t * per..][..w].copy_from_slice(row);
        }
    }
    if packed_to < g.n {
        gemm_acc_serial(&Gemm { n: g.n - packed_to, ..*g }, a, &b[packed_to..], &mut c[packed_to..]);
    }
}

/// Runs `f(band, first_row, band_of_c)` over about `tasks` bands of `g`'s rows (multiples of 4), in
/// parallel; each band's `C` is its own rows (`ldc >= n`), so the slices never overlap.
fn bands<F: Fn(&Gemm, usize, &mut [f32]) + Sync + Send>(g: &Gemm, tasks: usize, c: &mut [f32], f: F) {
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
        f(&Gemm { m: r1 - r0, ..*g }, r0, cs)
    });
}

/// One band of rows `r0..` with `B` read in place.
fn band_in_place(g: &Gemm, sub: &Gemm, r0: usize, a: &[f32], b: &[f32], cs: &mut [f32]) {
    // Rows r0.. of a band keep their `upper` start: r0 is a multiple of 4, and the band's
    // column start is taken relative to its own rows, so shift B/C columns accordingly.
    if g.upper {
        for (li, gi) in (r0..r0 + sub.m).step_by(4).enumerate() {
            let j0 = (gi / 4 * 4).min(g.n);
            let rows = (r0 + sub.m - gi).min(4);
            let t = Gemm { m: rows, n: g.n - j0, upper: false, ..*g };
            if t.n == 0 {
                continue;
            }
            let coff = li * 4 * g.ldc + j0;
            gemm_acc_serial(&t, &a[gi * g.a_rs..], &b[j0..], &mut cs[coff..]);
        }
    } else {
        gemm_acc_serial(sub, &a[r0 * g.a_rs..], b, cs);
    }
}
