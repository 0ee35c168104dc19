//! SparseGPT (docs/API.md, "SparseGPT as this package defines it", steps 1-4): optimal-brain-surgeon pruning of a 2-D weight view column by
//! column, each pruned weight's error spread over the not-yet-processed columns through the
//! upper Cholesky factor `U` of the damped inverse Hessian, with lazy block updates.
//!
//! In place through any non-aliasing 2-D [`View`] (transposed, strided): the weights are read
//! and written where they live; the extra memory is `U` (`cols²`) and `rows x blockSize`
//! working blocks (the block `W1`, its errors `E`, and for views whose columns are not
//! contiguous, one gathered tile of the trailing columns). Everything that can refuse the call
//! (options, shapes, non-finite weights, Cholesky) is checked before the first write.

use super::cholesky::inverse_upper_factor;
use super::dims::dims2;
use super::hessian::Hessian;
use super::select_top::select_top;
use crate::bail;
use crate::block::View;
use crate::core::alloc::try_alloc;
use crate::core::error::Result;
use crate::kernels::gemm::{gemm_acc, Gemm};
use crate::kernels::par::{self, SharedMut};

/// The options of `sparseGpt` as given (validated by [`sparse_gpt`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SparseGptOptions {
    /// Fraction pruned in every block of columns.
    pub sparsity: Option<f64>,
    /// `[n, m]`: keep n of every m consecutive inputs in each row.
    pub nm: Option<(i64, i64)>,
    /// A given keep-mask, view-shaped row-major (1 keeps): reconstruction only.
    pub keep: Option<Vec<u8>>,
    /// Columns per lazy block, default 128.
    pub block_size: Option<i64>,
    /// Damping as a fraction of the mean diagonal, default 0.01.
    pub perc_damp: Option<f64>,
}

enum Select<'a> {
    Sparsity(f64),
    Nm(usize, usize),
    Keep(&'a [u8]),
}

/// Prunes and compensates `w` (rows = outputs, cols = inputs) in place from the statistics
/// `h`; returns the keep-mask (view-shaped, 1 keeps). `h` is not changed.
pub fn sparse_gpt(w: &View, h: &Hessian, opts: &SparseGptOptions) -> Result<Vec<u8>> {
    let (rows, cols, s0, s1) = dims2(w, "sparseGpt")?;
    if h.cols() != cols {
        bail!(ShapeMismatch, "sparseGpt: the Hessian has {} inputs but the weight view {:?} has {cols} columns (rows = outputs, cols = inputs; a MatMul weight (K, N) needs its transposed view [N, K], stride [1, N])", h.cols(), w.shape());
    }
    let given = opts.sparsity.is_some() as u8 + opts.nm.is_some() as u8 + opts.keep.is_some() as u8;
    if given != 1 {
        bail!(InvalidArguments, "sparseGpt: give exactly one of sparsity, nm, keep (got {given})");
    }
    let bs = match opts.block_size {
        None => 128,
        Some(b) if b >= 1 => b as usize,
        Some(b) => bail!(InvalidArguments, "sparseGpt: blockSize must be an integer >= 1, got {b}"),
    };
    let bs = bs.min(cols.max(1));
    let pd = opts.perc_damp.unwrap_or(0.01);
    if !(pd.is_finite() && pd >= 0.0) {
        bail!(InvalidArguments, "sparseGpt: percDamp must be finite and >= 0, got {pd}");
    }
    let sel = if let Some(s) = opts.sparsity {
        if !(0.0..=1.0).contains(&s) {
            bail!(InvalidSparsity, "sparseGpt: sparsity must be in [0, 1], got {s}");
        }
        Select::Sparsity(s)
    } else if let Some((n, m)) = opts.nm {
        if m < 1 || n > m || n < 0 {
            bail!(InvalidNmPattern, "sparseGpt: nm [n, m] needs 0 <= n <= m and m >= 1, got [{n}, {m}]");
        }
        let (n, m) = (n as usize, m as usize);
        let user_bs = opts.block_size.map_or(128, |b| b as usize);
        if cols % m != 0 || !user_bs.is_multiple_of(m) {
            bail!(InvalidNmShape, "sparseGpt: nm [{n}, {m}] needs cols ({cols}) and blockSize ({user_bs}) to be multiples of m");
        }
        Select::Nm(n, m)
    } else {
        let k = opts.keep.as_deref().unwrap_or(&[]);
        if k.len() != rows * cols {
            bail!(
                ShapeMismatch,
                "sparseGpt: keep has {} elements, expected rows * cols = {rows} * {cols} (view-shaped, row-major)",
                k.len()
            );
        }
        Select::Keep(k)
    };
    w.check_writable()?;
    let param = w.param();
    {
        let data = param.data();
        for r in 0..rows {
            for c in 0..cols {
                let v = data[r * s0 + c * s1];
                if !v.is_finite() {
                    bail!(InvalidValue, "sparseGpt: weight [{r}, {c}] of the view is {v}; weights must be finite");
                }
            }
        }
    }
    // Steps 1-3: dead inputs, damping, U. Nothing is written before this succeeds.
    let mut hm = h.matrix_f64()?;
    let dead: Vec<bool> = (0..cols).map(|j| hm[j * cols + j] == 0.0).collect();
    for j in (0..cols).filter(|&j| dead[j]) {
        hm[j * cols + j] = 1.0;
    }
    let damp = pd * (0..cols).map(|j| hm[j * cols + j]).sum::<f64>() / cols as f64;
    for j in 0..cols {
        hm[j * cols + j] += damp;
    }
    let u64_ = inverse_upper_factor(&hm, cols)?;
    drop(hm);
    let d: Vec<f64> = (0..cols).map(|j| u64_[j * cols + j]).collect();
    let mut u = try_alloc(cols * cols, 0.0f32)?;
    par::zip_chunks(&u64_, 64 * cols, &mut u, 64 * cols, |_, s, o| {
        for (x, &v) in o.iter_mut().zip(s) {
            *x = v as f32;
        }
    });
    drop(u64_);

    let mut mask = try_alloc(rows * cols, 0u8)?;
    let mut w1 = try_alloc(rows * bs, 0.0f32)?;
    let mut e = try_alloc(rows * bs, 0.0f32)?;
    let mut tile = if s1 == 1 { Vec::new() } else { try_alloc(rows * bs, 0.0f32)? };
    let mut data = param.data_mut();
    let mut i1 = 0;
    while i1 < cols {
        let i2 = (i1 + bs).min(cols);
        let wd = i2 - i1;
        // Rows are independent from here to the lazy update: bands of rows, in parallel.
        let band = rows.div_ceil(par::tasks_for(rows * wd * wd / 2, 1 << 15, rows.div_ceil(8)));
        {
            let (src, dead) = (&*data, &dead);
            par::map_chunks_mut(&mut w1[..rows * bs], band * bs, |t, chunk| {
                for (rl, row) in chunk.chunks_exact_mut(bs).enumerate() {
                    let r = t * band + rl;
                    for c in 0..wd {
                        row[c] = if dead[i1 + c] { 0.0 } else { src[r * s0 + (i1 + c) * s1] };
                    }
                }
            });
        }
        match sel {
            Select::Sparsity(s) => select_block(&w1, bs, rows, wd, &d[i1..i2], s, &mut mask, cols, i1)?,
            Select::Keep(k) => {
                for r in 0..rows {
                    for c in i1..i2 {
                        mask[r * cols + c] = (k[r * cols + c] != 0) as u8;
                    }
                }
            }
            Select::Nm(..) => {}
        }
        // The column loop: rows are independent inside a block (selection is done above or
        // per row), so bands of rows run it whole and write their rows back, one join per block.
        let (w1p, ep, mp) = (SharedMut(w1.as_mut_ptr()), SharedMut(e.as_mut_ptr()), SharedMut(mask.as_mut_ptr()));
        let dp = SharedMut(data.as_mut_ptr());
        let (u, d, sel) = (&u, &d, &sel);
        par::for_each_index(rows.div_ceil(band), |t| {
            let r0 = t * band;
            let nr = band.min(rows - r0);
            // SAFETY: task t alone touches rows r0..r0+nr of w1, e and mask.
            let (w1b, eb, mb) = unsafe {
                (
                    std::slice::from_raw_parts_mut(w1p.get().add(r0 * bs), nr * bs),
                    std::slice::from_raw_parts_mut(ep.get().add(r0 * bs), nr * bs),
                    std::slice::from_raw_parts_mut(mp.get().add(r0 * cols), nr * cols),
                )
            };
            column_loop(w1b, eb, mb, nr, bs, wd, cols, i1, u, d, sel);
            for (rl, row) in w1b.chunks_exact(bs).enumerate() {
                for (c, &v) in row[..wd].iter().enumerate() {
                    // SAFETY: the view does not alias, so (row, column) pairs of this band's
                    // rows are elements no other task writes; all lie inside the parameter.
                    unsafe { *dp.get().add((r0 + rl) * s0 + (i1 + c) * s1) = v };
                }
            }
        });
        if i2 < cols {
            let ub = &u[i1 * cols + i2..];
            if s1 == 1 {
                // Columns contiguous: update the weights where they are.
                let g = Gemm { m: rows, n: cols - i2, k: wd, a_rs: bs, a_ks: 1, ldb: cols, ldc: s0, upper: false, kc: 0 };
                let start = i2;
                gemm_acc(&g, &e, ub, &mut data[start..]);
            } else {
                let mut j0 = i2;
                while j0 < cols {
                    let j1 = (j0 + bs).min(cols);
                    let tw = j1 - j0;
                    for c in 0..tw {
                        for r in 0..rows {
                            tile[r * bs + c] = data[r * s0 + (j0 + c) * s1];
                        }
                    }
                    let g = Gemm { m: rows, n: tw, k: wd, a_rs: bs, a_ks: 1, ldb: cols, ldc: bs, upper: false, kc: 0 };
                    gemm_acc(&g, &e, &u[i1 * cols + j0..], &mut tile);
                    for c in 0..tw {
                        for r in 0..rows {
                            data[r * s0 + (j0 + c) * s1] = tile[r * bs + c];
                        }
                    }
                    j0 = j1;
                }
            }
        }
        i1 = i2;
    }
    Ok(mask)
}

/// SparseGPT's inner loop over the columns of one block for `rows` rows (`w1`, `e`: `rows x bs`;
/// `mask`: `rows x cols`): prune (N:M picked per group as the loop reaches it), record the
/// scaled error, spread it over the block's remaining columns. Per element the updates come in
/// column order, `w + (-err) * u` (the calibration GEMM's contract), whatever the row split.
#[allow(clippy::too_many_arguments)]
fn column_loop(
    w1: &mut [f32],
    e: &mut [f32],
    mask: &mut [u8],
    rows: usize,
    bs: usize,
    wd: usize,
    cols: usize,
    i1: usize,
    u: &[f32],
    d: &[f64],
    sel: &Select,
) {
    for c in 0..wd {
        let i = i1 + c;
        if let Select::Nm(n, m) = *sel {
            if c % m == 0 {
                select_nm(w1, bs, rows, c, m, n, &d[i..i + m], mask, cols, i);
            }
        }
        let urow = &u[i * cols + i..i * cols + i1 + wd];
        let uii = urow[0];
        for r in 0..rows {
            let row = &mut w1[r * bs..r * bs + wd];
            let wv = row[c];
            let q = if mask[r * cols + i] != 0 { wv } else { 0.0 };
            // Stored negated: adding (-err) * U gives the same bits as subtracting.
            let ne = -((wv - q) / uii);
            e[r * bs + c] = ne;
            row[c] = q;
            for (x, &uv) in row[c + 1..].iter_mut().zip(&urow[1..]) {
                *x += ne * uv;
            }
        }
    }
}

/// Unstructured selection of one block: keeps the `floor((1-s) * rows * width + 0.5)` largest
/// `w² / d²`, ties to the lower row-major index inside the block ([`select_top`]).
#[allow(clippy::too_many_arguments)]
fn select_block(w1: &[f32], bs: usize, rows: usize, wd: usize, d: &[f64], s: f64, mask: &mut [u8], cols: usize, i1: usize) -> Result<()> {
    let numel = rows * wd;
    let keep = (((1.0 - s) * numel as f64) + 0.5).floor().clamp(0.0, numel as f64) as usize;
    let score = |r: usize, c: usize| {
        let v = w1[r * bs + c] as f64 / d[c];
        v * v
    };
    select_top(score, rows, wd, keep, mask, cols, i1)
}

/// N:M selection of columns `c .. c+m` of the block (W1 as updated so far): each row keeps its
/// n largest `w² / d²`, ties to the lower index.
#[allow(clippy::too_many_arguments)]
fn select_nm(w1: &[f32], bs: usize, rows: usize, c: usize, m: usize, n: usize, d: &[f64], mask: &mut [u8], cols: usize, i: usize) {
    let mut order: Vec<usize> = (0..m).collect();
    let mut sc = vec![0.0f64; m];
    for r in 0..rows {
        for t in 0..m {
            let v = w1[r * bs + c + t] as f64 / d[t];
            sc[t] = v * v;
        }
        order.sort_by(|&a, &b| sc[b].total_cmp(&sc[a]).then(a.cmp(&b)));
        let out = &mut mask[r * cols + i..r * cols + i + m];
        out.fill(0);
        for &t in &order[..n] {
            out[t] = 1;
        }
    }
}
