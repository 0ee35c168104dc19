// An ONNX graph cut into segments: which nodes compute a set of values from values already at hand
// (the graph's inputs, tensors cached from an earlier segment), and that segment as a model of its
// own that onnxruntime runs: the nodes, the initializers they read, the cut tensors as inputs, the
// wanted values as outputs. Sequential calibration runs one segment per capture instead of the model.
import { ModelProto, storageOf, type OnnxModel, type NodeProto, type GraphProto, type TensorProto } from '../model.js';
import { OnnxError } from '../errors.js';

/**
 * protobuf's 2 GiB cap on an encoded message, which onnxruntime's parser enforces: a segment whose
 * weights (read in from external data) pass it cannot be run from bytes.
 */
export const MAX_SEGMENT_BYTES = 2 ** 31 - 1;

/* eslint-disable @typescript-eslint/no-explicit-any */
type ValueInfoProto = any;

/** The main graph's nodes and values, indexed once. */
export interface GraphIndex {
  nodes: NodeProto[];
  /** Each node's inputs ('' left out), with the outer values its subgraphs (If, Loop, Scan) read. */
  inputs: string[][];
  producer: Map<string, number>;
  consumers: Map<string, number[]>;
  initializers: Map<string, TensorProto>;
  /** Values that are the same in every run: initializers, Constant outputs, what is computed from those alone. */
  constant: Set<string>;
  /** Graph inputs the samples feed (initializers listed as inputs left out), with their declarations. */
  feeds: Map<string, ValueInfoProto>;
  /** Declarations of values (value_info, graph outputs and inputs), for the types of a segment's outputs. */
  declared: Map<string, ValueInfoProto>;
}

/** Names a subgraph reads from the scopes around it (not defined in it). */
function outerReads(g: GraphProto, bound: Set<string>, out: Set<string>) {
  const local = new Set(bound);
  for (const v of g.input) local.add(v.name);
  for (const t of g.initializer) local.add(t.name);
  for (const s of g.sparse_initializer ?? []) if (s.values) local.add(s.values.name);
  for (const n of g.node) {
    for (const i of n.input) if (i && !local.has(i)) out.add(i);
    for (const a of n.attribute) for (const sub of [a.g, ...(a.graphs ?? [])]) if (sub) outerReads(sub, local, out);
    for (const o of n.output) if (o) local.add(o);
  }
}

export function indexGraph(model: OnnxModel): GraphIndex {
  const g = model.graph;
  const nodes: NodeProto[] = g.node;
  const initializers = new Map<string, TensorProto>(g.initializer.map((t: TensorProto) => [t.name, t]));
  for (const s of g.sparse_initializer ?? []) if (s.values) initializers.set(s.values.name, s);
  const constant = new Set<string>(initializers.keys());
  const producer = new Map<string, number>(), consumers = new Map<string, number[]>();
  const inputs = nodes.map((n, i) => {
    const ins = new Set<string>(n.input.filter((x: string) => x));
    for (const a of n.attribute) for (const sub of [a.g, ...(a.graphs ?? [])]) if (sub) outerReads(sub, new Set(), ins);
    for (const x of ins) (consumers.get(x) ?? consumers.set(x, []).get(x)!).push(i);
    return [...ins];
  });
  nodes.forEach((n, i) => {
    for (const o of n.output) if (o) producer.set(o, i);
    // Nodes without inputs (Constant, ...) count as constant: a segment recomputes them rather than caching them.
    if (inputs[i].every((x) => constant.has(x))) for (const o of n.output) if (o) constant.add(o);
  });
  const feeds = new Map<string, ValueInfoProto>();
  for (const v of g.input) if (!initializers.has(v.name)) feeds.set(v.name, v);
  const declared = new Map<string, ValueInfoProto>();
  for (const v of [...g.value_info, ...g.output, ...g.input]) declared.set(v.name, v);
  return { nodes, inputs, producer, consumers, initializers, constant, feeds, declared };
}

/**
 * The nodes (indices, in graph order) that compute `targets` from the values for which `atHand` is
 * true (and the initializers). Constant values are recomputed by the nodes that make them.
 */
export function segmentNodes(ix: GraphIndex, targets: Iterable<string>, atHand: (v: string) => boolean): number[] {
  const included = new Set<number>();
  const stack = [...targets];
  while (stack.length) {
    const v = stack.pop()!;
    if (ix.initializers.has(v) || (atHand(v) && !ix.constant.has(v))) continue;
    const p = ix.producer.get(v);
    if (p === undefined) {
      if (ix.feeds.has(v)) throw new OnnxError('bad_calibration', `the graph input "${v}" is needed but not at hand`, 'invalid_value');
      throw new OnnxError('unsupported', `no node of the graph computes "${v}"`, 'invalid_arguments');
    }
    if (included.has(p)) continue;
    included.add(p);
    stack.push(...ix.inputs[p]);
  }
  return [...included].sort((a, b) => a - b);
}

/** A segment's input that is not a graph input: its element type and dims (null: varies between samples; none: rank varies). */
export interface CutInput { name: string; elemType: number; dims?: (number | null)[] }

const tensorInfo = (name: string, elemType: number, dims?: (number | null)[]): ValueInfoProto => ({
  name,
  type: { tensor_type: { elem_type: elemType, ...(dims ? { shape: { dim: dims.map((d, i) => (d === null ? { dim_param: `${name}_d${i}` } : { dim_value: d })) } } : {}) } },
});

/**
 * The declaration of a segment output: the graph's own (value_info, outputs) when it has one; else
 * a tensor of unknown type, which onnxruntime types from the node that computes it.
 */
function outputInfo(ix: GraphIndex, name: string): ValueInfoProto {
  const d = ix.declared.get(name);
  return d?.type ? { name, type: d.type } : { name };
}

/**
 * The encoded model of one segment: nodes `nodes` (indices of ix.nodes), the initializers and
 * graph inputs they read, `cut` as further inputs, `outputs` as its outputs. The model's opsets,
 * IR version and local functions are kept.
 */
export function segmentModel(model: OnnxModel, ix: GraphIndex, nodes: number[], cut: CutInput[], outputs: string[]): Uint8Array {
  const g = model.graph;
  const produced = new Set<string>();
  for (const i of nodes) for (const o of ix.nodes[i].output) if (o) produced.add(o);
  const reads = new Set<string>();
  for (const i of nodes) for (const x of ix.inputs[i]) reads.add(x);
  const cutNames = new Set(cut.map((c) => c.name));
  const input: ValueInfoProto[] = [];
  const initializer: TensorProto[] = [], sparse: TensorProto[] = [];
  // External tensors go in with their current bytes (a changed one's from the model's spill): the
  // segment is run from memory, where no data file is at hand, and holds only its own nodes' weights,
  // so a model over protobuf's 2 GiB is run a segment at a time.
  let inlined = 0;
  const inline = (t: TensorProto | undefined): TensorProto | undefined => {
    if (!t || storageOf(t) !== 'external') return t;
    const raw = model.tensorBytes(t);
    inlined += raw.length;
    return { ...t, raw_data: raw, external_data: [], data_location: 0 };
  };
  for (const x of reads) {
    if (produced.has(x) || cutNames.has(x)) continue;
    const t = ix.initializers.get(x);
    if (t?.values) sparse.push({ ...t, values: inline(t.values), indices: inline(t.indices) });
    else if (t) initializer.push(inline(t)!);
    else if (ix.feeds.has(x)) input.push(ix.feeds.get(x));
  }
  if (inlined > MAX_SEGMENT_BYTES) {
    throw new OnnxError('too_large', `a segment of the graph reads ${(inlined / 2 ** 30).toFixed(2)} GiB of external weights, over protobuf's 2 GiB for a model run from memory (a capture that spans the whole model: use the sequential calibration)`, 'invalid_value');
  }
  // IR < 4 wants every initializer declared as an input too.
  if (Number(model.irVersion) < 4) {
    const declaredInputs = new Map<string, ValueInfoProto>(g.input.map((v: ValueInfoProto) => [v.name, v]));
    for (const t of initializer) { const v = declaredInputs.get(t.name); if (v) input.push(v); }
  }
  for (const c of cut) input.push(tensorInfo(c.name, c.elemType, c.dims));
  const outs = new Set(outputs);
  const graph = {
    name: `${g.name || 'graph'}_segment`,
    node: nodes.map((i) => ix.nodes[i]),
    initializer, sparse_initializer: sparse, input,
    output: outputs.map((o) => outputInfo(ix, o)),
    value_info: g.value_info.filter((v: ValueInfoProto) => produced.has(v.name) && !outs.has(v.name)),
  };
  const m = model.model;
  return ModelProto.encode({
    ir_version: m.ir_version, opset_import: m.opset_import, producer_name: m.producer_name,
    producer_version: m.producer_version, domain: m.domain, model_version: m.model_version,
    functions: m.functions, graph,
  }).finish();
}
