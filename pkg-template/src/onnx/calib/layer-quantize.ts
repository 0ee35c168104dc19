// Quantizing one layer given its input statistics: GPTQ (error-compensated, through the SparseGPT
// solver), jointly with pruning (sparsity or N:M along the inputs), or round-to-nearest where there
// are no statistics. Returns what an ONNX writer packs (codes, scales, zero points per row and group
// along the view's columns) and the dequantized weight in its stored layout.
import * as sk from 'sparsekit-wasm';
import type { CalibLayer } from './layers.js';
import { CALIB_DEFAULTS } from './defaults.js';
import { OnnxError } from '../errors.js';
import { absOf, allowsNm, applyMask, maskFromScores, reconstructionTerms, toStored, viewValues, withView } from './layer-prune.js';
import type { LayerStats, Target } from './layer-prune.js';

export type QuantMethod = 'gptq' | 'rtn';

export interface LayerQuantizeOptions {
  layer: CalibLayer;
  /** The weight in its stored layout. */
  stored: Float32Array;
  /** Input statistics (one Hessian, or one per Conv group); without them the layer gets round-to-nearest. */
  stats?: LayerStats;
  /** Bits per weight, 2..8. */
  bits: number;
  /** Inputs per scale (MatMulNBits' block_size); omitted: one scale per output. */
  group?: number;
  /** Symmetric (default) or with zero points. */
  sym?: boolean;
  /** The symmetric grid on all 2^bits codes, as MatMulNBits files use it (sk.GptqOptions.fullRange); default false. */
  fullRange?: boolean;
  /** 'gptq' (default) or 'rtn'. */
  method?: QuantMethod;
  /** Joint pruning (GPTQ: SparseGPT's joint mode; round-to-nearest: magnitude mask first). */
  target?: Target;
  /**
   * A given keep-mask (view layout, 0 = stays exactly zero) instead of a target: a layer pruned
   * before, whose zeros GPTQ's updates must not fill in.
   */
  keep?: Uint8Array;
  /** The solver's lazy block; rounded down to a multiple of group (and of m), at least one of them. */
  blockSize?: number;
  percDamp?: number;
  /**
   * GPTQ's act-order with static groups (sk.GptqOptions.actOrder); ignored with a target (its
   * selection runs in the original order). Default false.
   */
  actOrder?: boolean;
  /** GPTQ's scale search per group (sk.GptqOptions.scaleSearch); default false. */
  scaleSearch?: boolean;
  /** Calibration vectors per input below which GPTQ gives way to round-to-nearest. */
  minVectors?: number;
}

export interface LayerQuantizeResult {
  /** The dequantized weight, stored layout: what the quantized model computes with. */
  data: Float32Array;
  /** One signed code per element, view layout (rows x cols: a MatMul (K, N) weight as [N, K]). */
  codes: Int8Array;
  /** rows x ceil(cols / group) scales (per Conv group, that group's rows in order). */
  scales: Float32Array;
  zeros?: Int8Array;
  /** Inputs per scale. */
  group: number;
  /** Joint mode's keep-mask, view layout. */
  keep?: Uint8Array;
  method: QuantMethod;
  notes: string[];
  /** Relative output error on the calibration inputs (API.md step 5); null without statistics. */
  relError: number | null;
}

const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);

/** One 2-D map quantized; returns the stored values after and the quantized form. */
function quantizeMatrix(stored: Float32Array, shape: { rows: number; cols: number; transposed: boolean }, h: sk.Hessian | undefined,
  o: { bits: number; group?: number; sym: boolean; fullRange: boolean; method: QuantMethod; target?: Target; keep?: Uint8Array; blockSize?: number; percDamp: number; actOrder: boolean; scaleSearch: boolean }) {
  const grid = { bits: o.bits, sym: o.sym, ...(o.fullRange ? { fullRange: true } : {}), ...(o.group === undefined ? {} : { group: o.group }) };
  if (o.method === 'gptq') {
    const g = o.group !== undefined && o.group < shape.cols ? o.group : 1;
    const m = o.target?.nm?.[1] ?? 1;
    const unit = (g / gcd(g, m)) * m;
    const bs = o.blockSize === undefined ? undefined : Math.max(unit, o.blockSize - (o.blockSize % unit));
    const joint = o.target === undefined ? (o.keep ? { keep: o.keep } : {}) : o.target.nm ? { nm: o.target.nm } : { sparsity: o.target.sparsity };
    const search = { ...(o.actOrder && !o.target ? { actOrder: true } : {}), ...(o.scaleSearch ? { scaleSearch: true } : {}) };
    const opts: sk.GptqOptions = { ...grid, ...joint, ...search, percDamp: o.percDamp, ...(bs === undefined ? {} : { blockSize: bs }) };
    const r = withView(stored, shape, (v) => sk.gptq(v, h!, opts));
    return { q: r.result, data: r.data };
  }
  let src = stored;
  let keep: Uint8Array | undefined;
  if (o.target) {
    const w0 = viewValues(stored, shape);
    keep = maskFromScores(absOf(w0), shape.rows, shape.cols, o.target, false);
    src = toStored(applyMask(w0, keep), shape);
  }
  const r = withView(src, shape, (v) => sk.roundToNearest(v, grid));
  return { q: keep ? { ...r.result, keep } : r.result, data: r.data };
}

/**
 * Quantizes one layer's weight (`stored`, storage layout) to `bits` with scales per row (or per
 * `group` inputs), compensating the rounding error through the layer's Hessian (GPTQ). A grouped Conv
 * is G independent maps, each with its own Hessian; their rows follow each other in the outputs.
 */
export function quantizeLayer(p: LayerQuantizeOptions): LayerQuantizeResult {
  const { layer, stored, stats = {}, bits, group, sym = true, fullRange = false, method = 'gptq', blockSize, percDamp = CALIB_DEFAULTS.percDamp, minVectors = CALIB_DEFAULTS.minVectors, keep, actOrder = false, scaleSearch = false } = p;
  let { target } = p;
  if (keep && target) throw new OnnxError('bad_option', `quantizeLayer: give a target or a keep-mask for ${layer.name}, not both`, 'invalid_arguments');
  if (keep && keep.length !== layer.rows * layer.cols) throw new OnnxError('size_mismatch', `quantizeLayer: the keep-mask of ${layer.name} has ${keep.length} entries, expected ${layer.rows} x ${layer.cols}`, 'shape_mismatch');
  if (method !== 'gptq' && method !== 'rtn') throw new OnnxError('bad_option', `quantizeLayer: method must be 'gptq' or 'rtn', got ${String(method)}`, 'invalid_arguments');
  if (stored.length !== layer.rows * layer.cols) throw new OnnxError('size_mismatch', `quantizeLayer: ${layer.name} has ${stored.length} values, expected ${layer.rows} x ${layer.cols}`, 'shape_mismatch');
  const notes: string[] = [];
  if (target?.nm && !allowsNm(layer, target.nm[1])) {
    notes.push(`${target.nm.join(':')} does not fit the inputs of ${layer.name}: quantized without pruning`);
    target = undefined;
  }
  const hs = stats.groups ?? (stats.h ? [stats.h] : null);
  let used: QuantMethod = method;
  if (used === 'gptq' && !hs) { used = 'rtn'; notes.push(`${layer.note ?? 'no input statistics'}: round-to-nearest instead of GPTQ`); }
  if (used === 'gptq' && hs!.some((h) => h.count < minVectors * layer.cols)) {
    used = 'rtn';
    notes.push(`${hs![0].count} calibration vectors for ${layer.cols} inputs: too few for GPTQ's update (needs ${minVectors}x the inputs); round-to-nearest instead`);
  }
  const o = { bits, group, sym, fullRange, method: used, target, blockSize, percDamp, actOrder, scaleSearch };
  const keepOf = (g: number) => (keep && parts > 1 ? keep.subarray(g * n, (g + 1) * n) : keep);
  const parts = hs && hs.length > 1 ? hs.length : 1;
  const per = layer.rows / parts, n = per * layer.cols;
  const runs = Array.from({ length: parts }, (_, g) => parts === 1
    ? quantizeMatrix(stored, layer, hs?.[0], { ...o, keep: keepOf(g) })
    : quantizeMatrix(stored.subarray(g * n, (g + 1) * n), { rows: per, cols: layer.cols, transposed: false }, hs![g], { ...o, keep: keepOf(g) }));
  const cat = <T extends Int8Array | Float32Array | Uint8Array>(xs: T[], make: (len: number) => T): T => {
    const out = make(xs.reduce((a, x) => a + x.length, 0));
    let at = 0;
    for (const x of xs) { out.set(x as never, at); at += x.length; }
    return out;
  };
  const data = cat(runs.map((r) => r.data), (k) => new Float32Array(k));
  const q = runs[0].q;
  const result: LayerQuantizeResult = {
    data,
    codes: cat(runs.map((r) => r.q.codes), (k) => new Int8Array(k)),
    scales: cat(runs.map((r) => r.q.scales), (k) => new Float32Array(k)),
    group: q.group,
    method: used,
    notes,
    relError: null,
  };
  if (q.zeros) result.zeros = cat(runs.map((r) => r.q.zeros!), (k) => new Int8Array(k));
  if (q.keep) result.keep = cat(runs.map((r) => r.q.keep!), (k) => new Uint8Array(k));
  if (hs && parts === 1) {
    // The core's reduction (wasm): the JavaScript loop below costs rows x cols² multiply-adds, 16 G for a 49152 x 576 output head.
    result.relError = sk.relReconError(viewValues(stored, layer), viewValues(data, layer), hs[0]);
  } else if (hs) {
    let num = 0, den = 0;
    hs.forEach((h, g) => {
      const w0 = parts === 1 ? viewValues(stored, layer) : stored.subarray(g * n, (g + 1) * n);
      const w1 = parts === 1 ? viewValues(data, layer) : data.subarray(g * n, (g + 1) * n);
      const t = reconstructionTerms(w0, w1, h.matrix(), parts === 1 ? layer.rows : per, layer.cols);
      num += t.num; den += t.den;
    });
    result.relError = den > 0 ? Math.sqrt(num / den) : 0;
  }
  return result;
}
