// The weights of a job's result as the weights view draws them (render/heatmap, render/charts):
// each prunable weight of the written model, its mask on the grid the job pruned it on (blocks of a
// recipe's block setting, else elements), its sparse-form sizes. Read off the model the job wrote,
// so the view shows what the download holds; the per-layer settings are the package's own
// resolution of the recipe (planRecipe), not a second reading of the table.
import { fitBlock, sparseBytes } from 'sparsekit-wasm';
import type { OnnxModel, OnnxWeight, Setting } from 'sparsekit-wasm/onnx';
import type { LayerResult } from '../layer-result.js';

/** Non-zeros of an array. */
export function countNonZero(a: ArrayLike<number>): number {
  let z = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== 0) z++;
  return z;
}

/**
 * Checks an N:M pattern: along `axis` of `dims` (ASP grouping: axis 1 of 2-D/3-D/4-D weights,
 * axis 0 for MatMul-style (K, N) weights) every group of m consecutive elements (the last one padded)
 * holds at most n non-zeros. Returns the number of violating groups.
 */
export function nmViolations(data: ArrayLike<number>, dims: readonly number[], axis: number, n: number, m: number): number {
  const len = dims[axis];
  const inner = dims.slice(axis + 1).reduce((a, b) => a * b, 1);
  const outer = dims.slice(0, axis).reduce((a, b) => a * b, 1);
  let bad = 0;
  for (let o = 0; o < outer; o++) {
    for (let r = 0; r < inner; r++) {
      for (let g = 0; g < len; g += m) {
        let nz = 0;
        for (let k = g; k < Math.min(g + m, len); k++) if (data[(o * len + k) * inner + r] !== 0) nz++;
        if (nz > n) bad++;
      }
    }
  }
  return bad;
}

/**
 * The block a sparsity setting pruned `w` in, expressed on the storage view (dims[0], rest): the
 * package fits the block to the weight's 2-D view (fitBlock), which for a MatMul-style (K, N) weight
 * is the transpose of its storage.
 */
function storageBlock(w: OnnxWeight, rows: number, cols: number, want: [number, number]): [number, number] {
  const v = w.view;
  if (!v) return [1, 1];
  const { block } = fitBlock(v.rows, v.cols, want);
  const b: [number, number] = v.transposed ? [block[1], block[0]] : [block[0], block[1]];
  return rows % b[0] === 0 && cols % b[1] === 0 ? b : [1, 1];
}

/** Keep flags (any non-zero) and L2 norms of the (rows, cols) matrix cut into `block` cells. */
function cells(data: Float32Array, rows: number, cols: number, [bh, bw]: [number, number]): { keep: Uint8Array; norms: Float32Array } {
  const gc = cols / bw;
  const norms = new Float32Array((rows / bh) * gc);
  for (let i = 0; i < rows; i++) {
    const bi = ((i / bh) | 0) * gc;
    for (let j = 0; j < cols; j++) { const x = data[i * cols + j]; norms[bi + ((j / bw) | 0)] += x * x; }
  }
  for (let k = 0; k < norms.length; k++) norms[k] = Math.sqrt(norms[k]);
  return { keep: Uint8Array.from(norms, (x) => (x > 0 ? 1 : 0)), norms };
}

/**
 * `nm`: the pattern a one-shot N:M job asked for, to name the layers that hold it; `settings`: a
 * recipe job's setting per layer (the package's resolution of it), else null; `notes`: the job
 * report's note per layer (why the package left one dense, or pruned it differently than asked).
 */
export function jobLayers(model: OnnxModel, nm: [number, number] | null, settings: ReadonlyMap<string, Setting> | null, notes: ReadonlyMap<string, string>): LayerResult[] {
  return model.prunable().map((w, id) => {
    const data = model.readFloat(w).slice(); // its own buffer: the worker transfers it
    const rows = w.dims[0], cols = data.length / Math.max(1, rows);
    const numel = data.length, nnz = countNonZero(data);
    const axis = w.dims.length === 2 ? (w.reduceAxis ?? 1) : 1;
    const s = settings?.get(w.name) ?? null;
    const want = s?.kind === 'nm' ? s.nm : nm;
    const holdsNm = want !== null && nnz < numel && nmViolations(data, w.dims, axis, want[0], want[1]) === 0;
    const nm24Valid = nmViolations(data, w.dims, axis, 2, 4) === 0;
    const block = s?.kind === 'sparsity' ? storageBlock(w, rows, cols, s.block ?? [1, 1]) : [1, 1] as [number, number];
    const elements = block[0] * block[1] === 1;
    const { keep, norms } = elements ? { keep: Uint8Array.from(data, (v) => (v !== 0 ? 1 : 0)), norms: Float32Array.from(data, Math.abs) } : cells(data, rows, cols, block);
    const bsrBlock = storageBlock(w, rows, cols, [4, 4]);
    const b = sparseBytes(data, [rows, cols], bsrBlock);
    const note = notes.get(w.name);
    const criterion: LayerResult['criterion'] = s ? (s.kind === 'nm' ? 'nm' : s.kind === 'sparsity' ? 'hard' : 'none')
      : holdsNm ? 'nm' : nnz < numel ? 'hard' : 'none';
    const scope = s?.kind === 'sparsity' ? s.scope ?? 'layer' : 'layer';
    const pattern = holdsNm ? `${want![0]}:${want![1]}` : nnz === numel ? 'dense' : elements ? 'unstructured' : `block ${block[0]}x${block[1]}`;
    const kept = countNonZero(keep);
    return {
      id, name: w.name, dims: [...w.dims], criterion, reduceAxis: w.reduceAxis, rows, cols, block,
      grid: [rows / block[0], cols / block[1]], scope, global: scope === 'global',
      sparsityTarget: s?.kind === 'sparsity' ? s.sparsity : 1 - nnz / Math.max(1, numel), pattern,
      n: holdsNm ? want![0] : undefined, m: holdsNm ? want![1] : undefined, notes: note ? [note] : [],
      data, blockKeep: keep, blockNorms: norms, normKind: elements ? '|w|' : 'L2', thresholds: [], numel, nnz,
      sparsity: numel ? 1 - nnz / numel : 0, blocksKept: kept, blocksTotal: keep.length, nm24Valid,
      bytes: { dense: b.dense, csr: b.csr, bsr: b.bsr, bsrBlock, nm24: nm24Valid ? b.nm24 : null },
    };
  });
}
