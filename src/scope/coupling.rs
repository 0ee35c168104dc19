//! `ScopeCoupling`: scopes of several specs competing together (one top-k across all of them),
//! aligned by axis orders like a block coupling.

//! `ScopeSpec` and `ScopeCoupling`: groups of blocks that compete (after sparsekit's scopes, docs/API.md).
//!
//! A scope is a sub-grid of `scope_shape` blocks of a block node (a [`BlockSpec`] or a
//! [`BlockCoupling`]); pruning keeps the top `k` blocks of each scope by L2 norm. Inside a
//! scope, blocks are numbered row-major over the scope's block sub-grid; that number breaks ties
//! (the lower wins). A [`ScopeCoupling`] aligns several scope grids and lets the blocks of all
//! coupled scopes compete together, which is how model-wide ("global") pruning is expressed.

use super::select::top_k;
use super::spec::{sparsity_to_nnz, HardBy, NodeValues, ScopeSpec};
use crate::bail;
use crate::block::Alignment;
use crate::block::{check_not_nan, keep_to_factors, SoftOptions};
use crate::core::error::Result;
use crate::core::shape::check_grid_len;

/// Several scope specs whose scope grids, permuted by `orders`, coincide; the blocks of all
/// coupled scopes compete together.
#[derive(Debug, Clone)]
pub struct ScopeCoupling {
    scopes: Vec<ScopeSpec>,
    orders: Vec<Vec<usize>>,
    grid: Vec<usize>,
    /// `maps[i][a]`: scope `i`'s flat scope index of aligned scope `a`.
    maps: Vec<Vec<usize>>,
    name: Option<String>,
}

/// Values of a scope coupling: per scope, its node's values.
pub type CouplingValues<'a> = Option<&'a [&'a [&'a [f32]]]>;

impl ScopeCoupling {
    pub fn new(scopes: Vec<ScopeSpec>, orders: &[Vec<i64>], name: Option<String>) -> Result<ScopeCoupling> {
        if scopes.is_empty() {
            bail!(InvalidArguments, "ScopeCoupling needs at least one ScopeSpec");
        }
        if scopes.iter().try_fold(0usize, |a, s| a.checked_add(s.numel_per_scope())).is_none() {
            bail!(InvalidScopeShape, "the coupled scopes have more blocks than fit in memory");
        }
        let grids: Vec<&[usize]> = scopes.iter().map(|s| s.grid_shape()).collect();
        let labels: Vec<String> = (0..scopes.len()).map(|i| format!("scope {i}")).collect();
        let aligned = Alignment::new(orders, &grids, &labels, "scope")?;
        let (orders, grid, maps) = (aligned.orders, aligned.grid, aligned.maps);
        Ok(ScopeCoupling { scopes, orders, grid, maps, name })
    }

    pub fn scopes(&self) -> &[ScopeSpec] {
        &self.scopes
    }
    pub fn orders(&self) -> &[Vec<usize>] {
        &self.orders
    }
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    pub fn grid_shape(&self) -> &[usize] {
        &self.grid
    }
    pub fn numblk_per_scope(&self) -> usize {
        self.scopes.iter().map(|s| s.numblk_per_scope()).sum()
    }
    pub fn numel_per_scope(&self) -> usize {
        self.scopes.iter().map(|s| s.numel_per_scope()).sum()
    }
    pub fn num_scopes(&self) -> usize {
        self.grid.iter().product()
    }
    pub fn sparsity_to_nnz(&self, s: f64) -> Result<usize> {
        sparsity_to_nnz(s, self.numblk_per_scope())
    }

    fn per_scope<'a>(&self, values: CouplingValues<'a>) -> Result<Vec<NodeValues<'a>>> {
        match values {
            None => Ok(vec![None; self.scopes.len()]),
            Some(v) if v.len() == self.scopes.len() => Ok(v.iter().map(|x| Some(*x)).collect()),
            Some(v) => bail!(ShapeMismatch, "values: expected one entry per scope ({}), got {}", self.scopes.len(), v.len()),
        }
    }

    /// Aligned scope-grid values as scope `i`'s own scope grid.
    fn to_scope(&self, i: usize, aligned: &[f32]) -> Vec<f32> {
        let mut out = vec![0.0; aligned.len()];
        for (a, &m) in self.maps[i].iter().enumerate() {
            out[m] = aligned[a];
        }
        out
    }

    /// `(*grid, sum numblk_per_scope)`: every scope's block norms, permuted and concatenated.
    pub fn block_norms(&self, values: CouplingValues) -> Result<Vec<f32>> {
        let vals = self.per_scope(values)?;
        let per: Vec<Vec<f32>> = self.scopes.iter().zip(vals).map(|(s, v)| s.block_norms(v)).collect::<Result<_>>()?;
        Ok(self.concat(&per))
    }

    fn concat(&self, per: &[Vec<f32>]) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.num_scopes() * self.numblk_per_scope());
        for a in 0..self.num_scopes() {
            for ((s, p), map) in self.scopes.iter().zip(per).zip(&self.maps) {
                let n = s.numblk_per_scope();
                out.extend_from_slice(&p[map[a] * n..(map[a] + 1) * n]);
            }
        }
        out
    }

    /// Per scope: the block keep-mask (its block grid) of a joint top-`nnz` by `scores`
    /// (the concatenated `(*grid, numblk)` layout).
    fn joint_topk(&self, scores: &[f32], nnz: usize) -> Result<Vec<Vec<u8>>> {
        let total = self.numblk_per_scope();
        if nnz > total {
            bail!(InvalidNnz, "nnz must be in [0, {total}] (blocks per coupled scope), got {nnz}");
        }
        let mut keep = vec![0u8; scores.len()];
        let mut scratch = Vec::new();
        if total > 0 {
            for (s, k) in scores.chunks_exact(total).zip(keep.chunks_exact_mut(total)) {
                top_k(s, nnz, k, &mut scratch);
            }
        }
        // Split the concatenation back into each scope's own (scope, in-scope) layout.
        let mut per: Vec<Vec<u8>> = self.scopes.iter().map(|s| vec![0u8; s.num_scopes() * s.numblk_per_scope()]).collect();
        let mut pos = 0;
        for a in 0..self.num_scopes() {
            for ((s, p), map) in self.scopes.iter().zip(per.iter_mut()).zip(&self.maps) {
                let n = s.numblk_per_scope();
                p[map[a] * n..(map[a] + 1) * n].copy_from_slice(&keep[pos..pos + n]);
                pos += n;
            }
        }
        Ok(self.scopes.iter().zip(per).map(|(s, p)| s.scope_to_block(&p)).collect())
    }

    fn hard_keeps(&self, by: HardBy, values: CouplingValues) -> Result<Vec<Vec<u8>>> {
        match by {
            HardBy::Nnz(k) => self.joint_topk(&self.block_norms(values)?, k),
            HardBy::Sparsity(s) => {
                let k = self.sparsity_to_nnz(s)?;
                self.joint_topk(&self.block_norms(values)?, k)
            }
            HardBy::Thresholds(t) => {
                check_grid_len("scope thresholds", &self.grid, t.len())?;
                let vals = self.per_scope(values)?;
                self.scopes
                    .iter()
                    .zip(vals)
                    .enumerate()
                    .map(|(i, (s, v))| s.hard_keep(HardBy::Thresholds(&self.to_scope(i, t)), v))
                    .collect()
            }
        }
    }

    /// Joint hard threshold: all decisions are made (and validated) before the first write.
    pub fn hard_threshold(&self, by: HardBy, values: CouplingValues, progress: &mut dyn FnMut(usize, usize)) -> Result<()> {
        let keeps = self.hard_keeps(by, values)?;
        self.scopes.iter().try_for_each(|s| s.block.check_writable())?;
        let n = self.scopes.len();
        for (i, (s, k)) in self.scopes.iter().zip(keeps).enumerate() {
            s.block.scale_unchecked(&keep_to_factors(&k));
            progress(i + 1, n);
        }
        Ok(())
    }

    /// Element keep-masks of every block spec, in scope order then spec order.
    /// `progress(done, total)` is called after each scope's masks.
    pub fn get_masks(&self, by: HardBy, values: CouplingValues, progress: &mut dyn FnMut(usize, usize)) -> Result<Vec<Vec<u8>>> {
        let keeps = self.hard_keeps(by, values)?;
        let mut out = Vec::new();
        let n = self.scopes.len();
        for (i, (s, k)) in self.scopes.iter().zip(keeps).enumerate() {
            out.extend(s.block.get_masks(&k)?);
            progress(i + 1, n);
        }
        Ok(out)
    }

    /// Every scope soft-thresholded with its permuted thresholds (validated for all scopes
    /// before the first write).
    pub fn soft_threshold(
        &self,
        t: &[f32],
        conditioners: CouplingValues,
        scale: bool,
        opts: SoftOptions,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<()> {
        check_grid_len("scope thresholds", &self.grid, t.len())?;
        check_not_nan("scope thresholds", t)?;
        let conds = self.per_scope(conditioners)?;
        for (s, c) in self.scopes.iter().zip(&conds) {
            s.block.check_soft_inputs(*c, opts)?;
        }
        let n = self.scopes.len();
        for (i, (s, c)) in self.scopes.iter().zip(conds).enumerate() {
            s.soft_threshold(&self.to_scope(i, t), c, scale, opts)?;
            progress(i + 1, n);
        }
        Ok(())
    }
}
