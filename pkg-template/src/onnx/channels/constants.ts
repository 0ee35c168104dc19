// Every tensor constant of a model, subgraphs included. OnnxModel.constants() lists the main graph's;
// weights inside If / Loop / Scan bodies (initializers and Constant nodes there) are found here, with
// the graph that holds each node, so that they can be followed, masked and cut like the others.
import type { GraphProto, NodeProto, OnnxModel, TensorProto } from '../model.js';

export interface ModelConstant {
  tensor: TensorProto;
  /** The graph holding it (the main graph or a subgraph). */
  graph: GraphProto;
}

/** The subgraphs an attribute of `node` holds (If branches, Loop / Scan bodies). */
export function subgraphsOf(node: NodeProto): { name: string; graph: GraphProto }[] {
  const out: { name: string; graph: GraphProto }[] = [];
  for (const a of node.attribute ?? []) {
    if (a.g) out.push({ name: a.name, graph: a.g });
    for (const g of a.graphs ?? []) out.push({ name: a.name, graph: g });
  }
  return out;
}

/** Calls fn on every graph of the model, the main one first, each subgraph after its parent. */
export function forEachGraph(model: OnnxModel, fn: (graph: GraphProto, owner?: NodeProto) => void): void {
  const visit = (g: GraphProto, owner?: NodeProto) => {
    fn(g, owner);
    for (const n of g.node) for (const s of subgraphsOf(n)) visit(s.graph, n);
  };
  visit(model.graph);
}

/** The constants of every graph by value name (ONNX names are unique across nested graphs). */
export function allConstants(model: OnnxModel): Map<string, ModelConstant> {
  const out = new Map<string, ModelConstant>();
  forEachGraph(model, (g) => {
    for (const t of g.initializer ?? []) out.set(t.name, { tensor: t, graph: g });
    for (const n of g.node) {
      if (n.op_type !== 'Constant' || (n.domain && n.domain !== 'ai.onnx')) continue;
      const a = n.attribute.find((x: { name: string; t?: TensorProto }) => x.name === 'value' && x.t);
      if (a) out.set(n.output[0], { tensor: a.t, graph: g });
    }
  });
  return out;
}

/** The graph that holds each node (for inserting a node next to it). */
export function nodeGraphs(model: OnnxModel): Map<NodeProto, GraphProto> {
  const out = new Map<NodeProto, GraphProto>();
  forEachGraph(model, (g) => { for (const n of g.node) out.set(n, g); });
  return out;
}
