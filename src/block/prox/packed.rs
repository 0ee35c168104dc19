//! A batch's blocks packed four to a quad, and the quads' searches run iteration-outer.

use crate::kernels::{self, ProxLanes, ProxStop, RootLanes};

/// A batch's quads, element-major (see [`super::ctx::Ctx::run_quads`]), reused across batches.
#[derive(Default)]
pub(super) struct Packed {
    pub(super) hxt: Vec<f32>,
    pub(super) ht: Vec<f32>,
    pub(super) lanes: Vec<ProxLanes>,
    pub(super) roots: Vec<RootLanes>,
}

impl Packed {
    /// Steps the quads' bisections (`lanes`) iteration-outer until every lane stops: each quad's
    /// step is one dependency chain, and the quads' chains overlap.
    pub(super) fn step_lanes(&mut self, nq: usize, stop: ProxStop) {
        let mut any = true;
        while any {
            any = false;
            for (q, lanes) in self.lanes.iter_mut().enumerate() {
                if lanes.go != [0; 4] {
                    any |= kernels::prox_step4(&self.hxt[q * nq..(q + 1) * nq], &self.ht[q * nq..(q + 1) * nq], lanes, stop);
                }
            }
        }
    }

    /// The Newton searches (`roots`), iteration-outer in the same way.
    pub(super) fn search_roots(&mut self, nq: usize, max_evals: u32) {
        let mut any = true;
        while any {
            any = false;
            for (q, rl) in self.roots.iter_mut().enumerate() {
                if rl.go != [0; 4] {
                    any |= kernels::prox_root4(&self.hxt[q * nq..(q + 1) * nq], &self.ht[q * nq..(q + 1) * nq], rl, max_evals);
                }
            }
        }
    }
}
