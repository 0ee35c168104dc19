//! `BlockSpec`: a view seen as a grid of equal blocks (after sparsekit's `BlockSpec`, docs/API.md).
//!
//! Reductions read either the weights or caller-supplied `values` of the same tensor (gradients,
//! Adam state...), given in the param's storage layout or, when the length differs, in the
//! view's own row-major layout. Every in-place operation validates all its inputs before the
//! first write.

use super::prox::{self, Bracket, Part};
use super::root::Method;
use super::view::{block_view_of, View};
use crate::bail;
use crate::core::error::{Error, Result};
use crate::core::shape::check_grid_len;
use crate::kernels::{nan_max, Reduction};
use crate::layout::{normalize_block_shape, Strided, Tiling};

/// `torch.finfo(float32).eps`, the default `eps` of docs/API.md's soft threshold.
pub const F32_EPS: f32 = f32::EPSILON;

/// The block norm orders the library supports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Norm {
    L1,
    L2,
    Inf,
}

impl Norm {
    /// `1`, `2` or `Infinity` (as JS numbers arrive).
    pub fn from_p(p: f64) -> Result<Norm> {
        if p == 1.0 {
            Ok(Norm::L1)
        } else if p == 2.0 {
            Ok(Norm::L2)
        } else if p == f64::INFINITY {
            Ok(Norm::Inf)
        } else {
            bail!(InvalidArguments, "norm order p must be 1, 2 or Infinity, got {p}")
        }
    }

    pub(crate) fn reduction(self) -> Reduction {
        match self {
            Norm::L1 => Reduction::SumAbs,
            Norm::L2 => Reduction::SumSq,
            Norm::Inf => Reduction::MaxAbs,
        }
    }

    /// Turns the accumulated reduction into the norm.
    pub(crate) fn finish(self, acc: &mut [f32]) {
        if self == Norm::L2 {
            // In parallel slices with threads: otherwise the norms' only sequential pass.
            let chunk = crate::kernels::par::run_len(acc.len(), 1 << 16);
            crate::kernels::par::map_chunks_mut(acc, chunk, |_, c| c.iter_mut().for_each(|a| *a = a.sqrt()));
        }
    }
}

/// Options of the soft threshold (defaults of docs/API.md: 20 iterations, `atol = 1e-8`, `eps` = f32 eps;
/// `method` picks the root finder of the Adam-conditioned step, Newton by default).
#[derive(Debug, Clone, Copy)]
pub struct SoftOptions {
    pub max_iter: usize,
    pub atol: f32,
    pub eps: Option<f32>,
    pub method: Method,
}

impl Default for SoftOptions {
    fn default() -> Self {
        SoftOptions { max_iter: 20, atol: 1e-8, eps: None, method: Method::Newton }
    }
}

impl SoftOptions {
    /// Options as JS values: `max_iter` an integer in [0, 1e6], `atol` >= 0, `eps` >= 0 (NaN
    /// refused everywhere), `method` `'newton'` or `'bisection'`; `None` keeps the default.
    pub fn new(max_iter: Option<f64>, atol: Option<f64>, eps: Option<f64>, method: Option<&str>) -> Result<SoftOptions> {
        let mut o = SoftOptions::default();
        if let Some(m) = method {
            o.method = Method::parse(m)?;
        }
        if let Some(m) = max_iter {
            if !(m.is_finite() && m >= 0.0 && m.fract() == 0.0 && m <= 1e6) {
                bail!(InvalidArguments, "maxIter must be an integer in [0, 1e6], got {m}");
            }
            o.max_iter = m as usize;
        }
        if let Some(a) = atol {
            if a.is_nan() || a < 0.0 {
                bail!(InvalidArguments, "atol must be >= 0, got {a}");
            }
            o.atol = a as f32;
        }
        if let Some(e) = eps {
            if e.is_nan() || e < 0.0 {
                bail!(InvalidEps, "eps must be >= 0, got {e}");
            }
            o.eps = Some(e as f32);
        }
        Ok(o)
    }

    /// The effective `eps`, refusing negative or NaN values.
    pub fn resolved_eps(&self) -> Result<f32> {
        match self.eps {
            None => Ok(F32_EPS),
            Some(e) if e >= 0.0 => Ok(e),
            Some(e) => bail!(InvalidEps, "eps must be >= 0, got {e}"),
        }
    }

    pub(crate) fn validate(&self) -> Result<f32> {
        if self.atol.is_nan() {
            bail!(InvalidValue, "atol must be a number, got NaN");
        }
        self.resolved_eps()
    }
}

#[derive(Debug, Clone)]
pub struct BlockSpec {
    view: View,
    tiling: Tiling,
    name: Option<String>,
}

/// Values resolved to a layout: the slice and how the view's indices map into it.
pub(crate) struct Source<'a> {
    pub layout: Strided,
    pub data: &'a [f32],
}

impl BlockSpec {
    pub fn new(view: View, block: &[i64], name: Option<String>) -> Result<BlockSpec> {
        let label = name.clone().unwrap_or_else(|| "BlockSpec".into());
        let b = normalize_block_shape(view.shape(), block, &label)?;
        let tiling = Tiling::new(view.shape(), &b);
        Ok(BlockSpec { view, tiling, name })
    }

    pub fn view(&self) -> &View {
        &self.view
    }
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    /// The normalised block shape.
    pub fn shape(&self) -> &[usize] {
        &self.tiling.block
    }
    pub fn grid_shape(&self) -> &[usize] {
        &self.tiling.grid
    }
    pub fn tiling(&self) -> &Tiling {
        &self.tiling
    }
    pub fn numblk(&self) -> usize {
        self.tiling.numblk()
    }
    pub fn numel_per_block(&self) -> usize {
        self.tiling.numel_per_block()
    }
    pub fn numel(&self) -> usize {
        self.numblk() * self.numel_per_block()
    }

    /// Elements of the view with `|x| > eps`. A NaN `eps` would silently count nothing, so it
    /// is refused (`invalid_eps`).
    pub fn nnz(&self, eps: f64) -> Result<usize> {
        if eps.is_nan() {
            bail!(InvalidEps, "nnz: eps must be a number, got NaN");
        }
        let data = self.view.param().data();
        let mut n = 0;
        crate::layout::for_each_offset(self.view.layout(), |o| n += ((data[o].abs() as f64) > eps) as usize);
        Ok(n)
    }

    /// Resolves `values` (param layout, or view layout when the length differs) against this
    /// spec's view. `None` is handled by the callers (it means the weights).
    pub(crate) fn source<'a>(&self, values: &'a [f32], what: &str) -> Result<Source<'a>> {
        if values.len() == self.view.param().numel() {
            Ok(Source { layout: self.view.layout().clone(), data: values })
        } else if values.len() == self.view.numel() {
            Ok(Source { layout: Strided::contiguous(self.view.shape()), data: values })
        } else {
            Err(Error::new(
                crate::core::error::ErrorKind::ShapeMismatch,
                format!(
                    "{what}: expected {} elements (the param {:?}, read through the view) or {} (view-shaped {:?}), got {}",
                    self.view.param().numel(),
                    self.view.param().shape(),
                    self.view.numel(),
                    self.view.shape(),
                    values.len()
                ),
            ))
        }
    }

    /// Raw block reduction (sums not yet square-rooted) over the weights or `values`.
    pub(crate) fn reduce(&self, op: Reduction, values: Option<&[f32]>) -> Result<Vec<f32>> {
        match values {
            None => View::reduce_blocks(&self.tiling, self.view.layout(), &self.view.param().data(), op),
            Some(v) => {
                let s = self.source(v, "values")?;
                View::reduce_blocks(&self.tiling, &s.layout, s.data, op)
            }
        }
    }

    /// Lp norm of every block (grid-shaped, row-major).
    pub fn norms(&self, p: Norm, values: Option<&[f32]>) -> Result<Vec<f32>> {
        // The square roots are taken by the reduction's own tasks, on their slabs: one parallel
        // region and no second pass over the result.
        let finish = |acc: &mut [f32]| {
            if p == Norm::L2 {
                acc.iter_mut().for_each(|a| *a = a.sqrt());
            }
        };
        match values {
            None => self.tiling.reduce_blocks(self.view.layout(), &self.view.param().data(), p.reduction(), finish),
            Some(v) => {
                let s = self.source(v, "values")?;
                self.tiling.reduce_blocks(&s.layout, s.data, p.reduction(), finish)
            }
        }
    }

    pub fn min(&self, values: Option<&[f32]>) -> Result<Vec<f32>> {
        self.reduce(Reduction::Min, values)
    }

    pub fn max(&self, values: Option<&[f32]>) -> Result<Vec<f32>> {
        self.reduce(Reduction::Max, values)
    }

    /// In-place: every block times its grid value.
    pub fn apply_multiplier(&self, m: &[f32]) -> Result<()> {
        check_grid_len("multiplier", self.grid_shape(), m.len())?;
        self.view.check_writable()?;
        self.scale_unchecked(m);
        Ok(())
    }

    /// Writes without validation; callers have validated `m` and writability.
    pub(crate) fn scale_unchecked(&self, m: &[f32]) {
        self.tiling.scale(self.view.layout(), &mut self.view.param().data_mut(), m);
    }

    /// In-place: zeroes the blocks whose keep-mask entry is 0 (multiplying, as docs/API.md says masks are applied:
    /// a pruned `-x` becomes `-0.0`, a pruned NaN stays NaN).
    pub fn apply_mask(&self, keep: &[u8]) -> Result<()> {
        check_grid_len("keep mask", self.grid_shape(), keep.len())?;
        self.apply_multiplier(&keep_to_factors(keep))
    }

    /// Zeroes every block whose L2 norm (of `values`, default the weights) is `< threshold`;
    /// a norm equal to the threshold, or NaN, is kept.
    pub fn hard_threshold(&self, thresholds: &[f32], values: Option<&[f32]>) -> Result<()> {
        check_grid_len("thresholds", self.grid_shape(), thresholds.len())?;
        check_not_nan("thresholds", thresholds)?;
        self.view.check_writable()?;
        let norms = self.norms(Norm::L2, values)?;
        self.scale_unchecked(&threshold_keep(&norms, thresholds));
        Ok(())
    }

    /// The group-lasso proximal step: Euclidean without conditioners, Adam-conditioned (solved
    /// per block by the defining bisection) with them.
    pub fn soft_threshold(&self, thresholds: &[f32], conditioners: Option<&[f32]>, opts: SoftOptions) -> Result<()> {
        check_grid_len("block_thresholds", self.grid_shape(), thresholds.len())?;
        check_not_nan("block_thresholds", thresholds)?;
        let eps = opts.validate()?;
        self.view.check_writable()?;
        let Some(cond) = conditioners else {
            let norms = self.norms(Norm::L2, None)?;
            self.scale_unchecked(&euclid_factors(&norms, thresholds, eps));
            return Ok(());
        };
        let h = self.source(cond, "conditioners")?;
        if self.numel_per_block() == 1 {
            // One-element blocks take the Euclidean step with threshold t / H (docs/API.md).
            let hgrid = View::reduce_blocks(&self.tiling, &h.layout, h.data, Reduction::Max)?;
            // t / H, with 0 / 0 (zero threshold, zero conditioner) defined as 0: the identity.
            let t: Vec<f32> = thresholds.iter().zip(&hgrid).map(|(&t, h)| if t == 0.0 { 0.0 } else { t / h }).collect();
            let norms = self.norms(Norm::L2, None)?;
            self.scale_unchecked(&euclid_factors(&norms, &t, eps));
            return Ok(());
        }
        if opts.method == Method::Newton {
            let mut data = self.view.param().data_mut();
            if prox::solve_in_place(
                &self.tiling,
                self.view.layout(),
                &mut data,
                &h.layout,
                h.data,
                thresholds,
                opts.max_iter,
                opts.atol,
                eps,
                Bracket::BlockSpec,
            ) {
                return Ok(());
            }
        }
        let (mu, keep) = {
            let data = self.view.param().data();
            let part = Part { tiling: &self.tiling, x_layout: self.view.layout(), x: &data, h_layout: &h.layout, h: h.data, map: None };
            prox::solve(&[part], thresholds, opts.max_iter, opts.atol, eps, Bracket::BlockSpec, opts.method)?
        };
        // The definition: data <- (H / (H + mu)) * data, then the non-survivors are zeroed (multiplied by
        // 0, so -x gives -0 and NaN stays NaN): one pass, the same two roundings per element.
        let mu_keep = crate::core::alloc::try_collect(mu.into_iter().zip(keep))?;
        let mut data = self.view.param().data_mut();
        self.tiling.map_runs_with(
            self.view.layout(),
            &mut data,
            &h.layout,
            h.data,
            &mu_keep,
            crate::kernels::prox_write,
            &|x, h, (mu, keep)| crate::kernels::scalar::prox_scaled(x, h, mu) * keep,
        );
        Ok(())
    }

    /// Element-level keep-mask (view-shaped, row-major) of a block keep-mask.
    pub fn get_masks(&self, keep: &[u8]) -> Result<Vec<u8>> {
        check_grid_len("keep mask", self.grid_shape(), keep.len())?;
        let f = self.tiling.broadcast(&keep_to_factors(keep))?;
        crate::core::alloc::try_collect(f.iter().map(|&x| (x != 0.0) as u8))
    }

    /// Block view of `values` (default the weights), as `View.block_view_of` lays it out.
    pub fn block_view(&self, values: Option<&[f32]>, reorder: bool, merge: bool) -> Result<(Vec<f32>, Vec<usize>)> {
        let viewed = self.view_shaped(values)?;
        let block: Vec<i64> = self.shape().iter().map(|&b| b as i64).collect();
        block_view_of(&viewed, self.view.shape(), &block, reorder, merge)
    }

    /// `values` (or the weights) as a view-shaped row-major array.
    pub(crate) fn view_shaped(&self, values: Option<&[f32]>) -> Result<Vec<f32>> {
        match values {
            None => self.view.values(),
            Some(v) => {
                let s = self.source(v, "values")?;
                let mut out = crate::core::alloc::try_alloc(0, 0.0f32)?;
                if out.try_reserve_exact(self.view.numel()).is_err() {
                    bail!(OutOfMemory, "block_view: cannot allocate {} elements", self.view.numel());
                }
                crate::layout::for_each_offset(&s.layout, |o| out.push(s.data[o]));
                Ok(out)
            }
        }
    }
}

pub(crate) fn keep_to_factors(keep: &[u8]) -> Vec<f32> {
    keep.iter().map(|&k| if k != 0 { 1.0 } else { 0.0 }).collect()
}

/// 0 where `norm < t` (pruned), else 1: equal and NaN norms are kept (docs/API.md, "Hard threshold by value").
pub(crate) fn threshold_keep(norms: &[f32], t: &[f32]) -> Vec<f32> {
    norms.iter().zip(t).map(|(n, t)| if n < t { 0.0 } else { 1.0 }).collect()
}

/// Euclidean prox factors `max(0, 1 - t / (norm + eps))`, NaN-propagating like `clamp_`.
/// A zero threshold gives exactly 1 (the identity), also where the formula would compute 0/0
/// (a zero block with `eps = 0`).
pub(crate) fn euclid_factors(norms: &[f32], t: &[f32], eps: f32) -> Vec<f32> {
    norms.iter().zip(t).map(|(n, &t)| if t == 0.0 { 1.0 } else { nan_max(1.0 - t / (n + eps), 0.0) }).collect()
}

pub(crate) fn check_not_nan(what: &str, v: &[f32]) -> Result<()> {
    // Chunks scanned without an early exit (which the compiler vectorises; a plain `position`
    // stays one element at a time), then the first NaN looked up in its chunk.
    const CHUNK: usize = 256;
    for (c, chunk) in v.chunks(CHUNK).enumerate() {
        #[allow(clippy::eq_op)]
        if chunk.iter().fold(false, |any, &x| any | (x != x)) {
            let i = c * CHUNK + chunk.iter().position(|x| x.is_nan()).unwrap_or(0);
            bail!(InvalidValue, "{what}[{i}] is NaN; thresholds must be numbers (±Infinity allowed)");
        }
    }
    Ok(())
}
