//! `View`: a strided window over a [`Param`] with write-through (after sparsekit's `View`, docs/API.md).
//!
//! Validated at construction, unlike sparsekit, which fails lazily inside `as_strided` (docs/API.md): ranks
//! must agree, sizes and strides must be non-negative and every reachable offset must lie inside
//! the param (`cosize <= numel`).

use super::param::Param;
use crate::bail;
use crate::core::error::{Error, ErrorKind, Result};
use crate::core::shape::check_grid_len;
use crate::core::shape::checked_numel;
use crate::core::shape::contiguous_strides;
use crate::kernels::Reduction;
use crate::layout::{for_each_offset, normalize_block_shape, Strided, Tiling};
use std::cell::OnceCell;

#[derive(Debug, Clone)]
pub struct View {
    param: Param,
    layout: Strided,
    aliases: OnceCell<bool>,
}

/// Converts user-supplied sizes to `usize`, refusing negatives.
fn non_negative(v: &[i64], what: &str) -> Result<Vec<usize>> {
    v.iter()
        .map(|&x| {
            usize::try_from(x).map_err(|_| Error::new(ErrorKind::InvalidView, format!("View {what} must be non-negative, got {v:?}")))
        })
        .collect()
}

impl View {
    pub fn new(param: &Param, shape: &[i64], stride: &[i64]) -> Result<View> {
        if shape.len() != stride.len() {
            bail!(InvalidView, "View shape {shape:?} has {} dims but stride {stride:?} has {}", shape.len(), stride.len());
        }
        let layout = Strided { shape: non_negative(shape, "shape")?, stride: non_negative(stride, "stride")? };
        // A view (e.g. with zero strides) may have more elements than its param, but never more
        // than usize can count: later `numel()` products would wrap around silently.
        checked_numel(&layout.shape)?;
        let numel = param.numel();
        match layout.cosize() {
            Some(c) if c <= numel => {}
            c => bail!(
                ViewOutOfBounds,
                "View (shape {:?}, stride {:?}) reaches offset {} but the param {:?} has only {numel} elements",
                layout.shape,
                layout.stride,
                c.map_or("beyond usize".to_string(), |c| (c - 1).to_string()),
                param.shape()
            ),
        }
        Ok(View { param: param.clone(), layout, aliases: OnceCell::new() })
    }

    /// The contiguous full view of a param (`View.fromExisting`).
    pub fn from_param(param: &Param) -> View {
        let layout = Strided::contiguous(param.shape());
        View { param: param.clone(), layout, aliases: OnceCell::new() }
    }

    pub fn param(&self) -> &Param {
        &self.param
    }
    pub fn layout(&self) -> &Strided {
        &self.layout
    }
    pub fn shape(&self) -> &[usize] {
        &self.layout.shape
    }
    pub fn stride(&self) -> &[usize] {
        &self.layout.stride
    }
    pub fn ndim(&self) -> usize {
        self.layout.ndim()
    }
    pub fn numel(&self) -> usize {
        self.layout.numel()
    }
    /// Maximum reachable linear offset + 1.
    pub fn cosize(&self) -> usize {
        self.layout.cosize().expect("validated at construction")
    }

    /// True when two view indices share one storage element.
    pub fn aliases(&self) -> bool {
        *self.aliases.get_or_init(|| self.layout.aliases())
    }

    /// Refuses in-place writes through an aliasing view (they would hit an element twice).
    pub fn check_writable(&self) -> Result<()> {
        self.param.check_not_busy()?;
        if self.aliases() {
            bail!(
                AliasedView,
                "in-place write refused: the view (shape {:?}, stride {:?}) maps several indices to one storage element; reads are allowed",
                self.shape(),
                self.stride()
            );
        }
        Ok(())
    }

    /// A view-shaped, row-major copy of the view's elements.
    pub fn values(&self) -> Result<Vec<f32>> {
        let data = self.param.data();
        let mut out = Vec::new();
        if out.try_reserve_exact(self.numel()).is_err() {
            bail!(OutOfMemory, "cannot allocate {} elements", self.numel());
        }
        for_each_offset(&self.layout, |o| out.push(data[o]));
        Ok(out)
    }

    /// Storage offsets of view indices: `idx` is `(k, ndim)` flattened.
    pub fn linear_offset(&self, idx: &[i64]) -> Result<Vec<i64>> {
        let n = self.ndim();
        if n == 0 {
            bail!(ShapeMismatch, "linear_offset: the view is 0-D; indices have no components");
        }
        if !idx.len().is_multiple_of(n) {
            bail!(ShapeMismatch, "linear_offset: index array of length {} is not (k, {n})", idx.len());
        }
        idx.chunks_exact(n)
            .map(|ix| {
                ix.iter()
                    .zip(&self.layout.stride)
                    .try_fold(0i64, |acc, (&i, &s)| i.checked_mul(s as i64).and_then(|x| x.checked_add(acc)))
                    .ok_or_else(|| Error::new(ErrorKind::InvalidArguments, format!("linear_offset: index {ix:?} overflows")))
            })
            .collect()
    }

    /// `(row, col)` in the 2-D param of each view index.
    pub fn to_param_rc(&self, idx: &[i64]) -> Result<(Vec<i64>, Vec<i64>)> {
        let ps = self.param.shape();
        if ps.len() != 2 {
            bail!(ParamNot2d, "to_param_rc needs a 2-D param, got shape {ps:?}");
        }
        let cols = ps[1].max(1) as i64;
        let flat = self.linear_offset(idx)?;
        Ok((flat.iter().map(|f| f.div_euclid(cols)).collect(), flat.iter().map(|f| f.rem_euclid(cols)).collect()))
    }

    /// Normalises and validates a block shape against this view.
    pub fn tiling(&self, block: &[i64], what: &str) -> Result<Tiling> {
        Ok(Tiling::new(self.shape(), &normalize_block_shape(self.shape(), block, what)?))
    }

    /// In-place: every block multiplied by its grid value (`m` grid-shaped, row-major).
    pub fn apply_multiplier(&self, m: &[f32], block: &[i64]) -> Result<()> {
        let t = self.tiling(block, "View.apply_multiplier")?;
        check_grid_len("multiplier", &t.grid, m.len())?;
        self.check_writable()?;
        t.scale(&self.layout, &mut self.param.data_mut(), m);
        Ok(())
    }

    /// In-place: zeroes (multiplies by 0) the blocks whose keep-mask value is 0.
    pub fn apply_mask(&self, keep: &[u8], block: &[i64]) -> Result<()> {
        let m: Vec<f32> = keep.iter().map(|&k| if k != 0 { 1.0 } else { 0.0 }).collect();
        self.apply_multiplier(&m, block)
    }

    /// Block reduction of `data` read through `l` (a layout of this view's shape).
    pub(crate) fn reduce_blocks(t: &Tiling, l: &Strided, data: &[f32], op: Reduction) -> Result<Vec<f32>> {
        t.reduce_blocks(l, data, op, |_| {})
    }
}

/// Block view of a contiguous tensor `t` of `shape` (`View.blockViewOf`): returns the
/// data and shape of the interleaved `(B0, b0, B1, b1, ..)` layout (`reorder = false`), the
/// reordered `(B0, B1, .., b0, b1, ..)` (`reorder`), or the merged `(B0, B1, .., b0*b1*..)`
/// (`merge`, implies reorder).
pub fn block_view_of(t: &[f32], shape: &[usize], block: &[i64], reorder: bool, merge: bool) -> Result<(Vec<f32>, Vec<usize>)> {
    let n = checked_numel(shape)?;
    if t.len() != n {
        return Err(Error::length_mismatch("block_view_of tensor", shape, n, t.len()));
    }
    if block.len() != shape.len() {
        bail!(InvalidBlockShape, "block_view_of: block shape {block:?} has {} dims, tensor {shape:?} has {}", block.len(), shape.len());
    }
    if let Some(d) = block.iter().position(|&b| b <= 0) {
        bail!(InvalidBlockShape, "block_view_of: block_shape[{d}]={} must be positive", block[d]);
    }
    let b = normalize_block_shape(shape, block, "block_view_of")?;
    let grid: Vec<usize> = shape.iter().zip(&b).map(|(s, b)| s / b).collect();
    let st = contiguous_strides(shape);
    let nd = shape.len();
    // Strides of the interleaved (B0, b0, B1, b1, ..) view into t.
    let mut ishape = Vec::with_capacity(2 * nd);
    let mut istride = Vec::with_capacity(2 * nd);
    for d in 0..nd {
        ishape.extend([grid[d], b[d]]);
        // <= numel for a non-empty tensor; an empty one is never walked (saturate, not overflow).
        istride.extend([st[d].saturating_mul(b[d]), st[d]]);
    }
    let (oshape, ostride) = if reorder || merge {
        let perm: Vec<usize> = (0..nd).map(|d| 2 * d).chain((0..nd).map(|d| 2 * d + 1)).collect();
        (perm.iter().map(|&p| ishape[p]).collect::<Vec<_>>(), perm.iter().map(|&p| istride[p]).collect::<Vec<_>>())
    } else {
        (ishape, istride)
    };
    let mut out = Vec::new();
    if out.try_reserve_exact(n).is_err() {
        bail!(OutOfMemory, "block_view_of: cannot allocate {n} elements");
    }
    for_each_offset(&Strided { shape: oshape.clone(), stride: ostride }, |o| out.push(t[o]));
    let shape_out = if merge { grid.iter().copied().chain(std::iter::once(b.iter().product())).collect() } else { oshape };
    Ok((out, shape_out))
}

/// Expands grid values to element shape (`fake = false`), or only reshapes them to the
/// broadcastable `(B0, 1, B1, 1, ..)` (`fake = true`; the data is unchanged).
pub fn broadcast_block_to_element(values: &[f32], grid: &[usize], block: &[usize], fake: bool) -> Result<(Vec<f32>, Vec<usize>)> {
    if grid.len() != block.len() {
        bail!(BlockRankMismatch, "broadcast_block_to_element: grid {grid:?} and block {block:?} ranks differ");
    }
    if let Some(d) = block.iter().position(|&b| b == 0) {
        bail!(InvalidBlockShape, "broadcast_block_to_element: block_shape[{d}] must be positive");
    }
    check_grid_len("block_values", grid, values.len())?;
    let elem: Vec<usize> = grid.iter().zip(block).map(|(g, b)| g.checked_mul(*b)).collect::<Option<_>>().ok_or_else(|| {
        Error::new(ErrorKind::OutOfMemory, format!("broadcast_block_to_element: grid {grid:?} x block {block:?} overflows"))
    })?;
    checked_numel(&elem)?;
    if fake {
        let shape = grid.iter().flat_map(|&g| [g, 1]).collect();
        return Ok((values.to_vec(), shape));
    }
    let t = Tiling::new(&grid.iter().zip(block).map(|(g, b)| g * b).collect::<Vec<_>>(), block);
    let shape = grid.iter().zip(block).map(|(g, b)| g * b).collect();
    Ok((t.broadcast(values)?, shape))
}
