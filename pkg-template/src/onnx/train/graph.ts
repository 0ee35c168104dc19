// An OnnxModel as the training core's graph (sparsekit-wasm's TrainGraph): nodes with their
// attributes decoded, initializers and Constant nodes as tensors (float data for float tensors,
// integer data for INT64 / INT32 ones). The ONNX parsing stays here; the core gets plain data.
import type { TrainAttr, TrainGraph, TrainInit, TrainNode } from 'sparsekit-wasm';
import { DT, toNum, type NodeProto, type OnnxModel, type TensorProto } from '../model.js';
import { OnnxError } from '../errors.js';

const utf8 = new TextDecoder();

// onnx.AttributeProto.AttributeType
const AT = { FLOAT: 1, INT: 2, STRING: 3, TENSOR: 4, FLOATS: 6, INTS: 7, STRINGS: 8 } as const;

/* eslint-disable @typescript-eslint/no-explicit-any */
function attrValue(model: OnnxModel, node: NodeProto, a: any): TrainAttr | undefined {
  switch (a.type) {
    case AT.FLOAT: return a.f;
    case AT.INT: return toNum(a.i);
    case AT.STRING: return utf8.decode(a.s);
    case AT.FLOATS: return Array.from(a.floats as number[]);
    case AT.INTS: return (a.ints as unknown[]).map(toNum);
    case AT.STRINGS: return (a.strings as Uint8Array[]).map((s) => utf8.decode(s));
    case AT.TENSOR: return tensorAttr(model, node, a);
    default:
      throw new OnnxError('unsupported', `unsupported op ${node.op_type}: attribute ${a.name} of type ${a.type} is not read by the training core`, 'unsupported_op');
  }
}

// The tensor of an attribute (ConstantOfShape's fill value) as plain numbers: INT64 / INT32
// exactly (up to 2^53), float types widened to float32 as the core computes; another type is
// refused by readFloat, typed.
function tensorAttr(model: OnnxModel, node: NodeProto, a: any): TrainAttr {
  const t = a.t as TensorProto | undefined;
  if (!t) throw new OnnxError('bad_attribute', `${node.op_type} node ${node.name}: attribute ${a.name} holds no tensor`, 'invalid_value');
  const dims = (t.dims as unknown[]).map(toNum);
  // BOOL (9): one byte per value in raw_data, or int32_data (torch writes masks' fills this way);
  // read through the model, which knows where a tensor's bytes are
  if (t.data_type === 9) return { dims, values: Array.from(model.tensorBytes(t)), int: true };
  const int = t.data_type === DT.INT64 || t.data_type === DT.INT32;
  const values = int ? intsOf(model, t) : Array.from(model.readFloat(t));
  return { dims, values, int };
}

// Integers cross into the core as doubles, exact up to 2^53. Beyond that an INT64 constant of an
// export is a sentinel, INT64_MAX / INT64_MIN as a Slice's "to the end" (torch writes them for
// `x[..., k:]`); ONNX clamps such bounds to the axis, so ±(2^53 - 1) means the same there.
const clampInt = (v: number) => Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, v));
const intsOf = (model: OnnxModel, t: TensorProto) => model.readInts(t).map(clampInt);

function tensorOf(model: OnnxModel, name: string, t: TensorProto): TrainInit {
  const dims = (t.dims as unknown[]).map(toNum);
  if (t.data_type === DT.INT64 || t.data_type === DT.INT32) return { name, dims, values: Float64Array.from(intsOf(model, t)) };
  return { name, dims, values: model.readFloat(t) };
}

/** Options of {@link trainGraph}. */
export interface TrainGraphOptions {
  /** Float initializers that are not to be trained. */
  frozen?: string[];
  /**
   * Values of the graph (node outputs, e.g. a block's feature map) to return after the model's
   * outputs, for a matched-feature loss; a name nothing produces is refused (`dangling_input`).
   */
  extraOutputs?: string[];
}

/**
 * The model's main graph for `new Trainer(...)`. An op outside the core's set is refused by the
 * core (by name) when the Trainer is built, before anything runs.
 */
export function trainGraph(model: OnnxModel, opts: TrainGraphOptions = {}): TrainGraph {
  const g = model.graph;
  const consts = model.constants();
  const initializers: TrainInit[] = [];
  for (const [name, c] of consts) initializers.push(tensorOf(model, name, c.tensor));
  const nodes: TrainNode[] = [];
  g.node.forEach((n: NodeProto, i: number) => {
    if (n.op_type === 'Constant' && consts.has(n.output[0])) return;
    if (n.domain && n.domain !== 'ai.onnx') {
      throw new OnnxError('unsupported', `unsupported op ${n.domain}.${n.op_type}: custom domains are not in the training core`, 'unsupported_op');
    }
    const attrs: Record<string, TrainAttr> = {};
    for (const a of n.attribute) {
      const v = attrValue(model, n, a);
      if (v !== undefined) attrs[a.name] = v;
    }
    nodes.push({ opType: n.op_type, name: n.name || `${n.op_type}_${i}`, inputs: Array.from(n.input), outputs: Array.from(n.output), attrs });
  });
  const inputs = g.input.map((v: any) => v.name as string).filter((name: string) => !consts.has(name));
  const outputs = g.output.map((v: any) => v.name as string);
  const produced = new Set<string>(nodes.flatMap((n) => n.outputs));
  for (const name of opts.extraOutputs ?? []) {
    if (!produced.has(name)) throw new OnnxError('dangling_input', `extra output ${name} is not produced by any node of the graph`, 'invalid_arguments');
    outputs.push(name);
  }
  return { nodes, inputs, outputs, initializers, frozen: opts.frozen ?? [] };
}

/**
 * Lets the JS copies of `graph`'s initializer values go once a Trainer holds them (the training core
 * copies them into wasm memory): a 135 M-parameter student's are 540 MB, otherwise held beside the
 * trainer through a whole distillation (issue 37). The graph keeps its names and dims; it cannot
 * build another Trainer after this.
 */
export function dropValues(graph: TrainGraph): void {
  for (const i of graph.initializers) (i as { values: TrainInit['values'] }).values = new Float32Array(0);
}
