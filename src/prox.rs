//! The Adam-conditioned group-lasso proximal step, solved per block by bisection on `mu`
//! exactly as the seed does it (bracket, midpoint, global `atol` stop).
//!
//! For block `b` with weights `x0`, diagonal conditioner `H > 0` and threshold `t`, the prox
//! of `t * ||x_b||` in the `H` metric is `x = H x0 / (H + mu)` with `mu * ||H x0 / (H + mu)|| = t`.
//! The seed brackets `mu` in `[t * min H / den, t * max H / den]` with `D = ||H x0|| - t` and runs
//! `max_iter` midpoint steps, stopping early when *every* block's bracket is narrower than
//! `atol`. Each block's bracket evolves independently of the others; only the stop is global.
//! So this runs each block to its own convergence while its data is hot in cache, takes the
//! global stop `K = max_b k_b`, and continues the blocks that stopped earlier up to `K`: the
//! same iterates as the seed's whole-tensor loop, without 20 passes over the weights.

use crate::error::Result;
use crate::kernels::{self, nan_max, nan_min, Reduction};
use crate::layout::{Strided, Tiling};
use crate::param::try_alloc;

/// The two bracket denominators of the seed (a quirk the conformance cases pin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bracket {
    /// `BlockSpec`: `den = max(D, 0) + eps`.
    BlockSpec,
    /// `BlockCoupling`: `den = max(D, eps)`.
    Coupling,
}

/// One spec's share of the (joint) blocks.
pub struct Part<'a> {
    pub tiling: &'a Tiling,
    pub x_layout: &'a Strided,
    pub x: &'a [f32],
    pub h_layout: &'a Strided,
    pub h: &'a [f32],
    /// Aligned grid index -> this spec's grid index (`None`: identity).
    pub map: Option<&'a [usize]>,
}

#[derive(Clone, Copy)]
struct State {
    lo: f32,
    hi: f32,
    mu: f32,
    iters: usize,
}

/// Returns `mu` per block and the survivor factors (1 keeps, 0 for `D <= 0`), both indexed by
/// the aligned grid.
pub fn bisect(parts: &[Part], t: &[f32], max_iter: usize, atol: f32, eps: f32, bracket: Bracket) -> Result<(Vec<f32>, Vec<f32>)> {
    let nb = t.len();
    let mut states: Vec<State> = try_alloc(nb, State { lo: 0.0, hi: 0.0, mu: 0.0, iters: 0 })?;
    let mut keep = try_alloc(nb, 1.0f32)?;
    let (mut xb, mut hb) = (Vec::new(), Vec::new());
    let gather = |b: usize, xb: &mut Vec<f32>, hb: &mut Vec<f32>| {
        xb.clear();
        hb.clear();
        for p in parts {
            let sb = p.map.map_or(b, |m| m[b]);
            p.tiling.gather_block(p.x_layout, p.x, sb, xb);
            p.tiling.gather_block(p.h_layout, p.h, sb, hb);
        }
    };
    let converged = |s: &State| (s.lo - s.hi).abs() < atol;
    let step = |s: &mut State, xb: &[f32], hb: &[f32], tb: f32| {
        let zeta = s.mu * kernels::cond_sumsq(xb, hb, s.mu).sqrt();
        if zeta < tb {
            s.lo = s.mu;
        } else {
            s.hi = s.mu;
        }
        s.mu = (s.lo + s.hi) / 2.0;
        s.iters += 1;
    };

    // Phase 1: bracket every block and run it until its own bracket is below atol.
    let mut global = 0usize;
    for b in 0..nb {
        gather(b, &mut xb, &mut hb);
        let hx: Vec<f32> = xb.iter().zip(&hb).map(|(x, h)| h * x).collect();
        let hx_norm = kernels::scalar::reduce_chunk(Reduction::SumSq, &hx).sqrt();
        let h_min = hb.iter().fold(f32::INFINITY, |a, &h| nan_min(a, h));
        let h_max = hb.iter().fold(f32::NEG_INFINITY, |a, &h| nan_max(a, h));
        let tb = t[b];
        let d = hx_norm - tb;
        if d <= 0.0 {
            keep[b] = 0.0;
        }
        let den = match bracket {
            Bracket::BlockSpec => nan_max(d, 0.0) + eps,
            Bracket::Coupling => nan_max(d, eps),
        };
        let lo = nan_max((tb * h_min) / den, 0.0);
        let hi = nan_max((tb * h_max) / den, 0.0);
        let mut s = State { lo, hi, mu: (lo + hi) / 2.0, iters: 0 };
        while s.iters < max_iter {
            step(&mut s, &xb, &hb, tb);
            if converged(&s) {
                break;
            }
        }
        // A block that never converges (NaN bracket) keeps the global loop running to max_iter.
        global = global.max(if converged(&s) { s.iters } else { max_iter });
        states[b] = s;
    }
    // Phase 2: the seed only stops when all blocks are converged; continue the early ones.
    for b in 0..nb {
        if states[b].iters < global {
            gather(b, &mut xb, &mut hb);
            let mut s = states[b];
            while s.iters < global {
                step(&mut s, &xb, &hb, t[b]);
            }
            states[b] = s;
        }
    }
    Ok((states.iter().map(|s| s.mu).collect(), keep))
}
