// Downloads of a run: the pruned model (with its external data file) and the masks (JSON + binary).
import { download, input } from './dom.js';
import { totals } from './results.js';
import { baseName, state } from './state.js';
import type { LayerResult } from './layer-result.js';

/** One uint8 per element (1 keeps, 0 prunes) in the weight's storage order. */
function elementMask(r: LayerResult): Uint8Array {
  if (r.criterion === 'nm') return r.blockKeep;
  const [bh, bw] = r.block, gc = r.grid[1];
  const m = new Uint8Array(r.rows * r.cols);
  for (let i = 0; i < r.rows; i++) for (let j = 0; j < r.cols; j++) m[i * r.cols + j] = r.blockKeep[((i / bh) | 0) * gc + ((j / bw) | 0)];
  return m;
}

function b64(u8: Uint8Array): string {
  let s = '';
  for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000));
  return btoa(s);
}

function masksPayload(results: LayerResult[]): { json: object; bin: Uint8Array } {
  const masks = results.map(elementMask);
  const keep = Number(input('global-keep').value) / 100;
  const globalOn = input('global-enabled').checked;
  const t = totals(results);
  let offset = 0;
  const layers = results.map((r, i) => {
    const { w } = state.layers[r.id];
    const entry: Record<string, unknown> = {
      name: r.name, op: w.op, shape: r.dims, dtype: w.dtypeName, view: [r.rows, r.cols], criterion: r.criterion, pattern: r.pattern,
      global: !!r.global, block: r.block, scope: r.scope, reduceAxis: r.reduceAxis, sparsity: r.sparsity, nnz: r.nnz, numel: r.numel,
      blocksKept: r.blocksKept, blocksTotal: r.blocksTotal, notes: r.notes, offset, length: masks[i].length,
      blockGrid: r.grid, blockKeepBase64: b64(r.blockKeep),
    };
    if (r.criterion === 'nm') Object.assign(entry, { n: r.n, m: r.m });
    if (r.criterion === 'hard') entry.sparsityTarget = r.sparsityTarget;
    offset += masks[i].length;
    return entry;
  });
  const json = {
    format: 'sparsekit-playground-masks', version: 1, model: state.loaded?.fileName, createdAt: new Date().toISOString(),
    totalSparsity: t.sparsity, parameters: t.params, nonZeros: t.nnz,
    global: globalOn ? { enabled: true, keep } : { enabled: false },
    binary: { file: `${baseName()}.masks.bin`, encoding: 'one uint8 per element (1 keeps, 0 prunes), in the weight\'s storage order, layers concatenated' },
    layers,
  };
  const bin = new Uint8Array(offset);
  let at = 0;
  for (const m of masks) { bin.set(m, at); at += m.length; }
  return { json, bin };
}

export function exportModel(): void {
  const pruned = state.run?.pruned;
  if (!pruned) return;
  download(`${baseName()}.pruned.onnx`, pruned.bytes);
  for (const [name, data] of pruned.external) download(name, data);
}

export function exportMasksJson(): void {
  if (state.run) download(`${baseName()}.masks.json`, JSON.stringify(masksPayload(state.run.results).json, null, 1), 'application/json');
}

export function exportMasksBin(): void {
  if (state.run) download(`${baseName()}.masks.bin`, masksPayload(state.run.results).bin);
}
