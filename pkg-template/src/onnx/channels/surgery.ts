// Tensor surgery: reading one channel's slice of a tensor, and cutting (or zeroing) positions along
// axes, in place in the model; integer vectors (shapes, split sizes, slice bounds) lose one per removed
// position; depthwise Convs get their new `group`; recorded intermediate shapes are dropped.
import { toNum, type OnnxModel, type NodeProto, type GraphProto } from '../model.js';
import { forEachGraph } from './constants.js';
import type { Slice } from './types.js';
import type { ConstantValues } from './values.js';

const prod = (d: number[]) => d.reduce((a, b) => a * b, 1);

/** Positions of one tensor axis that go, and what kind of member it is. */
export interface Drop { axis: number; kind: Slice['kind']; positions: Set<number>; filter: boolean }
/** Drops per `tensor \0 axis`. */
export type Drops = Map<string, Drop>;

export const dropKey = (tensor: string, axis: number) => `${tensor}\u0000${axis}`;

export function addDrop(drops: Drops, s: Slice): void {
  const k = dropKey(s.tensor, s.axis);
  const d = drops.get(k) ?? drops.set(k, { axis: s.axis, kind: s.kind, positions: new Set(), filter: !!s.filter }).get(k)!;
  for (let p = s.pos; p < s.pos + s.rep; p++) d.positions.add(p);
}

/** The values of one channel's slice of a float tensor, row-major over (slice positions, the rest). */
export function gatherSlice(data: Float32Array, dims: number[], axis: number, pos: number, rep: number, scale?: ArrayLike<number>): Float32Array {
  const outer = prod(dims.slice(0, axis));
  const inner = prod(dims.slice(axis + 1));
  const out = new Float32Array(outer * rep * inner);
  let k = 0;
  for (let o = 0; o < outer; o++) {
    const base = (o * dims[axis] + pos) * inner;
    out.set(data.subarray(base, base + rep * inner), k);
    // Position p of the axis weighted by scale[p] (activation-aware scores).
    if (scale) for (let p = 0; p < rep; p++) for (let i = 0; i < inner; i++) out[k + p * inner + i] *= scale[pos + p];
    k += rep * inner;
  }
  return out;
}

/** Keeps only the positions `keep` (sorted) of `axis`. */
export function keepAlong(data: Float32Array, dims: number[], axis: number, keep: number[]): Float32Array {
  const outer = prod(dims.slice(0, axis));
  const inner = prod(dims.slice(axis + 1));
  const out = new Float32Array(outer * keep.length * inner);
  let k = 0;
  for (let o = 0; o < outer; o++) {
    for (const p of keep) {
      const base = (o * dims[axis] + p) * inner;
      out.set(data.subarray(base, base + inner), k);
      k += inner;
    }
  }
  return out;
}

/**
 * Applies the drops: 'remove' cuts the positions, 'mask' zeroes them (shapes kept), 'constant'
 * zeroes the producers' filters only. Integer vectors change with 'remove' only.
 */
export function applyDrops(model: OnnxModel, drops: Drops, values: ConstantValues, apply: 'remove' | 'mask' | 'constant'): void {
  const byTensor = new Map<string, Drop[]>();
  for (const [k, d] of drops) {
    const t = k.split('\u0000')[0];
    (byTensor.get(t) ?? byTensor.set(t, []).get(t)!).push(d);
  }
  for (const [name, ds] of byTensor) {
    const t = values.tensor(name);
    if (ds[0].kind === 'shape') {
      if (apply !== 'remove') continue;
      const s = model.readInts(t);
      for (const d of ds) s[d.axis] -= d.positions.size;
      model.writeInts(t, s);
      continue;
    }
    if (apply !== 'remove') {
      const data = values.floats(name).slice();
      const dims = t.dims.map(toNum);
      for (const d of ds) {
        if (apply === 'constant' && !d.filter) continue;
        const inner = prod(dims.slice(d.axis + 1));
        const outer = prod(dims.slice(0, d.axis));
        for (let o = 0; o < outer; o++) for (const p of d.positions) data.fill(0, (o * dims[d.axis] + p) * inner, (o * dims[d.axis] + p + 1) * inner);
      }
      model.writeFloat(t, data);
      continue;
    }
    let data = values.floats(name);
    let dims = t.dims.map(toNum);
    for (const d of ds) {
      const keep: number[] = [];
      for (let p = 0; p < dims[d.axis]; p++) if (!d.positions.has(p)) keep.push(p);
      data = keepAlong(data, dims, d.axis, keep);
      dims = dims.slice();
      dims[d.axis] = keep.length;
    }
    model.writeFloat(t, data, dims);
  }
}

/** After a removal: depthwise `group` follows its weight; stale recorded shapes go. */
export function afterRemoval(model: OnnxModel, depthwise: { node: NodeProto; weight: string }[], values: ConstantValues): void {
  for (const { node, weight } of depthwise) {
    const a = node.attribute.find((x: { name: string }) => x.name === 'group');
    a.i = toNum(values.tensor(weight).dims[0]);
  }
  // Intermediate shapes recorded in the file no longer hold; runtimes infer them again. A subgraph's
  // outputs lose their recorded dims too (an If branch's output may have lost channels).
  const outs = new Set(model.graph.output.map((o: { name: string }) => o.name));
  forEachGraph(model, (g: GraphProto, owner?: NodeProto) => {
    if (!owner) { g.value_info = g.value_info.filter((v: { name: string }) => outs.has(v.name)); return; }
    g.value_info = [];
    for (const o of g.output) { const tt = o.type?.tensor_type; if (tt?.shape) tt.shape = null; }
  });
}
