//! The per-lane states of the quad kernels (four blocks side by side, lane `k` being one
//! block) and the constants of the Newton search's start.

/// Four bisection states side by side, lane `k` being one block (the Adam-conditioned step,
/// see `block::prox`). Blocks go in fours so that one SIMD division serves four blocks, and
/// many such groups are stepped in turn so that their dependency chains (divide, sum, square
/// root, compare, halve) overlap instead of each waiting on its own latency.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[repr(C, align(16))]
pub struct ProxLanes {
    pub lo: [f32; 4],
    pub hi: [f32; 4],
    pub mu: [f32; 4],
    pub t: [f32; 4],
    pub iters: [u32; 4],
    /// `u32::MAX` for a lane that still steps, 0 for one that stopped.
    pub go: [u32; 4],
}

/// When a lane of [`super::prox_step4`] stops stepping.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ProxStop {
    /// At `max_iter` steps or once its bracket is narrower than `atol` (the defining
    /// bisection's test, docs/API.md).
    Converged { max_iter: u32, atol: f32 },
    /// At exactly this many steps.
    At(u32),
}

/// Four safeguarded Newton searches side by side, lane `k` being one block (the default method
/// of the Adam-conditioned step, see `block::root`). `[lo, hi]` always holds the root (or the
/// bracket end it is clamped to); a `*_open` end has not been evaluated yet, so a Newton step
/// beyond it may land on it instead of bisecting.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[repr(C, align(16))]
pub struct RootLanes {
    pub lo: [f32; 4],
    pub hi: [f32; 4],
    pub mu: [f32; 4],
    pub t: [f32; 4],
    /// Accepted error in `mu`: a step (or half bracket) at most this long ends the search.
    pub tol: [f32; 4],
    /// Length of the previous step (the bracket width before the first one).
    pub prev: [f32; 4],
    /// Length of the previous step if it was a Newton step, else 0.
    pub newt: [f32; 4],
    pub lo_open: [u32; 4],
    pub hi_open: [u32; 4],
    /// `min h` and `max h` of the block: they bound how far the Taylor model of one evaluation
    /// can be off (the certified stop of [`super::scalar::root_step_lane`]).
    pub h_min: [f32; 4],
    pub h_max: [f32; 4],
    pub evals: [u32; 4],
    /// `u32::MAX` for a lane that still searches, 0 for one that stopped.
    pub go: [u32; 4],
}

impl RootLanes {
    /// Lane `k` starts a search of the root in `[lo, hi]` from `mu`, for threshold `t`, within
    /// `tol`, on a block whose conditioners lie in `[h_min, h_max]`.
    #[allow(clippy::too_many_arguments)]
    pub fn search(&mut self, k: usize, lo: f32, hi: f32, mu: f32, t: f32, tol: f32, h_min: f32, h_max: f32) {
        (self.lo[k], self.hi[k], self.mu[k], self.t[k], self.tol[k]) = (lo, hi, mu, t, tol);
        (self.h_min[k], self.h_max[k]) = (h_min, h_max);
        self.prev[k] = hi - lo;
        (self.lo_open[k], self.hi_open[k], self.go[k]) = (u32::MAX, u32::MAX, u32::MAX);
    }

    /// Four searches from [`super::root_start4`]'s `[lo, hi, mu, tol]`, thresholds `t` and the
    /// quad's [`super::prox_stats4`].
    pub fn quad(start: &[[f32; 4]; 4], t: [f32; 4], stats: &[[f32; 4]; 5]) -> RootLanes {
        let mut rl = RootLanes::default();
        let [lo, hi, mu, tol] = start;
        for k in 0..4 {
            rl.search(k, lo[k], hi[k], mu[k], t[k], tol[k], stats[1][k], stats[2][k]);
        }
        rl
    }
}

/// What [`super::root_start4`] needs besides the blocks' statistics: the bracket's `eps` and
/// denominator kind, and the search tolerance's terms (see `block::root::tolerance`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RootStart {
    pub eps: f32,
    /// `den = max(D, eps)` (BlockCoupling) rather than `max(D, 0) + eps` (BlockSpec).
    pub coupling: bool,
    /// `2^-(max_iter + 1)`.
    pub halvings: f32,
    pub atol: f32,
}
