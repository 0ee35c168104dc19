// The quantization grid and the round-to-nearest quantizer. A grid is symmetric (no zero point, code
// 0 is the value 0, so the zeros a pruning left stay exact zeros) with one scale per output row and,
// for int4, per group of G consecutive inputs along the reduction axis (GPTQ's "group size").
// int4 (and the 3-bit tables) use all 2^bits codes as onnxruntime's MatMulNBits quantizer does (range2scale in
// onnxruntime/core/mlas/lib/q4_dq.cpp): the group's value of largest magnitude e is code -8 exactly,
// scale = e / -8, negative when e is positive (the op multiplies by it like any scale); int8 keeps
// ±127 (±63) with a positive scale, as onnxruntime's int8 weights. The
// quantizer is a plain function of a layer's float view and the grid; the error-compensating codes
// (GPTQ, Frantar et al. 2022, arXiv:2210.17323, through the core's solver) are computed during
// calibration (calib/calibrate.ts) and handed to quantizeModel as `given` layers.
import { OnnxError } from '../errors.js';

/** A symmetric integer grid (codes in [-qmax - 1, qmax]: see quantizeChecked). */
export interface QuantGrid {
  /**
   * 8 (codes in [-128, 127]; round-to-nearest never writes -128, GPTQ may), 4 (codes in [-8, 7], all
   * used) or 3 (codes in [-4, 3], all used: an embedding table's 8 levels in the 4-bit container).
   */
  bits: 8 | 4 | 3;
  /** Inputs per scale along the reduction axis; 0 = one scale per output row (per channel). */
  group: number;
  /**
   * int8 codes in ±63 (7 bits) instead of ±127: the MatMulInteger form needs it. onnxruntime's u8·s8
   * kernels on x86 without VNNI (AVX2 vpmaddubsw) add two u8·s8 products in int16 and saturate with
   * full-range weights (measured: max error 3.4 against 0.36 on a 64×24 MatMul on this machine's
   * AVX2 EPYC); quantize_dynamic sets reduce_range for MatMul weights for the same reason.
   */
  reduceRange?: boolean;
}

/** A layer quantized on a grid, in the pruning's 2-D view layout (rows = outputs, cols = inputs). */
export interface QuantizedView {
  rows: number;
  cols: number;
  /** rows × cols codes, row-major. */
  codes: Int8Array;
  /** rows × groupsPerRow scales, row-major (int4: negative where the group's extreme is positive). */
  scales: Float32Array;
  groupsPerRow: number;
  /** Inputs per scale (cols when one scale per row). */
  width: number;
}

/**
 * A quantizer: the layer's float values in the 2-D view layout (row-major rows × cols) and the grid
 * in, codes and scales out. Round-to-nearest is `rtnQuantize`; a compensated quantizer must keep
 * `codes[i] === 0` wherever `values[i] === 0` holds after its own updates (the callers check it).
 */
export type Quantizer = (values: Float32Array, rows: number, cols: number, grid: QuantGrid) => QuantizedView;

/**
 * Largest positive code: int8 ±127 (±63 reduced), as onnxruntime's symmetric int8 weights, so that
 * -x and x map to opposite codes; int4 7, its codes reaching -8 (rtnQuantize).
 */
export const qmax = (grid: QuantGrid): number => (grid.bits === 3 ? 3 : grid.bits === 4 ? 7 : grid.reduceRange ? 63 : 127);

/** The grids whose extreme is code -qmax - 1 exactly (all 2^bits codes used): 4 and 3 bits. */
const fullRange = (grid: QuantGrid): boolean => grid.bits <= 4;

/** The codes `grid` may hold: [-qmax - 1, qmax] where all 2^bits are used, else the symmetric ±qmax. */
export function codeRange(grid: QuantGrid): { lo: number; hi: number } {
  const q = qmax(grid);
  return { lo: fullRange(grid) ? -q - 1 : -q, hi: q };
}

/** Groups per row of `cols` inputs (the last one padded when G does not divide cols). */
export function groupsPerRow(cols: number, grid: QuantGrid): number {
  return grid.group > 0 ? Math.ceil(cols / grid.group) : 1;
}

export function checkGrid(grid: QuantGrid): QuantGrid {
  if (grid.bits !== 8 && grid.bits !== 4 && grid.bits !== 3) throw new OnnxError('unsupported', `quantization bits must be 8, 4 or 3 (got ${String(grid.bits)})`, 'invalid_arguments');
  const g = grid.group;
  // MatMulNBits packs a block into whole bytes and onnxruntime's kernels want a power of two ≥ 16.
  if (!Number.isInteger(g) || g < 0 || (g > 0 && (g < 16 || (g & (g - 1)) !== 0))) {
    throw new OnnxError('unsupported', `the quantization group must be 0 (per channel) or a power of two ≥ 16 (got ${String(g)})`, 'invalid_arguments');
  }
  return grid;
}

/**
 * Round-to-nearest on the grid, code = round(w / scale) clamped to the codes: int8 scale = max |w|
 * of the group / qmax; int4 scale = e / -8 with e the group's value of largest magnitude (the
 * negative one on a tie, as onnxruntime), so e is code -8 exactly and the step is max |w| / 8.
 */
export const rtnQuantize: Quantizer = (values, rows, cols, grid) => {
  checkGrid(grid);
  const gpr = groupsPerRow(cols, grid);
  const width = grid.group > 0 ? grid.group : cols;
  const { lo, hi: q } = codeRange(grid);
  const full = fullRange(grid);
  const codes = new Int8Array(rows * cols);
  const scales = new Float32Array(rows * gpr);
  for (let r = 0; r < rows; r++) {
    for (let g = 0; g < gpr; g++) {
      const start = r * cols + g * width;
      const end = r * cols + Math.min(cols, (g + 1) * width);
      let amax = 0, ext = 0;
      for (let i = start; i < end; i++) {
        const x = values[i], a = Math.abs(x);
        if (!(a <= amax) || (a === amax && x < ext)) { amax = a; ext = x; } // NaN lands here and is caught below
      }
      if (!Number.isFinite(amax)) throw new OnnxError('unsupported', `row ${r} holds a value that is not finite: it has no quantization grid`, 'invalid_value');
      // An all-zero group keeps scale 0's stand-in 1 so dequantization never divides or yields NaN.
      const s = amax > 0 ? Math.fround(full ? ext / lo : amax / q) : 1;
      scales[r * gpr + g] = s;
      for (let i = start; i < end; i++) {
        const c = Math.round(values[i] / s);
        codes[i] = c > q ? q : c < lo ? lo : c;
      }
    }
  }
  return { rows, cols, codes, scales, groupsPerRow: gpr, width };
};

/** Where the scale of element (r, c) of `qv`'s layout is in its `scales`: the one its row and group share. */
export const scaleIndex = (qv: Omit<QuantizedView, 'codes'>, r: number, c: number): number => r * qv.groupsPerRow + Math.floor(c / qv.width);

/** The float values a quantized view stands for (codes × their group's scale), view layout. */
export function dequantizeView(qv: QuantizedView): Float32Array {
  const out = new Float32Array(qv.rows * qv.cols);
  for (let r = 0; r < qv.rows; r++) {
    for (let c = 0; c < qv.cols; c++) {
      const i = r * qv.cols + c;
      // + 0: code 0 is +0 under a negative scale too.
      out[i] = qv.codes[i] * qv.scales[scaleIndex(qv, r, c)] + 0;
    }
  }
  return out;
}

/**
 * Runs a quantizer and checks its output: shapes, codes inside the grid, finite scales (positive
 * for int8, nonzero for int4), and that every zero of the input is code 0 (the pruning's zeros
 * survive exactly).
 */
export function quantizeChecked(quantizer: Quantizer, values: Float32Array, rows: number, cols: number, grid: QuantGrid, name: string): QuantizedView {
  const qv = quantizer(values, rows, cols, grid);
  const gpr = groupsPerRow(cols, grid);
  if (qv.codes.length !== rows * cols || qv.scales.length !== rows * gpr || qv.groupsPerRow !== gpr || qv.width !== (grid.group > 0 ? grid.group : cols)) {
    throw new OnnxError('unsupported', `the quantizer returned the wrong shapes for "${name}"`, 'shape_mismatch');
  }
  // -q - 1 is on every form's grid too (int4 stores it as 0, int8 as -128, the 7-bit MatMulInteger
  // weight as -64, whose pair sums 2 · 255 · 64 still fit int16): int4's extreme takes it, and for
  // int8 GPTQ's compensation may push a value past -max|w| onto it (quant_grid.rs).
  const q = qmax(grid);
  for (let i = 0; i < qv.codes.length; i++) {
    if (qv.codes[i] > q || qv.codes[i] < -q - 1) throw new OnnxError('unsupported', `the quantizer wrote code ${qv.codes[i]} outside [${-q - 1}, ${q}] in "${name}"`, 'invalid_value');
    if (values[i] === 0 && qv.codes[i] !== 0) throw new OnnxError('unsupported', `the quantizer moved a zero of "${name}" (element ${i}) off the grid's zero`, 'invalid_value');
  }
  const signed = fullRange(grid);
  for (const s of qv.scales) if (!(signed ? s !== 0 : s > 0) || !Number.isFinite(s)) throw new OnnxError('unsupported', `the quantizer wrote scale ${s} in "${name}"`, 'invalid_value');
  return qv;
}

/**
 * The int8 container of a 4-bit grid of one scale per row, every scale positive: onnxruntime's grid puts a row's
 * extreme on code -8 with a negative scale when that extreme is positive; negating such a row's
 * codes and scale gives the same values with codes in -8..8, which int8 holds, and the positive
 * scale every DequantizeLinear reader expects.
 */
export function positiveScales(qv: QuantizedView): QuantizedView {
  const codes = Int8Array.from(qv.codes), scales = Float32Array.from(qv.scales);
  for (let r = 0; r < qv.rows; r++) {
    if (!(scales[r] < 0)) continue;
    scales[r] = -scales[r];
    for (let c = r * qv.cols; c < (r + 1) * qv.cols; c++) codes[c] = -codes[c];
  }
  return { ...qv, codes, scales };
}
