//! GPTQ (Frantar et al. 2022, "GPTQ: Accurate Post-Training Quantization for Generative
//! Pre-trained Transformers"; docs/API.md, "Quantization"): each column of a 2-D weight view is
//! rounded to the grid of [`super::quant_grid`] and its error spread over the not-yet-processed
//! columns through the same inverse-Hessian factor as SparseGPT. With a pruning choice
//! (sparsity, N:M or a keep-mask) it is SparseGPT's joint sparsity + quantization: each column
//! is masked, its kept weights quantized, and the combined error propagated. The options are
//! checked here; the loop is [`super::obs_solver`].

use super::dims::dims2;
use super::hessian::Hessian;
use super::obs_solver::{solve, Spec};
use super::quant_grid::QuantGrid;
use super::selection::parse_select;
use crate::bail;
use crate::block::View;
use crate::core::error::Result;

/// The options of `gptq` as given (validated by [`gptq`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GptqOptions {
    /// Bits per weight, 2..=8.
    pub bits: i64,
    /// Columns (inputs) per scale; `None`: one scale per row.
    pub group: Option<i64>,
    /// Symmetric grid (no zero point), default true.
    pub sym: Option<bool>,
    /// Symmetric grid on all `2^bits` codes (onnxruntime's MatMulNBits convention,
    /// [`QuantGrid`]), default false.
    pub full_range: Option<bool>,
    /// Joint pruning: fraction pruned in every block of columns.
    pub sparsity: Option<f64>,
    /// Joint pruning: keep n of every m consecutive inputs in each row.
    pub nm: Option<(i64, i64)>,
    /// Joint pruning with a given keep-mask (view-shaped, row-major, 1 keeps).
    pub keep: Option<Vec<u8>>,
    /// Columns per lazy block; default the smallest multiple of the group (and of m) >= 128.
    pub block_size: Option<i64>,
    /// Damping as a fraction of the mean diagonal, default 0.01.
    pub perc_damp: Option<f64>,
    /// GPTQ's act-order: columns in order of descending Hessian diagonal, with static groups;
    /// default false. Not with sparsity or nm (their groups run in the original order); a
    /// keep-mask is followed.
    pub act_order: Option<bool>,
    /// Every group's parameters found before the loop from the original weights of its
    /// consecutive inputs; default `act_order` (which needs it: the stored groups stay blocks
    /// of consecutive inputs).
    pub static_groups: Option<bool>,
    /// Each group's scale searched over shrunk ranges (GPTQ's `quant.py`, `mse=True`) instead
    /// of the range's own; default false.
    pub scale_search: Option<bool>,
}

/// What a writer needs besides the dequantized weights (left in the view): codes view-shaped
/// row-major, `scales[r * groups + k]` for row r and group k (columns `k*group ..`), zero
/// points alike when asymmetric, and the keep-mask in joint mode.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantized {
    pub codes: Vec<i8>,
    pub scales: Vec<f32>,
    pub zeros: Option<Vec<i8>>,
    /// Columns per group (cols when one scale per row).
    pub group: usize,
    pub keep: Option<Vec<u8>>,
}

/// Quantizes (and with a pruning choice, prunes) `w` in place with error compensation from the
/// statistics `h`. `h` is not changed; a refused call changes no weight.
pub fn gptq(w: &View, h: &Hessian, opts: &GptqOptions) -> Result<Quantized> {
    let (rows, cols, s0, s1) = dims2(w, "gptq")?;
    if h.cols() != cols {
        bail!(ShapeMismatch, "gptq: the Hessian has {} inputs but the weight view {:?} has {cols} columns (rows = outputs, cols = inputs; a MatMul weight (K, N) needs its transposed view [N, K], stride [1, N])", h.cols(), w.shape());
    }
    let grid = QuantGrid::new(opts.bits, opts.group, opts.sym.unwrap_or(true), opts.full_range.unwrap_or(false), "gptq")?;
    let g = grid.group_len(cols);
    // A group's parameters are found from its values once every earlier column has updated
    // them: the group must lie inside one lazy block, so blocks hold whole groups (and whole
    // N:M groups). GPTQ's reference reads a group starting mid-block from the stale matrix;
    // this rule avoids that.
    let mut unit = if g < cols { g } else { 1 };
    if let Some((_, m)) = opts.nm {
        // An m that cannot divide cols is refused with the N:M checks below.
        if m >= 1 && m as usize <= cols {
            unit = lcm(unit, m as usize).unwrap_or(unit);
        }
    }
    let user_bs = match opts.block_size {
        None => 128usize.div_ceil(unit) * unit,
        Some(b) if b >= 1 => b as usize,
        Some(b) => bail!(InvalidArguments, "gptq: blockSize must be an integer >= 1, got {b}"),
    };
    if g < cols && !user_bs.is_multiple_of(g) {
        bail!(InvalidArguments, "gptq: blockSize ({user_bs}) must be a multiple of group ({g}) so that every group lies in one block");
    }
    let pd = opts.perc_damp.unwrap_or(0.01);
    if !(pd.is_finite() && pd >= 0.0) {
        bail!(InvalidArguments, "gptq: percDamp must be finite and >= 0, got {pd}");
    }
    let act_order = opts.act_order.unwrap_or(false);
    let static_groups = opts.static_groups.unwrap_or(act_order);
    if act_order && !static_groups {
        bail!(InvalidArguments, "gptq: actOrder needs static groups (staticGroups: false would scatter each group over the processing order, a layout the writers do not store)");
    }
    if act_order && (opts.sparsity.is_some() || opts.nm.is_some()) {
        bail!(
            InvalidArguments,
            "gptq: actOrder applies to quantization alone or with a keep-mask; sparsity and nm select in the original column order"
        );
    }
    let select = parse_select("gptq", opts.sparsity, opts.nm, opts.keep.as_deref(), rows, cols, user_bs)?;
    let spec = Spec {
        what: "gptq",
        select,
        grid: Some(grid),
        bs: user_bs.min(cols.max(1)),
        perc_damp: pd,
        act_order,
        static_groups,
        scale_search: opts.scale_search.unwrap_or(false),
    };
    let s = solve(w, h, &spec, rows, cols, s0, s1)?;
    Ok(Quantized { codes: s.codes, scales: s.scales, zeros: (!grid.sym).then_some(s.zeros), group: g, keep: select.map(|_| s.mask) })
}

/// Least common multiple, `None` on overflow.
fn lcm(a: usize, b: usize) -> Option<usize> {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    (a / x).checked_mul(b)
}
