//! The mask-fixed least-squares refit after a calibrated prune (docs/API.md, SparseGPT's
//! `refit`): with the keep-mask chosen, every row's kept weights are re-solved jointly so that
//! the layer's output on the calibration inputs moves as little as possible,
//! `min (ŵ - w) H (ŵ - w)ᵀ` over `ŵ` zero where pruned, `H` damped as the solver damps it.
//!
//! Why: SparseGPT's column loop fixes each column once its turn has passed, so the weights of
//! earlier columns never see the error of the columns pruned after them; its result is a good
//! start, not the optimum for its own mask. Boža (2024, "Fast and Optimal Weight Update for
//! Pruned Large Language Models") re-solves the weights for a fixed mask (by ADMM) and reports
//! the gain on LLaMA; here the solve is conjugate gradients, the rows batched so that each
//! iteration is one GEMM `P · H` (rows x cols x cols) shared by every row, warm-started from the
//! solver's weights and preconditioned by `diag(H)` (the activations' scales differ by orders of
//! magnitude between inputs). Each row's objective is kept only where it went down, so the
//! refit never undoes the solver, whatever the rounding.
//!
//! Memory: the view's original values and four `rows x cols` work arrays in f32 (X, G, P, Q),
//! and the damped `H` (`cols²` f32); every array is allocated before the first write.

use super::hessian::Hessian;
use crate::block::View;
use crate::core::alloc::try_alloc;
use crate::core::error::Result;
use crate::kernels::gemm::{gemm_acc, Gemm};

/// What the refit did, for the caller's report: the layer's summed objective before and after.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Refitted {
    pub before: f64,
    pub after: f64,
}

/// `(rows, cols, row stride, col stride)` of the view, as the solver read it.
pub(crate) type Dims = (usize, usize, usize, usize);

/// The refit's inputs and working memory, all taken before the solver writes, so that a refit
/// that cannot get its memory refuses the whole call with the weights untouched.
pub(crate) struct Refit {
    w0: Vec<f32>,
    hd: Vec<f32>,
    dinv: Vec<f32>,
    dead: Vec<bool>,
    free: Vec<bool>,
    x: Vec<f32>,
    g: Vec<f32>,
    p: Vec<f32>,
    q: Vec<f32>,
}

impl Refit {
    /// The view's values before the solver (the refit's target), the damped `H` (dead inputs'
    /// diagonal set to 1 first, as the solver does) and the work arrays.
    pub(crate) fn prepare(w: &View, dims: Dims, h: &Hessian, perc_damp: f64) -> Result<Refit> {
        let (rows, cols, _, _) = dims;
        // The view is 2-D (`dims2`), so its row-major copy is the `rows x cols` target.
        let w0 = w.values()?;
        let mut hm = h.matrix_f64()?;
        let dead: Vec<bool> = (0..cols).map(|j| hm[j * cols + j] == 0.0).collect();
        for j in (0..cols).filter(|&j| dead[j]) {
            hm[j * cols + j] = 1.0;
        }
        let damp = perc_damp * (0..cols).map(|j| hm[j * cols + j]).sum::<f64>() / cols as f64;
        let mut hd = try_alloc(cols * cols, 0.0f32)?;
        for (x, &v) in hd.iter_mut().zip(&hm) {
            *x = v as f32;
        }
        drop(hm);
        for j in 0..cols {
            hd[j * cols + j] += damp as f32;
        }
        let dinv: Vec<f32> = (0..cols).map(|j| 1.0 / hd[j * cols + j]).collect();
        let n = rows * cols;
        Ok(Refit {
            w0,
            hd,
            dinv,
            dead,
            free: try_alloc(n, false)?,
            x: try_alloc(n, 0.0f32)?,
            g: try_alloc(n, 0.0f32)?,
            p: try_alloc(n, 0.0f32)?,
            q: try_alloc(n, 0.0f32)?,
        })
    }

    /// Refits `w` (pruned by the solver to `mask`, view-shaped, 1 keeps) towards the values taken
    /// by [`Refit::prepare`], `iters` conjugate-gradient steps at most. Inputs the statistics never
    /// saw (diagonal 0) stay as the solver left them (0): their weights do not change the output.
    pub(crate) fn run(self, w: &View, dims: Dims, mask: &[u8], iters: usize) -> Refitted {
        let (rows, cols, s0, s1) = dims;
        let Refit { w0, hd, dinv, dead, mut free, mut x, mut g, mut p, mut q } = self;
        for (i, f) in free.iter_mut().enumerate() {
            *f = mask[i] != 0 && !dead[i % cols];
        }
        {
            let param = w.param();
            let data = param.data();
            for r in 0..rows {
                for c in 0..cols {
                    x[r * cols + c] = data[r * s0 + c * s1];
                }
            }
        }
        let gm = Gemm { m: rows, n: cols, k: cols, a_rs: cols, a_ks: 1, ldb: cols, ldc: cols, upper: false, kc: 0 };
        // G = (X - W0) H: half the objective's gradient, kept up to date along the steps. Q holds
        // X - W0 until the steps need it (one array less for a large layer).
        for ((d, &xv), &w0v) in q.iter_mut().zip(&x).zip(&w0) {
            *d = xv - w0v;
        }
        gemm_acc(&gm, &q, &hd, &mut g);
        let objective = |d: &[f32], g: &[f32], r: usize| -> f64 {
            let s = r * cols..(r + 1) * cols;
            d[s.clone()].iter().zip(&g[s]).map(|(&a, &b)| a as f64 * b as f64).sum()
        };
        let before: Vec<f64> = (0..rows).map(|r| objective(&q, &g, r)).collect();

        // Preconditioned residual Z = D⁻¹ R with R = -G on the free weights; P starts at Z.
        let mut rz: Vec<f64> = (0..rows)
            .map(|r| {
                let s = r * cols..(r + 1) * cols;
                let (pr, gr, fr) = (&mut p[s.clone()], &g[s.clone()], &free[s]);
                let mut acc = 0.0f64;
                for (((pv, &gv), &f), &di) in pr.iter_mut().zip(gr).zip(fr).zip(&dinv) {
                    if f {
                        *pv = -gv * di;
                        acc += -gv as f64 * *pv as f64;
                    }
                }
                acc
            })
            .collect();
        let first = rz.iter().cloned().fold(0.0f64, f64::max);
        for _ in 0..iters {
            // Every row converged (to rounding): the remaining steps would only add noise.
            if rz.iter().cloned().fold(0.0f64, f64::max) <= first * 1e-12 {
                break;
            }
            q.fill(0.0);
            gemm_acc(&gm, &p, &hd, &mut q);
            for (r, rzr) in rz.iter_mut().enumerate() {
                let s = r * cols..(r + 1) * cols;
                let (xr, gr, pr, qr, fr) = (&mut x[s.clone()], &mut g[s.clone()], &mut p[s.clone()], &q[s.clone()], &free[s]);
                let pq: f64 = pr.iter().zip(qr).map(|(&a, &b)| a as f64 * b as f64).sum();
                let alpha = if pq > 0.0 && *rzr > 0.0 { (*rzr / pq) as f32 } else { 0.0 };
                let mut acc = 0.0f64;
                for ((((xv, gv), &pv), &qv), (&f, &di)) in xr.iter_mut().zip(gr.iter_mut()).zip(pr.iter()).zip(qr).zip(fr.iter().zip(&dinv))
                {
                    *xv += alpha * pv;
                    *gv += alpha * qv;
                    if f {
                        acc += -*gv as f64 * (-*gv * di) as f64;
                    }
                }
                let beta = if *rzr > 0.0 { (acc / *rzr) as f32 } else { 0.0 };
                for ((pv, &gv), (&f, &di)) in pr.iter_mut().zip(gr.iter()).zip(fr.iter().zip(&dinv)) {
                    *pv = if f { -gv * di + beta * *pv } else { 0.0 };
                }
                *rzr = acc;
            }
        }
        // The objective after, from the weights themselves (not the running G), row by row.
        for ((d, &xv), &w0v) in q.iter_mut().zip(&x).zip(&w0) {
            *d = xv - w0v;
        }
        g.fill(0.0);
        gemm_acc(&gm, &q, &hd, &mut g);
        let param = w.param();
        let mut data = param.data_mut();
        let (mut sb, mut sa) = (0.0f64, 0.0f64);
        for r in 0..rows {
            let after = objective(&q, &g, r);
            sb += before[r];
            if after < before[r] && after.is_finite() {
                sa += after;
                for c in 0..cols {
                    data[r * s0 + c * s1] = x[r * cols + c];
                }
            } else {
                sa += before[r];
            }
        }
        Refitted { before: sb, after: sa }
    }
}
