//! Blocks copied out of a strided layout into contiguous runs (row-major inside each block).

use super::Tiling;
use crate::core::shape::unravel;
use crate::layout::strided::{for_each_offset, next_offset, Strided};

impl Tiling {
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
            if !next_offset(&mut idx[..last], &self.block, &l.stride, &mut off) {
                return;
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
