// Every tensor a model holds, wherever it sits: initializers and node attributes of the main graph,
// of every subgraph (If / Loop / Scan bodies) and of every local function. The writer needs all
// external tensors (not only the main graph's constants) so that a saved model refers to its own
// data file only. Subgraph nesting was bounded by the load-time checks.
import type { GraphProto, TensorProto } from './tensor-data.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

function* graphTensors(g: GraphProto): Generator<TensorProto> {
  yield* g.initializer;
  for (const s of g.sparse_initializer ?? []) {
    if (s.values) yield s.values;
    if (s.indices) yield s.indices;
  }
  for (const n of g.node) yield* nodeTensors(n);
}

function* nodeTensors(n: any): Generator<TensorProto> {
  for (const a of n.attribute) {
    if (a.t) yield a.t;
    yield* a.tensors ?? [];
    for (const s of [...(a.sparse_tensor ? [a.sparse_tensor] : []), ...(a.sparse_tensors ?? [])]) {
      if (s.values) yield s.values;
      if (s.indices) yield s.indices;
    }
    if (a.g) yield* graphTensors(a.g);
    for (const sg of a.graphs ?? []) yield* graphTensors(sg);
  }
}

/** Every TensorProto of the model (main graph first, in file order). */
export function* modelTensors(model: any): Generator<TensorProto> {
  if (model.graph) yield* graphTensors(model.graph);
  for (const f of model.functions ?? []) for (const n of f.node) yield* nodeTensors(n);
}
