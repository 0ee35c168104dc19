//! The shapes and strides of the GEMM calls, shared by the GEMMs' dispatch ([`super::gemm`],
//! [`super::gemm_f64`]) and both backends' register tiles (`scalar/gemm*`, `simd/gemm*`).

/// Shapes and strides of one `C += A · B` call.
///
/// `C` is `m x n` with row stride `ldc` (columns contiguous); `A` is `m x k` read at
/// `a[i * a_rs + p * a_ks]` (any strides: `Xᵀ` is a view of `X`); `B` is `k x n`, row stride
/// `ldb`, columns contiguous. With `upper`, row `i` only gets the columns
/// `j >= 4 * floor(i / 4)` (a symmetric product's upper triangle, in whole 4-row tiles).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gemm {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub a_rs: usize,
    pub a_ks: usize,
    pub ldb: usize,
    pub ldc: usize,
    pub upper: bool,
    /// Products per partial sum (see the module's contract); 0 for one running sum.
    pub kc: usize,
}

impl Gemm {
    /// First column row `i` receives.
    #[inline(always)]
    pub(crate) fn col_start(&self, i: usize) -> usize {
        if self.upper {
            (i / 4 * 4).min(self.n)
        } else {
            0
        }
    }

    /// The chunk length, and whether each chunk sums from zero (`kc > 0`) or continues `c`.
    #[inline(always)]
    pub(crate) fn chunking(&self) -> (usize, bool) {
        if self.kc == 0 {
            (self.k.max(1), false)
        } else {
            (self.kc, true)
        }
    }

    /// Minimum lengths of the three slices (panics in the kernels otherwise).
    pub(crate) fn check(&self, a: &[f32], b: &[f32], c: &[f32]) {
        if self.m == 0 || self.n == 0 {
            return;
        }
        if self.k > 0 {
            assert!(a.len() > (self.m - 1) * self.a_rs + (self.k - 1) * self.a_ks, "gemm: A too short");
            assert!(b.len() >= (self.k - 1) * self.ldb + self.n, "gemm: B too short");
        }
        assert!(c.len() >= (self.m - 1) * self.ldc + self.n, "gemm: C too short");
    }
}

/// Bytes of one packed panel of `B`: whole 8-column strips over all `k` rows, kept to about half a
/// core's L2 so that the panel stays there while every row of `A` passes over it.
const PANEL_BYTES: usize = 256 << 10;

/// Rows of `A` from which packing `B` pays: below, the copy costs more than the strided reads it saves.
const PACK_MIN_ROWS: usize = 16;

impl Gemm {
    /// Columns per packed panel of `B` (whole 8-column strips), or `None` where `B` is read in place:
    /// fewer than 16 rows of `A`, one product, fewer than 8 columns, or the `upper` shape (the
    /// Hessian's narrow inputs).
    pub(crate) fn panel_cols(&self) -> Option<usize> {
        if self.m < PACK_MIN_ROWS || self.k < 2 || self.n < 8 || self.upper {
            return None;
        }
        Some(((PANEL_BYTES / 4 / self.k / 8).max(1) * 8).min(self.strip_cols()))
    }

    /// Columns of `B` in whole 8-column strips; the rest is read in place.
    pub(crate) fn strip_cols(&self) -> usize {
        self.n / 8 * 8
    }

    /// Copies columns `j0..j1` (whole strips) of `B` into `pack`, strip `s` as a contiguous
    /// `k x 8` block at `s * 8k`: each product's 8 values side by side, the strips one after another.
    pub(crate) fn pack_panel(&self, b: &[f32], j0: usize, j1: usize, pack: &mut [f32]) {
        for (s, j) in (j0..j1).step_by(8).enumerate() {
            let dst = &mut pack[s * 8 * self.k..(s + 1) * 8 * self.k];
            for p in 0..self.k {
                dst[p * 8..p * 8 + 8].copy_from_slice(&b[p * self.ldb + j..p * self.ldb + j + 8]);
            }
        }
    }

    /// Checks a packed panel call (see the backends' `gemm_acc_panel`): `A` and `C` as `check`,
    /// `pack` holding `j1 - j0` columns of `k` products.
    pub(crate) fn check_panel(&self, a: &[f32], pack: &[f32], j0: usize, j1: usize, c: &[f32]) {
        assert!(j0.is_multiple_of(8) && j1.is_multiple_of(8) && j0 < j1 && j1 <= self.n && !self.upper, "gemm: panel {j0}..{j1}");
        assert!(pack.len() >= (j1 - j0) * self.k, "gemm: panel too short");
        if self.m == 0 {
            return;
        }
        if self.k > 0 {
            assert!(a.len() > (self.m - 1) * self.a_rs + (self.k - 1) * self.a_ks, "gemm: A too short");
        }
        assert!(c.len() >= (self.m - 1) * self.ldc + j1, "gemm: C too short");
    }
}

/// Rows of a register tile (and the row granularity of the `lower` shape).
pub const MR: usize = 4;
/// Columns of a register tile: two f64x2 vectors.
pub const NR: usize = 4;

/// Shapes and strides of one `C -= A · B`: `C` is `m x n` (row stride `ldc`), `A` is `m x k`
/// (row stride `lda`, `p` contiguous), `B` is `k x n` (row stride `ldb`, columns contiguous).
/// With `lower`, row `i` only gets the columns `j < MR * (floor(i / MR) + 1)`: the lower
/// triangle in whole `MR`-row tiles (the few elements above the diagonal it also computes are
/// the caller's scratch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubMul {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub lda: usize,
    pub ldb: usize,
    pub ldc: usize,
    pub lower: bool,
}

impl SubMul {
    /// One past the last column that row group `i0` (a multiple of `MR`) receives.
    #[inline(always)]
    pub(crate) fn col_end(&self, i0: usize) -> usize {
        if self.lower {
            (i0 + MR).min(self.n)
        } else {
            self.n
        }
    }
}
