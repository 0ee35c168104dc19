//! SparseGPT (docs/API.md, "SparseGPT as this package defines it", steps 1-4): optimal-brain-surgeon pruning of a 2-D weight view column by
//! column, each pruned weight's error spread over the not-yet-processed columns through the
//! upper Cholesky factor `U` of the damped inverse Hessian, with lazy block updates. The
//! options are checked here; the column solver, shared with `gptq`, is [`super::obs_solver`].

use super::dims::dims2;
use super::hessian::Hessian;
use super::obs_solver::{solve, Spec};
use super::refit::Refit;
pub use super::refit::Refitted;
use super::selection::parse_select;
use crate::bail;
use crate::block::View;
use crate::core::error::Result;

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
    /// Conjugate-gradient steps of the mask-fixed least-squares refit after the solver
    /// ([`super::refit`]), default 0 (SparseGPT's own result).
    pub refit: Option<i64>,
}

/// Prunes and compensates `w` (rows = outputs, cols = inputs) in place from the statistics
/// `h`; returns the keep-mask (view-shaped, 1 keeps). `h` is not changed.
pub fn sparse_gpt(w: &View, h: &Hessian, opts: &SparseGptOptions) -> Result<Vec<u8>> {
    Ok(sparse_gpt_refitted(w, h, opts)?.0)
}

/// [`sparse_gpt`], and what its refit did (`None` without one).
pub fn sparse_gpt_refitted(w: &View, h: &Hessian, opts: &SparseGptOptions) -> Result<(Vec<u8>, Option<Refitted>)> {
    let (rows, cols, s0, s1) = dims2(w, "sparseGpt")?;
    if h.cols() != cols {
        bail!(ShapeMismatch, "sparseGpt: the Hessian has {} inputs but the weight view {:?} has {cols} columns (rows = outputs, cols = inputs; a MatMul weight (K, N) needs its transposed view [N, K], stride [1, N])", h.cols(), w.shape());
    }
    let given = opts.sparsity.is_some() as u8 + opts.nm.is_some() as u8 + opts.keep.is_some() as u8;
    if given != 1 {
        bail!(InvalidArguments, "sparseGpt: give exactly one of sparsity, nm, keep (got {given})");
    }
    let user_bs = match opts.block_size {
        None => 128,
        Some(b) if b >= 1 => b as usize,
        Some(b) => bail!(InvalidArguments, "sparseGpt: blockSize must be an integer >= 1, got {b}"),
    };
    let pd = opts.perc_damp.unwrap_or(0.01);
    if !(pd.is_finite() && pd >= 0.0) {
        bail!(InvalidArguments, "sparseGpt: percDamp must be finite and >= 0, got {pd}");
    }
    let iters = match opts.refit {
        None => 0,
        Some(k) if (0..=10_000).contains(&k) => k as usize,
        Some(k) => bail!(InvalidArguments, "sparseGpt: refit must be an integer in 0..=10000 (conjugate-gradient steps), got {k}"),
    };
    let select = parse_select("sparseGpt", opts.sparsity, opts.nm, opts.keep.as_deref(), rows, cols, user_bs)?;
    let spec = Spec {
        what: "sparseGpt",
        select,
        grid: None,
        bs: user_bs.min(cols.max(1)),
        perc_damp: pd,
        act_order: false,
        static_groups: false,
        scale_search: false,
    };
    let dims = (rows, cols, s0, s1);
    // The refit's target and memory are taken before the solver writes (a refused call changes no weight).
    let prepared = if iters > 0 { Some(Refit::prepare(w, dims, h, pd)?) } else { None };
    let mask = solve(w, h, &spec, rows, cols, s0, s1)?.mask;
    let done = prepared.map(|r| r.run(w, dims, &mask, iters));
    Ok((mask, done))
}
