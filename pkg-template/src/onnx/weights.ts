// The float weights of a model's main graph and the 2-D view the pruning takes of each: which op
// uses a constant as its weight (through Cast / Identity), its reduction axis, and whether it is
// prunable. Node attributes are read through the helpers here.
import { dtypeName, toNum, prod, storageOf, FLOAT_TYPES, type GraphProto, type NodeProto, type TensorProto, type Storage } from './tensor-data.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * The 2-D view of a weight that the pruning uses: rows = outputs, cols = inputs (the reduction).
 * `shape`/`stride` (in elements of the stored tensor) build a sparsekit `View` on a Param of the stored data.
 */
export interface WeightView {
  rows: number;
  cols: number;
  shape: [number, number];
  stride: [number, number];
  /** True when the stored tensor is (inputs, outputs): MatMul's B and Gemm's B with transB = 0. */
  transposed: boolean;
}

/** A float tensor constant of the main graph and how the graph uses it. */
export interface OnnxWeight {
  name: string;
  source: 'initializer' | 'constant';
  tensor: TensorProto;
  dims: number[];
  numel: number;
  dtype: number;
  dtypeName: string;
  storage: Storage;
  /** The op that uses it as its weight ('' when none). */
  op: string;
  /** That node's name (or op_index when unnamed). */
  node: string;
  /** Conv `group` (1 elsewhere). */
  group: number;
  /** Every use, as `Op#inputIndex`. */
  consumers: string[];
  /**
   * The axis of the stored tensor that the dot product runs over (where N:M groups run, and what
   * sparsekit-wasm's defaultPlan / nm24ConfigFor take): 0 for a stored (K, N) weight (MatMul's B,
   * Gemm's B with transB = 0), 1 otherwise.
   */
  reduceAxis: 0 | 1;
  prunable: boolean;
  /** Present when prunable. */
  view?: WeightView;
}

/** Ops whose weight we prune, and the input index that holds it. */
export const WEIGHT_INPUT: Record<string, number> = { Conv: 1, ConvTranspose: 1, Gemm: 1, MatMul: 1 };

export function attr(node: NodeProto, name: string): any {
  return node.attribute.find((a: any) => a.name === name);
}
export function attrInt(node: NodeProto, name: string, dflt: number): number {
  const a = attr(node, name);
  return a ? toNum(a.i) : dflt;
}
export function attrInts(node: NodeProto, name: string): number[] | undefined {
  const a = attr(node, name);
  return a ? a.ints.map(toNum) : undefined;
}

/** A tensor constant of a graph, by value name. */
export interface ConstantEntry { tensor: TensorProto; source: 'initializer' | 'constant'; node?: NodeProto }

/** Every tensor constant of a graph by value name: initializers and Constant nodes' `value`. */
export function graphConstants(graph: GraphProto): Map<string, ConstantEntry> {
  const out = new Map<string, ConstantEntry>();
  for (const t of graph.initializer) out.set(t.name, { tensor: t, source: 'initializer' });
  for (const n of graph.node) {
    if (n.op_type !== 'Constant' || (n.domain && n.domain !== 'ai.onnx')) continue;
    const a = n.attribute.find((x: any) => x.name === 'value' && x.t);
    if (a) out.set(n.output[0], { tensor: a.t, source: 'constant', node: n });
  }
  return out;
}

/** The float weights of a graph, with their uses and, when prunable, their 2-D view. */
export function findWeights(graph: GraphProto, constants: Map<string, ConstantEntry>, storage: (t: TensorProto) => Storage = storageOf): OnnxWeight[] {
  const consumers = new Map<string, { node: NodeProto; index: number; ni: number }[]>();
  graph.node.forEach((n: NodeProto, ni: number) => n.input.forEach((name: string, index: number) => {
    if (!consumers.has(name)) consumers.set(name, []);
    consumers.get(name)!.push({ node: n, index, ni });
  }));
  // The weight use of a value, looking through up to two Cast / Identity nodes (float16 weights
  // are often cast to float before their Conv).
  const weightUse = (name: string, depth = 0): { node: NodeProto; index: number; ni: number } | undefined => {
    const cons = consumers.get(name) ?? [];
    const direct = cons.find((c) => WEIGHT_INPUT[c.node.op_type] === c.index);
    if (direct || depth > 1) return direct;
    if (cons.length === 1 && (cons[0].node.op_type === 'Cast' || cons[0].node.op_type === 'Identity')) {
      return weightUse(cons[0].node.output[0], depth + 1);
    }
    return undefined;
  };
  const weights: OnnxWeight[] = [];
  for (const [name, { tensor, source }] of constants) {
    if (!FLOAT_TYPES.has(tensor.data_type)) continue;
    const dims = tensor.dims.map(toNum);
    const use = weightUse(name);
    const op = use ? use.node.op_type : '';
    const numel = prod(dims);
    const transposed = !!use && (op === 'MatMul' || (op === 'Gemm' && !attrInt(use.node, 'transB', 0)));
    const w: OnnxWeight = {
      name, source, tensor, dims, numel,
      dtype: tensor.data_type, dtypeName: dtypeName(tensor.data_type),
      storage: storage(tensor),
      op, node: use ? use.node.name || `${op}_${use.ni}` : '',
      group: use && op === 'Conv' ? attrInt(use.node, 'group', 1) : 1,
      consumers: (consumers.get(name) ?? []).map((c) => `${c.node.op_type}#${c.index}`),
      reduceAxis: transposed ? 0 : 1,
      prunable: false,
    };
    if (use && dims.length >= 2 && numel > 0) {
      w.view = viewOf(dims, transposed);
      // MatMul weights of rank > 2 (batched) have no single 2-D view.
      w.prunable = !(op === 'MatMul' && dims.length > 2) && !(op === 'Gemm' && dims.length !== 2);
      if (!w.prunable) delete w.view;
    }
    weights.push(w);
  }
  return weights;
}

/** The pruning view of a weight (see WeightView). */
function viewOf(dims: number[], transposed: boolean): WeightView {
  if (transposed) {
    const [k, n] = dims;
    return { rows: n, cols: k, shape: [n, k], stride: [1, n], transposed };
  }
  const rows = dims[0];
  const cols = prod(dims.slice(1));
  return { rows, cols, shape: [rows, cols], stride: [cols, 1], transposed };
}
