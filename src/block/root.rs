//! How the Adam-conditioned step finds `mu` per block: the defining bisection (docs/API.md,
//! "The soft threshold"), or (the default) a
//! safeguarded Newton search for the root that bisection converges to.
//!
//! With `a = H x0`, `r_i = 1 / (h_i + mu)` and `S2 = sum a² r²`, the step solves
//! `zeta(mu) = mu sqrt(S2) = t`. Newton runs on `F(mu) = 1 / sqrt(S2) - mu / t`, which has the
//! same root and the same sign as `t - zeta`, and is *linear* in `mu` when `H` is constant over
//! the block (`1 / sqrt(S2) = (h + mu) / ||a||`), so it is nearly linear for real conditioners
//! and Newton converges in a few steps from the bracket's midpoint. With `S3 = sum a² r³` and
//! `Sh = sum a² r² (h r)` (so `S2 = Sh + mu S3`), `F' = S3 / S2^(3/2) - 1 / t` and the step is
//!
//! `mu - F / F' = mu - S2 g / (S3 g - sqrt(S2) Sh)`, `g = t - zeta`,
//!
//! written so that no two nearly equal terms are subtracted at the root (`g -> 0` there; the
//! plain `t S3 - sqrt(S2) S2` cancels when `mu >> h`). One evaluation is one pass over the
//! block with one division per element (`r`), as one bisection step is.
//!
//! The search starts from the root of a second-order model built from the block's statistics
//! (the `(H x0)²`-weighted mean and variance of `H`, [`kernels::scalar::root_start_mu`]; the
//! midpoint if that falls outside the bracket), and each evaluation also forms
//! `S4 = sum a² r⁴`, which gives `F''`: the Halley root of the quadratic Taylor model is
//! accepted after a single evaluation when a bound on `F'''` (from `min H`, `max H` and the
//! concavity of `1 / sqrt(S2)`) proves the true root within `tol` of it
//! ([`kernels::scalar::certified_root`]). On Adam-like conditioners that is nearly every block
//! (bench/README.md has the share); the others continue with the Newton steps below.
//!
//! The search keeps the bisection's bracket `[lo, hi]` and its test `zeta < t` (which end moves), so
//! the root found lies in the same bracket (clamped to it, as the bisection's limit is). The
//! bisection only ever compares midpoints with that root, so its iterate at the global
//! stop is then read off the root without evaluating ([`bisection_iterate`]; the stop itself
//! follows from the brackets' widths, [`Stop::steps`]): the method returns what the bisection
//! returns, including with a small `maxIter` whose iterates are far from converged. A Newton step that leaves the bracket or fails to halve the previous step is replaced by
//! the midpoint (or by a not yet evaluated bracket end it overshoots: the `eps` in the
//! bracket's denominator can put the root just outside). `maxIter` bounds the evaluations; the
//! search stops when the step (or half the bracket) is below the error `maxIter` halvings of the
//! bracket leave, `atol / 2` (the bisection's stop), or the float32 resolution of the root,
//! `4 eps32 hi ||a|| / D`, whichever is largest. Blocks are independent (no global stop), so
//! threads give the same bits.

use crate::bail;
use crate::core::error::Result;
use crate::kernels;

/// The root finder of the Adam-conditioned soft threshold (`method` in the JS options).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// Safeguarded Newton per block (`'newton'`, the default): 1 evaluation for nearly every
    /// searched block on Adam-like conditioners (certified Halley step), 2 for the others.
    #[default]
    Newton,
    /// The defining bisection, step for step, with its global `atol` stop (`'bisection'`).
    Bisection,
}

impl Method {
    /// The JS name; anything else is `invalid_arguments`.
    pub fn parse(name: &str) -> Result<Method> {
        match name {
            "newton" => Ok(Method::Newton),
            "bisection" => Ok(Method::Bisection),
            _ => bail!(InvalidArguments, "method must be 'newton' or 'bisection', got '{name}'"),
        }
    }
}

/// What a block needs once its bracket is known (Newton method).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Plan {
    /// The bracket midpoint is the bisection's limit (`lo == hi`, or no iteration): no evaluation.
    Midpoint,
    /// A zeroed block (`D <= 0`, `H > 0`): `hi`, no evaluation.
    Upper,
    /// The Newton search.
    Search,
    /// Degenerate data (non-finite, non-positive `H`, negative threshold...): the defining
    /// bisection on this block alone, whose NaN/infinity behaviour is the definition.
    Bisect,
}

/// The plan of a block with bracket `[lo, hi]`, survivor factor `keep`, `||H x0|| = hx_norm`,
/// `min H = h_min`, threshold `t`. The midpoint is the bisection's every iterate when
/// `lo == hi` (a zero threshold, or `H` constant over the block: the closed form `t h / den`);
/// a zeroed block's written values (`±0`, NaN for non-finite weights) do not depend on `mu`
/// when `H > 0`, and `hi` is finite exactly when the bisection's limit is.
pub(super) fn plan(lo: f32, hi: f32, keep: f32, hx_norm: f32, h_min: f32, t: f32, max_iter: usize) -> Plan {
    if max_iter == 0 || lo == hi {
        return Plan::Midpoint;
    }
    if keep == 0.0 && h_min > 0.0 {
        return Plan::Upper;
    }
    let finite = t.is_finite() && hx_norm.is_finite() && lo.is_finite() && hi.is_finite();
    if keep != 0.0 && finite && t > 0.0 && h_min > 0.0 && lo < hi && hx_norm > t {
        Plan::Search
    } else {
        Plan::Bisect
    }
}

/// The accepted error in `mu` of a searched block (see the module doc); `halvings` is
/// `2^-(max_iter + 1)` ([`halvings`]).
#[inline]
pub(super) fn tolerance(lo: f32, hi: f32, hx_norm: f32, t: f32, halvings: f32, atol: f32) -> f32 {
    let resolution = 4.0 * f32::EPSILON * hi * (hx_norm / (hx_norm - t));
    ((hi - lo) * halvings).max(atol * 0.5).max(resolution)
}

/// `2^-(max_iter + 1)`: the share of its bracket a bisection's result can still be off by.
pub(super) fn halvings(max_iter: usize) -> f32 {
    0.5f32.powi(i32::try_from(max_iter.saturating_add(1).min(400)).unwrap_or(400))
}

/// The bisection's global stop, known per block from its bracket: `max_iter` steps, or fewer when
/// every bracket is below `atol` earlier.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stop {
    pub max_iter: usize,
    pub atol: f32,
    /// Brackets at least this wide (`atol 2^(max_iter - 1)`) need all `max_iter` steps.
    wide: f64,
}

impl Stop {
    pub fn new(max_iter: usize, atol: f32) -> Stop {
        let wide = f64::from(atol) * 2f64.powi(i32::try_from(max_iter.saturating_sub(1).min(2000)).unwrap_or(2000));
        Stop { max_iter, atol, wide }
    }

    /// Steps after which a bracket of width `w`, halved each step, is below `atol`: a block's
    /// share in the global stop (`max_iter` when it never is: `atol = 0`, a NaN or infinite
    /// width). `w 2^-k < atol` first holds at `k = floor(log2(w / atol)) + 1`, the exponent of
    /// `w / atol` read exactly from its f64 bits.
    #[inline]
    pub fn steps(&self, w: f32) -> usize {
        let w = f64::from(w);
        if w >= self.wide || w.is_nan() {
            return self.max_iter;
        }
        let ratio = w / f64::from(self.atol);
        if !(self.atol > 0.0 && ratio.is_finite()) {
            return self.max_iter;
        }
        if ratio < 2.0 {
            return self.max_iter.min(1);
        }
        // ratio >= 2 is a normal f64: its biased exponent minus 1023 is floor(log2).
        let exp = ((ratio.to_bits() >> 52) & 0x7ff) as usize - 1023;
        (exp + 1).min(self.max_iter)
    }
}

/// The defining bisection's iterate after `k` steps (`cells = 2^k`) on `[lo, hi]` for a block whose
/// root is `r`: every midpoint below the root moves `lo` up, every other one `hi` down, so the
/// iterate is the middle of the `2^-k` cell of the bracket that holds `r`, read off without
/// evaluating (in f64; the bisection's f32 midpoints can differ in the last bits). Past 48 steps the
/// cell is below f32 resolution: the root itself. The arithmetic is the kernel's
/// ([`kernels::scalar::bisection_iterate`], which the SIMD quad kernel reproduces).
#[inline]
pub(super) fn bisection_iterate(lo: f32, hi: f32, r: f32, k: usize, cells: f64) -> f32 {
    kernels::scalar::bisection_iterate(lo, hi, r, k, cells)
}
