//! The optimal-brain-surgeon column solver shared by SparseGPT (pruning), GPTQ (quantization)
//! and their joint mode (docs/API.md, "SparseGPT as this package defines it" and
//! "Quantization"): columns are processed in order; each column's weights are replaced by
//! their target (0 where pruned, the nearest grid value where quantized, the grid's 0 where
//! both) and the error is spread over the not-yet-processed columns through the upper Cholesky
//! factor `U` of the damped inverse Hessian, with lazy block updates. One loop serves all three
//! modes, as in SparseGPT's `fasterprune` (IST-DASLab/sparsegpt, `sparsegpt.py`), which quantizes
//! the kept weights of a column after masking it; GPTQ's `fasterquant` (IST-DASLab/gptq,
//! `gptq.py`) is the same loop without a mask.
//!
//! In place through any non-aliasing 2-D [`View`] (transposed, strided): the weights are read
//! and written where they live; the extra memory is `U` (`cols²`) and `rows x blockSize`
//! working blocks (the block `W1`, its errors `E`, and for views whose columns are not
//! contiguous, one gathered tile of the trailing columns), plus the mask and the codes.
//! Everything that can refuse the call (shapes, non-finite weights, Cholesky, allocation) is
//! checked before the first write.
//!
//! Act-order (GPTQ's `--act-order`, IST-DASLab/gptq `gptq.py`): the columns are processed in
//! order of descending Hessian diagonal, the inputs that carry the most energy first, while
//! the most later columns remain to absorb their error; the Hessian is permuted before the
//! factorisation. The weights stay where they are: the loop reads and writes column
//! `order[i]` at step `i`. Its groups are static (`--static-groups`): every group's parameters
//! are found before the loop from the uncompensated weights of its original columns, so the
//! groups stay the stored blocks of consecutive inputs (MatMulNBits without `g_idx`).

use super::cholesky::inverse_upper_factor;
use super::dims::check_finite;
use super::hessian::Hessian;
use super::quant_grid::{GroupParams, QuantGrid};
use super::scale_search::search_params;
use super::selection::{select_block, select_nm, Select};
use crate::block::View;
use crate::core::alloc::try_alloc;
use crate::core::error::Result;
use crate::kernels::gemm::{gemm_acc, Gemm};
use crate::kernels::par::{self, SharedMut};

/// What one solver run does; the caller has validated it (`bs` in `1..=cols`; with an in-loop
/// grid, `bs` and every block start are multiples of the group length).
pub(crate) struct Spec<'a> {
    pub what: &'a str,
    pub select: Option<Select<'a>>,
    pub grid: Option<QuantGrid>,
    pub bs: usize,
    pub perc_damp: f64,
    /// Columns in order of descending diag(H) (no selection but a keep-mask; static groups).
    pub act_order: bool,
    /// Every group's parameters found before the loop from the original weights.
    pub static_groups: bool,
    /// Each group's scale by GPTQ's search over shrunk ranges ([`search_params`]).
    pub scale_search: bool,
}

/// A group's parameters from its values: the grid's own, or the searched ones.
fn group_params(q: &QuantGrid, search: bool, values: &[f32]) -> GroupParams {
    if search {
        search_params(q, values)
    } else {
        q.params(values.iter().copied())
    }
}

/// The original column processed at step `i`.
#[inline]
fn at(order: Option<&[usize]>, i: usize) -> usize {
    order.map_or(i, |o| o[i])
}

/// The solver's outputs besides the weights: the keep-mask (all ones without a selection),
/// and with a grid the codes (view-shaped, row-major), one scale per row and group, and the
/// zero points (empty when symmetric).
pub(crate) struct Solved {
    pub mask: Vec<u8>,
    pub codes: Vec<i8>,
    pub scales: Vec<f32>,
    pub zeros: Vec<i8>,
}

/// The per-row outputs of one band of rows, and the grid they follow.
struct Quant<'a> {
    grid: QuantGrid,
    /// Columns per group, and whether a group's parameters are found when the loop reaches its
    /// first column (false: one group per row or static groups, found before the loop).
    g: usize,
    in_loop: bool,
    search: bool,
    ng: usize,
    codes: &'a mut [i8],
    scales: &'a mut [f32],
    zeros: &'a mut [i8],
}

/// Runs the solver on `w` (`rows x cols`, strides `s0, s1`) with the statistics `h`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn solve(w: &View, h: &Hessian, spec: &Spec, rows: usize, cols: usize, s0: usize, s1: usize) -> Result<Solved> {
    let what = spec.what;
    let bs = spec.bs;
    w.check_writable()?;
    check_finite(w, what, (rows, cols, s0, s1))?;
    let param = w.param();
    // Steps 1-3: dead inputs, damping, U. Nothing is written before this succeeds.
    let mut hm = h.matrix_f64()?;
    let dead: Vec<bool> = (0..cols).map(|j| hm[j * cols + j] == 0.0).collect();
    // Descending diagonal, ties (and dead inputs, diagonal 0) in their original order, so the
    // dead inputs come last; an identity order is no order (the in-place update path).
    let order: Option<Vec<usize>> = if spec.act_order {
        let mut o: Vec<usize> = (0..cols).collect();
        o.sort_by(|&a, &b| hm[b * cols + b].total_cmp(&hm[a * cols + a]));
        (o.iter().enumerate().any(|(i, &j)| i != j)).then_some(o)
    } else {
        None
    };
    for j in (0..cols).filter(|&j| dead[j]) {
        hm[j * cols + j] = 1.0;
    }
    if let Some(o) = &order {
        let mut hp = try_alloc(cols * cols, 0.0f64)?;
        for (i, &oi) in o.iter().enumerate() {
            for (j, &oj) in o.iter().enumerate() {
                hp[i * cols + j] = hm[oi * cols + oj];
            }
        }
        hm = hp;
    }
    let order = order.as_deref();
    let damp = spec.perc_damp * (0..cols).map(|j| hm[j * cols + j]).sum::<f64>() / cols as f64;
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

    let mut mask = try_alloc(rows * cols, spec.select.is_none() as u8)?;
    let (g, ng) = spec.grid.map_or((cols, 0), |q| (q.group_len(cols), q.groups(cols)));
    let in_loop = g < cols && !spec.static_groups;
    let (nq, nz) = match spec.grid {
        None => (0, 0),
        Some(q) => (rows * cols, if q.sym { 0 } else { rows * ng }),
    };
    let mut codes = try_alloc(nq, 0i8)?;
    let mut scales = try_alloc(rows * ng, 0.0f32)?;
    let mut zeros = try_alloc(nz, 0i8)?;
    let mut w1 = try_alloc(rows * bs, 0.0f32)?;
    let mut e = try_alloc(rows * bs, 0.0f32)?;
    let mut tile = if s1 == 1 && order.is_none() { Vec::new() } else { try_alloc(rows * bs, 0.0f32)? };
    let mut data = param.data_mut();
    if let (Some(q), false) = (spec.grid, in_loop) {
        // One group per row, or static groups: GPTQ finds their parameters from the weights
        // before the first column (dead inputs count as the zeros they become), each group over
        // its original columns.
        let mut vals = Vec::with_capacity(g);
        for r in 0..rows {
            for k in 0..ng {
                vals.clear();
                vals.extend((k * g..((k + 1) * g).min(cols)).map(|c| if dead[c] { 0.0 } else { data[r * s0 + c * s1] }));
                let p = group_params(&q, spec.scale_search, &vals);
                scales[r * ng + k] = p.scale;
                if !q.sym {
                    zeros[r * ng + k] = p.zero;
                }
            }
        }
    }
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
                    for (c, x) in row[..wd].iter_mut().enumerate() {
                        let j = at(order, i1 + c);
                        *x = if dead[j] { 0.0 } else { src[r * s0 + j * s1] };
                    }
                }
            });
        }
        match spec.select {
            Some(Select::Sparsity(s)) => select_block(&w1, bs, rows, wd, &d[i1..i2], s, &mut mask, cols, i1)?,
            Some(Select::Keep(k)) => {
                for r in 0..rows {
                    for c in (i1..i2).map(|c| at(order, c)) {
                        mask[r * cols + c] = (k[r * cols + c] != 0) as u8;
                    }
                }
            }
            Some(Select::Nm(..)) | None => {}
        }
        // The column loop: rows are independent inside a block (selection is done above or
        // per row), so bands of rows run it whole and write their rows back, one join per block.
        let (w1p, ep, mp) = (SharedMut(w1.as_mut_ptr()), SharedMut(e.as_mut_ptr()), SharedMut(mask.as_mut_ptr()));
        let (cp, sp, zp) = (SharedMut(codes.as_mut_ptr()), SharedMut(scales.as_mut_ptr()), SharedMut(zeros.as_mut_ptr()));
        let dp = SharedMut(data.as_mut_ptr());
        let (u, d, sel, grid, search) = (&u, &d, &spec.select, spec.grid, spec.scale_search);
        par::for_each_index(rows.div_ceil(band), |t| {
            let r0 = t * band;
            let nr = band.min(rows - r0);
            // SAFETY: task t alone touches rows r0..r0+nr of w1, e, mask, codes, scales and
            // zeros (each slice is empty or holds every row).
            let (w1b, eb, mb) = unsafe {
                (
                    std::slice::from_raw_parts_mut(w1p.get().add(r0 * bs), nr * bs),
                    std::slice::from_raw_parts_mut(ep.get().add(r0 * bs), nr * bs),
                    std::slice::from_raw_parts_mut(mp.get().add(r0 * cols), nr * cols),
                )
            };
            let mut quant = grid.map(|q| unsafe {
                Quant {
                    grid: q,
                    g,
                    in_loop,
                    search,
                    ng,
                    codes: std::slice::from_raw_parts_mut(cp.get().add(r0 * cols), nr * cols),
                    scales: std::slice::from_raw_parts_mut(sp.get().add(r0 * ng), nr * ng),
                    zeros: if q.sym { &mut [] } else { std::slice::from_raw_parts_mut(zp.get().add(r0 * ng), nr * ng) },
                }
            });
            column_loop(w1b, eb, mb, nr, bs, wd, cols, i1, u, d, sel, order, quant.as_mut());
            for (rl, row) in w1b.chunks_exact(bs).enumerate() {
                for (c, &v) in row[..wd].iter().enumerate() {
                    // SAFETY: the view does not alias, so (row, column) pairs of this band's
                    // rows are elements no other task writes; all lie inside the parameter.
                    unsafe { *dp.get().add((r0 + rl) * s0 + at(order, i1 + c) * s1) = v };
                }
            }
        });
        if i2 < cols {
            lazy_update(&mut data, &e, u, &mut tile, rows, cols, bs, i1, i2, s0, s1, order);
        }
        i1 = i2;
    }
    Ok(Solved { mask, codes, scales, zeros })
}

/// The lazy block update: the trailing columns `i2..` (steps; column `order[j]` at step `j`)
/// get `-E · U[i1..i2, i2..]`.
#[allow(clippy::too_many_arguments)]
fn lazy_update(
    data: &mut [f32],
    e: &[f32],
    u: &[f32],
    tile: &mut [f32],
    rows: usize,
    cols: usize,
    bs: usize,
    i1: usize,
    i2: usize,
    s0: usize,
    s1: usize,
    order: Option<&[usize]>,
) {
    let wd = i2 - i1;
    if s1 == 1 && order.is_none() {
        // Columns contiguous: update the weights where they are.
        let g = Gemm { m: rows, n: cols - i2, k: wd, a_rs: bs, a_ks: 1, ldb: cols, ldc: s0, upper: false, kc: 0 };
        gemm_acc(&g, e, &u[i1 * cols + i2..], &mut data[i2..]);
        return;
    }
    let mut j0 = i2;
    while j0 < cols {
        let j1 = (j0 + bs).min(cols);
        let tw = j1 - j0;
        for c in 0..tw {
            let j = at(order, j0 + c) * s1;
            for r in 0..rows {
                tile[r * bs + c] = data[r * s0 + j];
            }
        }
        let g = Gemm { m: rows, n: tw, k: wd, a_rs: bs, a_ks: 1, ldb: cols, ldc: bs, upper: false, kc: 0 };
        gemm_acc(&g, e, &u[i1 * cols + j0..], tile);
        for c in 0..tw {
            let j = at(order, j0 + c) * s1;
            for r in 0..rows {
                data[r * s0 + j] = tile[r * bs + c];
            }
        }
        j0 = j1;
    }
}

/// The inner loop over the columns of one block for `rows` rows (`w1`, `e`: `rows x bs`;
/// `mask`: `rows x cols`): prune (N:M picked per group as the loop reaches it), quantize the
/// kept weight (a group's parameters found as the loop reaches its first column), record the
/// scaled error, spread it over the block's remaining columns. Step `i` is the original column
/// `order[i]`, whose mask entry, code and group it reads and writes. Per element the updates come in
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
    sel: &Option<Select>,
    order: Option<&[usize]>,
    mut quant: Option<&mut Quant>,
) {
    for c in 0..wd {
        let i = i1 + c;
        let j = at(order, i);
        if let Some(Select::Nm(n, m)) = *sel {
            if c % m == 0 {
                select_nm(w1, bs, rows, c, m, n, &d[i..i + m], mask, cols, i);
            }
        }
        if let Some(q) = quant.as_deref_mut() {
            if q.in_loop && i.is_multiple_of(q.g) {
                // The group lies inside this block (the caller's block-size rule): its values in
                // W1 carry every update from the columns before it.
                let end = (c + q.g).min(wd);
                for r in 0..rows {
                    let p = group_params(&q.grid, q.search, &w1[r * bs + c..r * bs + end]);
                    q.scales[r * q.ng + i / q.g] = p.scale;
                    if !q.grid.sym {
                        q.zeros[r * q.ng + i / q.g] = p.zero;
                    }
                }
            }
        }
        let urow = &u[i * cols + i..i * cols + i1 + wd];
        let uii = urow[0];
        for r in 0..rows {
            let row = &mut w1[r * bs..r * bs + wd];
            let wv = row[c];
            let kept = mask[r * cols + j] != 0;
            let mut q = if kept { wv } else { 0.0 };
            if let Some(qs) = quant.as_deref_mut() {
                let k = r * qs.ng + j / qs.g;
                let p = GroupParams { scale: qs.scales[k], zero: if qs.grid.sym { 0 } else { qs.zeros[k] } };
                // A pruned weight is the grid's exact 0 (code = zero point).
                let (code, v) = if kept { qs.grid.quantize(wv, p) } else { (p.zero, 0.0) };
                qs.codes[r * cols + j] = code;
                q = v;
            }
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
