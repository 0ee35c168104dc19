//! Each block folded into one value: block norms, min/max, sums of a layout in one parallel pass.

use super::Tiling;
use crate::core::alloc::try_with_capacity;
use crate::core::error::Result;
use crate::kernels::{self, par, Reduction};
use crate::layout::strided::Strided;

impl Tiling {
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
}
