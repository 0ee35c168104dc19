// The linear layers of an ONNX graph as calibration sees them: the 2-D view of the weight (rows =
// outputs, cols = inputs), how the layer's input becomes Hessian vectors, and which earlier layers
// that input depends on (sequential pruning captures a layer after those are pruned).
import { OnnxModel, attrInt, attrInts, attr, type OnnxWeight, type NodeProto } from '../model.js';
import type { ConvGeometry } from 'sparsekit-wasm';

/** How a layer's input is turned into Hessian vectors; null: no statistics (magnitude only). */
export type StatsKind = 'conv' | 'grouped' | 'rows' | null;

export interface CalibLayer {
  /** Position among the layers, in graph order. */
  index: number;
  /** The weight's name (the layer's key in plans and reports). */
  name: string;
  /** The consuming node's name. */
  node: string;
  op: string;
  weight: OnnxWeight;
  /** The value the layer multiplies (its captured input). */
  input: string;
  rows: number;
  cols: number;
  /** Stored (inputs, outputs): an ONNX MatMul weight, a Gemm with transB = 0. */
  transposed: boolean;
  /** Conv group (1 elsewhere). */
  group: number;
  stats: StatsKind;
  /** Conv geometry for Hessian.addConv (conv and grouped). */
  conv?: ConvGeometry;
  /** The highest index of a layer upstream of `input` (-1: none). */
  dependsOn: number;
  /** Why the layer gets no (or per-group) statistics. */
  note: string | null;
}

const LINEAR = new Set(['Conv', 'ConvTranspose', 'Gemm', 'MatMul']);

function convGeometry(node: NodeProto, weight: OnnxWeight): { conv?: ConvGeometry; note?: string } {
  const d = weight.dims;
  if (d.length !== 4) return { note: `Conv weight of rank ${d.length}: magnitude only` };
  const a = attr(node, 'auto_pad');
  const autoPad = a && a.s && a.s.length ? (typeof a.s === 'string' ? a.s : new TextDecoder().decode(a.s)) : 'NOTSET';
  if (autoPad !== 'NOTSET' && autoPad !== 'VALID') return { note: `auto_pad ${autoPad}: magnitude only` };
  return {
    conv: {
      kernelShape: attrInts(node, 'kernel_shape') ?? d.slice(2),
      strides: attrInts(node, 'strides') ?? [1, 1],
      dilations: attrInts(node, 'dilations') ?? [1, 1],
      pads: autoPad === 'VALID' ? [0, 0, 0, 0] : attrInts(node, 'pads') ?? [0, 0, 0, 0],
    },
  };
}

/** The prunable linear layers of `model` in graph order (a weight used twice is listed at its first use). */
export function findLayers(model: OnnxModel): CalibLayer[] {
  const byValue = new Map<string, OnnxWeight>(model.prunable().map((w) => [w.name, w]));
  const lastDep = new Map<string, number>();
  const layers: CalibLayer[] = [];
  const seen = new Set<OnnxWeight>();
  for (const node of model.graph.node) {
    // float16 weights are often cast to float before their layer: follow Cast / Identity.
    if ((node.op_type === 'Cast' || node.op_type === 'Identity') && byValue.has(node.input[0])) byValue.set(node.output[0], byValue.get(node.input[0])!);
    let dep = -1;
    for (const i of node.input) dep = Math.max(dep, lastDep.get(i) ?? -1);
    const w = LINEAR.has(node.op_type) ? byValue.get(node.input[1]) : undefined;
    if (w && w.view && !seen.has(w)) {
      seen.add(w);
      const v = w.view;
      const layer: CalibLayer = {
        index: layers.length, name: w.name, node: node.name || w.node, op: node.op_type, weight: w, input: node.input[0],
        rows: v.rows, cols: v.cols, transposed: v.transposed, group: 1, stats: null,
        dependsOn: lastDep.get(node.input[0]) ?? -1, note: null,
      };
      if (node.op_type === 'Conv') {
        layer.group = attrInt(node, 'group', 1);
        const { conv, note } = convGeometry(node, w);
        if (conv) {
          layer.conv = conv;
          layer.stats = layer.group === 1 ? 'conv' : 'grouped';
          if (layer.group > 1) layer.note = `${w.dims[1] === 1 ? 'depthwise' : 'grouped'} Conv (group ${layer.group})`;
        } else layer.note = note!;
      } else if (node.op_type === 'Gemm') {
        if (attrInt(node, 'transA', 0)) layer.note = 'Gemm with transA: magnitude only';
        else layer.stats = 'rows';
      } else if (node.op_type === 'MatMul') layer.stats = 'rows';
      else layer.note = 'ConvTranspose: magnitude only';
      layers.push(layer);
      dep = Math.max(dep, layer.index);
    }
    for (const o of node.output) lastDep.set(o, dep);
  }
  return layers;
}

/**
 * Consecutive groups of layers whose inputs one capture can take: no member's input depends on a
 * member of the same group. Not sequential: one group (all statistics from the unpruned model).
 */
export function captureGroups(layers: CalibLayer[], sequential = true): CalibLayer[][] {
  if (!sequential) return layers.length ? [layers] : [];
  const groups: CalibLayer[][] = [];
  let cur: CalibLayer[] = [];
  for (const l of layers) {
    if (cur.length && l.dependsOn >= cur[0].index) { groups.push(cur); cur = []; }
    cur.push(l);
  }
  if (cur.length) groups.push(cur);
  return groups;
}
