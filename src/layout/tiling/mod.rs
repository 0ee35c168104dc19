//! A strided layout cut into a grid of equal blocks: the walks every block operation runs on
//! (reductions, scaling, gathering blocks into runs), shaped so that hot paths see contiguous
//! runs whenever the layout has any.
//!
//! This file holds the grid and its row walk; the operations built on the walk are one file
//! each: [`reduce`] (fold each block into one value), [`map`] (write each element from its
//! block's value), [`gather`] (copy blocks out contiguously), [`broadcast`] (grid values to
//! elements).

mod broadcast;
mod gather;
mod map;
mod reduce;

use super::strided::Strided;
use crate::core::shape::contiguous_strides;
use crate::kernels::par;

/// A layout cut into a grid of `block`-shaped blocks (`block` divides `shape` exactly).
#[derive(Debug, Clone)]
pub struct Tiling {
    pub block: Vec<usize>,
    pub grid: Vec<usize>,
    grid_stride: Vec<usize>,
}

impl Tiling {
    /// `block` must already be normalised (positive, same rank, dividing `shape`).
    pub fn new(shape: &[usize], block: &[usize]) -> Tiling {
        debug_assert_eq!(shape.len(), block.len());
        let grid: Vec<usize> = shape.iter().zip(block).map(|(&s, &b)| s / b).collect();
        let grid_stride = contiguous_strides(&grid);
        Tiling { block: block.to_vec(), grid, grid_stride }
    }

    pub fn numblk(&self) -> usize {
        self.grid.iter().product()
    }

    pub fn numel_per_block(&self) -> usize {
        self.block.iter().product()
    }

    /// The dimension walked innermost: a unit-stride dimension of `l` if there is one (so rows
    /// are contiguous slices), else the last one.
    fn inner_dim(&self, l: &Strided) -> usize {
        let n = l.ndim();
        (0..n).rev().find(|&d| l.stride[d] == 1 && l.shape[d] > 1).unwrap_or(n.saturating_sub(1))
    }

    /// Walks `l` as rows along the inner dimension. For each row, `f(offsets, grid_base)` gets
    /// the row's start offset in `l` and in each of `others` (layouts of the same shape), and
    /// the flat grid index of the row's first chunk; chunk `j` of the row (length
    /// `block[inner]`) belongs to grid index `grid_base + j * grid_step`.
    fn walk_rows(&self, l: &Strided, others: &[&Strided], mut f: impl FnMut(&[usize], usize)) -> RowGeom {
        let n = l.ndim();
        let k = self.inner_dim(l);
        let geom = RowGeom {
            len: if n == 0 { 1 } else { l.shape[k] },
            chunk: if n == 0 { 1 } else { self.block[k] },
            stride: if n == 0 { 1 } else { l.stride[k] },
            other_strides: others.iter().map(|o| if n == 0 { 1 } else { o.stride[k] }).collect(),
            grid_step: if n == 0 { 1 } else { self.grid_stride[k] },
        };
        if l.shape.contains(&0) {
            return geom;
        }
        let outer: Vec<usize> = (0..n).filter(|&d| d != k).collect();
        let mut idx = vec![0usize; outer.len()];
        let mut offs = vec![0usize; 1 + others.len()];
        loop {
            let mut gbase = 0;
            for (j, &d) in outer.iter().enumerate() {
                gbase += (idx[j] / self.block[d]) * self.grid_stride[d];
            }
            f(&offs, gbase);
            // advance the odometer over the outer dims
            let mut j = outer.len();
            loop {
                if j == 0 {
                    return geom;
                }
                j -= 1;
                let d = outer[j];
                idx[j] += 1;
                offs[0] += l.stride[d];
                for (o, other) in others.iter().enumerate() {
                    offs[o + 1] += other.stride[d];
                }
                if idx[j] < l.shape[d] {
                    break;
                }
                offs[0] -= l.stride[d] * idx[j];
                for (o, other) in others.iter().enumerate() {
                    offs[o + 1] -= other.stride[d] * idx[j];
                }
                idx[j] = 0;
            }
        }
    }

    /// [`Self::walk_rows`] restricted to the slab of grid indices `g_lo..g_hi` along dim 0 (the
    /// outermost grid dimension, so the slab's grid entries are one contiguous range
    /// `g_lo * grid_stride[0] .. g_hi * grid_stride[0]`). When dim 0 is the inner dimension, the
    /// rows themselves are cut to the slab's chunks (their length is then
    /// `(g_hi - g_lo) * block[0]`). Rows come in the same relative order as in the full walk, so
    /// every accumulator sees its contributions in the same order whatever the slabs are.
    fn walk_rows_in(&self, l: &Strided, others: &[&Strided], g_lo: usize, g_hi: usize, mut f: impl FnMut(&[usize], usize)) {
        let n = l.ndim();
        if l.shape.contains(&0) || (n > 0 && g_lo >= g_hi) {
            return;
        }
        let mut offs = vec![0usize; 1 + others.len()];
        if n == 0 {
            f(&offs, 0);
            return;
        }
        let k = self.inner_dim(l);
        let outer: Vec<usize> = (0..n).filter(|&d| d != k).collect();
        let mut idx = vec![0usize; outer.len()];
        let (start0, end0) = (g_lo * self.block[0], g_hi * self.block[0]);
        let mut gshift = 0;
        offs[0] = start0 * l.stride[0];
        for (o, other) in others.iter().enumerate() {
            offs[o + 1] = start0 * other.stride[0];
        }
        if k == 0 {
            gshift = g_lo * self.grid_stride[0];
        } else {
            idx[0] = start0;
        }
        loop {
            let mut gbase = gshift;
            for (j, &d) in outer.iter().enumerate() {
                gbase += (idx[j] / self.block[d]) * self.grid_stride[d];
            }
            f(&offs, gbase);
            // advance the odometer over the outer dims (dim 0, when outer, stops at end0)
            let mut j = outer.len();
            loop {
                if j == 0 {
                    return;
                }
                j -= 1;
                let d = outer[j];
                idx[j] += 1;
                offs[0] += l.stride[d];
                for (o, other) in others.iter().enumerate() {
                    offs[o + 1] += other.stride[d];
                }
                let end = if d == 0 { end0 } else { l.shape[d] };
                if idx[j] < end {
                    break;
                }
                if d == 0 {
                    return;
                }
                offs[0] -= l.stride[d] * idx[j];
                for (o, other) in others.iter().enumerate() {
                    offs[o + 1] -= other.stride[d] * idx[j];
                }
                idx[j] = 0;
            }
        }
    }

    /// Cuts dim 0 of the grid into slabs for the tasks: `(number of slabs, grid rows per slab)`.
    fn slabs(&self, l: &Strided) -> (usize, usize) {
        let g0 = self.grid.first().copied().unwrap_or(1).max(1);
        let tasks = par::tasks_for(l.numel(), 1 << 16, g0);
        let per = g0.div_ceil(tasks);
        (g0.div_ceil(per), per)
    }

    /// The row length of a slab walk.
    fn slab_row_len(&self, l: &Strided, g_lo: usize, g_hi: usize) -> usize {
        let (k, chunk, _, _) = self.row_params(l);
        if l.ndim() > 0 && self.inner_dim(l) == 0 {
            (g_hi - g_lo) * chunk
        } else {
            k
        }
    }

    fn row_params(&self, l: &Strided) -> (usize, usize, usize, usize) {
        let g = self.walk_rows_geom(l, &[]);
        (g.len, g.chunk, g.stride, g.grid_step)
    }

    fn walk_rows_geom(&self, l: &Strided, others: &[&Strided]) -> RowGeom {
        let n = l.ndim();
        if n == 0 {
            return RowGeom { len: 1, chunk: 1, stride: 1, other_strides: vec![1; others.len()], grid_step: 1 };
        }
        let k = self.inner_dim(l);
        RowGeom {
            len: l.shape[k],
            chunk: self.block[k],
            stride: l.stride[k],
            other_strides: others.iter().map(|o| o.stride[k]).collect(),
            grid_step: self.grid_stride[k],
        }
    }
}

struct RowGeom {
    len: usize,
    chunk: usize,
    stride: usize,
    other_strides: Vec<usize>,
    grid_step: usize,
}
