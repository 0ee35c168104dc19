// Tensor surgery: reading one channel's slice of a tensor, and cutting (or zeroing) positions along
// axes, in place in the model; integer vectors (shapes, split sizes, slice bounds) lose one per removed
// position; depthwise Convs get their new `group`; recorded intermediate shapes are dropped.
import { toNum, type OnnxModel, type NodeProto, type GraphProto } from '../model.js';
import { forEachGraph } from './constants.js';
import type { Hop, Slice } from './types.js';
import { ShapeCopies, useKey } from './shape-copies.js';
import type { ConstantValues } from './values.js';

const prod = (d: number[]) => d.reduce((a, b) => a * b, 1);

/**
 * Positions of one tensor axis that go, and what kind of member it is. A 'shape' drop is per use of
 * the constant (`use`): each use rewrites its own copy when the constant is read elsewhere too.
 */
export interface Drop { tensor: string; axis: number; kind: Slice['kind']; positions: Set<number>; filter: boolean; use?: Hop[] }
/** Drops per `tensor \0 axis \0 use`. */
export type Drops = Map<string, Drop>;

export const dropKey = (tensor: string, axis: number, use?: Hop[]) => `${tensor}\u0000${axis}\u0000${useKey(use)}`;

export function addDrop(drops: Drops, s: Slice): void {
  const use = s.kind === 'shape' ? s.use : undefined;
  const k = dropKey(s.tensor, s.axis, use);
  const d = drops.get(k) ?? drops.set(k, { tensor: s.tensor, axis: s.axis, kind: s.kind, positions: new Set(), filter: !!s.filter, use }).get(k)!;
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
  const byUse = new Map<string, Drop[]>();
  for (const d of drops.values()) {
    if (d.kind === 'io') { if (apply === 'remove') shrinkDeclared(model, d); continue; }
    const [map, k] = d.kind === 'shape' ? [byUse, `${d.tensor}\u0000${useKey(d.use)}`] : [byTensor, d.tensor];
    (map.get(k) ?? map.set(k, []).get(k)!).push(d);
  }
  if (apply === 'remove' && byUse.size) {
    // Every integer constant's values before any use rewrites it (a copy starts from them).
    const original = new Map<string, number[]>();
    for (const ds of byUse.values()) if (!original.has(ds[0].tensor)) original.set(ds[0].tensor, model.readInts(values.tensor(ds[0].tensor)));
    const copies = new ShapeCopies(model, values);
    // Uses that write the same values into one constant may share it (see commonUse).
    const alike = new Map<string, Drop[][]>();
    for (const ds of byUse.values()) {
      const k = `${ds[0].tensor}\u0000${ds.map((d) => `${d.axis}:${d.positions.size}`).sort().join(',')}`;
      (alike.get(k) ?? alike.set(k, []).get(k)!).push(ds);
    }
    for (const group of alike.values()) {
      const common = copies.commonUse(group.map((ds) => ds[0].use));
      for (const ds of common ? [group[0]] : group) {
        const s = original.get(ds[0].tensor)!.slice();
        for (const d of ds) s[d.axis] -= d.positions.size;
        model.writeInts(copies.target(ds[0].tensor, common ?? ds[0].use, original.get(ds[0].tensor)!), s);
      }
    }
  }
  for (const [name, ds] of byTensor) {
    const t = values.tensor(name);
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

/** A graph input / output of the model's state (a KV cache): its declared dimension loses the removed positions. */
function shrinkDeclared(model: OnnxModel, d: Drop): void {
  for (const v of [...model.graph.input, ...model.graph.output]) {
    if (v.name !== d.tensor) continue;
    const dim = v.type?.tensor_type?.shape?.dim?.[d.axis];
    // A symbolic dimension (dim_param) says nothing about the count: it stays.
    if (dim?.dim_value != null && toNum(dim.dim_value) > 0) dim.dim_value = toNum(dim.dim_value) - d.positions.size;
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
