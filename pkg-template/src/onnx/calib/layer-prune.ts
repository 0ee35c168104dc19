// Pruning one layer by a criterion, given its input statistics: magnitude, Wanda or SparseGPT, at an
// unstructured sparsity or N:M along the view's columns (the inputs: C·kh·kw of a Conv, K of a MatMul).
import * as sk from 'sparsekit-wasm';
import type { CalibLayer } from './layers.js';
import { CALIB_DEFAULTS, MIN_VECTORS_PER_INPUT } from './defaults.js';

export type Criterion = 'magnitude' | 'wanda' | 'sparsegpt';
/** What a layer got: a criterion, or 'dense' (the pattern does not fit it). */
export type MethodUsed = Criterion | 'dense';
export type Target = { sparsity: number; nm?: undefined } | { nm: [number, number]; sparsity?: undefined };

export interface ViewShape { rows: number; cols: number; transposed: boolean }

/** The rows x cols view of a stored weight as a fresh array (a MatMul (K, N) weight is transposed). */
export function viewValues(stored: Float32Array, { rows, cols, transposed }: ViewShape): Float32Array {
  if (!transposed) return Float32Array.from(stored);
  const out = new Float32Array(rows * cols);
  for (let k = 0; k < cols; k++) for (let n = 0; n < rows; n++) out[n * cols + k] = stored[k * rows + n];
  return out;
}

export function toStored(view: Float32Array, { rows, cols, transposed }: ViewShape): Float32Array {
  if (!transposed) return view;
  const out = new Float32Array(rows * cols);
  for (let k = 0; k < cols; k++) for (let n = 0; n < rows; n++) out[k * rows + n] = view[n * cols + k];
  return out;
}

/** The value that would sit at index `k` of `v` sorted ascending (v is reordered; Hoare's selection, median-of-three pivots). */
function select(v: Float64Array, k: number): number {
  let lo = 0, hi = v.length - 1;
  while (hi > lo) {
    const mid = (lo + hi) >> 1;
    // median of three as the pivot (sorted in place: v[lo] <= v[mid] <= v[hi])
    if (v[mid] < v[lo]) { const t = v[mid]; v[mid] = v[lo]; v[lo] = t; }
    if (v[hi] < v[lo]) { const t = v[hi]; v[hi] = v[lo]; v[lo] = t; }
    if (v[hi] < v[mid]) { const t = v[hi]; v[hi] = v[mid]; v[mid] = t; }
    const pivot = v[mid];
    let i = lo, j = hi;
    while (i <= j) {
      while (v[i] < pivot) i++;
      while (v[j] > pivot) j--;
      if (i <= j) { const t = v[i]; v[i] = v[j]; v[j] = t; i++; j--; }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return v[k];
  }
  return v[k];
}

/**
 * Sets keep[base + i] for the k largest of scores[base .. base + len) (ties keep the lower index:
 * the order of a stable sort by score, descending). The k-th largest is found by selection on a
 * copy (linear on average, where a sort is n log n); the equal ones are then taken in index order.
 */
function keepTop(scores: ArrayLike<number>, base: number, len: number, k: number, keep: Uint8Array, scratch: Float64Array) {
  if (k <= 0) return;
  if (k >= len) { keep.fill(1, base, base + len); return; }
  const v = scratch.subarray(0, len);
  for (let i = 0; i < len; i++) v[i] = scores[base + i];
  const t = select(v, len - k);
  let above = 0;
  for (let i = 0; i < len; i++) if (scores[base + i] > t) above++;
  let ties = k - above;
  for (let i = 0; i < len; i++) {
    const x = scores[base + i];
    if (x > t) keep[base + i] = 1;
    else if (x === t && ties > 0) { keep[base + i] = 1; ties--; }
  }
}

/**
 * Keep-mask from view-shaped scores: N:M keeps n of every m consecutive columns of each row;
 * unstructured keeps floor((1 - s) * count + 0.5) per row (`perRow`, Wanda) or per layer (magnitude).
 */
export function maskFromScores(scores: ArrayLike<number>, rows: number, cols: number, target: Target, perRow: boolean): Uint8Array {
  const keep = new Uint8Array(rows * cols);
  if (target.nm) {
    const [n, m] = target.nm;
    const buf = new Float64Array(m);
    for (let r = 0; r < rows; r++) for (let g = 0; g < cols; g += m) keepTop(scores, r * cols + g, m, n, keep, buf);
  } else if (perRow) {
    const k = Math.floor((1 - target.sparsity) * cols + 0.5);
    const buf = new Float64Array(cols);
    for (let r = 0; r < rows; r++) keepTop(scores, r * cols, cols, k, keep, buf);
  } else {
    keepTop(scores, 0, rows * cols, Math.floor((1 - target.sparsity) * rows * cols + 0.5), keep, new Float64Array(rows * cols));
  }
  return keep;
}

/**
 * `w` with the weights the mask drops set to 0, and |w|: plain loops, since TypedArray.from with a
 * mapping function walks the iterator protocol (over a second per million weights in V8).
 */
export function applyMask(w: Float32Array, keep: Uint8Array): Float32Array {
  const out = new Float32Array(w.length);
  for (let i = 0; i < w.length; i++) if (keep[i]) out[i] = w[i];
  return out;
}
export function absOf(w: Float32Array): Float32Array {
  const out = new Float32Array(w.length);
  for (let i = 0; i < w.length; i++) out[i] = Math.abs(w[i]);
  return out;
}

/** Whether the layer can take N:M along its columns (and, for a Conv, along its channels per group). */
export function allowsNm(layer: CalibLayer, m: number): boolean {
  if (layer.op === 'ConvTranspose' || layer.cols % m) return false;
  return layer.op !== 'Conv' || layer.weight.dims[1] % m === 0;
}

/** tr(D H Dᵀ) and tr(W H Wᵀ) with D = W - Ŵ (view layout), from the undamped H. */
export function reconstructionTerms(w0: Float32Array, w1: Float32Array, h: Float32Array, rows: number, cols: number) {
  let num = 0, den = 0;
  const d = new Float64Array(cols);
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    for (let j = 0; j < cols; j++) d[j] = w0[o + j] - w1[o + j];
    for (let a = 0; a < cols; a++) {
      const ha = a * cols;
      let sd = 0, sw = 0;
      for (let b = 0; b < cols; b++) { sd += h[ha + b] * d[b]; sw += h[ha + b] * w0[o + b]; }
      num += d[a] * sd; den += w0[o + a] * sw;
    }
  }
  return { num: Math.max(0, num), den };
}

/** Runs fn on the rows x cols view of a stored weight; returns fn's result and the stored values after. */
export function withView<T>(stored: Float32Array, { rows, cols, transposed }: ViewShape, fn: (v: sk.Param | sk.View) => T): { result: T; data: Float32Array } {
  const p = sk.Param.fromArray(stored, transposed ? [cols, rows] : [rows, cols]);
  // An ONNX MatMul weight (K, N) is used through its transposed view: no copy of the weights.
  const v = transposed ? new sk.View(p, [rows, cols], [1, rows]) : null;
  try {
    const result = fn(v ?? p);
    return { result, data: p.toArray() };
  } finally {
    v?.free();
    p.free();
  }
}

/** One 2-D linear map pruned by `used` with Hessian h (or none); returns the stored values after. */
function pruneMatrix(stored: Float32Array, shape: ViewShape, h: sk.Hessian | undefined, used: Criterion, target: Target, solver: { blockSize: number; percDamp: number; refit: number }, keep?: Uint8Array): Float32Array {
  const { blockSize, percDamp, refit } = solver;
  const { rows, cols } = shape;
  if (used === 'sparsegpt') {
    // N:M needs blockSize % m == 0: the block is rounded down to a multiple of m.
    const bs = target.nm ? Math.max(target.nm[1], blockSize - (blockSize % target.nm[1])) : blockSize;
    const common = { blockSize: bs, percDamp, refit };
    const opts: sk.SparseGptOptions = keep ? { keep, ...common } : target.nm ? { nm: target.nm, ...common } : { sparsity: target.sparsity, ...common };
    return withView(stored, shape, (v) => sk.sparseGpt(v, h!, opts)).data;
  }
  const w0 = viewValues(stored, shape);
  const scores = used === 'wanda' ? withView(stored, shape, (v) => sk.wandaScores(v, h!)).result : absOf(w0);
  const mask = keep ?? maskFromScores(scores, rows, cols, target, used === 'wanda');
  return toStored(applyMask(w0, mask), shape);
}

/** Below this many calibration vectors per input, SparseGPT gives way to Wanda (defaults.ts says why). */
export { MIN_VECTORS_PER_INPUT };

/**
 * The squares of each input summed over the calibration vectors: all that Wanda reads (its scores
 * are |W_ij|·‖x_j‖), accumulated in O(vectors x inputs) where a Hessian costs O(vectors x inputs²).
 */
export interface InputNorms { sumSq: Float64Array; count: number }

/** Input statistics of a layer: one Hessian, one per Conv group, or (Wanda on rows) the inputs' norms only. */
export interface LayerStats { h?: sk.Hessian; groups?: sk.Hessian[]; norms?: InputNorms }

/** Wanda's scores from the inputs' norms: the core's wandaScores formula, |w| · sqrt(mean x²) in f64 (view layout; OWL counts its outliers on them too). */
export function normScores(w0: Float32Array, rows: number, cols: number, n: InputNorms): Float32Array {
  const rms = Float64Array.from(n.sumSq, (x) => Math.sqrt(n.count ? x / n.count : 0));
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[r * cols + c] = Math.abs(w0[r * cols + c]) * rms[c];
  return out;
}

export interface LayerPruneResult {
  /** The weight after pruning, in its stored layout. */
  data: Float32Array;
  method: MethodUsed;
  notes: string[];
  /** API.md step 5 over the calibration inputs; 0 for a layer left dense, null without statistics. */
  relError: number | null;
}

/**
 * Prunes one layer's weight (`stored`, storage layout). A grouped Conv is G independent linear maps:
 * each group's rows get their own Hessian. `keep` (view layout) replaces the criterion's mask:
 * only the reconstruction (SparseGPT) or the zeroing (others) runs.
 */
export function pruneLayer(p: {
  layer: CalibLayer; stored: Float32Array; stats?: LayerStats; criterion: Criterion; target: Target;
  blockSize?: number; percDamp?: number; minVectors?: number; keep?: Uint8Array;
  /** SparseGPT's refit steps (CALIB_DEFAULTS.refit; 0: SparseGPT's own weights). */
  refit?: number;
}): LayerPruneResult {
  const { layer, stored, stats = {}, criterion, target, blockSize = CALIB_DEFAULTS.blockSize, percDamp = CALIB_DEFAULTS.percDamp, minVectors = CALIB_DEFAULTS.minVectors, keep } = p;
  const solver = { blockSize, percDamp, refit: p.refit ?? CALIB_DEFAULTS.refit };
  const notes: string[] = [];
  if (!keep && target.nm && !allowsNm(layer, target.nm[1])) {
    const why = layer.op === 'ConvTranspose' ? 'N:M groups of a ConvTranspose weight would run along its outputs'
      : `${target.nm.join(':')} needs ${layer.op === 'Conv' ? 'channels per group and ' : ''}columns in multiples of ${target.nm[1]}`;
    return { data: stored, method: 'dense', notes: [`${why}: stays dense`], relError: 0 };
  }
  if (stats.norms && criterion === 'wanda') {
    const w0 = viewValues(stored, layer);
    const mask = keep ?? maskFromScores(normScores(w0, layer.rows, layer.cols, stats.norms), layer.rows, layer.cols, target, true);
    const data = toStored(applyMask(w0, mask), layer);
    // Wanda reads the inputs' norms only: without a Hessian there is no reconstruction error to give.
    return { data, method: 'wanda', notes, relError: null };
  }
  const hs = stats.groups ?? (stats.h ? [stats.h] : null);
  let used: Criterion = criterion;
  if (criterion !== 'magnitude' && !hs) { used = 'magnitude'; notes.push(`${layer.note ?? 'no input statistics'}: magnitude instead of ${criterion}`); }
  if (used === 'sparsegpt' && hs!.some((h) => h.count < minVectors * layer.cols)) {
    used = 'wanda';
    notes.push(`${hs![0].count} calibration vectors for ${layer.cols} inputs: too few to fit SparseGPT's update (needs ${minVectors}x the inputs); Wanda instead`);
  }
  if (stats.groups && used !== 'magnitude') notes.push(`${layer.note}: ${stats.groups.length} Hessians of ${layer.cols} inputs, one per group`);
  let data: Float32Array;
  if (used === 'magnitude' || hs!.length === 1) {
    data = pruneMatrix(stored, layer, hs?.[0], used, target, solver, keep);
  } else {
    // Group g owns the contiguous rows [g * O/G, (g + 1) * O/G) of the (O, C/G * kh * kw) weight.
    const per = layer.rows / hs!.length, n = per * layer.cols;
    data = new Float32Array(stored.length);
    hs!.forEach((h, g) => data.set(pruneMatrix(stored.subarray(g * n, (g + 1) * n), { rows: per, cols: layer.cols, transposed: false }, h, used, target, solver, keep?.subarray(g * n, (g + 1) * n)), g * n));
  }
  let relError: number | null = null;
  if (hs && hs.length === 1) {
    relError = sk.relReconError(viewValues(stored, layer), viewValues(data, layer), hs[0]);
  } else if (hs) {
    const per = layer.rows / hs.length, n = per * layer.cols;
    let num = 0, den = 0;
    hs.forEach((h, g) => {
      const t = reconstructionTerms(stored.subarray(g * n, (g + 1) * n), data.subarray(g * n, (g + 1) * n), h.matrix(), per, layer.cols);
      num += t.num; den += t.den;
    });
    relError = den > 0 ? Math.sqrt(num / den) : 0;
  }
  if (target.nm && layer.op === 'Conv' && layer.cols !== layer.weight.dims[1]) notes.push(`${target.nm.join(':')} groups run along (c, i, j) of the ${layer.weight.dims.slice(1).join('x')} kernel`);
  return { data, method: used, notes, relError };
}
