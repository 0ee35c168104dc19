//! A run of consecutive blocks of one block row, read and written in place by `adam_run`, and
//! the search it runs.

use super::lanes::RootStart;

/// Consecutive blocks of one block row of a 2-D array, read and written in place, rows
/// contiguous: row `r` of block `i` is `x[x_at + r x_stride + 4 vecs i ..][..4 vecs]`, its
/// conditioners `h[h_at + r h_stride + 4 vecs i ..]`. Element `j` of a block is row
/// `j / (4 vecs)`, column `j % (4 vecs)`: the order in which [`super::prox_pack4`] lays out gathered
/// blocks, so [`super::adam_run`] sums what the packed kernels sum, in the same order. The blocks go
/// four to a quad; a last partial quad repeats its last block in the lanes it lacks (searched,
/// not written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockRun {
    pub x_at: usize,
    pub h_at: usize,
    pub x_stride: usize,
    pub h_stride: usize,
    pub rows: usize,
    /// Block width / 4.
    pub vecs: usize,
    /// Blocks in the run, `1..=4 QUADS_MAX`.
    pub blocks: usize,
}

/// Quads per [`super::adam_run`] call at most: the SIMD kernel runs each phase over all of them,
/// so a run must hold enough quads for their chains to overlap, and few enough that its per-quad
/// state stays in registers and cache; 32 was the fastest of 16, 32 and 64 (bench/README.md,
/// "Figures behind the code's choices").
pub const QUADS_MAX: usize = 32;

impl BlockRun {
    /// Quads of four blocks (the last one may be partial).
    pub fn quads(&self) -> usize {
        self.blocks.div_ceil(4)
    }

    /// The run's block in lane `i` of quad `q`: lanes past the run's end repeat its last block.
    #[inline(always)]
    pub fn block(&self, q: usize, i: usize) -> usize {
        (4 * q + i).min(self.blocks - 1)
    }

    /// [`BlockRun::block`] as offsets of its first row in `x` and `h`.
    #[inline(always)]
    pub fn block_at(&self, q: usize, i: usize) -> (usize, usize) {
        let b = self.block(q, i) * 4 * self.vecs;
        (self.x_at + b, self.h_at + b)
    }

    /// Lanes of quad `q` that are blocks of the run (the others are not written).
    #[inline(always)]
    pub fn lanes(&self, q: usize) -> usize {
        (self.blocks - 4 * q).min(4)
    }

    /// Panics unless the run is well-formed, lies inside `x` and `h`, and `t`/`ok` fit it; both
    /// implementations of [`super::adam_run`] call it first (the SIMD one then reads and writes
    /// unchecked).
    pub(super) fn check(&self, x_len: usize, h_len: usize, t_len: usize, ok_len: usize) {
        assert!(t_len == self.blocks && ok_len == self.quads(), "thresholds or results do not fit the run");
        assert!(self.rows > 0 && self.vecs > 0 && (1..=4 * QUADS_MAX).contains(&self.blocks), "malformed block run");
        let span = self.vecs.checked_mul(4).and_then(|w| self.blocks.checked_mul(w));
        let end = |at: usize, stride: usize| {
            stride.checked_mul(self.rows - 1).and_then(|o| o.checked_add(at)).and_then(|o| span.and_then(|w| o.checked_add(w)))
        };
        assert!(end(self.x_at, self.x_stride).is_some_and(|e| e <= x_len), "block run outside the weights");
        assert!(end(self.h_at, self.h_stride).is_some_and(|e| e <= h_len), "block run outside the conditioners");
    }
}

/// The search of [`super::adam_run`]: the start's constants, `maxIter`, and the global stop `k_stop`
/// at which the bisection's iterate is read off the root (`cells = 2^min(k_stop, 64)`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuadSearch {
    pub start: RootStart,
    pub max_evals: u32,
    pub k_stop: usize,
    pub cells: f64,
}
