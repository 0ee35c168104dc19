//! Gradient steps on a graph: forward, a loss on the outputs against targets (the teacher's
//! outputs in distillation), backward, masked Adam on every parameter.

use super::adam::{AdamConfig, AdamState};
use super::graph::Graph;
use super::loss;
use super::tensor::Tensor;
use crate::core::error::{Error, ErrorKind, Result};

pub struct Trainer {
    pub graph: Graph,
    pub adam: AdamConfig,
    states: Vec<AdamState>,
    t: u32,
}

impl Trainer {
    /// With `masked`, every parameter's zeros at this point are held at zero by the steps.
    pub fn new(graph: Graph, adam: AdamConfig, masked: bool) -> Result<Trainer> {
        adam.check()?;
        let states = (0..graph.params.len()).map(|i| AdamState::new(graph.param(i), masked)).collect();
        Ok(Trainer { graph, adam, states, t: 0 })
    }

    /// Steps taken.
    pub fn steps(&self) -> u32 {
        self.t
    }

    /// Mean-squared error of each output against its target, summed over outputs, and the
    /// gradients of that loss w.r.t. the outputs.
    fn loss(&mut self, inputs: Vec<Tensor>, targets: &[Tensor]) -> Result<(f64, Vec<Tensor>)> {
        let outs = self.graph.forward(inputs)?;
        if outs.len() != targets.len() {
            return Err(Error::new(ErrorKind::InvalidArguments, format!("{} targets for {} outputs", targets.len(), outs.len())));
        }
        let mut total = 0.0;
        let mut grads = Vec::with_capacity(outs.len());
        for (y, t) in outs.iter().zip(targets) {
            let (l, g) = loss::mse(y, t)?;
            total += l;
            grads.push(g);
        }
        Ok((total, grads))
    }

    /// The loss without a step.
    pub fn eval(&mut self, inputs: Vec<Tensor>, targets: &[Tensor]) -> Result<f64> {
        Ok(self.loss(inputs, targets)?.0)
    }

    /// One Adam step on one batch; returns the loss before the step.
    pub fn step(&mut self, inputs: Vec<Tensor>, targets: &[Tensor]) -> Result<f64> {
        let (l, gouts) = self.loss(inputs, targets)?;
        if !l.is_finite() {
            return Err(Error::new(ErrorKind::InvalidValue, "training loss is not finite (lower the learning rate)"));
        }
        let grads = self.graph.backward(gouts)?;
        self.t += 1;
        for (i, g) in grads.iter().enumerate() {
            let (w, s) = (self.graph.param_mut(i), &mut self.states[i]);
            self.adam.step(self.t, w, g, s);
        }
        Ok(l)
    }
}
