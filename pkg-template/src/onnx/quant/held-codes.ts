// Quantization held through recovery (quantization-aware distillation). When a job both quantizes
// and recovers, recovering the float model first and quantizing afterwards leaves the quantization's
// own error unrecovered (PaddleOCR rec at 4 bits: bench/RESULTS.md, "Recovery on the grid"). So the
// codes come first — GPTQ's or round-to-nearest, on the grids quantizeModel will write — and their
// values are written into the float model; the training core then holds every such weight on its
// grid (the straight-through estimator, src/train/grid.rs), and the codes written at the end are the
// trained values read back on the same scales: the file holds exactly the model recovery judged.
import type { OnnxModel } from '../model.js';
import type { HeldGrid } from '../held-grid.js';
import { transpose } from '../tensor-data.js';
import { gridOf, isPacked4 } from './forms.js';
import { codeRange, dequantizeView, quantizeChecked, rtnQuantize, scaleIndex, type QuantizedView } from './grid.js';
import { halfScales } from './half-scales.js';
import { plannedForms, type GivenCodes, type QuantizeOptions } from './quantize.js';

interface HeldLayer {
  /** The view the codes live in: scales per row and group, as quantizeModel takes them. */
  qv: Omit<QuantizedView, 'codes'>;
  embedding: boolean;
  given?: GivenCodes;
}

/** The weights a job quantizes, on their grids, with what recovery needs to hold them there. */
export interface HeldQuantization {
  grids: Map<string, HeldGrid>;
  layers: Map<string, HeldLayer>;
}

const readLayout = (model: OnnxModel, w: Parameters<OnnxModel['readView']>[0], embedding: boolean) => (embedding ? model.readFloat(w) : model.readView(w));

/**
 * Quantizes `model`'s weights as `opts` plans them (codes `given` by GPTQ where there are, rounded to
 * nearest elsewhere) and writes their values back into the float model, which then computes what
 * the quantized file will (up to int4-dynamic's widening at session load, int4-dynamic.ts). Returns
 * the grids for the trainer and what `heldCodes` reads the trained codes back with.
 */
export function holdCodes(model: OnnxModel, opts: QuantizeOptions, given?: ReadonlyMap<string, GivenCodes>): HeldQuantization {
  const grids = new Map<string, HeldGrid>();
  const layers = new Map<string, HeldLayer>();
  for (const [name, { t, form, group }] of plannedForms(model, opts)) {
    const grid = gridOf(form, group);
    const embedding = t.role === 'embedding';
    const values = readLayout(model, t.w, embedding);
    const rows = embedding ? t.w.dims[0] : t.w.view!.rows;
    const cols = values.length / rows;
    const g = given?.get(name);
    const q0 = quantizeChecked(g ? () => g.qv : rtnQuantize, values, rows, cols, grid, name);
    // the scales quantizeModel will write (float16 for the packed 4-bit forms), so the held values are the file's
    const qv = (isPacked4(form) ? halfScales(q0) : undefined) ?? q0;
    const scale = new Float32Array(values.length);
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const i = r * cols + c;
        scale[i] = qv.scales[scaleIndex(qv, r, c)];
      }
    }
    const deq = dequantizeView(qv);
    if (embedding) model.writeFloat(t.w, deq);
    else model.writeView(t.w, deq);
    // the trainer's parameter is the tensor: a transposed view (a MatMul's [K, N]) goes back to it
    const toTensor = (a: Float32Array): Float32Array => (!embedding && t.w.view!.transposed ? transpose(a, rows, cols) : a);
    grids.set(name, { scale: toTensor(scale), ...codeRange(grid) });
    const { codes: _codes, ...shape } = qv;
    layers.set(name, { qv: shape, embedding, ...(g ? { given: g } : {}) });
  }
  return { grids, layers };
}

/**
 * The codes of the held weights as the model holds them now (after recovery: on their grids, so
 * the rounding is exact), for quantizeModel's `given`. A value off its grid (a weight recovery did
 * not train) rounds to its nearest code.
 */
export function heldCodes(model: OnnxModel, held: HeldQuantization): Map<string, GivenCodes> {
  const out = new Map<string, GivenCodes>();
  const weights = new Map(model.weights.map((w) => [w.name, w]));
  for (const [name, l] of held.layers) {
    const w = weights.get(name);
    if (!w) continue;
    const values = readLayout(model, w, l.embedding);
    const { rows, cols, scales } = l.qv;
    const { lo, hi } = held.grids.get(name)!;
    const codes = new Int8Array(values.length);
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const i = r * cols + c;
        const k = Math.round(values[i] / scales[scaleIndex(l.qv, r, c)]);
        codes[i] = k < lo ? lo : k > hi ? hi : k;
      }
    }
    out.set(name, {
      qv: { ...l.qv, codes }, method: l.given?.method ?? 'rtn', relError: null,
      notes: [...(l.given?.notes ?? []), 'held on its grid through recovery'],
    });
  }
  return out;
}
