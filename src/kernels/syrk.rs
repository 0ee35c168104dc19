//! The Hessian's symmetric rank-k update `S += Σ_rows x xᵀ` (upper triangle) into f64 sums kept
//! in output tiles, each tile accumulated over all of a call's rows while it stays in cache.
//!
//! Contract (both backends, any tiling, any number of threads): the rows of a call are cut into
//! chunks of [`CHUNK`] from its first row (the last may be shorter); for every computed element
//! and chunk, the chunk's products `x_a x_b` are summed in f32 from zero in row order, a separate
//! multiply and add (no fused multiply-add), and that sum, widened to f64, is added to the
//! element's f64 sum, chunk after chunk. No other operation touches an element, so the bits do not
//! depend on the tile size, the slab size (a multiple of `CHUNK`), the backend or the thread
//! count; they are those of the previous design (an f32 Gram matrix per chunk from zero, then an
//! f64 fold of it).
//!
//! Why tiles: a Gram matrix per chunk written whole and folded into a whole f64 sum moved
//! `~12 · cols²` bytes per chunk of 64 rows against `32 · cols²` multiply-adds, so the update
//! was bound by memory and its threads split each small product and met once per chunk. Here a
//! task is one `T x T` tile of the sum (`T = 64`): it runs over every row of a slab (a few hundred rows,
//! packed once into panels of 8 columns so that a chunk's panels are contiguous) with its f64
//! tile and the chunk's two column panels in cache, and folds each chunk's register tile straight
//! into the f64 tile. Tiles are whole tasks, so the threads meet once per slab, and a tile is
//! always computed by one thread in one order. Design after the packed panels and register
//! tiles of Goto and van de Geijn, "Anatomy of High-Performance Matrix Multiplication" (ACM
//! TOMS 34(3), 2008), with the output block, not a panel of the inputs, kept resident.

use super::gemm::{gemm_acc_serial, Gemm};
use super::par;
use crate::core::alloc::try_alloc;
use crate::core::error::{Error, ErrorKind, Result};

/// Rows per f32 partial sum (the Hessian's error bound scales with it).
pub const CHUNK: usize = 64;
/// Columns of a packed panel and of a register tile.
pub const PANEL: usize = 8;
/// Rows of a register tile.
pub const STRIP: usize = 4;
/// Side of an output tile (a multiple of `PANEL`): its f64 sums (32 KiB) and a chunk's two
/// panels of 64 columns (2 x 16 KiB) stay in the L1/L2 caches while the tile runs. Narrower
/// inputs take one tile of their own width (a depthwise conv's group of 9 inputs: 16 x 16 f64).
const T: usize = 64;
/// The packed slab holds at most this many f32 (4 MiB), or one chunk of rows if that is larger:
/// large enough that the threads meet rarely (a slab is ~3·10⁸ multiply-adds at cols 576),
/// small enough that the memory is bounded whatever the batch.
const SLAB_FLOATS: usize = 1 << 20;
/// Inputs at most this many take the GEMM kernel chunk by chunk instead (the same contract):
/// their f32 Gram matrix stays in L1, while the 8-column register tiles would mostly multiply
/// padding (a depthwise conv's 9 inputs: 4x slower tiled, bench/RESULTS.md "The Hessian cells
/// with the tiled update").
const NARROW: usize = 32;

/// One tile's register tile: `STRIP` rows (`a`, panel stride `PANEL`) by `PANEL` columns (`b`)
/// over `k <= CHUNK` packed rows, its f32 sums from zero added as f64 to `h` (row stride `ldh`).
///
/// # Safety
/// `a` and `b` are readable for `k` rows of `PANEL`; `h` for `STRIP` rows of `PANEL` f64.
#[inline(always)]
unsafe fn tile(a: *const f32, b: *const f32, k: usize, h: *mut f64, ldh: usize) {
    super::imp::syrk_tile(a, b, k, h, ldh)
}

/// Where the upper triangle of a symmetric `cols x cols` sum lies: tile `(I, J)`, `I <= J`, in
/// row-major order of the tiles, each tile `t x t` row-major (`t = min(T, cols rounded up to a
/// panel)`; padding rows/columns are zeros).
#[derive(Debug, Clone)]
pub struct SymTiles {
    cols: usize,
    /// `cols` rounded up to a whole panel.
    cp: usize,
    /// Side of a tile.
    t: usize,
    /// Tiles per side.
    nt: usize,
    /// `(I, J)` of every stored tile, in storage order.
    coords: Vec<(usize, usize)>,
}

impl SymTiles {
    pub fn new(cols: usize) -> Result<SymTiles> {
        let cp = cols.div_ceil(PANEL) * PANEL;
        let t = cp.min(T);
        let nt = cp.div_ceil(t);
        let tiles = nt.checked_mul(nt + 1).map(|v| v / 2);
        if tiles.and_then(|n| n.checked_mul(t * t)).is_none() {
            return Err(Error::new(ErrorKind::OutOfMemory, format!("a symmetric sum of {cols} inputs does not fit in memory")));
        }
        let mut coords = Vec::new();
        coords.try_reserve_exact(tiles.unwrap_or(0)).map_err(|_| Error::new(ErrorKind::OutOfMemory, "tile list"))?;
        for i in 0..nt {
            coords.extend((i..nt).map(|j| (i, j)));
        }
        Ok(SymTiles { cols, cp, t, nt, coords })
    }

    /// Length of the f64 storage.
    pub fn len(&self) -> usize {
        self.coords.len() * self.t * self.t
    }

    pub fn is_empty(&self) -> bool {
        self.coords.is_empty()
    }

    /// Index of element `(a, b)`, `a <= b < cols`.
    #[inline]
    pub fn at(&self, a: usize, b: usize) -> usize {
        debug_assert!(a <= b && b < self.cols);
        let t = self.t;
        let (ti, tj) = (a / t, b / t);
        // tiles before row ti: nt + (nt - 1) + ... + (nt - ti + 1)
        let before = ti * self.nt - ti * (ti.saturating_sub(1)) / 2;
        (before + tj - ti) * t * t + (a % t) * t + b % t
    }

    /// Rows of a packed slab: a multiple of `CHUNK`.
    fn slab_rows(&self) -> usize {
        (SLAB_FLOATS / self.cp / CHUNK).max(1) * CHUNK
    }

    /// Adds the rows of `x` (row-major `n x cols`, `n * cols == x.len()`) to `sum` (of
    /// [`Self::len`]), chunks counted from `x`'s first row.
    pub fn add_rows(&self, x: &[f32], sum: &mut [f64]) -> Result<()> {
        assert!(x.len().is_multiple_of(self.cols) && sum.len() == self.len(), "syrk: shapes");
        let n = x.len() / self.cols;
        if n == 0 {
            return Ok(());
        }
        if self.cols <= NARROW {
            return self.add_narrow(x, sum);
        }
        let s = self.slab_rows().min(n.div_ceil(CHUNK) * CHUNK);
        let mut pack = try_alloc(s * self.cp, 0.0f32)?;
        for slab in x.chunks(s * self.cols) {
            let rows = slab.len() / self.cols;
            self.pack(slab, rows, &mut pack[..rows * self.cp]);
            self.add_packed(&pack[..rows * self.cp], rows, sum);
        }
        Ok(())
    }

    /// Narrow inputs: per chunk, its f32 Gram matrix (upper triangle) from zero by the GEMM
    /// kernel (`c = 0 + a_0 b_0 + ..` in row order: the contract), then added to the one tile.
    fn add_narrow(&self, x: &[f32], sum: &mut [f64]) -> Result<()> {
        let c = self.cols;
        let mut gram = try_alloc(c * c, 0.0f32)?;
        for chunk in x.chunks(CHUNK * c) {
            gram.fill(0.0);
            let g = Gemm { m: c, n: c, k: chunk.len() / c, a_rs: 1, a_ks: c, ldb: c, ldc: c, upper: true, kc: 0 };
            gemm_acc_serial(&g, chunk, chunk, &mut gram);
            for i in 0..c {
                for (s, &v) in sum[i * self.t + i..i * self.t + c].iter_mut().zip(&gram[i * c + i..(i + 1) * c]) {
                    *s += v as f64;
                }
            }
        }
        Ok(())
    }

    /// Row batches at most this long keep [`Self::add_rows`]' chunks and memory bound
    /// (callers that build rows, as im2col, fill one such batch at a time).
    pub fn batch_rows(&self) -> usize {
        self.slab_rows()
    }

    /// `pack[q][p][r] = x[p][q * PANEL + r]` (zero past `cols`): panel `q` is `rows x PANEL`.
    fn pack(&self, x: &[f32], rows: usize, pack: &mut [f32]) {
        let c = self.cols;
        let panels = self.cp / PANEL;
        let fill = |q0: usize, out: &mut [f32]| {
            let np = out.len() / (rows * PANEL);
            for p in 0..rows {
                let xr = &x[p * c..(p + 1) * c];
                for dq in 0..np {
                    let j0 = (q0 + dq) * PANEL;
                    let o = &mut out[dq * rows * PANEL + p * PANEL..][..PANEL];
                    let j1 = (j0 + PANEL).min(c);
                    o[..j1 - j0].copy_from_slice(&xr[j0..j1]);
                    o[j1 - j0..].fill(0.0);
                }
            }
        };
        // A few panels per task: each task still reads its rows in order.
        let per = panels.div_ceil(par::tasks_for(rows * self.cp, 1 << 15, panels)).max(1);
        par::map_chunks_mut(pack, per * rows * PANEL, |t, out| fill(t * per, out));
    }

    /// The update of one packed slab of `rows` rows: every tile a task.
    fn add_packed(&self, pack: &[f32], rows: usize, sum: &mut [f64]) {
        let work = rows.saturating_mul(self.cp).saturating_mul(self.cp) / 2;
        let run = |t: usize, out: &mut [f64]| {
            let (ti, tj) = self.coords[t];
            self.tile_rows(pack, rows, ti, tj, out);
        };
        if par::tasks_for(work, 1 << 18, self.coords.len()) <= 1 {
            sum.chunks_mut(self.t * self.t).enumerate().for_each(|(t, out)| run(t, out));
        } else {
            par::map_chunks_mut(sum, self.t * self.t, run);
        }
    }

    /// Tile `(ti, tj)` over every chunk of the slab: per chunk, its register tiles in row order.
    fn tile_rows(&self, pack: &[f32], rows: usize, ti: usize, tj: usize, out: &mut [f64]) {
        let t = self.t;
        let (i0, j0) = (ti * t, tj * t);
        let (ni, nj) = ((self.cp - i0).min(t), (self.cp - j0).min(t));
        let panel = rows * PANEL;
        assert!(pack.len() >= self.cp * rows && out.len() >= t * t);
        for p0 in (0..rows).step_by(CHUNK) {
            let k = (rows - p0).min(CHUNK);
            for il in (0..ni).step_by(STRIP) {
                let i = i0 + il;
                // SAFETY: panel `i / PANEL` holds `rows` rows of PANEL from `(i / PANEL) * panel`,
                // and `i % PANEL + STRIP <= PANEL`; `p0 + k <= rows`.
                let a = unsafe { pack.as_ptr().add((i / PANEL) * panel + p0 * PANEL + i % PANEL) };
                // The diagonal tile's strip starts at its own panel (the upper triangle in whole
                // register tiles; the few sums below the diagonal are never read).
                let jl0 = if ti == tj { il / PANEL * PANEL } else { 0 };
                for jl in (jl0..nj).step_by(PANEL) {
                    let j = j0 + jl;
                    // SAFETY: as above for panel `j / PANEL`; the register tile's f64 rows
                    // `il..il + STRIP`, columns `jl..jl + PANEL` lie in the `t x t` tile.
                    unsafe {
                        let b = pack.as_ptr().add((j / PANEL) * panel + p0 * PANEL);
                        tile(a, b, k, out.as_mut_ptr().add(il * t + jl), t);
                    }
                }
            }
        }
    }
}

/// The f64 storage of a [`SymTiles`] sum, zeroed.
pub fn sym_sum(t: &SymTiles) -> Result<Vec<f64>> {
    try_alloc(t.len(), 0.0f64)
}
