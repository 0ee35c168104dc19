//! The reference composition of the fused Newton soft threshold on a run of blocks.

use super::newton::prox_root4;
use super::pack::{prox_pack4, prox_stats4};
use super::read_off::bisection_iterate;
use super::start::{root_start_lane, zeroed_mu};
use super::write::prox_write;
use crate::kernels::block_run::{BlockRun, QuadSearch};
use crate::kernels::lanes::RootLanes;

/// The Newton method's whole soft threshold on a run of blocks in place, for each quad of four
/// blocks that are plain searches or zeroed blocks: statistics ([`prox_stats4`]), bracket and
/// start ([`super::root_start_lane`]; [`super::zeroed_mu`] for a zeroed block, which is not
/// searched), the search ([`prox_root4`] until every lane stops), the bisection's iterate at
/// `k_stop` read off each root ([`super::bisection_iterate`]) and the write
/// `x <- ((h / (h + mu)) x) keep` ([`prox_write`]), with those kernels' bits, reading the blocks
/// where they lie instead of gathering and packing them. `t[i]` is block `i`'s threshold. `ok[q]`
/// tells whether quad `q` was done; where it is `false` (a lane is neither) nothing of that quad
/// was written and the caller takes the general path for its blocks.
///
/// The composition [`crate::kernels::adam_run`] is defined by, quad by quad (the quads are
/// independent): gather the four blocks, pack, statistics, start, search, read off, write.
pub fn adam_run(x: &mut [f32], h: &[f32], run: &BlockRun, t: &[f32], s: &QuadSearch, ok: &mut [bool]) {
    run.check(x.len(), h.len(), t.len(), ok.len());
    let n = run.rows * 4 * run.vecs;
    let w = 4 * run.vecs;
    // Four buffers of 4 n: on the stack for blocks up to 64 elements.
    let (mut stack, mut heap) = ([0.0f32; 1024], Vec::new());
    let buf: &mut [f32] = if 16 * n <= stack.len() {
        &mut stack[..16 * n]
    } else {
        heap.resize(16 * n, 0.0);
        &mut heap
    };
    let (xb, rest) = buf.split_at_mut(4 * n);
    let (hb, rest) = rest.split_at_mut(4 * n);
    let (hxt, ht) = rest.split_at_mut(4 * n);
    for (q, ok) in ok.iter_mut().enumerate() {
        let at: [(usize, usize); 4] = std::array::from_fn(|k| run.block_at(q, k));
        for (k, &(xo, ho)) in at.iter().enumerate() {
            for r in 0..run.rows {
                let (xo, ho) = (xo + r * run.x_stride, ho + r * run.h_stride);
                xb[k * n + r * w..][..w].copy_from_slice(&x[xo..xo + w]);
                hb[k * n + r * w..][..w].copy_from_slice(&h[ho..ho + w]);
            }
        }
        prox_pack4(xb, hb, hxt, ht);
        let stats = prox_stats4(hxt, ht);
        let qt: [f32; 4] = std::array::from_fn(|k| t[run.block(q, k)]);
        // Each lane a plain search or a zeroed block, else the quad is refused.
        let lanes: [Option<Result<[f32; 4], f32>>; 4] = std::array::from_fn(|k| {
            let zeroed = || zeroed_mu(stats[0][k].sqrt(), qt[k], stats[1][k], stats[2][k], &s.start, s.max_evals);
            root_start_lane(&stats, k, qt[k], &s.start).map(Ok).or_else(|| zeroed().map(Err))
        });
        if lanes.iter().any(Option::is_none) {
            *ok = false;
            continue;
        }
        let lanes = lanes.map(Option::unwrap);
        let mut rl = RootLanes::default();
        for (k, lane) in lanes.iter().enumerate() {
            if let Ok([lo, hi, mu, tol]) = *lane {
                rl.search(k, lo, hi, mu, qt[k], tol, stats[1][k], stats[2][k]);
            }
        }
        while prox_root4(hxt, ht, &mut rl, s.max_evals) {}
        for (k, &(xo, _)) in at.iter().enumerate().take(run.lanes(q)) {
            let (m, keep) = match lanes[k] {
                Ok([lo, hi, ..]) => (bisection_iterate(lo, hi, rl.mu[k], s.k_stop, s.cells), 1.0),
                Err(mu) => (mu, 0.0),
            };
            let xk = &mut xb[k * n..(k + 1) * n];
            prox_write(xk, &hb[k * n..(k + 1) * n], n, &[(m, keep)], 1);
            for r in 0..run.rows {
                let xo = xo + r * run.x_stride;
                x[xo..xo + w].copy_from_slice(&xk[r * w..(r + 1) * w]);
            }
        }
        *ok = true;
    }
}
