//! The rest of `RawTrainer` for recovery and sparse training: a loss per output, the step in
//! parts (backward from the caller's output gradients, then update), the proximal step,
//! parameter values and the whole state for checkpoints.

use super::convert::*;
use super::train::{bad, RawTrainer};
use crate::train::{LossSpec, ProxTarget, Tensor};
use js_sys::{Array, Float32Array, Float64Array, Uint8Array};
use serde::Deserialize;
use wasm_bindgen::prelude::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LossOpt {
    kind: String,
    axis: Option<f64>,
    weight: Option<f64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ProxOpts {
    view: Option<Vec<f64>>,
    max_iter: Option<f64>,
    atol: Option<f64>,
    eps: Option<f64>,
    method: Option<String>,
}

impl RawTrainer {
    fn index(&self, i: u32) -> JsResult<usize> {
        let n = self.inner.graph.params.len();
        if i as usize >= n {
            return Err(bad(format!("param {i}: there are {n}")));
        }
        Ok(i as usize)
    }
}

#[wasm_bindgen]
impl RawTrainer {
    /// Names of the outputs (the graph's, intermediates included), in order.
    #[wasm_bindgen(js_name = outputNames)]
    pub fn output_names(&self) -> Vec<String> {
        self.inner.graph.output_names().to_vec()
    }

    /// One `{kind: 'mse'|'kl'|'bce', axis?, weight?}` per output.
    #[wasm_bindgen(js_name = setLosses)]
    pub fn set_losses(&mut self, losses: JsValue) -> JsResult<()> {
        let l: Vec<LossOpt> = serde_wasm_bindgen::from_value(losses).map_err(|e| bad(format!("losses: {e}")))?;
        let specs = l
            .iter()
            .map(|o| {
                let axis = o.axis.map(|a| ints(&[a], "loss axis").map(|v| v[0])).transpose()?;
                LossSpec::parse(&o.kind, axis, o.weight)
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(to_js)?;
        self.inner.set_losses(specs).map_err(to_js)
    }

    /// The weighted loss of each output in the last step / eval.
    #[wasm_bindgen(js_name = lastLosses)]
    pub fn last_losses(&self) -> Float64Array {
        Float64Array::from(self.inner.last_losses())
    }

    /// Back-propagates the gradients of the caller's loss w.r.t. the outputs of the last
    /// forward (Float32Arrays, one per output, shaped as those outputs) and sums the parameter
    /// gradients for `update`.
    pub fn backward(&mut self, grads: Array) -> JsResult<()> {
        let shapes = self.inner.graph.output_shapes().map_err(to_js)?;
        if grads.length() as usize != shapes.len() {
            return Err(bad(format!("{} output gradients for {} outputs", grads.length(), shapes.len())));
        }
        let g = shapes
            .into_iter()
            .enumerate()
            .map(|(i, sh)| Tensor::new(sh, f32_array(&grads.get(i as u32), &format!("grads[{i}]"))?))
            .collect::<Result<Vec<_>, _>>()
            .map_err(to_js)?;
        self.inner.backward(g).map_err(to_js)
    }

    /// The learning rate of the next updates.
    #[wasm_bindgen(getter)]
    pub fn lr(&self) -> f64 {
        self.inner.adam.lr as f64
    }

    /// Sets the learning rate of the next updates (a schedule, between steps); the core checks it.
    #[wasm_bindgen(js_name = setLr)]
    pub fn set_lr(&mut self, lr: f64) -> JsResult<()> {
        self.inner.set_lr(lr as f32).map_err(to_js)
    }

    /// One Adam step with the gradients summed by `backward`.
    pub fn update(&mut self) -> JsResult<()> {
        self.inner.update().map_err(to_js)
    }

    /// The proximal step on parameter `i`: block soft threshold `lr * threshold` in the metric
    /// of Adam's conditioners; returns `[zeroBlocks, blocks]`.
    pub fn prox(&mut self, i: u32, block: Vec<f64>, threshold: f64, opts: JsValue) -> JsResult<Array> {
        let i = self.index(i)?;
        let o: ProxOpts = options(&opts, "prox options", &["view", "maxIter", "atol", "eps", "method"]).map_err(to_js)?;
        let view = o.view.as_deref().map(|v| sizes(v, "prox view")).transpose().map_err(to_js)?;
        let target = ProxTarget { view, block: ints(&block, "prox block").map_err(to_js)? };
        let soft = crate::block::SoftOptions::new(o.max_iter, o.atol, o.eps, o.method.as_deref()).map_err(to_js)?;
        let name = self.inner.graph.params[i].name.clone();
        let r = self.inner.prox(&name, &target, threshold as f32, soft).map_err(to_js)?;
        Ok(Array::of2(&(r.zero_blocks as f64).into(), &(r.blocks as f64).into()))
    }

    /// Overwrites parameter `i`'s values (its Adam state and keep-mask stay).
    #[wasm_bindgen(js_name = setParam)]
    pub fn set_param(&mut self, i: u32, values: &[f32]) -> JsResult<()> {
        let i = self.index(i)?;
        let name = self.inner.graph.params[i].name.clone();
        self.inner.set_param(&name, values).map_err(to_js)
    }

    /// Holds parameter `i` on a quantization grid (`scale` per element, codes in `[lo, hi]`).
    #[wasm_bindgen(js_name = holdGrid)]
    pub fn hold_grid(&mut self, i: u32, scale: &[f32], lo: f64, hi: f64) -> JsResult<()> {
        let i = self.index(i)?;
        let name = self.inner.graph.params[i].name.clone();
        self.inner.hold_grid(&name, scale.to_vec(), lo as f32, hi as f32).map_err(to_js)
    }

    /// The shape of parameter `i`.
    #[wasm_bindgen(js_name = paramShape)]
    pub fn param_shape(&self, i: u32) -> JsResult<Vec<f64>> {
        Ok(self.inner.graph.param(self.index(i)?).shape.iter().map(|&d| d as f64).collect())
    }

    /// Adam's second moments `v` of parameter `i` (before bias correction).
    #[wasm_bindgen(js_name = secondMoments)]
    pub fn second_moments(&self, i: u32) -> JsResult<Float32Array> {
        let i = self.index(i)?;
        let name = self.inner.graph.params[i].name.clone();
        Ok(Float32Array::from(self.inner.second_moments(&name).map_err(to_js)?))
    }

    /// Size of `saveState()`'s bytes.
    #[wasm_bindgen(getter, js_name = stateBytes)]
    pub fn state_bytes(&self) -> f64 {
        self.inner.state_bytes() as f64
    }

    /// Parameters, Adam moments, keep-masks and the step count (src/train/state.rs).
    #[wasm_bindgen(js_name = saveState)]
    pub fn save_state(&self) -> Uint8Array {
        Uint8Array::from(self.inner.save_state().as_slice())
    }

    /// Restores `saveState()` bytes of a trainer of the same graph; nothing changes on error.
    #[wasm_bindgen(js_name = loadState)]
    pub fn load_state(&mut self, bytes: &[u8]) -> JsResult<()> {
        self.inner.load_state(bytes).map_err(to_js)
    }
}
