// quantizeModel: the weights of an ONNX model rewritten into int8 or int4 forms onnxruntime serves
// (forms.ts), in place. Everything is computed and checked first (targets, opsets, every layer's
// codes and scales); the graph is changed only when all of it succeeded, so a refused or failed call
// leaves the model as it was. Zeros of a pruned model stay exact zeros (symmetric grids, checked).
import { OnnxError } from '../errors.js';
import type { OnnxModel, OnnxWeight } from '../model.js';
import { countZeros } from '../prune.js';
import { opsetVersion } from './graph-edit.js';
import { Names } from '../names.js';
import { findTargets, type QuantTarget } from './targets.js';
import { rtnQuantize, quantizeChecked, dequantizeView, checkGrid, positiveScales, type Quantizer, type QuantizedView, type QuantGrid } from './grid.js';
import { gridOf, isPacked4, INT8_MATMUL_FORM, type QuantForm, type Int8MatMulForm, type Int4MatMulForm } from './forms.js';
import { writeInt8Dq } from './int8-dq.js';
import { writeInt8Dynamic, type DqlCache } from './int8-dynamic.js';
import { writeNBits } from './nbits.js';
import { writeInt4Dynamic, widenInt4 } from './int4-dynamic.js';
import { writeGatherInt8 } from './gather-int8.js';
import { writeGatherInt4 } from './gather-int4.js';
import { halfScales } from './half-scales.js';

export type QuantScheme = 'int8' | 'int4';

/** A layer's own bits (a recipe's per-layer `quantize`): int8 / int4, or left float. */
export type LayerBits = QuantScheme | 'float';

export interface QuantizeOptions {
  /** int8: per output channel everywhere; int4: MatMulNBits blocks for MatMul weights (int8 elsewhere). */
  scheme: QuantScheme;
  /** int4 block size along the reduction axis (power of two ≥ 16); default 32. */
  group?: number;
  /** Which weights to quantize (default: all that can be). */
  layers?: (w: OnnxWeight) => boolean;
  /**
   * Embedding tables (Gather data): int8 per row, int4 in blocks of `group` along each row, int3 (8
   * levels in the int4 form's blocks), or left float. Default: the scheme's own bits (int4 tables are
   * most of a small language model's bytes).
   */
  embeddings?: 'int8' | 'int4' | 'int3' | 'float';
  /** int8 form of MatMul weights (default INT8_MATMUL_FORM, from the measurement in forms.ts). */
  int8MatMul?: Int8MatMulForm;
  /**
   * int4 form of MatMul weights: 'nbits' (MatMulNBits, the default: 4-bit compute where the runtime
   * has it, WebGPU's and onnxruntime-node's) or 'dynamic' (the same 4-bit bytes, widened into the
   * int8 MatMulInteger graph when the session loads: onnxruntime-web WASM's fast path; int4-dynamic.ts).
   */
  int4MatMul?: Int4MatMulForm;
  /** Codes and scales of one layer from its float view (default round-to-nearest). */
  quantizer?: Quantizer;
  /**
   * Codes already computed for some weights (by name), on the grid `plannedGrids` gives them: GPTQ's,
   * from a calibration that quantized each layer in turn (calib/calibrate.ts). The model must hold
   * their dequantized values; the rest get `quantizer`.
   */
  given?: ReadonlyMap<string, GivenCodes>;
  /**
   * Layers quantized at 8 bits per output channel (DequantizeLinear form) whatever the scheme: a
   * language model's output head under int4, as llama.cpp's Q4_K_M keeps its output tensor at 6 bits.
   */
  eightBit?: (w: OnnxWeight) => boolean;
  /**
   * Per-layer bits (a recipe's `quantize` entries, the mixed search's plan): 'int8' / 'int4' write the
   * layer (or table) in that scheme's form, 'float' leaves it as it is, undefined takes `scheme` (and
   * `embeddings` for tables). int4 under the int8 scheme uses `group` (default 32).
   */
  layerBits?: (w: OnnxWeight) => LayerBits | undefined;
  /** Per-layer form (requantize): a form, null = leave float, undefined = what `scheme` gives. */
  layerForm?: (w: OnnxWeight) => { form: QuantForm; group: number } | null | undefined;
  onProgress?: (done: number, total: number, label: string) => void;
}

/** A layer's codes computed elsewhere, and how. */
export interface GivenCodes {
  qv: QuantizedView;
  method: 'gptq' | 'rtn';
  /** Relative output error on the calibration inputs against the float weight; null without statistics. */
  relError: number | null;
  notes?: string[];
}

export interface QuantLayerReport {
  name: string;
  op: string;
  /** The form written, or 'float' when left as it was (see note). */
  form: QuantForm | 'float';
  bits: number;
  /** Inputs per scale: the block size for int4, the row length for per-channel int8. */
  group: number;
  params: number;
  /** Zeros of the float weight: every one of them is code 0 after quantization (checked). */
  zeros: number;
  bytesBefore: number;
  bytesAfter: number;
  /** Largest |w - dequantized w| of the layer (for `given` codes: against the values the model held, their own dequantization). */
  maxAbsError: number;
  /** How the codes were found: GPTQ (compensated through the layer's Hessian) or round-to-nearest. */
  method: 'gptq' | 'rtn';
  /** GPTQ's relative output error on the calibration inputs (absent for round-to-nearest). */
  relError?: number | null;
  /** 'float16': the 4-bit forms' scales stored as float16 behind a Cast (half-scales.ts); float32 otherwise. */
  scales?: 'float16';
  note?: string;
}

export interface QuantReport {
  scheme: QuantScheme;
  group: number;
  layers: QuantLayerReport[];
  /** Bytes of the weights the report lists, before / after (tensor data only). */
  bytesBefore: number;
  bytesAfter: number;
}

const FLOAT_BYTES: Record<number, number> = { 1: 4, 10: 2, 16: 2, 11: 8 };

interface Planned { t: QuantTarget; form: QuantForm; qv: QuantizedView; report: QuantLayerReport }

function formFor(t: QuantTarget, opts: QuantizeOptions, group: number, onnxOpset: number): { form: QuantForm; group: number; note?: string } {
  if (t.role === 'embedding') {
    const e = opts.embeddings ?? opts.scheme;
    return e === 'int4' ? { form: 'int4-gather', group } : e === 'int3' ? { form: 'int3-gather', group } : { form: 'int8-gather', group: 0 };
  }
  const mm2d = t.w.op === 'MatMul' && t.w.dims.length === 2;
  if (opts.scheme === 'int4') {
    if (mm2d && opts.int4MatMul === 'dynamic') {
      if (onnxOpset >= 11) return { form: 'int4-dynamic', group };
      return { form: 'int4-nbits', group, note: `MatMulInteger needs opset 11 (the model imports ${onnxOpset}): MatMulNBits` };
    }
    if (mm2d) return { form: 'int4-nbits', group };
    return { form: 'int4-dq', group: 0, note: `${t.w.op}: MatMulNBits serves MatMul only; 4-bit codes per output channel in an int8 container${onnxOpset < 13 ? ' (Cast + Mul below opset 13)' : ''}` };
  }
  if (mm2d && (opts.int8MatMul ?? INT8_MATMUL_FORM) === 'dynamic') {
    if (onnxOpset >= 11) return { form: 'int8-dynamic', group: 0 };
    return { form: 'int8-dq', group: 0, note: `MatMulInteger needs opset 11 (the model imports ${onnxOpset}): ${CAST_NOTE}` };
  }
  return onnxOpset < 13 ? { form: 'int8-dq', group: 0, note: CAST_NOTE } : { form: 'int8-dq', group: 0 };
}

/** Below opset 13 DequantizeLinear has no axis: int8-dq.ts writes the same arithmetic as Cast + Mul. */
const CAST_NOTE = 'per-channel DequantizeLinear needs opset 13: written as int8 + Cast + Mul by the per-channel scale';

function bytesAfter(form: QuantForm, qv: QuantizedView, half: boolean): number {
  const scales = qv.scales.length * (half ? 2 : 4);
  const packed = qv.rows * qv.groupsPerRow * (qv.width / 2) + scales;
  if (form === 'int4-dynamic') return packed + qv.rows; // + the int8 zero points (the column scales are computed)
  if (isPacked4(form)) return packed;
  if (form === 'int8-gather') return qv.codes.length + scales;
  return qv.codes.length + scales + qv.rows; // + the int8 zero points
}

function maxAbsErr(a: Float32Array, b: Float32Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) { const d = Math.abs(a[i] - b[i]); if (d > m) m = d; }
  return m;
}

/** The options checked; the group int4 uses. */
function checkOptions(opts: QuantizeOptions): number {
  if (opts.scheme !== 'int8' && opts.scheme !== 'int4') {
    throw new OnnxError('unsupported', `quantization scheme must be int8 or int4 (got ${String(opts.scheme)})`, 'invalid_arguments');
  }
  const group = opts.group ?? 32;
  if (opts.scheme === 'int4') checkGrid({ bits: 4, group });
  if (opts.group !== undefined && opts.scheme === 'int8') throw new OnnxError('unsupported', 'a group applies to int4 only: int8 is per output channel', 'invalid_arguments');
  if (opts.embeddings !== undefined && !['int8', 'int4', 'int3', 'float'].includes(opts.embeddings)) {
    throw new OnnxError('unsupported', `embeddings must be int8, int4, int3 or float (got ${String(opts.embeddings)})`, 'invalid_arguments');
  }
  if (opts.embeddings === 'int3') checkGrid({ bits: 3, group });
  if (opts.int4MatMul !== undefined && opts.int4MatMul !== 'nbits' && opts.int4MatMul !== 'dynamic') {
    throw new OnnxError('unsupported', `int4MatMul must be nbits or dynamic (got ${String(opts.int4MatMul)})`, 'invalid_arguments');
  }
  return group;
}

/** Every weight the options quantize with its form, each form checked against the op and the opset. */
function plan(model: OnnxModel, opts: QuantizeOptions, group: number): { t: QuantTarget; pick: { form: QuantForm; group: number; note?: string } }[] {
  const { targets } = findTargets(model);
  const embeddings = opts.embeddings ?? opts.scheme;
  const bitsOf = (t: QuantTarget): LayerBits | 'int3' => opts.layerBits?.(t.w) ?? (t.role === 'embedding' ? embeddings : opts.scheme);
  const chosen = targets.filter((t) => (opts.layers ? opts.layers(t.w) : true) && bitsOf(t) !== 'float');
  const onnxOpset = opsetVersion(model.model, '');
  const out: { t: QuantTarget; pick: { form: QuantForm; group: number; note?: string } }[] = [];
  for (const t of chosen) {
    const own = opts.layerForm?.(t.w);
    const b = opts.layerBits?.(t.w);
    if (b !== undefined && b !== 'int8' && b !== 'int4') throw new OnnxError('unsupported', `"${t.w.name}": a layer's bits must be int8, int4 or float (got ${String(b)})`, 'invalid_arguments');
    if (own === null) continue;
    const bits = opts.layerBits?.(t.w);
    const eight = t.role === 'linear' && bits === undefined && opts.eightBit?.(t.w) === true;
    // a layer's own bits: that scheme's form (a table's own bits are its embeddings form)
    const mine = bits === undefined ? opts : { ...opts, scheme: bits as QuantScheme, embeddings: bits as QuantScheme };
    const pick = own ?? formFor(t, eight ? { ...opts, scheme: 'int8', int8MatMul: 'dq' } : mine, group, onnxOpset);
    if ((pick.form === 'int8-dynamic' || pick.form === 'int4-dynamic') && (t.w.op !== 'MatMul' || t.w.dims.length !== 2 || onnxOpset < 11)) {
      throw new OnnxError('unsupported', `"${t.w.name}": the MatMulInteger form serves 2-D MatMul weights at opset ≥ 11`, 'unsupported_op');
    }
    if (pick.form === 'int4-nbits' && !(t.w.op === 'MatMul' && t.w.dims.length === 2)) {
      throw new OnnxError('unsupported', `"${t.w.name}": MatMulNBits serves 2-D MatMul weights only (this is ${t.w.op})`, 'unsupported_op');
    }
    const gather = pick.form === 'int8-gather' || pick.form === 'int4-gather' || pick.form === 'int3-gather';
    if (gather !== (t.role === 'embedding')) {
      throw new OnnxError('unsupported', `"${t.w.name}": form ${pick.form} does not fit a ${t.role} weight`, 'invalid_arguments');
    }
    if ((pick.form === 'int4-gather' || pick.form === 'int3-gather') && (t.w.dims[1] < 2)) {
      throw new OnnxError('unsupported', `"${t.w.name}": a 4-bit table needs rows of at least 2 values`, 'invalid_arguments');
    }
    out.push({ t, pick });
  }
  return out;
}

/**
 * The grid each weight of the 2-D linear views will be quantized on (by weight name), as
 * quantizeModel would choose it with these options: what a calibration quantizing layer by layer
 * must use so that its codes can be written as `given`. Checks the options like quantizeModel.
 */
export function plannedGrids(model: OnnxModel, opts: QuantizeOptions): Map<string, QuantGrid> {
  const group = checkOptions(opts);
  return new Map(plan(model, opts, group).filter(({ t }) => t.role === 'linear').map(({ t, pick }) => [t.w.name, gridOf(pick.form, pick.group)]));
}

/** The form and group each weight would be written in with these options (by weight name), checked like quantizeModel. */
export function plannedForms(model: OnnxModel, opts: QuantizeOptions): Map<string, { t: QuantTarget; form: QuantForm; group: number }> {
  const group = checkOptions(opts);
  return new Map(plan(model, opts, group).map(({ t, pick }) => [t.w.name, { t, form: pick.form, group: pick.group }]));
}

/** Quantizes the model's weights in place (see QuantizeOptions); returns the per-layer report. */
export function quantizeModel(model: OnnxModel, opts: QuantizeOptions): QuantReport {
  const group = checkOptions(opts);
  const quantizer = opts.quantizer ?? rtnQuantize;
  const { targets, skipped } = findTargets(model);
  const chosen = plan(model, opts, group);
  const planned: Planned[] = [];
  const layers: QuantLayerReport[] = [];
  chosen.forEach(({ t, pick }, i) => {
    const grid = gridOf(pick.form, pick.group);
    const values = t.role === 'embedding' ? model.readFloat(t.w) : model.readView(t.w);
    const rows = t.role === 'embedding' ? t.w.dims[0] : t.w.view!.rows;
    const cols = values.length / rows;
    const given = opts.given?.get(t.w.name);
    const q0 = quantizeChecked(given ? () => given.qv : quantizer, values, rows, cols, grid, t.w.name);
    const hq = isPacked4(pick.form) ? halfScales(q0) : undefined;
    const qv = hq ?? q0;
    const report: QuantLayerReport = {
      name: t.w.name, op: t.role === 'embedding' ? 'Gather' : t.w.op, form: pick.form, bits: grid.reduceRange ? 7 : grid.bits, group: qv.width,
      params: values.length, zeros: countZeros(values),
      bytesBefore: t.w.numel * (FLOAT_BYTES[t.w.dtype] ?? 4), bytesAfter: bytesAfter(pick.form, qv, !!hq),
      // int4-dynamic: the int8 weight the session computes from the 4-bit codes (int4-dynamic.ts)
      maxAbsError: maxAbsErr(values, dequantizeView(pick.form === 'int4-dynamic' ? widenInt4(qv) : qv)), method: given?.method ?? 'rtn',
    };
    if (given) report.relError = given.relError;
    if (hq) report.scales = 'float16';
    const notes = [pick.note, ...(given?.notes ?? [])].filter((x): x is string => !!x);
    if (notes.length) report.note = notes.join('; ');
    planned.push({ t, form: pick.form, qv, report });
    layers.push(report);
    opts.onProgress?.(i + 1, chosen.length, t.w.name);
  });
  for (const s of skipped) {
    if (opts.layers && !opts.layers(s.w)) continue;
    const b = s.w.numel * (FLOAT_BYTES[s.w.dtype] ?? 4);
    layers.push({ name: s.w.name, op: s.w.op, form: 'float', bits: 8 * (FLOAT_BYTES[s.w.dtype] ?? 4), group: 0, params: s.w.numel, zeros: countZeros(model.readFloat(s.w)), bytesBefore: b, bytesAfter: b, maxAbsError: 0, method: 'rtn', note: s.reason });
  }
  for (const t of targets) {
    if (opts.layerBits?.(t.w) !== 'float' || (opts.layers && !opts.layers(t.w))) continue;
    const b = t.w.numel * (FLOAT_BYTES[t.w.dtype] ?? 4);
    layers.push({ name: t.w.name, op: t.role === 'embedding' ? 'Gather' : t.w.op, form: 'float', bits: 32, group: 0, params: t.w.numel, zeros: countZeros(model.readFloat(t.w)), bytesBefore: b, bytesAfter: b, maxAbsError: 0, method: 'rtn', note: 'left float by its own setting' });
  }
  // Commit: graph edits only, on values all computed above.
  const names = new Names(model.graph);
  const cache: DqlCache = new Map();
  // In graph order, so an activation's DynamicQuantizeLinear lands before its first reader.
  const order = new Map(model.graph.node.map((n: unknown, i: number) => [n, i]));
  planned.sort((a, b) => (order.get(a.t.node) as number) - (order.get(b.t.node) as number));
  for (const p of planned) {
    if (p.form === 'int8-dq') writeInt8Dq(model, names, p.t, p.qv);
    else if (p.form === 'int4-dq') writeInt8Dq(model, names, p.t, positiveScales(p.qv));
    else if (p.form === 'int8-dynamic') writeInt8Dynamic(model, names, p.t, p.qv, cache);
    else if (p.form === 'int4-nbits') writeNBits(model, names, p.t, p.qv, p.report.scales === 'float16');
    else if (p.form === 'int4-dynamic') writeInt4Dynamic(model, names, p.t, p.qv, cache, p.report.scales === 'float16');
    else if (p.form === 'int4-gather' || p.form === 'int3-gather') writeGatherInt4(model, names, p.t, p.qv, p.report.scales === 'float16');
    else writeGatherInt8(model, names, p.t, p.qv);
  }
  model.refresh();
  return {
    scheme: opts.scheme, group: opts.scheme === 'int4' ? group : 0, layers,
    bytesBefore: layers.reduce((a, l) => a + l.bytesBefore, 0), bytesAfter: layers.reduce((a, l) => a + l.bytesAfter, 0),
  };
}
