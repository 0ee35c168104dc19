//! Gradient steps on a graph: forward, a loss per output against targets (the teacher's
//! outputs in distillation; [`LossSpec`]), backward, masked Adam on every parameter. The step
//! also comes in parts — [`Trainer::backward`] from output gradients computed by the caller,
//! then [`Trainer::update`] — and is followed, for sparse training, by [`Trainer::prox`].

use super::adam::{AdamConfig, AdamState};
use super::graph::Graph;
use super::grid::HeldGrid;
use super::loss::LossSpec;
use super::prox::{prox_step, ProxReport, ProxTarget};
use super::tensor::Tensor;
use crate::block::SoftOptions;
use crate::core::error::{Error, ErrorKind, Result};

pub struct Trainer {
    pub graph: Graph,
    pub adam: AdamConfig,
    pub(super) states: Vec<AdamState>,
    pub(super) t: u32,
    losses: Vec<LossSpec>,
    /// Parameter gradients summed by `backward` since the last `update`.
    grads: Option<Vec<Tensor>>,
    last: Vec<f64>,
}

fn bad(msg: String) -> Error {
    Error::new(ErrorKind::InvalidArguments, msg)
}

/// One gradient per output, every value finite.
fn check_output_grads(gouts: &[Tensor], n: usize) -> Result<()> {
    if gouts.len() != n {
        return Err(bad(format!("{} output gradients for {n} outputs", gouts.len())));
    }
    if let Some(bad_at) = gouts.iter().position(|g| g.data.iter().any(|x| !x.is_finite())) {
        return Err(Error::new(ErrorKind::InvalidValue, format!("output gradient {bad_at} has a value that is not finite")));
    }
    Ok(())
}

impl Trainer {
    /// With `masked`, every parameter's zeros at this point are held at zero by the steps.
    /// Every output starts with the MSE loss of weight 1.
    pub fn new(graph: Graph, adam: AdamConfig, masked: bool) -> Result<Trainer> {
        adam.check()?;
        let states = (0..graph.params.len()).map(|i| AdamState::new(graph.param(i), masked)).collect();
        let losses = vec![LossSpec::default(); graph.output_names().len()];
        Ok(Trainer { graph, adam, states, t: 0, losses, grads: None, last: Vec::new() })
    }

    /// Steps taken.
    pub fn steps(&self) -> u32 {
        self.t
    }

    /// Sets the learning rate the next updates use (a schedule's value between steps). Adam's moments,
    /// its bias correction (by the step count) and the keep-masks are unchanged; an lr that is not
    /// finite or is negative is refused (`invalid_value`) and the old one stays.
    pub fn set_lr(&mut self, lr: f32) -> Result<()> {
        let adam = AdamConfig { lr, ..self.adam };
        adam.check()?;
        self.adam = adam;
        Ok(())
    }

    /// One loss per output, in the graph's output order.
    pub fn set_losses(&mut self, losses: Vec<LossSpec>) -> Result<()> {
        let n = self.graph.output_names().len();
        if losses.len() != n {
            return Err(bad(format!("{} losses for {n} outputs", losses.len())));
        }
        self.losses = losses;
        Ok(())
    }

    pub fn losses(&self) -> &[LossSpec] {
        &self.losses
    }

    /// The weighted loss of each output in the last `eval`/`step` (before its update).
    pub fn last_losses(&self) -> &[f64] {
        &self.last
    }

    /// The summed loss and the gradients of the outputs in the loss. A target is shaped as its
    /// output, or flat (1-D) with the output's element count.
    fn loss(&mut self, inputs: Vec<Tensor>, targets: &[Tensor]) -> Result<(f64, Vec<Tensor>)> {
        if targets.len() != self.losses.len() {
            return Err(bad(format!("{} targets for {} outputs", targets.len(), self.losses.len())));
        }
        let outs = self.graph.forward(inputs)?;
        let mut last = Vec::with_capacity(outs.len());
        let mut grads = Vec::with_capacity(outs.len());
        for (i, (y, t)) in outs.iter().zip(targets).enumerate() {
            // A flat target of the output's element count takes the output's shape.
            let flat;
            let t = if t.rank() == 1 && t.shape != y.shape && t.len() == y.len() {
                flat = Tensor { shape: y.shape.clone(), data: t.data.clone() };
                &flat
            } else {
                t
            };
            let (l, g) = self.losses[i]
                .eval(y, t)
                .map_err(|e| Error::new(e.kind(), format!("output {}: {}", self.graph.output_names()[i], e.message())))?;
            last.push(l);
            grads.push(match g {
                Some(g) => g,
                None => Tensor::zeros(&y.shape)?,
            });
        }
        self.last = last;
        Ok((self.last.iter().sum(), grads))
    }

    /// The loss without a step.
    pub fn eval(&mut self, inputs: Vec<Tensor>, targets: &[Tensor]) -> Result<f64> {
        Ok(self.loss(inputs, targets)?.0)
    }

    /// One Adam step on one batch; returns the loss before the step. The same step as
    /// [`Trainer::backward`] then [`Trainer::update`], bit for bit, but each parameter is updated
    /// as soon as its gradient is complete ([`Graph::backward_each`]), so the gradients of all
    /// parameters are never held at once. A failure half-way through the backward pass (out of
    /// memory) leaves the parameters passed before it updated: the run fails then.
    pub fn step(&mut self, inputs: Vec<Tensor>, targets: &[Tensor]) -> Result<f64> {
        let (l, gouts) = self.loss(inputs, targets)?;
        if !l.is_finite() {
            return Err(Error::new(ErrorKind::InvalidValue, "training loss is not finite (lower the learning rate)"));
        }
        self.grads = None;
        check_output_grads(&gouts, self.graph.output_names().len())?;
        self.t += 1;
        let (adam, t, states) = (self.adam, self.t, &mut self.states);
        self.graph.backward_each(gouts, |i, w, g| {
            adam.step(t, w, &g, &mut states[i]);
            Ok(())
        })?;
        Ok(l)
    }

    /// Back-propagates `gouts` (one per output, shaped as the last forward's outputs) and adds
    /// the parameter gradients to those kept for [`Trainer::update`] (so several batches can
    /// be accumulated). The loss is the caller's: `gouts` are its gradients w.r.t. the outputs.
    pub fn backward(&mut self, gouts: Vec<Tensor>) -> Result<()> {
        check_output_grads(&gouts, self.graph.output_names().len())?;
        let grads = self.graph.backward(gouts)?;
        match &mut self.grads {
            Some(acc) => acc.iter_mut().zip(&grads).for_each(|(a, g)| a.add_assign(g)),
            None => self.grads = Some(grads),
        }
        Ok(())
    }

    /// One Adam step with the gradients summed by `backward` since the last update.
    pub fn update(&mut self) -> Result<()> {
        let Some(grads) = self.grads.take() else {
            return Err(bad("update: no gradients (call backward first)".into()));
        };
        self.t += 1;
        for (i, g) in grads.iter().enumerate() {
            let (w, s) = (self.graph.param_mut(i), &mut self.states[i]);
            self.adam.step(self.t, w, g, s);
        }
        Ok(())
    }

    /// Index of a trained parameter by name.
    pub fn param_index(&self, name: &str) -> Result<usize> {
        self.graph.params.iter().position(|p| p.name == name).ok_or_else(|| bad(format!("no trained parameter named {name}")))
    }

    /// Overwrites a parameter's values (same element count). Its Adam state is kept, and so is
    /// its keep-mask: a held weight is zeroed again by the next update. On a held grid the values
    /// are the master's, the parameter their quantized values.
    pub fn set_param(&mut self, name: &str, data: &[f32]) -> Result<()> {
        let i = self.param_index(name)?;
        let w = self.graph.param_mut(i);
        if data.len() != w.len() {
            return Err(Error::length_mismatch(&format!("parameter {name}"), &w.shape.clone(), w.len(), data.len()));
        }
        match &mut self.states[i].grid {
            Some(h) => {
                h.master.copy_from_slice(data);
                h.project(&mut w.data);
            }
            None => w.data.copy_from_slice(data),
        }
        Ok(())
    }

    /// Holds parameter `name` on a quantization grid from now on ([`HeldGrid`]: `scale` per
    /// element, in the parameter's layout; codes in `[lo, hi]`): its values become the float
    /// master Adam updates, the parameter their quantized values. The keep-mask still holds the
    /// zeros, and a zero the trainer was built with is held there like a pruned weight (code 0 is
    /// the value 0): the zeros the quantized file will have are the ones training keeps.
    pub fn hold_grid(&mut self, name: &str, scale: Vec<f32>, lo: f32, hi: f32) -> Result<()> {
        let i = self.param_index(name)?;
        let grid = HeldGrid::hold(&mut self.graph.param_mut(i).data, scale, lo, hi)?;
        self.states[i].grid = Some(grid);
        Ok(())
    }

    /// Adam's second moments of a parameter (raw, before bias correction).
    pub fn second_moments(&self, name: &str) -> Result<&[f32]> {
        Ok(&self.states[self.param_index(name)?].v)
    }

    /// The proximal step on parameter `name` (see [`super::prox`]): after an update, the block
    /// soft threshold `lr · lambda` with Adam's conditioners.
    pub fn prox(&mut self, name: &str, target: &ProxTarget, lambda: f32, opts: SoftOptions) -> Result<ProxReport> {
        let i = self.param_index(name)?;
        if self.states[i].grid.is_some() {
            return Err(bad(format!("prox: {name} is held on a quantization grid (sparse training and a held grid do not combine)")));
        }
        let (cfg, t) = (self.adam, self.t);
        let w = self.graph.param_mut(i);
        prox_step(&cfg, t, w, &self.states[i], target, lambda, opts)
    }
}
