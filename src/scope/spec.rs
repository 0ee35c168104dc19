//! `ScopeSpec` and `ScopeCoupling`: groups of blocks that compete (after sparsekit's scopes, docs/API.md).
//!
//! A scope is a sub-grid of `scope_shape` blocks of a block node (a [`BlockSpec`] or a
//! [`BlockCoupling`]); pruning keeps the top `k` blocks of each scope by L2 norm. Inside a
//! scope, blocks are numbered row-major over the scope's block sub-grid; that number breaks ties
//! (the lower wins). A [`ScopeCoupling`] aligns several scope grids and lets the blocks of all
//! coupled scopes compete together, which is how model-wide ("global") pruning is expressed.

use super::select::{kth_best, top_k};
use crate::bail;
use crate::block::BlockCoupling;
use crate::block::{check_not_nan, keep_to_factors, threshold_keep, BlockSpec, Norm, SoftOptions};
use crate::core::alloc::try_collect;
use crate::core::error::Result;
use crate::core::shape::check_grid_len;
use crate::core::shape::{contiguous_strides, unravel};

/// What a scope groups: one block spec or a coupling of several.
#[derive(Debug, Clone)]
pub enum BlockNode {
    Spec(BlockSpec),
    Coupling(BlockCoupling),
}

/// Per-spec value arrays of a block node (one for a spec, one per spec for a coupling).
pub type NodeValues<'a> = Option<&'a [&'a [f32]]>;

impl BlockNode {
    pub fn grid_shape(&self) -> &[usize] {
        match self {
            BlockNode::Spec(s) => s.grid_shape(),
            BlockNode::Coupling(c) => c.grid_shape(),
        }
    }
    pub fn numel_per_block(&self) -> usize {
        match self {
            BlockNode::Spec(s) => s.numel_per_block(),
            BlockNode::Coupling(c) => c.numel_per_block(),
        }
    }
    pub fn numblk(&self) -> usize {
        self.grid_shape().iter().product()
    }
    pub fn specs(&self) -> &[BlockSpec] {
        match self {
            BlockNode::Spec(s) => std::slice::from_ref(s),
            BlockNode::Coupling(c) => c.specs(),
        }
    }

    fn single<'a>(values: NodeValues<'a>) -> Result<Option<&'a [f32]>> {
        match values {
            None => Ok(None),
            Some([v]) => Ok(Some(v)),
            Some(v) => bail!(ShapeMismatch, "values: a BlockSpec scope takes one array, got {}", v.len()),
        }
    }

    pub fn norms(&self, values: NodeValues) -> Result<Vec<f32>> {
        match self {
            BlockNode::Spec(s) => s.norms(Norm::L2, Self::single(values)?),
            BlockNode::Coupling(c) => c.norms(Norm::L2, values),
        }
    }

    pub fn check_writable(&self) -> Result<()> {
        self.specs().iter().try_for_each(|s| s.view().check_writable())
    }

    /// Applies per-block factors (validated by the caller).
    pub(crate) fn scale_unchecked(&self, f: &[f32]) {
        match self {
            BlockNode::Spec(s) => s.scale_unchecked(f),
            BlockNode::Coupling(c) => c.apply_multiplier(f).expect("validated by caller"),
        }
    }

    pub fn apply_mask(&self, keep: &[u8]) -> Result<()> {
        match self {
            BlockNode::Spec(s) => s.apply_mask(keep),
            BlockNode::Coupling(c) => c.apply_mask(keep),
        }
    }

    pub fn soft_threshold(&self, t: &[f32], conditioners: NodeValues, opts: SoftOptions) -> Result<()> {
        match self {
            BlockNode::Spec(s) => s.soft_threshold(t, Self::single(conditioners)?, opts),
            BlockNode::Coupling(c) => c.soft_threshold(t, conditioners, opts),
        }
    }

    /// Validates what `soft_threshold` would check, without writing (for multi-scope calls).
    pub fn check_soft_inputs(&self, conditioners: NodeValues, opts: SoftOptions) -> Result<()> {
        opts.validate()?;
        self.check_writable()?;
        if let Some(c) = conditioners {
            if c.len() != self.specs().len() {
                bail!(ShapeMismatch, "conditioners: expected {} arrays, got {}", self.specs().len(), c.len());
            }
            for (s, v) in self.specs().iter().zip(c) {
                s.source(v, "conditioners")?;
            }
        }
        Ok(())
    }

    pub fn get_masks(&self, keep: &[u8]) -> Result<Vec<Vec<u8>>> {
        match self {
            BlockNode::Spec(s) => Ok(vec![s.get_masks(keep)?]),
            BlockNode::Coupling(c) => c.get_masks(keep),
        }
    }
}

/// How a hard threshold chooses what to prune (exactly one of `nnz`, `sparsity`, `thresholds`).
#[derive(Debug, Clone, Copy)]
pub enum HardBy<'a> {
    /// Keep the `nnz` largest blocks of every scope.
    Nnz(usize),
    /// Keep `sparsity_to_nnz(s)` blocks of every scope.
    Sparsity(f64),
    /// Prune blocks whose norm is below their scope's threshold (scope-grid shaped).
    Thresholds(&'a [f32]),
}

impl<'a> HardBy<'a> {
    /// Builds the choice from the options of `hardThreshold` (docs/API.md): exactly one of `thresholds`, `nnz`
    /// and `sparsity` must be given (`invalid_arguments` otherwise). `nnz` arrives as a number
    /// (JS) and must be a non-negative integer (`invalid_nnz`); its upper bound is checked by the
    /// call, which knows the scope size.
    pub fn from_args(thresholds: Option<&'a [f32]>, nnz: Option<f64>, sparsity: Option<f64>) -> Result<HardBy<'a>> {
        match (thresholds, nnz, sparsity) {
            (Some(t), None, None) => Ok(HardBy::Thresholds(t)),
            (None, Some(k), None) => Ok(HardBy::Nnz(nnz_from_f64(k)?)),
            (None, None, Some(s)) => Ok(HardBy::Sparsity(s)),
            _ => bail!(InvalidArguments, "exactly one of thresholds, nnz and sparsity must be given"),
        }
    }
}

/// A block count given as a number: a non-negative integer (`invalid_nnz` otherwise).
pub fn nnz_from_f64(k: f64) -> Result<usize> {
    if !(k.is_finite() && k >= 0.0 && k.fract() == 0.0 && k <= usize::MAX as f64) {
        bail!(InvalidNnz, "nnz must be a non-negative integer, got {k}");
    }
    Ok(k as usize)
}

/// `floor((1 - s) * n + 0.5)` in f64 (round half up), clamped to `[0, n]`; `s` in [0, 1].
pub fn sparsity_to_nnz(s: f64, n: usize) -> Result<usize> {
    if !(0.0..=1.0).contains(&s) {
        bail!(InvalidSparsity, "sparsity must be in [0, 1], got {s}");
    }
    Ok(((1.0 - s) * n as f64 + 0.5).floor().clamp(0.0, n as f64) as usize)
}

#[derive(Debug, Clone)]
pub struct ScopeSpec {
    pub(super) block: BlockNode,
    shape: Vec<usize>,
    grid: Vec<usize>,
    /// `members[g * nps + j]`: flat block index of in-scope block `j` of scope `g`.
    members: Vec<usize>,
    name: Option<String>,
}

impl ScopeSpec {
    /// `shape` counts blocks per scope; `-1` spans a dimension, `[]` is one scope for the grid.
    pub fn new(block: BlockNode, shape: &[i64], name: Option<String>) -> Result<ScopeSpec> {
        let bg = block.grid_shape().to_vec();
        let shape: Vec<usize> = if shape.is_empty() {
            bg.clone()
        } else {
            if shape.len() != bg.len() {
                bail!(ScopeRankMismatch, "scope shape {shape:?} has {} dims but the block grid {bg:?} has {}", shape.len(), bg.len());
            }
            shape
                .iter()
                .zip(&bg)
                .enumerate()
                .map(|(d, (&s, &b))| {
                    let s = if s == -1 { b as i64 } else { s };
                    if s <= 0 && !(s == 0 && b == 0) {
                        bail!(InvalidScopeShape, "scope shape[{d}] = {s} must be positive or -1");
                    }
                    let s = s as usize;
                    if s != 0 && b % s != 0 {
                        bail!(InvalidScopeShape, "dim {d}: block grid size {b} not divisible by scope shape {s}");
                    }
                    Ok(s)
                })
                .collect::<Result<_>>()?
        };
        // A zero-size grid dimension accepts any scope size (0 % s == 0): the blocks per scope
        // must still fit in usize.
        if shape.iter().try_fold(block.numel_per_block().max(1), |a, &s| a.checked_mul(s)).is_none() {
            bail!(InvalidScopeShape, "scope shape {shape:?} has more blocks than fit in memory");
        }
        let grid: Vec<usize> = bg.iter().zip(&shape).map(|(&b, &s)| b.checked_div(s).unwrap_or(0)).collect();
        let members = scope_members(&bg, &shape, &grid)?;
        Ok(ScopeSpec { block, shape, grid, members, name })
    }

    pub fn block(&self) -> &BlockNode {
        &self.block
    }
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    pub fn scope_shape(&self) -> &[usize] {
        &self.shape
    }
    pub fn grid_shape(&self) -> &[usize] {
        &self.grid
    }
    pub fn block_grid_shape(&self) -> &[usize] {
        self.block.grid_shape()
    }
    pub fn numblk_per_scope(&self) -> usize {
        self.shape.iter().product()
    }
    pub fn numel_per_scope(&self) -> usize {
        self.numblk_per_scope() * self.block.numel_per_block()
    }
    pub fn num_scopes(&self) -> usize {
        self.grid.iter().product()
    }
    pub fn sparsity_to_nnz(&self, s: f64) -> Result<usize> {
        sparsity_to_nnz(s, self.numblk_per_scope())
    }

    /// Block-grid values rearranged to `(*scope_grid, numblk_per_scope)`.
    pub fn block_to_scope<T: Copy>(&self, block_values: &[T]) -> Result<Vec<T>> {
        check_grid_len("block values", self.block.grid_shape(), block_values.len())?;
        Ok(self.members.iter().map(|&b| block_values[b]).collect())
    }

    /// Scope-layout values back to the block grid.
    pub(super) fn scope_to_block<T: Copy + Default>(&self, scoped: &[T]) -> Vec<T> {
        let mut out = vec![T::default(); scoped.len()];
        for (&b, &v) in self.members.iter().zip(scoped) {
            out[b] = v;
        }
        out
    }

    /// L2 norm of every block, laid out `(*grid_shape, numblk_per_scope)`.
    pub fn block_norms(&self, values: NodeValues) -> Result<Vec<f32>> {
        self.block_to_scope(&self.block.norms(values)?)
    }

    fn check_nnz(&self, nnz: usize) -> Result<()> {
        if nnz > self.numblk_per_scope() {
            bail!(InvalidNnz, "nnz must be in [0, {}] (blocks per scope), got {nnz}", self.numblk_per_scope());
        }
        Ok(())
    }

    /// Block keep-mask (block grid) of the `nnz` largest scores of every scope.
    pub fn topk_mask(&self, scores: &[f32], nnz: usize) -> Result<Vec<u8>> {
        self.check_nnz(nnz)?;
        let scoped = self.block_to_scope(scores)?;
        let nps = self.numblk_per_scope();
        let mut keep = vec![0u8; scoped.len()];
        let mut scratch = Vec::new();
        if nps > 0 {
            for (s, k) in scoped.chunks_exact(nps).zip(keep.chunks_exact_mut(nps)) {
                top_k(s, nnz, k, &mut scratch);
            }
        }
        Ok(self.scope_to_block(&keep))
    }

    /// The `nnz`-th largest block score of every scope (scope grid); `nnz = 0` gives +Infinity.
    pub fn kth_largest(&self, scores: &[f32], nnz: usize) -> Result<Vec<f32>> {
        self.kth_mid(scores, nnz, None)
    }

    /// A threshold between the `nnz`-th and `(nnz+1)`-th largest scores of every scope:
    /// `(w * v_k + v_{k+1}) / (w + 1)` with `w = k_weight` (`Some(1.0)` is the midpoint, larger
    /// weights move it toward `v_k`; `None` gives `v_k` itself). `v_0 = +Infinity`, and
    /// `v_{n+1} = 0` past the last block. Pruning `norm < threshold` with it keeps exactly the top
    /// `nnz` blocks when the scores are distinct.
    pub fn kth_mid(&self, scores: &[f32], nnz: usize, k_weight: Option<f64>) -> Result<Vec<f32>> {
        self.check_nnz(nnz)?;
        if let Some(w) = k_weight {
            if !(w.is_finite() && w >= 0.0) {
                bail!(InvalidValue, "kWeight must be a finite number >= 0, got {w}");
            }
        }
        let scoped = self.block_to_scope(scores)?;
        let nps = self.numblk_per_scope();
        let mut scratch = Vec::new();
        Ok(scoped
            .chunks_exact(nps.max(1))
            .map(|s| {
                let vk = kth_best(s, nnz, &mut scratch);
                match k_weight {
                    None => vk,
                    Some(w) => {
                        let next = if nnz < nps { kth_best(s, nnz + 1, &mut scratch) } else { 0.0 };
                        if vk.is_infinite() {
                            vk
                        } else {
                            ((w * vk as f64 + next as f64) / (w + 1.0)) as f32
                        }
                    }
                }
            })
            .collect())
    }

    /// Scope-grid values broadcast to the block grid.
    fn scope_to_blocks(&self, per_scope: &[f32]) -> Vec<f32> {
        let nps = self.numblk_per_scope();
        let mut out = vec![0.0f32; self.block.numblk()];
        for (i, &b) in self.members.iter().enumerate() {
            out[b] = per_scope[i / nps.max(1)];
        }
        out
    }

    /// Resolves `HardBy` to a block keep-mask, validating everything; writes nothing.
    pub(crate) fn hard_keep(&self, by: HardBy, values: NodeValues) -> Result<Vec<u8>> {
        match by {
            HardBy::Nnz(k) => {
                self.check_nnz(k)?;
                self.topk_mask(&self.block.norms(values)?, k)
            }
            HardBy::Sparsity(s) => self.topk_mask(&self.block.norms(values)?, self.sparsity_to_nnz(s)?),
            HardBy::Thresholds(t) => {
                check_grid_len("scope thresholds", &self.grid, t.len())?;
                check_not_nan("scope thresholds", t)?;
                let norms = self.block.norms(values)?;
                let f = threshold_keep(&norms, &self.scope_to_blocks(t));
                Ok(f.iter().map(|&x| (x != 0.0) as u8).collect())
            }
        }
    }

    /// Zeroes, in place, the blocks that lose in their scope.
    pub fn hard_threshold(&self, by: HardBy, values: NodeValues) -> Result<()> {
        let keep = self.hard_keep(by, values)?;
        self.block.check_writable()?;
        self.block.scale_unchecked(&keep_to_factors(&keep));
        Ok(())
    }

    /// Element keep-masks, one per block spec (view-shaped), of a block keep-mask.
    pub fn masks_from_block_mask(&self, keep: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.block.get_masks(keep)
    }

    /// Element keep-masks of the top-`nnz` selection by `scores` (block grid) or, when absent,
    /// by the L2 norms of `values` (default the weights).
    pub fn get_masks(&self, nnz: usize, values: NodeValues, scores: Option<&[f32]>) -> Result<Vec<Vec<u8>>> {
        self.check_nnz(nnz)?;
        let keep = match scores {
            Some(s) => self.topk_mask(s, nnz)?,
            None => self.topk_mask(&self.block.norms(values)?, nnz)?,
        };
        self.block.get_masks(&keep)
    }

    fn soft_block_thresholds(&self, t: &[f32], scale: bool) -> Result<Vec<f32>> {
        check_grid_len("scope thresholds", &self.grid, t.len())?;
        check_not_nan("scope thresholds", t)?;
        let f = if scale { (self.block.numel_per_block() as f64).sqrt() as f32 } else { 1.0 };
        let scaled: Vec<f32> = t.iter().map(|x| x * f).collect();
        Ok(self.scope_to_blocks(&scaled))
    }

    /// Soft threshold with one threshold per scope (× √numel_per_block when `scale`).
    pub fn soft_threshold(&self, t: &[f32], conditioners: NodeValues, scale: bool, opts: SoftOptions) -> Result<()> {
        let bt = self.soft_block_thresholds(t, scale)?;
        self.block.soft_threshold(&bt, conditioners, opts)
    }
}

/// `members[g * nps + j]` for a block grid `bg` cut into scopes of `shape` (scope grid `grid`).
fn scope_members(bg: &[usize], shape: &[usize], grid: &[usize]) -> Result<Vec<usize>> {
    let n: usize = bg.iter().product();
    let nps: usize = shape.iter().product();
    let bstride = contiguous_strides(bg);
    let nd = bg.len();
    let (mut gi, mut ji) = (vec![0; nd], vec![0; nd]);
    try_collect((0..n).map(|i| {
        let (g, j) = (i / nps.max(1), i % nps.max(1));
        unravel(g, grid, &mut gi);
        unravel(j, shape, &mut ji);
        (0..nd).map(|d| (gi[d] * shape[d] + ji[d]) * bstride[d]).sum()
    }))
}
