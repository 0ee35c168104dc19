//! The Adam-conditioned group-lasso proximal step: `mu` per block by the defining bisection
//! (docs/API.md, "The soft threshold": bracket, midpoint, global `atol` stop), or by the safeguarded Newton search of
//! [`super::root`] (the default) in the same bracket.
//!
//! For block `b` with weights `x0`, diagonal conditioner `H > 0` and threshold `t`, the prox
//! of `t * ||x_b||` in the `H` metric is `x = H x0 / (H + mu)` with `mu * ||H x0 / (H + mu)|| = t`.
//! The bisection brackets `mu` in `[t * min H / den, t * max H / den]` with `D = ||H x0|| - t` and runs
//! `max_iter` midpoint steps, stopping early when *every* block's bracket is narrower than
//! `atol`. Each block's bracket evolves independently of the others; only the stop is global.
//! So this runs each block to its own convergence while its data is hot in cache, takes the
//! global stop `K = max_b k_b`, and continues the blocks that stopped earlier up to `K`: the
//! same iterates as one whole-tensor loop of that bisection, without 20 passes over the weights.

mod ctx;
mod fused;
mod packed;
mod part;

use self::ctx::{Ctx, State};
pub use self::part::{Bracket, Part};
use super::root::{self, Method};
use crate::core::alloc::try_alloc;
use crate::core::error::Result;
use crate::kernels::par;
use crate::layout::{Strided, Tiling};

/// BlockCoupling's final write, `x * H / (H + mu)` in that order of operations, with the 0/0 definition of
/// BlockSpec's ([`crate::kernels::scalar::prox_scaled`]).
#[inline]
pub fn scaled_coupling(x: f32, h: f32, mu: f32) -> f32 {
    let d = h + mu;
    if d == 0.0 {
        x
    } else {
        x * h / d
    }
}

/// The Newton method on one 2-D spec in a single fused pass that also writes the result
/// (`data <- x H / (H + mu)`, non-survivors zeroed, as [`solve`] and the caller's write give);
/// `false`, with nothing written, where it does not apply (see [`fused`]): use [`solve`].
#[allow(clippy::too_many_arguments)]
pub fn solve_in_place(
    tiling: &Tiling,
    x_layout: &Strided,
    data: &mut [f32],
    h_layout: &Strided,
    h: &[f32],
    t: &[f32],
    max_iter: usize,
    atol: f32,
    eps: f32,
    bracket: Bracket,
) -> bool {
    let ctx = Ctx::new(&[], t, max_iter, atol, eps, bracket, Method::Newton);
    fused::solve_in_place(&ctx, tiling, x_layout, data, h_layout, h)
}

/// Returns `mu` per block and the survivor factors (1 keeps, 0 for `D <= 0`), both indexed by
/// the aligned grid. Blocks are independent until the bisection's global stop (and entirely
/// with Newton), so chunks of blocks run in parallel (with threads) with the same per-block
/// iterates as the sequential loop.
pub fn solve(
    parts: &[Part],
    t: &[f32],
    max_iter: usize,
    atol: f32,
    eps: f32,
    bracket: Bracket,
    method: Method,
) -> Result<(Vec<f32>, Vec<f32>)> {
    let nb = t.len();
    let init = State { lo: 0.0, hi: 0.0, mu: 0.0, iters: 0, keep: 1.0, active: false, root: false };
    let mut states: Vec<State> = try_alloc(nb, init)?;
    let ctx = Ctx::new(parts, t, max_iter, atol, eps, bracket, method);
    let per_block: usize = parts.iter().map(|p| p.tiling.numel_per_block()).sum::<usize>().max(1);
    let passes = if method == Method::Newton { max_iter.clamp(1, 4) } else { max_iter.max(1) };
    let tasks = par::tasks_for(nb * per_block * passes, 1 << 16, nb);
    let chunk = nb.div_ceil(tasks.max(1)).max(1);

    // Phase 1: bracket every block and run it until its own bracket is below atol.
    let global = par::map_chunks_mut(&mut states, chunk, |i, st| ctx.run_chunk(st, i * chunk, None)).into_iter().max().unwrap_or(0);
    // Phase 2: the bisection's stop is global (every block converged); continue the early ones.
    if states.iter().any(|s| s.iters < global) {
        par::map_chunks_mut(&mut states, chunk, |i, st| ctx.run_chunk(st, i * chunk, Some(global)));
    }
    // Newton: the bisection's iterate at the global stop, read off each block's root.
    if method == Method::Newton {
        let cells = 2f64.powi(i32::try_from(global.min(64)).unwrap_or(64));
        par::map_chunks_mut(&mut states, chunk, |_, st| {
            for s in st.iter_mut().filter(|s| s.root) {
                s.mu = root::bisection_iterate(s.lo, s.hi, s.mu, global, cells);
            }
        });
    }
    let mu = states.iter().map(|s| s.mu).collect();
    let keep = states.iter().map(|s| s.keep).collect();
    Ok((mu, keep))
}
