// Integer vectors computed in the graph, entry by entry: a Reshape's shape or Split's sizes built as
// Shape -> Gather -> Unsqueeze -> Concat (how exporters write `x.view(x.shape[0], C, -1)` with a
// dynamic batch). An entry is a constant (with the tensor and index it is read from, so that it can
// be rewritten, and the hops that lead to it), a dimension of some value (read at run time), or unknown.
import type { NodeProto } from '../model.js';
import { attrInt } from '../model.js';
import type { Hop } from './types.js';

export type VectorEntry =
  /** `via`: the hops from the vector's producer down to the constant's reader (empty: the vector is the constant). */
  | { kind: 'const'; value: number; tensor: string; index: number; via: Hop[] }
  | { kind: 'dim'; of: string; axis: number }
  /**
   * A dimension of some value times a constant (grouped-query attention's Hkv · n_rep heads), with
   * where the constant factor is read (`via` as in 'const').
   */
  | { kind: 'scaled'; of: string; axis: number; factor: number; factorAt: { tensor: string; index: number; via: Hop[] } }
  | { kind: 'unknown' };

export interface VectorSource {
  producerOf(name: string): NodeProto | undefined;
  /** An integer constant's values (through Cast / Identity, the hops in `via`), or undefined. */
  intConstant(name: string): IntConstant | undefined;
  rankOf(name: string): number | undefined;
}

export interface IntConstant { name: string; values: number[]; via: Hop[] }

/** The use of an integer vector read as input `input` of `node`, down to the constant of `via`. */
export const useOf = (node: NodeProto, input: number, via: Hop[]): Hop[] => [{ node, input }, ...via];

/**
 * A Reshape entry that keeps input axis i as it is: 0 (copy), a dimension read at the same index, 1,
 * or -1 where the caller allows the inferred entry.
 */
export const copiesAxis = (e: VectorEntry, i: number, allowInfer: boolean): boolean =>
  (e.kind === 'const' && (e.value === 0 || e.value === 1 || (allowInfer && e.value === -1))) || (e.kind === 'dim' && e.axis === i);

/** Longest vector followed (a shape has a handful of entries; anything longer is not a shape). */
const MAX_ENTRIES = 64;

export function resolveVector(src: VectorSource, name: string, depth = 0): VectorEntry[] | undefined {
  if (depth > 16) return undefined;
  const c = src.intConstant(name);
  if (c) return c.values.length > MAX_ENTRIES ? undefined : c.values.map((value, index) => ({ kind: 'const', value, tensor: c.name, index, via: c.via }));
  const n = src.producerOf(name);
  if (!n || (n.domain && n.domain !== 'ai.onnx')) return undefined;
  // Entries of input k, their constants reached one hop further down.
  const sub = (k: number): VectorEntry[] | undefined => {
    const v = n.input[k] ? resolveVector(src, n.input[k], depth + 1) : undefined;
    return v?.map((e) => (e.kind === 'const' ? { ...e, via: useOf(n, k, e.via) }
      : e.kind === 'scaled' ? { ...e, factorAt: { ...e.factorAt, via: useOf(n, k, e.factorAt.via) } } : e));
  };
  const constInts = (k: number) => (n.input[k] ? src.intConstant(n.input[k])?.values : undefined);
  switch (n.op_type) {
    case 'Cast': case 'Identity': case 'Squeeze': case 'Unsqueeze': {
      // A scalar <-> one-element vector: the entries stay.
      const v = sub(0);
      return v && (n.op_type === 'Cast' || n.op_type === 'Identity' || v.length === 1) ? v : undefined;
    }
    case 'Shape': {
      const rank = src.rankOf(n.input[0]);
      if (rank === undefined || rank > MAX_ENTRIES) return undefined;
      const clamp = (v: number) => Math.min(rank, Math.max(0, v < 0 ? v + rank : v));
      const start = clamp(attrInt(n, 'start', 0));
      const end = clamp(attrInt(n, 'end', rank));
      const out: VectorEntry[] = [];
      for (let a = start; a < end; a++) out.push({ kind: 'dim', of: n.input[0], axis: a });
      return out;
    }
    case 'Gather': {
      const idx = constInts(1);
      // Shape(x)[i] with i >= 0 is dimension i of x whatever the rank of x.
      const shapeOp = n.input[0] ? src.producerOf(n.input[0]) : undefined;
      const fromStart = shapeOp?.op_type === 'Shape' && (!shapeOp.domain || shapeOp.domain === 'ai.onnx') && attrInt(shapeOp, 'start', 0) >= 0
        && !shapeOp.attribute?.some((a: { name: string }) => a.name === 'end');
      if (idx && idx.every((i) => i >= 0) && attrInt(n, 'axis', 0) === 0 && fromStart && src.rankOf(shapeOp.input[0]) === undefined) {
        const start = attrInt(shapeOp, 'start', 0);
        return idx.map((i) => ({ kind: 'dim', of: shapeOp.input[0], axis: start + i }));
      }
      const v = sub(0);
      if (!v || !idx || attrInt(n, 'axis', 0) !== 0) return undefined;
      const picked = idx.map((i) => v[i < 0 ? i + v.length : i]);
      return picked.every((e) => e !== undefined) ? picked : undefined;
    }
    case 'Slice': {
      const v = sub(0), starts = constInts(1), ends = constInts(2);
      const steps = n.input[4] ? constInts(4) : [1];
      if (!v || !starts || !ends || !steps || starts.length !== 1 || ends.length !== 1 || steps[0] !== 1) return undefined;
      const L = v.length;
      const clamp = (x: number) => Math.min(L, Math.max(0, x < 0 ? x + L : x));
      return v.slice(clamp(starts[0]), clamp(ends[0]));
    }
    case 'Concat': {
      if (attrInt(n, 'axis', 0) !== 0) return undefined;
      const parts = n.input.map((_: string, k: number) => sub(k));
      if (parts.some((p: VectorEntry[] | undefined) => !p)) return undefined;
      const out = parts.flat() as VectorEntry[];
      return out.length > MAX_ENTRIES ? undefined : out;
    }
    case 'Reshape': {
      // A vector reshaped to one axis ([-1] or its own length) keeps its entries.
      const v = sub(0), to = constInts(1);
      return v && to && to.length === 1 && (to[0] === -1 || to[0] === v.length) ? v : undefined;
    }
    case 'Where': {
      // torch's expand(-1 → keep): Where(Equal(v, -1), ones, v). A dimension read at run time is never
      // -1; a constant -1 becomes the 1 the Where writes.
      const eq = n.input[0] ? src.producerOf(n.input[0]) : undefined;
      const ones = n.input[1] ? src.producerOf(n.input[1]) : undefined;
      if (eq?.op_type !== 'Equal' || eq.input[0] !== n.input[2] || ones?.op_type !== 'ConstantOfShape' || !onesFill(ones)) return undefined;
      const v = sub(2);
      return v?.map((e) => (e.kind === 'const' && e.value === -1 ? { ...e, value: 1 } : e));
    }
    case 'Mul': {
      // One dimension times a constant (torch writes Hkv · n_rep as such a product).
      const a = sub(0), b = sub(1);
      if (!a || !b || a.length !== 1 || b.length !== 1) return undefined;
      const [d, k] = a[0].kind === 'dim' ? [a[0], b[0]] : [b[0], a[0]];
      return d.kind === 'dim' && k.kind === 'const' && k.value > 0
        ? [{ kind: 'scaled', of: d.of, axis: d.axis, factor: k.value, factorAt: { tensor: k.tensor, index: k.index, via: k.via } }] : undefined;
    }
    default: return undefined;
  }
}

/** A ConstantOfShape writing ones (integer), as torch's expand pattern has it. */
function onesFill(n: NodeProto): boolean {
  const t = n.attribute?.find((a: { name: string }) => a.name === 'value')?.t;
  if (!t || (t.data_type !== 7 && t.data_type !== 6)) return false;
  // An attribute's tensor keeps its raw_data (only initializers are file-backed: file-backed.ts).
  const raw: Uint8Array | undefined = t.raw_data;
  if (raw && raw.length >= 4) return raw[0] === 1 && raw.slice(1).every((b) => b === 0);
  const vals = t.data_type === 7 ? t.int64_data : t.int32_data;
  return !!vals && vals.length === 1 && Number(vals[0]) === 1;
}
