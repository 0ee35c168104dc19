// The quantized forms a weight can take, and which int8 form each op gets by default. The int8
// choice per op is a measurement (bench/quant/int8-forms.mjs, figures in bench/RESULTS.md,
// "Quantization"): the form that ran faster on one thread in onnxruntime-node and onnxruntime-web.
import type { QuantGrid } from './grid.js';

/**
 * - `int8-dynamic`: MatMulInteger with DynamicQuantizeLinear (onnxruntime's quantize_dynamic form);
 * - `int8-dq`: int8 weight + per-axis DequantizeLinear feeding the float op;
 * - `int4-nbits`: com.microsoft MatMulNBits, 4 bits in blocks along K;
 * - `int4-dynamic`: the same 4-bit blocks in the file, widened at session load (constant folding) into
 *   the int8-dynamic form's weight (int4-dynamic.ts): 4-bit bytes, the int8 graph's speed;
 * - `int4-dq`: 4-bit codes with one scale per output channel, stored in the int8-dq form (int8
 *   container + DequantizeLinear, or Cast + Mul below opset 13) for the ops MatMulNBits does not
 *   serve (Conv, Gemm): float compute as int8-dq, and brotli takes the unused high bits away, so
 *   the download shrinks about as a packed 4-bit file would (bench/RESULTS.md, "PaddleOCR");
 * - `int8-gather`: an embedding table in int8 with a scale per row;
 * - `int4-gather`: an embedding table in 4 bits, blocks of G along each row (gather-int4.ts);
 * - `int3-gather`: a table on 8 levels (a 3-bit grid) in the int4-gather form: the file's nibbles
 *   hold 3-bit codes, which brotli stores in about 3 bits (bench/RESULTS.md, "Byte levers").
 */
export type QuantForm = 'int8-dynamic' | 'int8-dq' | 'int4-nbits' | 'int4-dynamic' | 'int4-dq' | 'int8-gather' | 'int4-gather' | 'int3-gather';
export const QUANT_FORMS: readonly QuantForm[] = ['int8-dynamic', 'int8-dq', 'int4-nbits', 'int4-dynamic', 'int4-dq', 'int8-gather', 'int4-gather', 'int3-gather'];

/** The int8 form of a MatMul weight: the only op with two forms here (see int8-dynamic.ts). */
export type Int8MatMulForm = 'dynamic' | 'dq';

/** Default int8 form of MatMul weights (set from the measurement above). */
export const INT8_MATMUL_FORM: Int8MatMulForm = 'dynamic';

/** The int4 form of MatMul weights: MatMulNBits, or 4 bits widened to the int8 graph at load. */
export type Int4MatMulForm = 'nbits' | 'dynamic';

/** The 4-bit forms whose blocks are packed as MatMulNBits packs them (scales float16 where they fit). */
export const isPacked4 = (form: QuantForm): boolean => form === 'int4-nbits' || form === 'int4-dynamic' || form === 'int4-gather' || form === 'int3-gather';

/** The grid of a form (group: 0 = per output channel / per row). */
export function gridOf(form: QuantForm, group: number): QuantGrid {
  if (form === 'int3-gather') return { bits: 3, group };
  if (isPacked4(form)) return { bits: 4, group };
  if (form === 'int4-dq') return { bits: 4, group: 0 };
  return form === 'int8-dynamic' ? { bits: 8, group: 0, reduceRange: true } : { bits: 8, group: 0 };
}
