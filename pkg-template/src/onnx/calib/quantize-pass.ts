// A pruned model quantized as the job writes it: GPTQ layer after layer through the calibration
// samples (each layer's inputs captured with the layers before it already quantized, the zeros the
// pruning left kept as its mask), or round-to-nearest without them; then the codes written in the
// forms quantizeModel chooses. One function, so the search's verification of a mixed plan
// (search/compress.ts) and the job's own quantization step (job/run.ts) write the same model.
import type { OnnxModel } from '../model.js';
import { calibratePrune, type CalibProgress } from './calibrate.js';
import { CALIB_DEFAULTS } from './defaults.js';
import type { ModelRunner } from './ort-runner.js';
import type { InputSample } from './inputs.js';
import type { CutStore } from './cut-store.js';
import { quantizeModel, plannedGrids, type GivenCodes, type QuantizeOptions, type QuantReport } from '../quant/quantize.js';

export interface GptqPassOptions {
  runner: ModelRunner;
  sessionOptions?: object;
  calibration: InputSample[];
  sequential?: boolean;
  percDamp?: number;
  actOrder?: boolean;
  scaleSearch?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: CalibProgress) => void;
  /** calibratePrune's: where the sweep's cut goes past its budget (a large GPTQ pass would otherwise hold it in memory). */
  cutStore?: CutStore | 'file';
  /** calibratePrune's: the most cut held in memory over all samples, in bytes (default CALIB_DEFAULTS.cacheBudget). */
  cacheBudget?: number;
}

export interface QuantizePassResult {
  report: QuantReport;
  /** When GPTQ ran: the layers it quantized and its time. */
  gptq?: { layers: number; ms: number };
}

/**
 * GPTQ's codes for every weight `quant` plans on a linear grid, layer after layer through the
 * calibration samples; the model holds their dequantized values afterwards (calibratePrune writes
 * them), nothing is written in a quantized form yet.
 */
export async function gptqCodes(model: OnnxModel, quant: QuantizeOptions, gptq: GptqPassOptions): Promise<{ given: Map<string, GivenCodes>; layers: number; ms: number }> {
  const r = await calibratePrune(model, {
    ort: gptq.runner, sessionOptions: gptq.sessionOptions, signal: gptq.signal, calibration: gptq.calibration,
    cutStore: gptq.cutStore, cacheBudget: gptq.cacheBudget,
    sequential: gptq.sequential ?? CALIB_DEFAULTS.sequential, percDamp: gptq.percDamp ?? CALIB_DEFAULTS.gptqPercDamp,
    quantize: {
      grids: plannedGrids(model, quant),
      actOrder: gptq.actOrder ?? CALIB_DEFAULTS.actOrder, scaleSearch: gptq.scaleSearch ?? CALIB_DEFAULTS.scaleSearch,
    }, onProgress: gptq.onProgress,
  });
  return { given: r.quantized!, layers: r.quantized!.size, ms: r.ms };
}

/** Quantizes `model` in place (see the file comment); `gptq` absent: round to nearest. */
export async function quantizePass(model: OnnxModel, quant: QuantizeOptions, gptq?: GptqPassOptions): Promise<QuantizePassResult> {
  const codes = gptq ? await gptqCodes(model, quant, gptq) : undefined;
  const report = quantizeModel(model, { ...quant, ...(codes ? { given: codes.given } : {}) });
  return { report, ...(codes ? { gptq: { layers: codes.layers, ms: codes.ms } } : {}) };
}
