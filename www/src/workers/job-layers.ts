// The weights of a job's result as the weights view draws them (render/heatmap, render/charts):
// each prunable weight of the written model, its zeros as the mask (one element per cell), its
// sparse-form sizes. Read off the model the job wrote, so the view shows what the download holds.
import { sparseBytes } from 'sparsekit-wasm';
import type { OnnxModel } from 'sparsekit-wasm/onnx';
import { countNonZero, nmViolations, planLayer } from '../prune/plan.js';
import type { LayerResult } from '../prune/types.js';

/**
 * `nm`: the pattern the job asked for, to name the layers that hold it; `notes`: the job report's
 * note per layer (why the package left one dense, or pruned it differently than asked).
 */
export function jobLayers(model: OnnxModel, nm: [number, number] | null, notes: ReadonlyMap<string, string>): LayerResult[] {
  return model.prunable().map((w, id) => {
    const data = model.readFloat(w).slice(); // its own buffer: the worker transfers it
    const rows = w.dims[0], cols = data.length / Math.max(1, rows);
    const numel = data.length, nnz = countNonZero(data);
    const axis = w.dims.length === 2 ? (w.reduceAxis ?? 1) : 1;
    const holdsNm = nm !== null && nnz < numel && nmViolations(data, w.dims, axis, nm[0], nm[1]) === 0;
    const nm24Valid = nmViolations(data, w.dims, axis, 2, 4) === 0;
    const bsrBlock = planLayer(w.dims, { block: [4, 4], scope: [-1, -1] }).block;
    const b = sparseBytes(data, [rows, cols], bsrBlock);
    const keep = Uint8Array.from(data, (v) => (v !== 0 ? 1 : 0));
    const note = notes.get(w.name);
    return {
      id, name: w.name, dims: [...w.dims], criterion: holdsNm ? 'nm' : nnz < numel ? 'hard' : 'none', reduceAxis: w.reduceAxis,
      sparsityTarget: 1 - nnz / Math.max(1, numel), thresholds: [], rows, cols, block: [1, 1], grid: [rows, cols], scope: [-1, -1], notes: note ? [note] : [],
      pattern: holdsNm ? `${nm[0]}:${nm[1]}` : nnz < numel ? 'unstructured' : 'dense', n: holdsNm ? nm[0] : undefined, m: holdsNm ? nm[1] : undefined,
      data, blockKeep: keep, blockNorms: Float32Array.from(data, Math.abs), normKind: '|w|', numel, nnz, sparsity: numel ? 1 - nnz / numel : 0,
      blocksKept: nnz, blocksTotal: numel, nm24Valid, bytes: { dense: b.dense, csr: b.csr, bsr: b.bsr, bsrBlock, nm24: nm24Valid ? b.nm24 : null },
    };
  });
}
