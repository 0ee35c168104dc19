//! A strided layout cut into a grid of equal blocks: the walks every block operation runs on
//! (reductions, scaling, gathering blocks into runs), shaped so that hot paths see contiguous
//! runs whenever the layout has any.

use super::strided::for_each_offset;
use super::strided::Strided;
use crate::core::alloc::{try_alloc, try_with_capacity};
use crate::core::error::Result;
use crate::core::shape::{contiguous_strides, unravel};
use crate::kernels::{self, par, Reduction};

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

    /// Folds `op` over every block of `data` seen through `l` into a fresh grid-shaped vector,
    /// then applies `finish` to it (e.g. the square roots of L2 norms).
    ///
    /// With threads, slabs of grid rows run in parallel, each owning its range of the result:
    /// it fills it with the identity, folds its rows in, and finishes it, all in one task, so a
    /// call is one parallel region with no sequential pass over the result. Every accumulator
    /// still folds its elements in the sequential order, so the bits are the same.
    pub fn reduce_blocks(&self, l: &Strided, data: &[f32], op: Reduction, finish: impl Fn(&mut [f32]) + Sync + Send) -> Result<Vec<f32>> {
        let nb = self.numblk();
        let mut acc = try_with_capacity::<f32>(nb)?;
        let (_, chunk, stride, step) = self.row_params(l);
        let (_, per) = self.slabs(l);
        let g0 = self.grid.first().copied().unwrap_or(1);
        let gs0 = self.grid_stride.first().copied().unwrap_or(1);
        let walk = l.numel() > 0;
        par::map_chunks_mut(&mut acc.spare_capacity_mut()[..nb], per * gs0, |s, slab| {
            for a in slab.iter_mut() {
                a.write(op.identity());
            }
            // SAFETY: every element of the slab was just initialised.
            let acc = unsafe { &mut *(slab as *mut [std::mem::MaybeUninit<f32>] as *mut [f32]) };
            if walk {
                let (g_lo, g_hi) = (s * per, ((s + 1) * per).min(g0));
                let len = self.slab_row_len(l, g_lo, g_hi);
                let base = g_lo * gs0;
                let mut buf = Vec::new();
                self.walk_rows_in(l, &[], g_lo, g_hi, |offs, gbase| {
                    let o = offs[0];
                    let acc = &mut acc[gbase - base..];
                    if stride == 1 {
                        kernels::reduce_chunks(op, &data[o..o + len], chunk, acc, step);
                    } else {
                        buf.clear();
                        buf.extend((0..len).map(|i| data[o + i * stride]));
                        kernels::reduce_chunks(op, &buf, chunk, acc, step);
                    }
                });
            }
            finish(acc);
        });
        // SAFETY: the slabs cover the first `nb` elements and each task initialised its own.
        unsafe { acc.set_len(nb) };
        Ok(acc)
    }

    /// Multiplies every element of `data` (through `l`) by its block's factor. `l` must not
    /// alias (the callers refuse aliasing views before any write): slabs run in parallel.
    pub fn scale(&self, l: &Strided, data: &mut [f32], factors: &[f32]) {
        debug_assert_eq!(factors.len(), self.numblk());
        if l.numel() == 0 {
            return;
        }
        assert!(l.cosize().is_some_and(|c| c <= data.len()), "layout outside the data");
        let (_, chunk, stride, step) = self.row_params(l);
        let (nslabs, per) = self.slabs(l);
        let g0 = self.grid.first().copied().unwrap_or(1);
        let ptr = par::SharedMut(data.as_mut_ptr());
        par::for_each_index(nslabs, |s| {
            let (g_lo, g_hi) = (s * per, ((s + 1) * per).min(g0));
            let len = self.slab_row_len(l, g_lo, g_hi);
            let p = ptr.get();
            self.walk_rows_in(l, &[], g_lo, g_hi, |offs, gbase| {
                let o = offs[0];
                let f = &factors[gbase..];
                if stride == 1 {
                    // SAFETY: o + len <= cosize <= data.len(); rows of a non-aliasing layout are
                    // disjoint, and every row belongs to exactly one slab.
                    let row = unsafe { std::slice::from_raw_parts_mut(p.add(o), len) };
                    kernels::scale_chunks(row, chunk, f, step);
                } else {
                    for (j, &fj) in f.iter().step_by(step.max(1)).take(len / chunk).enumerate() {
                        for i in j * chunk..(j + 1) * chunk {
                            // SAFETY: as above, element by element.
                            unsafe { *p.add(o + i * stride) *= fj };
                        }
                    }
                }
            });
        });
    }

    /// `data[e] = g(data[e], aux[e'], block_value)` for every element, where `aux` is read
    /// through its own layout `la` (same shape as `l`). `l` must not alias; slabs run in parallel.
    pub fn map_with<P: Copy + Sync>(
        &self,
        l: &Strided,
        data: &mut [f32],
        la: &Strided,
        aux: &[f32],
        per_block: &[P],
        g: impl Fn(f32, f32, P) -> f32 + Sync + Send,
    ) {
        let run = |row: &mut [f32], a: &[f32], chunk: usize, pb: &[P], step: usize| {
            for (j, (r, ar)) in row.chunks_exact_mut(chunk).zip(a.chunks_exact(chunk)).enumerate() {
                for (x, &h) in r.iter_mut().zip(ar) {
                    *x = g(*x, h, pb[j * step]);
                }
            }
        };
        self.map_runs_with(l, data, la, aux, per_block, run, &g);
    }

    /// [`Tiling::map_with`] where `run(row, aux_row, chunk, block_values, step)` does a whole
    /// contiguous row at once (a SIMD kernel): piece `j` (`chunk` long) belongs to the block of
    /// `block_values[j * step]`. `g` does the elements of strided rows; both must compute the
    /// same values.
    #[allow(clippy::too_many_arguments)]
    pub fn map_runs_with<P: Copy + Sync>(
        &self,
        l: &Strided,
        data: &mut [f32],
        la: &Strided,
        aux: &[f32],
        per_block: &[P],
        run: impl Fn(&mut [f32], &[f32], usize, &[P], usize) + Sync + Send,
        g: &(impl Fn(f32, f32, P) -> f32 + Sync + Send),
    ) {
        if l.numel() == 0 {
            return;
        }
        assert!(l.cosize().is_some_and(|c| c <= data.len()), "layout outside the data");
        let (_, chunk, stride, step) = self.row_params(l);
        let geom = self.walk_rows_geom(l, &[la]);
        let astride = geom.other_strides[0];
        let (nslabs, per) = self.slabs(l);
        let g0 = self.grid.first().copied().unwrap_or(1);
        let ptr = par::SharedMut(data.as_mut_ptr());
        par::for_each_index(nslabs, |s| {
            let (g_lo, g_hi) = (s * per, ((s + 1) * per).min(g0));
            let len = self.slab_row_len(l, g_lo, g_hi);
            let p = ptr.get();
            self.walk_rows_in(l, &[la], g_lo, g_hi, |offs, gbase| {
                let (o, oa) = (offs[0], offs[1]);
                if stride == 1 && astride == 1 {
                    // SAFETY: as in `scale`.
                    let row = unsafe { std::slice::from_raw_parts_mut(p.add(o), len) };
                    run(row, &aux[oa..oa + len], chunk, &per_block[gbase..], step);
                    return;
                }
                for j in 0..len / chunk {
                    let pb = per_block[gbase + j * step];
                    for i in j * chunk..(j + 1) * chunk {
                        // SAFETY: as in `scale`, element by element.
                        unsafe {
                            let e = p.add(o + i * stride);
                            *e = g(*e, aux[oa + i * astride], pb);
                        }
                    }
                }
            });
        });
    }

    /// Copies block `b`'s elements (row-major inside the block) from `data` through `l` to `out`:
    /// contiguous runs of the block's last dimension are copied as slices.
    pub fn gather_block(&self, l: &Strided, data: &[f32], b: usize, out: &mut Vec<f32>) {
        let n = l.ndim();
        if n == 0 {
            out.push(data[0]);
            return;
        }
        if n > 16 {
            let mut gi = vec![0usize; n];
            unravel(b, &self.grid, &mut gi);
            let base: usize = (0..n).map(|d| gi[d] * self.block[d] * l.stride[d]).sum();
            let inner = Strided { shape: self.block.clone(), stride: l.stride.clone() };
            for_each_offset(&inner, |o| out.push(data[base + o]));
            return;
        }
        let mut base = 0;
        let mut rem = b;
        for d in (0..n).rev() {
            base += (rem % self.grid[d]) * self.block[d] * l.stride[d];
            rem /= self.grid[d];
        }
        let last = n - 1;
        let (bl, sl) = (self.block[last], l.stride[last]);
        let mut idx = [0usize; 16];
        let mut off = base;
        loop {
            if sl == 1 {
                out.extend_from_slice(&data[off..off + bl]);
            } else {
                out.extend((0..bl).map(|i| data[off + i * sl]));
            }
            let mut d = last;
            loop {
                if d == 0 {
                    return;
                }
                d -= 1;
                idx[d] += 1;
                off += l.stride[d];
                if idx[d] < self.block[d] {
                    break;
                }
                off -= l.stride[d] * idx[d];
                idx[d] = 0;
            }
        }
    }

    /// Sets `out` to blocks `lo..hi` (grid row-major), one after the other, as
    /// [`Tiling::gather_block`] would append them. For 2-D layouts the grid position advances
    /// without a division per block, each block row is one fixed-size copy, and `out` is resized
    /// rather than cleared (a batch of the usual size zero-fills nothing): the bisection gathers
    /// millions of small blocks.
    pub fn gather_blocks(&self, l: &Strided, data: &[f32], lo: usize, hi: usize, out: &mut Vec<f32>) {
        if l.ndim() != 2 || lo >= hi {
            out.clear();
            for b in lo..hi {
                self.gather_block(l, data, b, out);
            }
            return;
        }
        let (g1, bh, bw, s0, s1) = (self.grid[1], self.block[0], self.block[1], l.stride[0], l.stride[1]);
        out.resize((hi - lo) * bh * bw, 0.0);
        let (mut gr, mut gc) = (lo / g1, lo % g1);
        for dst in out.chunks_exact_mut(bh * bw) {
            let base = gr * bh * s0 + gc * bw * s1;
            for (r, row) in dst.chunks_exact_mut(bw).enumerate() {
                let o = base + r * s0;
                if s1 == 1 {
                    copy_run(row, &data[o..o + bw]);
                } else {
                    for (i, x) in row.iter_mut().enumerate() {
                        *x = data[o + i * s1];
                    }
                }
            }
            gc += 1;
            if gc == g1 {
                gc = 0;
                gr += 1;
            }
        }
    }

    /// Grid-shaped (row-major) values broadcast to one value per element of the layout's
    /// shape, row-major.
    pub fn broadcast(&self, grid_values: &[f32]) -> Result<Vec<f32>> {
        let shape: Vec<usize> = self.grid.iter().zip(&self.block).map(|(g, b)| g * b).collect();
        let n: usize = shape.iter().product();
        let mut out = try_alloc(n, 0.0f32)?;
        let c = Strided::contiguous(&shape);
        let mut i = 0;
        self.walk_rows(&c, &[], |offs, gbase| {
            let _ = offs;
            let (k, chunk, _, step) = self.row_params(&c);
            for j in 0..k {
                out[i + j] = grid_values[gbase + (j / chunk) * step];
            }
            i += k;
        });
        Ok(out)
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

/// `dst.copy_from_slice(src)` with the common short block widths as fixed-size copies (inlined
/// moves instead of a `memcpy` call per few elements).
#[inline(always)]
fn copy_run(dst: &mut [f32], src: &[f32]) {
    match dst.len() {
        4 => dst[..4].copy_from_slice(&src[..4]),
        8 => dst[..8].copy_from_slice(&src[..8]),
        16 => dst[..16].copy_from_slice(&src[..16]),
        _ => dst.copy_from_slice(src),
    }
}
