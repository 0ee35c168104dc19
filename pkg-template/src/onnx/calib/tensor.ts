// Tensors as onnxruntime hands them back: their values as float32 for the statistics, and their
// element type as an ONNX type number (a cached tensor becomes an input of the next graph segment).
import { halfArrayToFloat } from '../fp16.js';
import { ORT_TYPES } from './inputs.js';
import type { RunOutput } from './ort-runner.js';

/** Any tensor as float32 values: float32 as is, float16 bits widened, other numbers converted. */
export function asF32(t: RunOutput): Float32Array {
  if (t.data instanceof Float32Array) return t.data;
  if (t.type === 'float16' && t.data instanceof Uint16Array) return halfArrayToFloat(t.data);
  return Float32Array.from(t.data as ArrayLike<number | bigint>, Number);
}

/** ONNX element types of onnxruntime type names (the inverse of ORT_TYPES, plus the rarer ones). */
const ELEM_TYPES: Readonly<Record<string, number>> = Object.freeze({
  ...Object.fromEntries(Object.entries(ORT_TYPES).map(([k, v]) => [v, Number(k)])),
  uint16: 4, int16: 5, string: 8, uint32: 12, uint64: 13, bfloat16: 16,
});

/** The ONNX element type of an onnxruntime tensor type name; 0 when unknown. */
export const elemTypeOf = (ortType: string): number => ELEM_TYPES[ortType] ?? 0;
