//! Which weights the optimal-brain-surgeon solver prunes (docs/API.md, SparseGPT step 4): a
//! fraction of every block, N of every M inputs per row, or a given keep-mask. Shared by
//! `sparseGpt` and the joint mode of `gptq`.

use crate::bail;
use crate::core::error::Result;

use super::select_top::select_top;

/// A validated pruning choice.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Select<'a> {
    Sparsity(f64),
    Nm(usize, usize),
    Keep(&'a [u8]),
}

/// The choice from the options as given: `None` when none of them is given (quantization
/// alone); more than one, or an invalid one, is refused. `user_bs` is the block size the
/// caller asked for (N:M needs it and `cols` to be multiples of m).
pub(crate) fn parse_select<'a>(
    what: &str,
    sparsity: Option<f64>,
    nm: Option<(i64, i64)>,
    keep: Option<&'a [u8]>,
    rows: usize,
    cols: usize,
    user_bs: usize,
) -> Result<Option<Select<'a>>> {
    let given = sparsity.is_some() as u8 + nm.is_some() as u8 + keep.is_some() as u8;
    if given > 1 {
        bail!(InvalidArguments, "{what}: give at most one of sparsity, nm, keep (got {given})");
    }
    if let Some(s) = sparsity {
        if !(0.0..=1.0).contains(&s) {
            bail!(InvalidSparsity, "{what}: sparsity must be in [0, 1], got {s}");
        }
        return Ok(Some(Select::Sparsity(s)));
    }
    if let Some((n, m)) = nm {
        if m < 1 || n > m || n < 0 {
            bail!(InvalidNmPattern, "{what}: nm [n, m] needs 0 <= n <= m and m >= 1, got [{n}, {m}]");
        }
        let (n, m) = (n as usize, m as usize);
        if !cols.is_multiple_of(m) || !user_bs.is_multiple_of(m) {
            bail!(InvalidNmShape, "{what}: nm [{n}, {m}] needs cols ({cols}) and blockSize ({user_bs}) to be multiples of m");
        }
        return Ok(Some(Select::Nm(n, m)));
    }
    if let Some(k) = keep {
        if k.len() != rows * cols {
            bail!(ShapeMismatch, "{what}: keep has {} elements, expected rows * cols = {rows} * {cols} (view-shaped, row-major)", k.len());
        }
        return Ok(Some(Select::Keep(k)));
    }
    Ok(None)
}

/// Unstructured selection of one block: keeps the `floor((1-s) * rows * width + 0.5)` largest
/// `w² / d²`, ties to the lower row-major index inside the block ([`select_top`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn select_block(
    w1: &[f32],
    bs: usize,
    rows: usize,
    wd: usize,
    d: &[f64],
    s: f64,
    mask: &mut [u8],
    cols: usize,
    i1: usize,
) -> Result<()> {
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
pub(crate) fn select_nm(
    w1: &[f32],
    bs: usize,
    rows: usize,
    c: usize,
    m: usize,
    n: usize,
    d: &[f64],
    mask: &mut [u8],
    cols: usize,
    i: usize,
) {
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
