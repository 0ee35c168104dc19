//! The proximal step of sparse training (issue 25, the seed's operator): after an Adam step of
//! size `lr`, the block soft threshold in the metric of Adam's conditioners
//! `H = sqrt(v / (1 - beta2^t)) + eps` — the proximal operator of `lr · λ · Σ_b ‖x_b‖₂` in that
//! metric, so the group-lasso penalty `λ Σ_b ‖x_b‖₂` is minimised together with the loss. The
//! step itself is [`crate::block::BlockSpec::soft_threshold`] with conditioners (the
//! conformance-tested kernels), run on the parameter's storage moved into a `Param` and back.

use super::adam::{AdamConfig, AdamState};
use super::tensor::Tensor;
use crate::block::{BlockSpec, Norm, Param, SoftOptions, View};
use crate::core::error::{Error, ErrorKind, Result};

/// Where a proximal step applies: the parameter seen as `view` (a row-major reshape of it,
/// default its own shape) cut into blocks of `block` (`<= 0` for a whole dimension).
#[derive(Debug, Clone, Default)]
pub struct ProxTarget {
    pub view: Option<Vec<usize>>,
    pub block: Vec<i64>,
}

/// Zero blocks and all blocks after a step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProxReport {
    pub zero_blocks: usize,
    pub blocks: usize,
}

/// Soft-thresholds `w` by blocks with threshold `lr · lambda` and Adam's conditioners from
/// `s.v` at step `t` (>= 1). Every input is checked before `w` changes.
pub fn prox_step(
    cfg: &AdamConfig,
    t: u32,
    w: &mut Tensor,
    s: &AdamState,
    target: &ProxTarget,
    lambda: f32,
    opts: SoftOptions,
) -> Result<ProxReport> {
    if t == 0 {
        return Err(Error::new(ErrorKind::InvalidArguments, "prox: take an Adam step first (the conditioners are its second moments)"));
    }
    if !(lambda.is_finite() && lambda >= 0.0) {
        return Err(Error::new(ErrorKind::InvalidValue, format!("prox: threshold must be finite and >= 0, got {lambda}")));
    }
    let shape = target.view.clone().unwrap_or_else(|| w.shape.clone());
    let n: Option<usize> = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    if n != Some(w.len()) {
        return Err(Error::new(
            ErrorKind::ShapeMismatch,
            format!("prox: view {shape:?} does not hold the {} elements of a parameter of shape {:?}", w.len(), w.shape),
        ));
    }
    let bc2 = 1.0 - cfg.beta2.powi(t as i32);
    let h: Vec<f32> = s.v.iter().map(|&v| (v / bc2).sqrt() + cfg.eps).collect();
    let p = Param::new(std::mem::take(&mut w.data), &shape)?;
    let run = || -> Result<ProxReport> {
        let spec = BlockSpec::new(View::from_param(&p), &target.block, Some("prox".into()))?;
        let thresholds = vec![cfg.lr * lambda; spec.numblk()];
        spec.soft_threshold(&thresholds, Some(&h), opts)?;
        let norms = spec.norms(Norm::L2, None)?;
        Ok(ProxReport { zero_blocks: norms.iter().filter(|&&x| x == 0.0).count(), blocks: norms.len() })
    };
    let r = run();
    // The storage goes back whatever happened (the soft threshold validates before writing).
    w.data = std::mem::take(&mut *p.data_mut());
    r
}
