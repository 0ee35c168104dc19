//! `BlockCoupling`: several block specs whose grids, once permuted by `orders`, coincide, and
//! whose aligned blocks are pruned together as one (after sparsekit's `BlockCoupling`, docs/API.md).
//!
//! The aligned grid is spec 0's grid permuted by `orders[0]`. Spec `i` sees an aligned-grid
//! tensor `T` as `T.permute(inverse(order_i))`, precomputed here as an index map so that
//! nothing is ever physically permuted.

use super::align::Alignment;
use super::prox::{self, Bracket, Part};
use super::spec::{check_not_nan, euclid_factors, keep_to_factors, threshold_keep, BlockSpec, Norm, SoftOptions};
use crate::bail;
use crate::core::error::Result;
use crate::core::shape::check_grid_len;
use crate::kernels::Reduction;

#[derive(Debug, Clone)]
pub struct BlockCoupling {
    specs: Vec<BlockSpec>,
    orders: Vec<Vec<usize>>,
    grid: Vec<usize>,
    /// `maps[i][a]`: spec `i`'s flat grid index of aligned flat index `a`.
    maps: Vec<Vec<usize>>,
    name: Option<String>,
}

impl BlockCoupling {
    /// `orders` empty means identity for every spec.
    pub fn new(specs: Vec<BlockSpec>, orders: &[Vec<i64>], name: Option<String>) -> Result<BlockCoupling> {
        if specs.is_empty() {
            bail!(InvalidArguments, "BlockCoupling needs at least one BlockSpec");
        }
        let grids: Vec<&[usize]> = specs.iter().map(|s| s.grid_shape()).collect();
        let labels: Vec<String> = specs.iter().map(|s| format!("spec {}", s.name().unwrap_or("<unnamed>"))).collect();
        let aligned = Alignment::new(orders, &grids, &labels, "block")?;
        let (orders, grid, maps) = (aligned.orders, aligned.grid, aligned.maps);
        // As for one BlockSpec (zero-size dimensions accept any block size), the joint block's
        // element count and the coupling's must fit in usize: every sum over the specs relies on it.
        let per_block = specs.iter().try_fold(0usize, |a, s| a.checked_add(s.numel_per_block()));
        let numblk = grid.iter().try_fold(1usize, |a, &g| a.checked_mul(g));
        if per_block.zip(numblk).and_then(|(p, n)| p.checked_mul(n)).is_none() {
            bail!(InvalidBlockShape, "BlockCoupling: the joint block of {} specs has more elements than fit in memory", specs.len());
        }
        Ok(BlockCoupling { specs, orders, grid, maps, name })
    }

    pub fn specs(&self) -> &[BlockSpec] {
        &self.specs
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
    pub fn numblk(&self) -> usize {
        self.grid.iter().product()
    }
    /// Elements per joint block: the sum over the specs.
    pub fn numel_per_block(&self) -> usize {
        self.specs.iter().map(|s| s.numel_per_block()).sum()
    }
    pub fn numel(&self) -> usize {
        self.numblk() * self.numel_per_block()
    }
    /// Elements of all coupled views with `|x| > eps` (NaN `eps` refused).
    pub fn nnz(&self, eps: f64) -> Result<usize> {
        self.specs.iter().map(|s| s.nnz(eps)).sum()
    }

    fn check_values<'a>(&self, values: Option<&'a [&'a [f32]]>) -> Result<Vec<Option<&'a [f32]>>> {
        match values {
            None => Ok(vec![None; self.specs.len()]),
            Some(v) if v.len() == self.specs.len() => Ok(v.iter().map(|s| Some(*s)).collect()),
            Some(v) => bail!(ShapeMismatch, "values: expected one array per spec ({}), got {}", self.specs.len(), v.len()),
        }
    }

    /// Joint reduction over the concatenated blocks, on the aligned grid.
    pub(crate) fn reduce(&self, op: Reduction, values: Option<&[&[f32]]>) -> Result<Vec<f32>> {
        let vals = self.check_values(values)?;
        let mut acc = vec![op.identity(); self.numblk()];
        for ((s, v), map) in self.specs.iter().zip(vals).zip(&self.maps) {
            let r = s.reduce(op, v)?;
            for (a, &m) in acc.iter_mut().zip(map) {
                *a = op.combine(*a, r[m]);
            }
        }
        Ok(acc)
    }

    pub fn norms(&self, p: Norm, values: Option<&[&[f32]]>) -> Result<Vec<f32>> {
        let mut acc = self.reduce(p.reduction(), values)?;
        p.finish(&mut acc);
        Ok(acc)
    }
    pub fn min(&self, values: Option<&[&[f32]]>) -> Result<Vec<f32>> {
        self.reduce(Reduction::Min, values)
    }
    pub fn max(&self, values: Option<&[&[f32]]>) -> Result<Vec<f32>> {
        self.reduce(Reduction::Max, values)
    }

    /// An aligned-grid array as spec `i` sees it (its own grid, row-major).
    pub(crate) fn to_spec<T: Copy + Default>(&self, i: usize, aligned: &[T]) -> Vec<T> {
        let mut out = vec![T::default(); aligned.len()];
        for (a, &m) in self.maps[i].iter().enumerate() {
            out[m] = aligned[a];
        }
        out
    }

    fn check_writable(&self) -> Result<()> {
        self.specs.iter().try_for_each(|s| s.view().check_writable())
    }

    /// Writes aligned per-block factors to every spec (validated by the caller).
    fn scale_unchecked(&self, m: &[f32]) {
        for (i, s) in self.specs.iter().enumerate() {
            s.scale_unchecked(&self.to_spec(i, m));
        }
    }

    pub fn apply_multiplier(&self, m: &[f32]) -> Result<()> {
        check_grid_len("multiplier", &self.grid, m.len())?;
        self.check_writable()?;
        self.scale_unchecked(m);
        Ok(())
    }

    pub fn apply_mask(&self, keep: &[u8]) -> Result<()> {
        check_grid_len("keep mask", &self.grid, keep.len())?;
        self.apply_multiplier(&keep_to_factors(keep))
    }

    pub fn hard_threshold(&self, thresholds: &[f32], values: Option<&[&[f32]]>) -> Result<()> {
        check_grid_len("thresholds", &self.grid, thresholds.len())?;
        check_not_nan("thresholds", thresholds)?;
        self.check_writable()?;
        let norms = self.norms(Norm::L2, values)?;
        self.scale_unchecked(&threshold_keep(&norms, thresholds));
        Ok(())
    }

    /// Joint proximal step. Conditioners: one per spec, each in its param's layout or view-shaped.
    pub fn soft_threshold(&self, thresholds: &[f32], conditioners: Option<&[&[f32]]>, opts: SoftOptions) -> Result<()> {
        check_grid_len("block_thresholds", &self.grid, thresholds.len())?;
        check_not_nan("block_thresholds", thresholds)?;
        let eps = opts.validate()?;
        let conds = self.check_values(conditioners)?;
        self.check_writable()?;
        if conditioners.is_none() {
            let norms = self.norms(Norm::L2, None)?;
            self.scale_unchecked(&euclid_factors(&norms, thresholds, eps));
            return Ok(());
        }
        let sources =
            self.specs.iter().zip(&conds).map(|(s, c)| s.source(c.expect("checked"), "conditioners")).collect::<Result<Vec<_>>>()?;
        let (mu, keep) = {
            let datas: Vec<_> = self.specs.iter().map(|s| s.view().param().data()).collect();
            let parts: Vec<Part> = self
                .specs
                .iter()
                .zip(&sources)
                .zip(&datas)
                .zip(&self.maps)
                .map(|(((s, h), x), map)| Part {
                    tiling: s.tiling(),
                    x_layout: s.view().layout(),
                    x,
                    h_layout: &h.layout,
                    h: h.data,
                    map: Some(map),
                })
                .collect();
            prox::solve(&parts, thresholds, opts.max_iter, opts.atol, eps, Bracket::Coupling, opts.method)?
        };
        for (i, (s, h)) in self.specs.iter().zip(&sources).enumerate() {
            let mu_s = self.to_spec(i, &mu);
            let mut data = s.view().param().data_mut();
            // The definition: data <- data * H / (H + mu).
            s.tiling().map_with(s.view().layout(), &mut data, &h.layout, h.data, &mu_s, prox::scaled_coupling);
        }
        self.scale_unchecked(&keep);
        Ok(())
    }

    /// One element-level keep-mask per spec (view-shaped), from an aligned block keep-mask.
    pub fn get_masks(&self, keep: &[u8]) -> Result<Vec<Vec<u8>>> {
        check_grid_len("keep mask", &self.grid, keep.len())?;
        (0..self.specs.len()).map(|i| self.specs[i].get_masks(&self.to_spec(i, keep))).collect()
    }

    /// The merged block view of every spec, permuted to the aligned grid and concatenated
    /// along the last axis: `(*grid, numel_per_block)`.
    pub fn block_view(&self, values: Option<&[&[f32]]>) -> Result<(Vec<f32>, Vec<usize>)> {
        let vals = self.check_values(values)?;
        let merged: Vec<(Vec<f32>, usize)> = self
            .specs
            .iter()
            .zip(vals)
            .map(|(s, v)| s.block_view(v, true, true).map(|(d, _)| (d, s.numel_per_block())))
            .collect::<Result<_>>()?;
        let npb = self.numel_per_block();
        let mut out = Vec::with_capacity(self.numblk() * npb);
        for a in 0..self.numblk() {
            for ((d, n), map) in merged.iter().zip(&self.maps) {
                out.extend_from_slice(&d[map[a] * n..(map[a] + 1) * n]);
            }
        }
        let mut shape = self.grid.clone();
        shape.push(npb);
        Ok((out, shape))
    }
}
