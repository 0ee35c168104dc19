//! Folding of what does not depend on the batch (issue 38): which nodes are folded is decided
//! in `graph.rs` when the graph is built; this keeps their outputs per input shape.

use super::tensor::Value;
use std::collections::HashMap;

/// Folding of what does not depend on the batch: the shape subgraphs of torch and ultralytics
/// exports (Shape -> Gather -> ConstantOfShape / Range / Equal / Where / Expand / Concat into a
/// Reshape or an Expand). A value is fixed for a given set of input shapes when it is a constant
/// (an initializer that is not trained), a Shape of anything, or computed from fixed values
/// only. The nodes computing fixed values run through the same kernels as the rest (one
/// evaluator, no second copy of the ops), on the first forward of each input shape; their
/// outputs are kept per shape, and later forwards of that shape skip them. A sequence length
/// that changes per batch folds once per length seen.
///
/// Assumes what ONNX graphs of the supported ops guarantee: every value's shape follows from the
/// inputs' shapes and the fixed values (no op of the core has a data-dependent output shape, as
/// NonZero would).
#[derive(Default)]
pub struct Folding {
    /// The input shapes the folded values in the slots were computed for.
    current: Option<Vec<Vec<usize>>>,
    /// Folded outputs (slot, value) per input shapes.
    cache: HashMap<Vec<Vec<usize>>, Vec<(usize, Value)>>,
}

/// Input shapes whose folds are kept at once; past it the cache starts over (a model fed many
/// sequence lengths recomputes its shape subgraphs, which are small, rather than grow).
const FOLD_CACHE: usize = 64;

impl Folding {
    /// Whether the folded nodes must run for inputs of shapes `key`. When not, `values` holds
    /// their outputs for `key` (already there, or restored from the cache).
    pub fn prepare(&mut self, key: &[Vec<usize>], values: &mut [Option<Value>]) -> bool {
        if self.current.as_deref() == Some(key) {
            return false;
        }
        match self.cache.get(key) {
            Some(kept) => {
                for (s, v) in kept {
                    values[*s] = Some(v.clone());
                }
                self.current = Some(key.to_vec());
                false
            }
            None => {
                // a forward that fails half-way leaves no shape claiming the slots
                self.current = None;
                true
            }
        }
    }

    /// Keeps the folded outputs computed for `key` after a forward that ran them.
    pub fn keep(&mut self, key: Vec<Vec<usize>>, kept: Vec<(usize, Value)>) {
        if self.cache.len() >= FOLD_CACHE {
            self.cache.clear();
        }
        self.cache.insert(key.clone(), kept);
        self.current = Some(key);
    }
}
