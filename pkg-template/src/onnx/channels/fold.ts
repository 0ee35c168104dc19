// A removed channel is not a zero channel: with its filter gone it would output a constant (its bias
// through BN, the activation, ...), which the consumers saw. That constant times the consumer's weight
// slice (summed over the kernel) is added to the consumer's bias, created when missing (a MatMul gets
// an Add). Exact for Gemm / MatMul and 1x1 Conv; for a kxk Conv exact away from zero-padded borders.
import { DT, ModelProto, toNum, type NodeProto, type OnnxModel, type GraphProto } from '../model.js';
import { OnnxError } from '../errors.js';
import type { ChannelAnalysis, ChannelGroup, Fold } from './types.js';
import type { ConstantValues } from './values.js';
import { forEachGraph, nodeGraphs } from './constants.js';
import { addDrop, dropKey, type Drops } from './surgery.js';
import { Names } from '../names.js';

const prod = (d: number[]) => d.reduce((a, b) => a * b, 1);

export interface FoldReport { biases: number; created: number; unknown: number }

/**
 * Adds the removed channels' constants (and the calibration's `biasShift`) to the consumers' biases.
 * Reads every value before any tensor changes; a new bias gets the drops of its consumer's outputs.
 */
export function foldConstants(model: OnnxModel, analysis: ChannelAnalysis, live: ChannelGroup[], keepOf: Map<number, Uint8Array>,
  drops: Drops, values: ConstantValues, biasShift?: Map<string, ArrayLike<number>>): FoldReport {
  const { channelsOf } = analysis;
  const dimsOf = (name: string) => values.tensor(name).dims.map(toNum);
  const delta = new Map<NodeProto, { fold: Fold; add: Float64Array }>();
  let unknown = 0;
  if (biasShift?.size) {
    const shifted = new Set<string>();
    for (const gr of live) for (const ch of channelsOf.get(gr.id)!) for (const sl of ch.slices) {
      const f = sl.fold;
      const shift = f && biasShift.get(f.weight);
      if (!f || !shift || shifted.has(f.weight)) continue;
      shifted.add(f.weight);
      const n = dimsOf(f.weight)[f.outAxis];
      if (shift.length !== n) throw new OnnxError('unsupported', `biasShift of "${f.weight}" has ${shift.length} values for ${n} outputs`, 'shape_mismatch');
      delta.set(f.node, { fold: f, add: Float64Array.from(shift, (v) => v * f.scale) });
    }
  }
  for (const gr of live) {
    const keep = keepOf.get(gr.id)!;
    channelsOf.get(gr.id)!.forEach((ch, c) => {
      if (keep[c]) return;
      for (const sl of ch.slices) {
        // A consumer given a biasShift has its removed slices zeroed: its shift says what they were worth.
        if (!sl.fold || biasShift?.has(sl.fold.weight)) continue;
        const v = sl.fold.value();
        if (v === undefined || !Number.isFinite(v) || !Number.isFinite(sl.fold.scale)) { unknown++; continue; }
        if (v === 0) continue;
        const f = sl.fold;
        const dims = dimsOf(f.weight);
        const w = values.floats(f.weight);
        const d = delta.get(f.node) ?? delta.set(f.node, { fold: f, add: new Float64Array(dims[f.outAxis]) }).get(f.node)!;
        // Sum of the weight over (slice positions, everything but the output axis), per output.
        const inner = prod(dims.slice(sl.axis + 1));
        const outer = prod(dims.slice(0, sl.axis));
        const outInner = prod(dims.slice(f.outAxis + 1));
        for (let o = 0; o < outer; o++) {
          for (let p = sl.pos; p < sl.pos + sl.rep; p++) {
            const base = (o * dims[sl.axis] + p) * inner;
            for (let i = 0; i < inner; i++) {
              const flat = base + i;
              const out = Math.floor(flat / outInner) % dims[f.outAxis];
              d.add[out] += v * f.scale * w[flat];
            }
          }
        }
      }
    });
  }
  if (!delta.size) return { biases: 0, created: 0, unknown };
  const NodeProtoT = ModelProto.root.lookupType('onnx.NodeProto');
  const TensorProtoT = ModelProto.root.lookupType('onnx.TensorProto');
  const graphOf = nodeGraphs(model);
  // a model cut before holds the `…folded_bias_add` nodes of that cut (names.ts)
  const names = new Names(model.graph);
  const producer = new Map<string, NodeProto>();
  forEachGraph(model, (g: GraphProto) => { for (const n of g.node) for (const o of n.output) producer.set(o, n); });
  // Each node's existing bias constant, read before anything is written: a bias that cannot be
  // read as float (an integer tensor) refuses the call with the model as it was.
  const biasOf = new Map<NodeProto, string | undefined>();
  for (const node of delta.keys()) {
    const biasIndex = node.op_type === 'MatMul' ? -1 : 2;
    const existing = biasIndex > 0 && node.input[biasIndex] ? node.input[biasIndex] : undefined;
    // The bias tensor (through a Cast, as the weight may be): its constant's name.
    let bias = existing;
    for (let k = 0; bias && !values.constants.has(bias) && k < 3; k++) bias = producer.get(bias)?.input[0];
    const found = existing && bias && values.constants.has(bias) ? bias : undefined;
    if (found) values.floats(found);
    biasOf.set(node, found);
  }
  let created = 0;
  for (const [node, { fold: f, add }] of delta) {
    const bias = biasOf.get(node);
    if (bias) {
      const b = values.floats(bias);
      for (let i = 0; i < b.length; i++) b[i] += add[i]; // the cached copy now holds the folded bias; written below
      if (!drops.has(dropKey(bias, 0))) drops.set(dropKey(bias, 0), { tensor: bias, axis: 0, kind: 'weight', positions: new Set(), filter: false });
      continue;
    }
    // No bias: a new one, in the weight's type when the node reads the weight directly.
    const graph = graphOf.get(node) ?? model.graph;
    const wt = values.tensor(f.weight);
    const direct = node.input[1] === f.weight;
    const name = names.fresh(`${f.weight}.folded_bias`);
    const t = TensorProtoT.create({ name, dims: [add.length], data_type: direct ? wt.data_type : DT.FLOAT, raw_data: new Uint8Array(0) });
    graph.initializer.push(t);
    values.constants.set(name, { tensor: t, graph });
    model.writeFloat(t, Float32Array.from(add));
    created++;
    const outDrop = drops.get(dropKey(f.weight, f.outAxis));
    if (outDrop) for (const p of outDrop.positions) addDrop(drops, { tensor: name, axis: 0, pos: p, rep: 1, kind: 'weight' });
    if (node.op_type === 'MatMul') {
      const y = node.output[0];
      const mid = names.fresh(`${y}.before_folded_bias`);
      node.output[0] = mid;
      const at = graph.node.indexOf(node);
      graph.node.splice(at + 1, 0, NodeProtoT.create({ name: names.fresh(`${node.name || y}.folded_bias_add`), op_type: 'Add', domain: '', input: [mid, name], output: [y] }));
    } else {
      while (node.input.length < 2) node.input.push('');
      node.input[2] = name;
    }
  }
  return { biases: delta.size, created, unknown };
}
