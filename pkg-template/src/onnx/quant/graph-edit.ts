// Small edits of a decoded graph that the quantized forms need: new tensors and nodes as protobufjs
// messages (so every repeated field exists, as in a decoded file; new names come from ../names.ts), an
// opset import, and removing a node or initializer that nothing uses any more.
import { onnxRoot } from '../proto.js';
import { DT, toNum, type GraphProto, type NodeProto, type TensorProto } from '../tensor-data.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const TensorType = onnxRoot.lookupType('onnx.TensorProto');
const NodeType = onnxRoot.lookupType('onnx.NodeProto');

/** A tensor with its elements in raw_data. */
export function tensor(name: string, dataType: number, dims: number[], bytes: Uint8Array): TensorProto {
  return TensorType.fromObject({ name, data_type: dataType, dims, raw_data: bytes });
}

export const floatTensor = (name: string, dims: number[], v: Float32Array): TensorProto =>
  tensor(name, DT.FLOAT, dims, new Uint8Array(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength)));
/** A 1-D int64 tensor (shapes, axes, slice bounds). */
export const int64Tensor = (name: string, v: number[]): TensorProto =>
  tensor(name, DT.INT64, [v.length], new Uint8Array(BigInt64Array.from(v.map(BigInt)).buffer));
export const int8Tensor = (name: string, dims: number[], v: Int8Array): TensorProto =>
  tensor(name, DT.INT8, dims, new Uint8Array(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength)));

type AttrValue = number | number[] | string;

/** A node; integer attributes as numbers, lists as number[], strings as string. */
export function node(op: string, inputs: string[], outputs: string[], name: string, attrs: Record<string, AttrValue> = {}, domain = ''): NodeProto {
  const attribute = Object.entries(attrs).map(([k, v]) => (
    Array.isArray(v) ? { name: k, type: 7, ints: v }
      : typeof v === 'string' ? { name: k, type: 3, s: new TextEncoder().encode(v) }
        : { name: k, type: 2, i: v }));
  return NodeType.fromObject({ op_type: op, input: inputs, output: outputs, name, domain, attribute });
}

/**
 * Unsqueeze of the last axis. Its axes are an attribute before opset 13 and an input from 13 on:
 * `lastAxis` makes (once, for every such node of a writer) the int64 [-1] initializer the input needs.
 */
export function unsqueezeLast(opset: number, x: string, y: string, name: string, lastAxis: () => string): NodeProto {
  return opset >= 13 ? node('Unsqueeze', [x, lastAxis()], [y], name) : node('Unsqueeze', [x], [y], name, { axes: [-1] });
}

/** The version of an opset domain the model imports ('' = ai.onnx), 0 when not imported. */
export function opsetVersion(model: any, domain: string): number {
  const o = model.opset_import.find((x: any) => (x.domain || '') === domain || (domain === '' && x.domain === 'ai.onnx'));
  return o ? toNum(o.version) : 0;
}

/** Imports `domain` at `version` when the model does not import it yet. */
export function ensureOpset(model: any, domain: string, version: number): void {
  if (!opsetVersion(model, domain)) model.opset_import.push(onnxRoot.lookupType('onnx.OperatorSetIdProto').fromObject({ domain, version }));
}

/** Every input name used by a node of the graph or by a graph output. */
function usedNames(graph: GraphProto): Set<string> {
  const used = new Set<string>(graph.output.map((o: any) => o.name));
  const visit = (g: GraphProto) => {
    for (const n of g.node) {
      for (const i of n.input) used.add(i);
      // Subgraphs read outer values by name.
      for (const a of n.attribute) {
        if (a.g) visit(a.g);
        for (const sg of a.graphs ?? []) visit(sg);
      }
    }
  };
  visit(graph);
  return used;
}

/**
 * Drops the `candidates` (initializers or Constant outputs an edit stopped reading) that nothing reads
 * any more, with their graph-input entries (old exporters list initializers as inputs too).
 * Other unused tensors of the file are left as they were.
 */
export function dropUnused(graph: GraphProto, candidates: Iterable<string>): void {
  const used = usedNames(graph);
  const gone = new Set([...candidates].filter((c) => !used.has(c)));
  if (!gone.size) return;
  graph.initializer = graph.initializer.filter((t: any) => !gone.has(t.name));
  graph.node = graph.node.filter((n: any) => !(n.op_type === 'Constant' && n.output.length === 1 && gone.has(n.output[0])));
  graph.input = graph.input.filter((i: any) => !gone.has(i.name));
}

/** Inserts nodes before the node `before` (keeping the graph in topological order). */
export function insertBefore(graph: GraphProto, before: NodeProto, nodes: NodeProto[]): void {
  const at = graph.node.indexOf(before);
  graph.node.splice(at < 0 ? graph.node.length : at, 0, ...nodes);
}
