// N:M sparsity (after NVIDIA ASP): patterns, masks, and the MagnitudeSearcher over many params.
import { argError, call } from './errors.js';
import { describe, dims, f32, notDetached, num, optsObject, progressFn, str } from './convert.js';
import type { Floats } from './convert.js';
import { Owned, toMap } from './owned.js';
import { Param } from './param.js';
import { R, memoryBuffer } from './runtime.js';
import type { ProgressCallback } from './scope.js';
import type { RawMagnitudeSearcher } from '../wasm/st/sparsekit_wasm.js';

/** ASP pattern name: 'm{M}n{N}_1d', 'm4n2_2d_greedy' or 'm4n2_2d_best'. */
export type AspPattern = string;

/** 'm4n2_1d' -> {valid: true, m: 4, n: 2}; anything else -> {valid: false, m: 0, n: 0}. */
export function getNmpruneInfo(pattern: string): { valid: boolean; m: number; n: number } {
  if (typeof pattern !== 'string') return { valid: false, m: 0, n: 0 };
  return call(() => R().getNmpruneInfo(pattern)) as { valid: boolean; m: number; n: number };
}

/** All C(m, n) patterns (rows of m), in itertools.combinations order. */
export function computeValid1dPatterns(m: number, n: number): Uint8Array {
  const mm = num(m, 'm');
  const nn = num(n, 'n');
  return call(() => R().computeValid1dPatterns(mm, nn));
}

/**
 * Keep-mask keeping the n largest |x| of every m consecutive elements of each row. `out`, if
 * given, is a `Uint8Array` as long as `values` that receives the mask and is returned (no
 * allocation per call); it is written only once every argument has been checked.
 */
export function mn1dBest(values: Floats | Param, shape: number[], m: number, n: number, out?: Uint8Array): Uint8Array {
  const v = f32(values, 'values');
  const s = dims(shape, 'shape');
  const mm = num(m, 'm');
  const nn = num(n, 'n');
  const o = maskOut(out);
  return call(() => R().mn1dBest(v, s, mm, nn, o));
}

/** 2:4 along the rows: the 2 largest |x| of every 4 consecutive elements (`out` as in {@link mn1dBest}). */
export function m4n2_1d(values: Floats | Param, shape: number[], out?: Uint8Array): Uint8Array {
  const v = f32(values, 'values');
  const s = dims(shape, 'shape');
  const o = maskOut(out);
  return call(() => R().m4n2_1d(v, s, o));
}

/** A caller's output array for a mask: a live `Uint8Array` outside wasm memory (its length is checked by the call). */
function maskOut(out: unknown): Uint8Array | undefined {
  if (out === undefined) return undefined;
  notDetached(out, 'out');
  if (!(out instanceof Uint8Array)) throw argError(`out must be a Uint8Array, got ${describe(out)}`);
  // A view of the module's memory could move under the call as memory grows.
  if (out.buffer === memoryBuffer()) throw argError('out must not be a view of the module\'s wasm memory');
  return out;
}

/**
 * Keep-mask in the tensor's layout; 1-D/2-D/3-D (K,C,R)/4-D (K,C,R,S) tensors, groups along
 * the input channels C as NVIDIA ASP does. Shape defaults to the Param's.
 */
export function createAspMask(values: Floats | Param, shape?: number[], pattern: AspPattern = 'm4n2_1d'): Uint8Array {
  const sh = shape === undefined && values instanceof Param ? values.shape : shape;
  const v = f32(values, 'values');
  const p = str(pattern, 'pattern');
  const s = dims(sh, 'shape');
  return call(() => R().createAspMask(v, s, p));
}

/** Fraction of non-zeros. */
export function fill(values: Floats | Param): number {
  const v = f32(values, 'values');
  return call(() => R().fill(v));
}

/** Groups of m ([rows*ceil(cols/m), m]) with rows right-padded with zeros. */
export function reshape1d(values: Floats | Param, shape: number[], m: number): { data: Float32Array; shape: number[]; paddedShape: number[] } {
  const v = f32(values, 'values');
  const s = dims(shape, 'shape');
  const mm = num(m, 'm');
  return call(() => R().reshape1d(v, s, mm)) as { data: Float32Array; shape: number[]; paddedShape: number[] };
}

/** N:M masks for a set of params; conv weights (O, I, kh, kw) grouped along input channels. */
export class MagnitudeSearcher extends Owned {
  /** @internal */
  declare _raw: RawMagnitudeSearcher;
  readonly pattern: string;

  constructor(pattern: AspPattern = 'm4n2_1d') {
    super();
    const p = str(pattern, 'pattern');
    this._raw = call(() => new (R().RawMagnitudeSearcher)(p));
    this.pattern = p;
  }
  #load(params: Param[]): RawMagnitudeSearcher {
    if (!Array.isArray(params) || !params.every((p) => p instanceof Param)) {
      throw argError(`MagnitudeSearcher needs an array of Param, got ${describe(params)}`);
    }
    const r = this._live;
    r.clearParams();
    for (const p of params) r.addParam(p._live);
    return r;
  }
  #run(params: Param[], opts: { onProgress?: ProgressCallback } | undefined, apply: boolean): Map<Param, Uint8Array> {
    const r = this.#load(params);
    try {
      const p = progressFn(optsObject(opts, 'options').onProgress);
      return toMap(params, call(() => (apply ? r.apply(p) : r.computeMasks(p))) as Uint8Array[]);
    } finally {
      r.clearParams();
    }
  }
  /** Keep-masks (param layout) without changing the params. */
  computeMasks(params: Param[], opts?: { onProgress?: ProgressCallback }): Map<Param, Uint8Array> {
    return this.#run(params, opts, false);
  }
  /** Computes every mask first, then applies them in place; returns the masks. */
  apply(params: Param[], opts?: { onProgress?: ProgressCallback }): Map<Param, Uint8Array> {
    return this.#run(params, opts, true);
  }
}
