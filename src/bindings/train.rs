//! The training core for JS: `RawTrainer` over a graph the TS layer converts from an ONNX model
//! (`pkg-template/src/onnx/train/`). Tensors cross as typed arrays with their shapes.

use super::convert::*;
use crate::core::error::{Error, ErrorKind};
use crate::train::{AdamConfig, Graph, GraphSpec, InitSpec, Tensor, Trainer};
use js_sys::{Array, Float32Array, Float64Array, Int32Array};
use serde::Deserialize;
use wasm_bindgen::prelude::*;

/// Adam's options from JS (`weightDecay` camel-cased); unknown keys are refused.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct AdamOpts {
    lr: Option<f32>,
    beta1: Option<f32>,
    beta2: Option<f32>,
    eps: Option<f32>,
    weight_decay: Option<f32>,
    /// Hold every weight that is zero now at zero (default true: a pruned student).
    masked: Option<bool>,
}

pub(super) fn bad(msg: String) -> JsValue {
    to_js(Error::new(ErrorKind::InvalidArguments, msg))
}

pub(super) fn shape_of(v: &JsValue, what: &str) -> JsResult<Vec<usize>> {
    let d: Vec<f64> = serde_wasm_bindgen::from_value(v.clone()).map_err(|e| bad(format!("{what}: {e}")))?;
    sizes(&d, what).map_err(to_js)
}

/// Tensors from parallel arrays of Float32Array and shapes.
pub(super) fn tensors(values: &Array, shapes: &Array, what: &str) -> JsResult<Vec<Tensor>> {
    if values.length() != shapes.length() {
        return Err(bad(format!("{what}: {} arrays but {} shapes", values.length(), shapes.length())));
    }
    (0..values.length())
        .map(|i| {
            let data = f32_array(&values.get(i), &format!("{what}[{i}]")).map_err(to_js)?;
            Tensor::new(shape_of(&shapes.get(i), &format!("{what} shape [{i}]"))?, data).map_err(to_js)
        })
        .collect()
}

fn to_array(ts: &[Tensor]) -> Array {
    ts.iter().map(|t| JsValue::from(Float32Array::from(t.data.as_slice()))).collect()
}

#[wasm_bindgen]
pub struct RawTrainer {
    pub(super) inner: Trainer,
}

#[wasm_bindgen]
impl RawTrainer {
    /// `graph`: `{nodes: [{opType, name, inputs, outputs, attrs}], inputs, outputs, frozen}`;
    /// initializer `i` is `names[i]` of shape `dims[i]` with `values[i]` a Float32Array (float
    /// data) or an Int32Array / Float64Array (integer data: shapes, axes).
    #[wasm_bindgen(constructor)]
    pub fn new(graph: JsValue, names: Vec<String>, dims: Array, values: Array, opts: JsValue) -> JsResult<RawTrainer> {
        let spec: GraphSpec = serde_wasm_bindgen::from_value(graph).map_err(|e| bad(format!("graph: {e}")))?;
        let opts: AdamOpts = if opts.is_undefined() || opts.is_null() {
            AdamOpts { lr: None, beta1: None, beta2: None, eps: None, weight_decay: None, masked: None }
        } else {
            serde_wasm_bindgen::from_value(opts).map_err(|e| bad(format!("options: {e}")))?
        };
        if names.len() != dims.length() as usize || names.len() != values.length() as usize {
            return Err(bad("initializers: names, dims and values differ in length".into()));
        }
        let mut inits = Vec::with_capacity(names.len());
        for (i, name) in names.into_iter().enumerate() {
            let v = values.get(i as u32);
            let dims = shape_of(&dims.get(i as u32), &format!("dims of {name}"))?;
            let (floats, ints) = if let Some(a) = v.dyn_ref::<Float32Array>() {
                (Some(a.to_vec()), None)
            } else if let Some(a) = v.dyn_ref::<Int32Array>() {
                (None, Some(a.to_vec().into_iter().map(i64::from).collect()))
            } else if let Some(a) = v.dyn_ref::<Float64Array>() {
                (None, Some(super::convert::ints(&a.to_vec(), &name).map_err(to_js)?))
            } else {
                return Err(bad(format!("initializer {name}: a Float32Array, Int32Array or Float64Array is needed")));
            };
            inits.push(InitSpec { name, dims, floats, ints });
        }
        let d = AdamConfig::default();
        let adam = AdamConfig {
            lr: opts.lr.unwrap_or(d.lr),
            beta1: opts.beta1.unwrap_or(d.beta1),
            beta2: opts.beta2.unwrap_or(d.beta2),
            eps: opts.eps.unwrap_or(d.eps),
            weight_decay: opts.weight_decay.unwrap_or(d.weight_decay),
        };
        let graph = Graph::new(&spec, inits).map_err(to_js)?;
        Ok(RawTrainer { inner: Trainer::new(graph, adam, opts.masked.unwrap_or(true)).map_err(to_js)? })
    }

    /// The outputs for `inputs` (Float32Arrays with `shapes`); `[values[], shapes[]]`.
    pub fn forward(&mut self, inputs: Array, shapes: Array) -> JsResult<Array> {
        let outs = self.inner.graph.forward(tensors(&inputs, &shapes, "inputs")?).map_err(to_js)?;
        let sh: Array = outs.iter().map(|t| JsValue::from(t.shape.iter().map(|&d| JsValue::from(d as f64)).collect::<Array>())).collect();
        Ok(Array::of2(&to_array(&outs), &sh))
    }

    /// One Adam step towards `targets` (one per output, each output's loss); returns the loss
    /// before it.
    pub fn step(&mut self, inputs: Array, shapes: Array, targets: Array) -> JsResult<f64> {
        let ins = tensors(&inputs, &shapes, "inputs")?;
        self.inner.step(ins, &flat_targets(&targets)?).map_err(to_js)
    }

    /// The loss towards `targets` without a step.
    pub fn eval(&mut self, inputs: Array, shapes: Array, targets: Array) -> JsResult<f64> {
        let ins = tensors(&inputs, &shapes, "inputs")?;
        self.inner.eval(ins, &flat_targets(&targets)?).map_err(to_js)
    }

    #[wasm_bindgen(getter)]
    pub fn steps(&self) -> u32 {
        self.inner.steps()
    }

    /// Bench only (cfg `sparsekit_train_profile`): seconds per op type since the trainer was built,
    /// as JSON `{op: [forward, backward]}`.
    #[cfg(sparsekit_train_profile)]
    pub fn profile(&self) -> String {
        let p = self.inner.graph.profile.borrow();
        let rows: Vec<String> = p.iter().map(|(op, (f, b))| format!("\"{op}\":[{f},{b}]")).collect();
        format!("{{{}}}", rows.join(","))
    }

    /// The op of each node as it runs (after fusion), folded shape arithmetic included.
    #[wasm_bindgen(js_name = nodeOps)]
    pub fn node_ops(&self) -> Vec<String> {
        self.inner.graph.node_ops().into_iter().map(String::from).collect()
    }

    /// The ops that run on every batch: [`RawTrainer::node_ops`] without the nodes folded once
    /// per input shape.
    #[wasm_bindgen(js_name = dataPathOps)]
    pub fn data_path_ops(&self) -> Vec<String> {
        self.inner.graph.data_path_ops().into_iter().map(String::from).collect()
    }

    /// Names of the trained parameters.
    #[wasm_bindgen(js_name = paramNames)]
    pub fn param_names(&self) -> Vec<String> {
        self.inner.graph.params.iter().map(|p| p.name.clone()).collect()
    }

    /// A parameter's current values.
    pub fn param(&self, i: u32) -> JsResult<Float32Array> {
        if i as usize >= self.inner.graph.params.len() {
            return Err(bad(format!("param {i}: there are {}", self.inner.graph.params.len())));
        }
        Ok(Float32Array::from(self.inner.graph.param(i as usize).data.as_slice()))
    }
}

/// Targets as flat tensors: the trainer gives each its output's shape (checking the count).
fn flat_targets(targets: &Array) -> JsResult<Vec<Tensor>> {
    (0..targets.length())
        .map(|i| {
            let d = f32_array(&targets.get(i), &format!("targets[{i}]")).map_err(to_js)?;
            Ok(Tensor { shape: vec![d.len()], data: d })
        })
        .collect()
}
