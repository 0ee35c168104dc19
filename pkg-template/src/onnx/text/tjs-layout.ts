// The layout of a transformers.js model folder, without file access (so the job and a browser can
// say where a model goes): which `dtype` a model is, the file name transformers.js looks for under
// that dtype, its external data file name, and the config.json entries that make `pipeline()` pick
// that file. Read from @huggingface/transformers' source (v4: src/utils/dtypes.js, the dtype →
// file-suffix table; src/utils/model-loader.js, external data as `<file>_data`, `<file>_data_1`, …;
// src/models/session.js, `config["transformers.js_config"].dtype` used when the caller gives none).
import type { OnnxModel } from '../model.js';
import { OnnxError } from '../errors.js';
import { detectQuantized } from '../quant/detect.js';
import { DT } from '../tensor-data.js';

/** The dtypes transformers.js names model files by. */
export type TjsDtype = 'fp32' | 'fp16' | 'int8' | 'uint8' | 'q8' | 'q4' | 'q4f16' | 'bnb4';

/** The suffix transformers.js appends to `model` for each dtype (`onnx/model${suffix}.onnx`). */
export const TJS_SUFFIX: Readonly<Record<TjsDtype, string>> = Object.freeze({
  fp32: '', fp16: '_fp16', int8: '_int8', uint8: '_uint8', q8: '_quantized', q4: '_q4', q4f16: '_q4f16', bnb4: '_bnb4',
});

export const TJS_DTYPES = Object.keys(TJS_SUFFIX) as TjsDtype[];

/** Where a model goes in a transformers.js folder, and how `pipeline()` loads it. */
export interface TjsOutput {
  layout: 'transformers.js';
  /** The dtype that loads this model (`pipeline(task, folder, { dtype })`; also written into config.json). */
  dtype: TjsDtype;
  /** The model file, relative to the folder: `onnx/model${suffix}.onnx`. */
  file: string;
  /** Its external data file (`<file>_data`, one chunk) when the model keeps tensors outside the protobuf. */
  data?: string;
}

/** The file name of `dtype`'s model in a folder (`onnx/model_quantized.onnx` for q8). */
export function tjsFile(dtype: TjsDtype): string {
  return `onnx/model${TJS_SUFFIX[dtype]}.onnx`;
}

/** The dtype a file name stands for (`model_quantized.onnx` → q8), or undefined for another name. */
export function dtypeOfFile(name: string): TjsDtype | undefined {
  const m = /^model(_[a-z0-9]+)?\.onnx$/.exec(name);
  if (!m) return undefined;
  return TJS_DTYPES.find((d) => TJS_SUFFIX[d] === (m[1] ?? ''));
}

/**
 * The dtype a model is, from what it holds: 4-bit MatMul blocks (MatMulNBits, or widened to int8 at
 * load) → q4 (q4f16 when its other floats are float16), int8 weights in any form read back here
 * (MatMulInteger as quantize_dynamic writes, DequantizeLinear, int8 tables) → q8, float16 weights →
 * fp16, else fp32. The name only picks the file: transformers.js runs whatever the file holds.
 */
export function transformersDtype(model: OnnxModel): TjsDtype {
  const { sites } = detectQuantized(model);
  // 4-bit MatMul blocks, run as MatMulNBits or widened to MatMulInteger at load (quant/int4-dynamic.ts)
  const nbits = sites.some((s) => s.kind === 'nbits' || s.kind === 'widened') || model.graph.node.some((n: { op_type: string }) => n.op_type === 'MatMulNBits');
  let f16 = 0, f32 = 0;
  for (const t of model.graph.initializer) {
    if (t.data_type === DT.FLOAT16) f16++;
    else if (t.data_type === DT.FLOAT) f32++;
  }
  const half = f16 > f32;
  if (nbits) return half ? 'q4f16' : 'q4';
  if (sites.length) return 'q8';
  return half ? 'fp16' : 'fp32';
}

/** The folder layout of `model`: its dtype, file, and external data file when it has external tensors. */
export function tjsLayout(model: OnnxModel): TjsOutput {
  const dtype = transformersDtype(model);
  const file = tjsFile(dtype);
  return { layout: 'transformers.js', dtype, file, ...(model.externalTensors().length ? { data: `${file}_data` } : {}) };
}

/**
 * config.json for the written folder: the input's, with `transformers.js_config.dtype` set to the
 * written model's dtype (so `pipeline()` without a dtype loads it) and `use_external_data_format`
 * set for its file when it has external data (else removed for it: the old file is not there).
 */
export function tjsConfig(config: Record<string, unknown>, out: TjsOutput): Record<string, unknown> {
  if (!config || typeof config !== 'object' || Array.isArray(config)) throw new OnnxError('bad_calibration', 'config.json must hold a JSON object', 'invalid_value');
  const prev = config['transformers.js_config'];
  const tjs: Record<string, unknown> = prev && typeof prev === 'object' && !Array.isArray(prev) ? { ...(prev as Record<string, unknown>) } : {};
  tjs.dtype = out.dtype;
  const base = out.file.replace(/^onnx\//, '');
  if (out.data) tjs.use_external_data_format = { [base]: 1 };
  else delete tjs.use_external_data_format;
  return { ...config, 'transformers.js_config': tjs };
}

/**
 * Which model file of a folder's `onnx/` (or top level) to read, given the `.onnx` names there: the
 * one of `dtype` when asked; else `model.onnx` (full precision: the best source to prune from); else
 * the only `model*.onnx` variant; several variants without model.onnx are refused, naming them.
 */
export function pickVariant(names: readonly string[], where: string, dtype?: string): string {
  const variants = names.filter((n) => dtypeOfFile(n) !== undefined).sort();
  if (dtype !== undefined) {
    if (!(TJS_DTYPES as string[]).includes(dtype)) throw new OnnxError('no_file', `dtype "${dtype}" is not one of ${TJS_DTYPES.join(', ')}`, 'invalid_value');
    const want = `model${TJS_SUFFIX[dtype as TjsDtype]}.onnx`;
    if (!variants.includes(want)) throw new OnnxError('no_file', `${where} has no ${want} (dtype ${dtype}); it has ${variants.join(', ') || 'no model*.onnx'}`, 'invalid_value');
    return want;
  }
  if (variants.includes('model.onnx')) return 'model.onnx';
  if (variants.length === 1) return variants[0];
  if (!variants.length) throw new OnnxError('no_file', `${where} has no model*.onnx (a transformers.js model folder has onnx/model.onnx)`, 'invalid_value');
  throw new OnnxError('no_file', `${where} has ${variants.join(', ')} and no model.onnx: say which with a dtype (${variants.map((v) => dtypeOfFile(v)).join(', ')})`, 'invalid_value');
}
