//! The graph a caller hands to the training core: ONNX nodes with their attributes, the names
//! of the graph's inputs and outputs, and the initializers. The JS side parses the ONNX file
//! and builds this (the ONNX parser stays in TypeScript); the tensor data travels beside it as
//! typed arrays, never through serde.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One attribute value (ONNX `AttributeProto`, the kinds the supported ops use).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Attr {
    Int(i64),
    Float(f64),
    Ints(Vec<i64>),
    Floats(Vec<f64>),
    Str(String),
    /// A list of strings (ONNX type 8: a recurrent cell's `activations`).
    Strs(Vec<String>),
    /// A tensor attribute (ONNX type 4: ConstantOfShape's `value`), its values widened to f64
    /// (exact for f32 and for integers below 2^53) and whether it holds integers.
    Tensor(TensorAttr),
}

/// The value of a tensor attribute.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TensorAttr {
    pub dims: Vec<usize>,
    pub values: Vec<f64>,
    #[serde(default)]
    pub int: bool,
}

/// One ONNX node. An empty input name is an omitted optional input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeSpec {
    #[serde(rename = "opType")]
    pub op_type: String,
    #[serde(default)]
    pub name: String,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    #[serde(default)]
    pub attrs: BTreeMap<String, Attr>,
}

/// An initializer: `f32` data (weights, trainable unless `frozen`) or `i64` data (shapes, axes).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InitSpec {
    pub name: String,
    pub dims: Vec<usize>,
    pub floats: Option<Vec<f32>>,
    pub ints: Option<Vec<i64>>,
}

/// The graph without its tensor data (what serde carries).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphSpec {
    pub nodes: Vec<NodeSpec>,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    /// Initializers that are constants, not parameters (BatchNorm running statistics are
    /// constants whatever this says).
    #[serde(default)]
    pub frozen: Vec<String>,
}

impl NodeSpec {
    /// A node from its parts (tests, the spike).
    pub fn new(op: &str, inputs: &[&str], outputs: &[&str], attrs: &[(&str, Attr)]) -> NodeSpec {
        NodeSpec {
            op_type: op.to_string(),
            name: String::new(),
            inputs: inputs.iter().map(|s| s.to_string()).collect(),
            outputs: outputs.iter().map(|s| s.to_string()).collect(),
            attrs: attrs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        }
    }
}
