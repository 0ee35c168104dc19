// Quantization (API.md "Quantization"): gptq (error-compensated, through a Hessian and the
// SparseGPT solver; jointly with pruning) and roundToNearest (no data). A linear map y = W x
// with W as a 2-D view, rows = outputs, cols = inputs (as for sparseGpt); groups of scales run
// along the columns. Coercion and copying only; every check lives in the Rust core.
import { call } from './errors.js';
import { bool, checkKeys, dims, num, optsObject, u8 } from './convert.js';
import type { Mask } from './convert.js';
import { hessian, withView } from './calib.js';
import type { Hessian } from './calib.js';
import type { Param } from './param.js';
import { R } from './runtime.js';
import type { View } from './view.js';

/** The grid: bits, group length, symmetry. */
export interface QuantGridOptions {
  /** Bits per weight, 2..8. */
  bits: number;
  /** Columns (inputs) sharing one scale; omitted: one scale per row. */
  group?: number;
  /** Symmetric grid without zero points (default true); false adds one zero point per scale. */
  sym?: boolean;
  /**
   * Symmetric grid on all 2^bits codes (default false), onnxruntime's MatMulNBits convention: the
   * group's value of largest magnitude e is code -2^(bits-1) exactly, scale = e / -2^(bits-1)
   * (negative when e is positive). false: scale = max|w| / (2^(bits-1) - 1). Needs `sym`.
   */
  fullRange?: boolean;
}

/** Options of {@link gptq}: the grid, and at most one of sparsity / nm / keep for joint pruning. */
export interface GptqOptions extends QuantGridOptions {
  /** Joint mode: fraction pruned in every block of columns. */
  sparsity?: number;
  /** Joint mode: keep n of every m consecutive inputs in each row. */
  nm?: [number, number] | number[];
  /** Joint mode with a given keep-mask (view-shaped, 1 keeps). */
  keep?: Mask;
  /** Columns per lazy block; a multiple of `group` (and of m). Default: the smallest such multiple >= 128. */
  blockSize?: number;
  /** Damping as a fraction of mean(diag H), default 0.01; raise it on `singular_hessian`. */
  percDamp?: number;
  /**
   * GPTQ's act-order (default false): columns processed in order of descending diag(H), the inputs
   * with the most energy first, with static groups (below). Not with sparsity / nm; a keep-mask is followed.
   */
  actOrder?: boolean;
  /**
   * Every group's scale found before the loop from the uncompensated weights of its consecutive
   * inputs (default: `actOrder`, which needs it), so the groups stay the stored blocks.
   */
  staticGroups?: boolean;
  /**
   * Each group's scale searched over shrunk ranges, keeping the least sum |w - q(w)|^2.4 (GPTQ's
   * quantizer with `mse`), instead of the range's own; default false. Same grid form, 0 exact.
   */
  scaleSearch?: boolean;
}

/**
 * What a writer packs. Element (r, c) of the view dequantizes as
 * `(codes[r * cols + c] - zero) * scales[r * groups + floor(c / group)]` with `zero` from `zeros`
 * at the same index (0 when symmetric), computed in float32: exactly the value left in the view.
 * Codes are signed in [-2^(bits-1), 2^(bits-1) - 1]; unsigned storage adds 2^(bits-1) to codes
 * and zero points alike.
 */
export interface QuantizedWeights {
  /** One code per element, view-shaped row-major (a MatMul (K, N) weight: [N, K], K fastest). */
  codes: Int8Array;
  /** One scale per row and group: `rows x groups`, groups = ceil(cols / group); negative only with `fullRange`. */
  scales: Float32Array;
  /** Zero points, laid out as `scales`; only when `sym` is false. */
  zeros?: Int8Array;
  /** Columns per group (cols when one scale per row). */
  group: number;
  /** The keep-mask of joint mode (view-shaped, 1 keeps); pruned elements have code = zero point. */
  keep?: Uint8Array;
}

const optNum = (v: unknown, what: string) => (v === undefined ? undefined : num(v, what));

/**
 * GPTQ (Frantar et al. 2022) in place on the 2-D view `w`: columns in order, each rounded to the
 * grid and its error spread over the later columns through the inverse Hessian's Cholesky factor
 * (SparseGPT's solver). With sparsity / nm / keep, SparseGPT's joint mode: masked weights become
 * exactly 0, the kept ones quantized, the combined error compensated. The view then holds the
 * dequantized weights. `h` is not changed; a refused call changes no weight.
 */
export function gptq(w: Param | View, h: Hessian, opts: GptqOptions): QuantizedWeights {
  const hr = hessian(h);
  const o = optsObject(opts, 'gptq options');
  checkKeys(o, ['bits', 'group', 'sym', 'fullRange', 'sparsity', 'nm', 'keep', 'blockSize', 'percDamp', 'actOrder', 'staticGroups', 'scaleSearch'], 'gptq options');
  const bits = num(o.bits, 'bits');
  const group = optNum(o.group, 'group');
  const sym = bool(o.sym, true, 'sym');
  const fullRange = bool(o.fullRange, false, 'fullRange');
  const sparsity = optNum(o.sparsity, 'sparsity');
  const nm = o.nm === undefined ? undefined : dims(o.nm, 'nm');
  const keep = o.keep === undefined ? undefined : u8(o.keep, 'keep').slice();
  const blockSize = optNum(o.blockSize, 'blockSize');
  const percDamp = optNum(o.percDamp, 'percDamp');
  const optBool = (v: unknown, what: string) => (v === undefined ? undefined : bool(v, false, what));
  const actOrder = optBool(o.actOrder, 'actOrder');
  const staticGroups = optBool(o.staticGroups, 'staticGroups');
  const scaleSearch = optBool(o.scaleSearch, 'scaleSearch');
  return withView(w, (v) => call(() => R().rawGptq(v, hr, bits, group, sym, fullRange, sparsity, nm, keep, blockSize, percDamp, actOrder, staticGroups, scaleSearch) as QuantizedWeights));
}

/**
 * Round-to-nearest in place on the 2-D view `w` (no data, no compensation): each group's scale
 * from its own values. The floor gptq is measured against; the quantizer of weights that have
 * no Hessian (embedding tables, one row per token). Returns what {@link gptq} returns, without `keep`.
 */
export function roundToNearest(w: Param | View, opts: QuantGridOptions): QuantizedWeights {
  const o = optsObject(opts, 'roundToNearest options');
  checkKeys(o, ['bits', 'group', 'sym', 'fullRange'], 'roundToNearest options');
  const bits = num(o.bits, 'bits');
  const group = optNum(o.group, 'group');
  const sym = bool(o.sym, true, 'sym');
  const fullRange = bool(o.fullRange, false, 'fullRange');
  return withView(w, (v) => call(() => R().rawRoundToNearest(v, bits, group, sym, fullRange) as QuantizedWeights));
}
