// Calibration-aware pruning (API.md "Calibration-aware pruning"): Hessian, wandaScores,
// sparseGpt, relReconError. A linear map y = W x with W as a 2-D view, rows = outputs, cols =
// inputs: a Linear / Gemm(transB=1) / Conv [O, C*kh*kw] weight is that as stored; an ONNX
// MatMul weight (K, N) is its transposed View, shape [N, K], stride [1, N] (no copy).
// Coercion and copying only; every check lives in the Rust core.
import { argError, call } from './errors.js';
import { checkKeys, describe, dims, f32, num, optsObject, u8 } from './convert.js';
import type { Floats, Mask } from './convert.js';
import { INTERNAL, Owned } from './owned.js';
import { Param } from './param.js';
import { R } from './runtime.js';
import { View } from './view.js';
import type { RawHessian, RawView } from '../wasm/st/sparsekit_wasm.js';

/** ONNX Conv attributes (group 1) for {@link Hessian.addConv}. */
export interface ConvGeometry {
  /** [kh, kw]. */
  kernelShape: [number, number] | number[];
  /** [sh, sw], default [1, 1]. */
  strides?: [number, number] | number[];
  /** [top, left, bottom, right], default [0, 0, 0, 0]. */
  pads?: [number, number, number, number] | number[];
  /** [dh, dw], default [1, 1]. */
  dilations?: [number, number] | number[];
}

/** Options of {@link sparseGpt}: exactly one of sparsity / nm / keep. */
export interface SparseGptOptions {
  /** Fraction pruned in every block of columns (rows may keep different counts). */
  sparsity?: number;
  /** [n, m]: keep n of every m consecutive inputs in each row (cols and blockSize multiples of m). */
  nm?: [number, number] | number[];
  /** A given keep-mask (view-shaped, 1 keeps): only the reconstruction runs. */
  keep?: Mask;
  /** Columns per lazy block, default 128. */
  blockSize?: number;
  /** Damping as a fraction of mean(diag H), default 0.01; raise it on `singular_hessian`. */
  percDamp?: number;
  /**
   * Conjugate-gradient steps (0..10000, default 0) of a least-squares refit after the solver: the
   * kept weights re-solved jointly for the chosen mask, each row kept only where its error fell.
   */
  refit?: number;
}

/**
 * Input statistics of one linear map with `cols` inputs: `count` vectors and the mean of x xᵀ
 * (float32 products over chunks of 64 vectors, folded into a float64 sum: error below
 * 4e-6·sqrt(H_aa·H_bb)). A refused call (wrong length, non-finite input, bad conv attributes)
 * changes nothing.
 */
export class Hessian extends Owned {
  /** @internal */
  declare _raw: RawHessian;

  constructor(cols: number);
  /** @internal */
  constructor(token: typeof INTERNAL, raw: RawHessian);
  constructor(cols: number | typeof INTERNAL, raw?: RawHessian) {
    super();
    if (cols === INTERNAL) {
      this._raw = raw!;
      return;
    }
    const c = num(cols, 'cols');
    this._raw = call(() => new (R().RawHessian)(c));
  }

  /** Inputs of the linear map. */
  get cols(): number {
    return this._live.cols();
  }

  /** Input vectors added so far. */
  get count(): number {
    return this._live.count();
  }

  /** Adds `n` input vectors, row-major `n x cols`. */
  addRows(x: Floats, n: number): void {
    const xx = f32(x, 'x');
    const nn = num(n, 'n');
    call(() => this._live.addRows(xx, nn));
  }

  /**
   * Adds one vector per output position of every image of a Conv input `x` of shape
   * `inputShape = [N, C, H, W]`, in the weight's `(c, i, j)` order (zero padding included);
   * `C*kh*kw` must equal `cols`.
   */
  addConv(x: Floats, inputShape: [number, number, number, number] | number[], conv: ConvGeometry): void {
    const xx = f32(x, 'x');
    const shape = dims(inputShape, 'inputShape');
    const o = optsObject(conv, 'conv');
    checkKeys(o, ['kernelShape', 'strides', 'pads', 'dilations'], 'conv');
    if (o.kernelShape === undefined) throw argError('conv.kernelShape is required ([kh, kw])');
    const k = dims(o.kernelShape, 'conv.kernelShape');
    const opt = (v: unknown, what: string) => (v === undefined ? undefined : dims(v, what));
    const s = opt(o.strides, 'conv.strides');
    const p = opt(o.pads, 'conv.pads');
    const d = opt(o.dilations, 'conv.dilations');
    call(() => this._live.addConv(xx, shape, k, s, p, d));
  }

  /** Mean of x xᵀ, `cols x cols` row-major (all zeros while `count` is 0). */
  matrix(): Float32Array {
    return call(() => this._live.matrix());
  }

  /** `sqrt(diag(matrix()))`: the RMS of each input. */
  inputNorms(): Float32Array {
    return call(() => this._live.inputNorms());
  }

  /**
   * The mean of each input over the vectors added (float64; zeros while `count` is 0). For a Conv,
   * each column `(c, i, j)`'s own mean: with zero padding the border taps read zeros.
   */
  inputMeans(): Float64Array {
    return call(() => this._live.inputMeans());
  }

  /**
   * A new Hessian of the same vectors minus their means, mean((x − μ)(x − μ)ᵀ) (same `count`, zero
   * means): the statistics to compensate a layer whose bias then takes (W − W')·μ. An input constant
   * to the accumulation's precision gets a zero row and column. This one is not changed; free both.
   */
  centered(): Hessian {
    return new Hessian(INTERNAL, call(() => this._live.centered()));
  }
}

/** @internal Runs `fn` on the raw 2-D view of `w` (a Param is seen as its full view, freed after). */
export function withView<T>(w: Param | View, fn: (v: RawView) => T): T {
  if (w instanceof View) return fn(w._live);
  if (!(w instanceof Param)) throw argError(`expected a Param or a 2-D View (rows = outputs, cols = inputs), got ${describe(w)}`);
  const v = View.fromExisting(w);
  try {
    return fn(v._live);
  } finally {
    v.free();
  }
}

/** @internal */
export function hessian(h: unknown): RawHessian {
  if (!(h instanceof Hessian)) throw argError(`expected a Hessian, got ${describe(h)}`);
  return h._live;
}

/**
 * Wanda scores `|W_ij| * inputNorms_j`, view-shaped (rows x cols). Wanda's mask is the per-row
 * top-k: `ScopeSpec(BlockSpec(w, [1, 1]), [1, -1])` with these scores (in param layout) as
 * values; or `createAspMask(scores, [rows, cols], 'm{M}n{N}_1d')` for N:M.
 */
export function wandaScores(w: Param | View, h: Hessian): Float32Array {
  const hr = hessian(h);
  return withView(w, (v) => call(() => R().rawWandaScores(v, hr)));
}

/**
 * SparseGPT (optimal-brain-surgeon pruning with lazy block updates, API.md) in place on the
 * 2-D view `w`: the pruned weights become 0 and the kept ones compensate. Returns the keep-mask
 * (view-shaped, 1 keeps). `h` is not changed; a refused call changes no weight.
 */
export function sparseGpt(w: Param | View, h: Hessian, opts: SparseGptOptions): Uint8Array {
  const hr = hessian(h);
  const o = optsObject(opts, 'sparseGpt options');
  checkKeys(o, ['sparsity', 'nm', 'keep', 'blockSize', 'percDamp', 'refit'], 'sparseGpt options');
  const optNum = (v: unknown, what: string) => (v === undefined ? undefined : num(v, what));
  const sparsity = optNum(o.sparsity, 'sparsity');
  const nm = o.nm === undefined ? undefined : dims(o.nm, 'nm');
  const keep = o.keep === undefined ? undefined : u8(o.keep, 'keep').slice();
  const blockSize = optNum(o.blockSize, 'blockSize');
  const percDamp = optNum(o.percDamp, 'percDamp');
  const refit = optNum(o.refit, 'refit');
  return withView(w, (v) => call(() => R().rawSparseGpt(v, hr, sparsity, nm, keep, blockSize, percDamp, refit)));
}

/**
 * Relative reconstruction error `sqrt(tr((W-Ŵ) H (W-Ŵ)ᵀ) / tr(W H Wᵀ))` of a pruning, from the
 * view's values before (W) and after (Ŵ) it (`view.values()`), with the undamped `h.matrix()`.
 */
export function relReconError(before: Floats, after: Floats, h: Hessian): number {
  const hr = hessian(h);
  const b = f32(before, 'before');
  const a = f32(after, 'after');
  return call(() => R().rawRelReconError(b, a, hr));
}
