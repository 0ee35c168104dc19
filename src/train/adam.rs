//! Adam (Kingma & Ba) with a keep-mask per parameter: a weight that is zero when training
//! starts (a pruned weight) is held at zero — its gradient is dropped and its moments stay 0 —
//! so the sparsity pattern of a pruned student is kept exactly. Removed channels are absent
//! from the shapes and so stay removed.

use super::grid::HeldGrid;
use super::tensor::Tensor;
use crate::core::error::{Error, ErrorKind, Result};
use crate::kernels::{adam_update, par, AdamCoefs};

/// Elements per task of an update split over workers: large enough that handing a run out costs
/// under 1% of it, small enough that a 384 × 768 weight makes 18 of them.
const UPDATE_RUN: usize = 1 << 14;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdamConfig {
    pub lr: f32,
    pub beta1: f32,
    pub beta2: f32,
    pub eps: f32,
    pub weight_decay: f32,
}

impl Default for AdamConfig {
    fn default() -> Self {
        AdamConfig { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.0 }
    }
}

/// The state of one parameter.
pub struct AdamState {
    pub m: Vec<f32>,
    pub v: Vec<f32>,
    /// `None`: dense (every weight trains); else 1 keeps, 0 holds the weight at zero.
    pub keep: Option<Vec<u8>>,
    /// A quantization grid the parameter is held on ([`HeldGrid`]): Adam updates its master, the
    /// parameter takes the master's quantized values.
    pub grid: Option<HeldGrid>,
}

impl AdamState {
    /// State for `w`; with `masked`, its zeros are frozen.
    pub fn new(w: &Tensor, masked: bool) -> AdamState {
        let keep = masked.then(|| w.data.iter().map(|&x| (x != 0.0) as u8).collect::<Vec<u8>>());
        AdamState { m: vec![0.0; w.len()], v: vec![0.0; w.len()], keep, grid: None }
    }
}

impl AdamConfig {
    pub fn check(&self) -> Result<()> {
        let ok = self.lr.is_finite() && self.lr >= 0.0 && (0.0..1.0).contains(&self.beta1) && (0.0..1.0).contains(&self.beta2);
        let positive = self.eps > 0.0 && self.weight_decay >= 0.0;
        if !ok || !positive {
            return Err(Error::new(
                ErrorKind::InvalidValue,
                format!("Adam: lr >= 0, betas in [0, 1), eps > 0, weight_decay >= 0 are needed, got {self:?}"),
            ));
        }
        Ok(())
    }

    /// One step `t` (1-based) on `w` with gradient `g`:
    /// `m = b1 m + (1-b1) g; v = b2 v + (1-b2) g²; w -= lr (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)`
    /// (decoupled weight decay `w -= lr wd w`), skipped where the mask holds the weight.
    pub fn step(&self, t: u32, w: &mut Tensor, g: &Tensor, s: &mut AdamState) {
        let c = AdamCoefs {
            lr: self.lr,
            beta1: self.beta1,
            beta2: self.beta2,
            eps: self.eps,
            weight_decay: self.weight_decay,
            bc1: 1.0 - self.beta1.powi(t as i32),
            bc2: 1.0 - self.beta2.powi(t as i32),
        };
        let AdamState { m, v, keep, grid } = s;
        // On a held grid the step moves the master and the weight follows it onto the grid.
        let master = match grid {
            Some(h) => &mut h.master,
            None => &mut w.data,
        };
        // Every element on its own: runs of them go to the workers, the bits whatever the split.
        let mut runs: Vec<_> = master
            .chunks_mut(UPDATE_RUN)
            .zip(m.chunks_mut(UPDATE_RUN))
            .zip(v.chunks_mut(UPDATE_RUN))
            .enumerate()
            .map(|(j, ((w, m), v))| {
                let (at, len) = (j * UPDATE_RUN, m.len());
                (w, m, v, &g.data[at..at + len], keep.as_deref().map(|k| &k[at..at + len]))
            })
            .collect();
        par::map_chunks_mut(&mut runs, 1, |_, r| {
            let (w, m, v, g, k) = &mut r[0];
            adam_update(&c, w, m, v, g, *k)
        });
        if let Some(h) = grid {
            h.project(&mut w.data);
        }
    }
}
