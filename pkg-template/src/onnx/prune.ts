// Pruning the weights of an ONNX model in place with the sparsekit core: block magnitude pruning at
// a sparsity (per row, per layer or model-wide), or N:M along the reduction axis. Every figure of the
// report is counted from the tensors as they will be written (after float16 rounding).
import * as sk from 'sparsekit-wasm';
import { OnnxModel, type OnnxWeight } from './model.js';
import { OnnxError } from './errors.js';
import { checkNm } from './nm-pattern.js';
import { assertFloatWeights } from './quant/detect.js';

export type Scope = 'row' | 'layer' | 'global';
export type ProgressFn = (done: number, total: number, label: string) => void;

export interface PruneOptions {
  /** Fraction of blocks to remove in each scope, in [0, 1]. */
  sparsity?: number;
  /** Keep n of every m consecutive weights along the reduction axis. */
  nm?: [number, number];
  /** Block shape on the 2-D view (rows = outputs, cols = inputs); default [1, 1]. */
  block?: [number, number];
  /** Where blocks compete: each output row, each layer (default), or the whole model. */
  scope?: Scope;
  /**
   * Per-layer target (recipes, searched plans): a layer's own sparsity (pruneSparsity) or [n, m]
   * (pruneNm), or null to leave it dense; undefined falls back to `sparsity` / `nm`. Not with scope 'global'.
   */
  layerTarget?: (w: OnnxWeight) => number | [number, number] | null | undefined;
  onProgress?: ProgressFn;
}

/** One weight in a report. */
export interface LayerReport {
  name: string;
  op: string;
  shapeBefore: number[];
  shapeAfter: number[];
  dtype: string;
  params: number;
  zeros: number;
  sparsity: number;
  bytesBefore: number;
  bytesAfter: number;
  /** Why the layer was left as it was or pruned differently than asked. */
  note?: string;
}

export interface PruneReport {
  mode: 'sparsity' | 'nm' | 'channels';
  options: Record<string, unknown>;
  /** Parameters of the prunable weights, and of every float constant, before / after. */
  params: { before: number; after: number; prunableBefore: number; prunableAfter: number };
  /** Zeros among the prunable weights after pruning, and their fraction. */
  zeros: number;
  sparsity: number;
  layers: LayerReport[];
}

const ESIZE: Record<number, number> = { 1: 4, 10: 2, 16: 2, 11: 8 };

export function countZeros(v: Float32Array): number {
  let z = 0;
  for (let i = 0; i < v.length; i++) if (v[i] === 0) z++;
  return z;
}

/** A layer's report entry from its tensor as it stands now. */
export function layerReport(model: OnnxModel, w: OnnxWeight, shapeBefore: number[], note?: string): LayerReport {
  const v = model.readFloat(w);
  const zeros = countZeros(v);
  const es = ESIZE[w.dtype] ?? 4;
  const r: LayerReport = {
    name: w.name, op: w.op, shapeBefore, shapeAfter: w.dims.slice(), dtype: w.dtypeName,
    params: v.length, zeros, sparsity: v.length ? zeros / v.length : 0,
    bytesBefore: shapeBefore.reduce((a, b) => a * b, 1) * es, bytesAfter: v.length * es,
  };
  if (note) r.note = note;
  return r;
}

export function checkSparsity(s: unknown, what = 'sparsity'): number {
  if (typeof s !== 'number' || !Number.isFinite(s) || s < 0 || s > 1) {
    throw new OnnxError('unsupported', `${what} must be a number in [0, 1] (got ${String(s)})`, 'invalid_sparsity');
  }
  return s;
}

function totals(model: OnnxModel, layers: LayerReport[], before: number, prunableBefore: number) {
  const after = model.weights.reduce((a, w) => a + w.numel, 0);
  const prunableAfter = layers.reduce((a, l) => a + l.params, 0);
  const zeros = layers.reduce((a, l) => a + l.zeros, 0);
  return { params: { before, after, prunableBefore, prunableAfter }, zeros, sparsity: prunableAfter ? zeros / prunableAfter : 0 };
}

/** Magnitude pruning of blocks at a sparsity (see PruneOptions); in place. */
export function pruneSparsity(model: OnnxModel, opts: PruneOptions): PruneReport {
  assertFloatWeights(model, 'pruning');
  const per = opts.layerTarget;
  const sparsity = per && opts.sparsity === undefined ? 0 : checkSparsity(opts.sparsity);
  const want = opts.block ?? [1, 1];
  if (want.length !== 2 || !want.every((b) => Number.isInteger(b) && b >= 1)) {
    throw new OnnxError('unsupported', `block must be two positive integers (got ${want.join('x')})`, 'invalid_block_shape');
  }
  const scope = opts.scope ?? 'layer';
  const ws = model.prunable();
  // Each layer's sparsity (null: left dense), checked before anything changes.
  const targets = ws.map((w) => {
    const t = per?.(w);
    if (t === undefined) return sparsity;
    if (t === null) return null;
    if (Array.isArray(t)) throw new OnnxError('unsupported', `layer ${w.name}: an N:M target given to sparsity pruning`, 'invalid_arguments');
    // A layer left dense is out of the global pool; a sparsity of its own would rank it alone.
    if (scope === 'global') throw new OnnxError('unsupported', 'per-layer targets rank each layer on its own: not with scope global', 'invalid_arguments');
    return checkSparsity(t, `sparsity of ${w.name}`);
  });
  const before = model.weights.reduce((a, w) => a + w.numel, 0);
  const prunableBefore = ws.reduce((a, w) => a + w.numel, 0);
  const notes = new Map<OnnxWeight, string | undefined>();
  const owned: { free(): void }[] = [];
  // One weight in wasm memory at a time unless the scope is the whole model.
  const load = (w: OnnxWeight) => {
    const v = w.view!;
    const param = sk.Param.fromArray(model.readFloat(w), v.transposed ? [v.cols, v.rows] : [v.rows, v.cols]);
    const view = new sk.View(param, v.shape, v.stride);
    // A block dim that does not divide the view falls back to gcd(block, dim): the package's one rule.
    const { block, note } = sk.fitBlock(v.rows, v.cols, want);
    notes.set(w, note ?? undefined);
    const spec = new sk.BlockSpec(view, block, w.name);
    const scopeSpec = new sk.ScopeSpec(spec, scope === 'row' ? [1, -1] : [-1, -1], w.name);
    return { w, param, scopeSpec, objs: [scopeSpec, spec, view, param] };
  };
  try {
    let layers: LayerReport[];
    if (scope === 'global' && ws.length) {
      const pooled = ws.filter((_, i) => targets[i] !== null);
      const items = pooled.map((w) => { const it = load(w); owned.push(...it.objs); return it; });
      if (items.length) {
        const coupled = new sk.ScopeCoupling(items.map((i) => i.scopeSpec), undefined, 'model');
        owned.push(coupled);
        coupled.hardThreshold({ sparsity, onProgress: (d, t) => opts.onProgress?.(d, t, 'model-wide threshold') });
      }
      const written = new Map(items.map(({ w, param }) => [w, param]));
      layers = ws.map((w) => {
        const param = written.get(w);
        if (!param) return layerReport(model, w, w.dims.slice(), 'dense: left out by the per-layer plan');
        model.writeFloat(w, param.toArray());
        return layerReport(model, w, w.dims.slice(), notes.get(w));
      });
    } else {
      layers = ws.map((w, i) => {
        const target = targets[i];
        if (target === null || target === 0) {
          opts.onProgress?.(i + 1, ws.length, w.name);
          return layerReport(model, w, w.dims.slice(), target === null ? 'dense: left out by the per-layer plan' : undefined);
        }
        const it = load(w);
        try {
          it.scopeSpec.hardThreshold({ sparsity: target });
          model.writeFloat(w, it.param.toArray());
        } finally {
          for (const o of it.objs) o.free();
        }
        opts.onProgress?.(i + 1, ws.length, w.name);
        return layerReport(model, w, w.dims.slice(), notes.get(w));
      });
    }
    return { mode: 'sparsity', options: { sparsity: per && opts.sparsity === undefined ? 'per layer' : sparsity, block: want, scope }, ...totals(model, layers, before, prunableBefore), layers };
  } finally {
    for (const o of owned) o.free();
  }
}

/**
 * N:M along the reduction axis: the input channels of a Conv (groups as NVIDIA ASP forms them, per
 * kernel position), K of a MatMul / Gemm weight. A layer whose reduction length is not a multiple of
 * M stays dense with a note; if no layer fits, this throws (invalid_nm_shape).
 */
export function pruneNm(model: OnnxModel, opts: PruneOptions): PruneReport {
  assertFloatWeights(model, 'N:M pruning');
  const ws = model.prunable();
  // Each layer's [n, m] (null: left dense by the plan).
  const targets = ws.map((w): [number, number] | null => {
    const t = opts.layerTarget?.(w);
    if (t === null) return null;
    if (t === undefined) {
      if (!opts.nm) throw new OnnxError('unsupported', `layer ${w.name} has no N:M target`, 'invalid_arguments');
      return opts.nm;
    }
    if (!Array.isArray(t)) throw new OnnxError('unsupported', `layer ${w.name}: a sparsity target given to N:M pruning`, 'invalid_arguments');
    checkNm(`layer ${w.name}'s nm`, t);
    return t;
  });
  const before = model.weights.reduce((a, w) => a + w.numel, 0);
  const prunableBefore = ws.reduce((a, w) => a + w.numel, 0);
  const conv = (w: OnnxWeight) => w.op === 'Conv' && w.dims.length === 4;
  const notes = ws.map((w, i) => {
    if (!targets[i]) return 'dense: left out by the per-layer plan';
    const m = targets[i]![1];
    if (w.op === 'ConvTranspose') return 'dense: N:M groups of a ConvTranspose weight would run along its outputs';
    const len = conv(w) ? w.dims[1] : w.view!.cols;
    return len % m === 0 ? undefined
      : `dense: the reduction axis holds ${len} input ${conv(w) ? 'channels per kernel position' : 'elements'}, not a multiple of ${m}`;
  });
  // Refused before any change when the common pattern fits none of the layers it is asked of.
  if (opts.nm && targets.some((t) => t) && targets.every((t) => t === null || t === opts.nm) && notes.every((x) => x !== undefined)) {
    const [n, m] = targets.find((t) => t)!;
    throw new OnnxError('unsupported', `N:M ${n}:${m} fits no layer of this model: no reduction axis is a multiple of ${m}`, 'invalid_nm_shape');
  }
  const layers: LayerReport[] = ws.map((w, i) => {
    if (notes[i] === undefined) {
      const [n, m] = targets[i]!;
      const pattern = `m${m}n${n}_1d`;
      const v = w.view!;
      const mask = conv(w)
        ? sk.createAspMask(model.readFloat(w), w.dims, pattern)
        : sk.createAspMask(model.readView(w), [v.rows, v.cols], pattern);
      model.applyMask(w, mask, { layout: conv(w) ? 'stored' : 'view' });
    }
    opts.onProgress?.(i + 1, ws.length, w.name);
    return layerReport(model, w, w.dims.slice(), notes[i]);
  });
  return { mode: 'nm', options: { nm: opts.nm ? `${opts.nm[0]}:${opts.nm[1]}` : 'per layer' }, ...totals(model, layers, before, prunableBefore), layers };
}
