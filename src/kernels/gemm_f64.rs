//! The f64 update of the blocked factorizations (`src/calib/cholesky_blocked.rs`):
//! `C -= A · B` over register tiles, cut into cache tiles that threads take in any order.
//!
//! Contract: every computed element is `c = c - a_p * b_p` for `p = 0, 1, .., k-1` in that
//! order, a separate multiply and subtract (no fused multiply-add). Tile shapes, the task
//! split and the build (scalar or SIMD128 autovectorized) change which elements are computed
//! together, never one element's sequence of operations, so the bits are the same with any
//! number of threads.

use super::gemm_shape::NR;
use super::par::{self, SharedMut};
use super::scalar::sub_mul_tile_of;

pub use super::gemm_shape::{SubMul, MR};

/// Columns of a cache tile: `k x NC` of `B` (64 x 256 f64 = 128 KiB) stays cached while every
/// row of the task streams over it.
const NC: usize = 256;
/// Rows of a task (a multiple of `MR`).
const MC: usize = 64;

/// The full `MR x NR` register tile on the backend `kernels` chose (f64x2 vectors in the
/// SIMD128 build, the same per-lane multiply and subtract as the scalar tile, so the same bits).
///
/// # Safety
/// As [`sub_mul_tile_of`].
#[inline(always)]
unsafe fn tile_full(g: &SubMul, a: *const f64, b: *const f64, c: *mut f64) {
    super::imp::sub_mul_tile(g, a, b, c)
}

/// Rows `i0..i1` (`i0` a multiple of `MR`) and columns `j0..j1` of `C -= A · B`, serially.
///
/// # Safety
/// The pointers cover the `SubMul` shape; no other thread touches these elements of `C`.
#[allow(clippy::too_many_arguments)]
unsafe fn block(g: &SubMul, a: *const f64, b: *const f64, c: *mut f64, i0: usize, i1: usize, j0: usize, j1: usize) {
    let mut i = i0;
    while i < i1 {
        let je = g.col_end(i).min(j1);
        let rows = (i1 - i).min(MR);
        let (ai, ci) = (a.add(i * g.lda), c.add(i * g.ldc));
        let mut j = j0;
        if rows == MR {
            while j + NR <= je {
                tile_full(g, ai, b.add(j), ci.add(j));
                j += NR;
            }
            while j < je {
                sub_mul_tile_of::<MR, 1>(g, ai, b.add(j), ci.add(j));
                j += 1;
            }
        } else {
            for r in 0..rows {
                let (ar, cr) = (ai.add(r * g.lda), ci.add(r * g.ldc));
                let mut j = j0;
                while j + NR <= je {
                    sub_mul_tile_of::<1, NR>(g, ar, b.add(j), cr.add(j));
                    j += NR;
                }
                while j < je {
                    sub_mul_tile_of::<1, 1>(g, ar, b.add(j), cr.add(j));
                    j += 1;
                }
            }
        }
        i += MR;
    }
}

/// `C -= A · B` for the shape `g`, cut into `MC x NC` tasks run on the worker pool (or in
/// order without one).
///
/// # Safety
/// `a`, `b` readable and `c` writable over the shape `g`; the elements of `C` written are
/// disjoint from everything read through `a` and `b` (they may live in one buffer).
pub unsafe fn sub_mul(g: &SubMul, a: *const f64, b: *const f64, c: *mut f64) {
    if g.m == 0 || g.n == 0 || g.k == 0 {
        return;
    }
    let ncb = g.n.div_ceil(NC);
    // Tasks: (column block, row chunk); with `lower`, a column block starts at its own row.
    let mut tasks: Vec<(usize, usize, usize)> = Vec::new();
    for cb in 0..ncb {
        let j0 = cb * NC;
        let r_start = if g.lower { j0 / MR * MR } else { 0 };
        let mut i = r_start;
        while i < g.m {
            let i1 = (i + MC).min(g.m);
            tasks.push((cb, i, i1));
            i = i1;
        }
    }
    let (ap, bp, cp) = (SharedMut(a as *mut f64), SharedMut(b as *mut f64), SharedMut(c));
    let run = |t: usize| {
        let (cb, i0, i1) = tasks[t];
        let j0 = cb * NC;
        let j1 = (j0 + NC).min(g.n);
        // SAFETY: tasks cover disjoint (row, column) rectangles of C; A and B are only read.
        unsafe { block(g, ap.get(), bp.get(), cp.get(), i0, i1, j0, j1) };
    };
    if par::threads() <= 1 {
        (0..tasks.len()).for_each(run);
    } else {
        par::for_each_index(tasks.len(), run);
    }
}

/// The one-element-at-a-time oracle of [`sub_mul`] on slices (tests): same per-element order.
pub fn sub_mul_scalar(g: &SubMul, a: &[f64], b: &[f64], c: &mut [f64]) {
    for i in 0..g.m {
        let je = g.col_end(i / MR * MR);
        for j in 0..je {
            let mut s = c[i * g.ldc + j];
            for p in 0..g.k {
                s -= a[i * g.lda + p] * b[p * g.ldb + j];
            }
            c[i * g.ldc + j] = s;
        }
    }
}
