//! Each element rewritten from its block's value: scaling by per-block factors (masks,
//! multipliers) and the general element map with an auxiliary layout.

use super::Tiling;
use crate::kernels::{self, par};
use crate::layout::strided::Strided;

impl Tiling {
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
}
