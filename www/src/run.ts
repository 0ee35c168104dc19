// One pruning run: the layers and their settings to the pruning worker, the pruned weights written
// into a fresh copy of the original model (re-encoded with its external data), then the views.
import { OnnxModel } from 'sparsekit-wasm/onnx';
import { $, clearError, describeError, input, setStatus, showError } from './dom.js';
import { updateRunButton } from './layer-table.js';
import { baseName, state, type ModelBytes } from './state.js';
import { pruneClient } from './workers.js';

/** What follows a successful run (set by main.ts: the result views, then the effect on the model). */
export interface RunHooks { done(): Promise<void> | void }

export async function runPruning(hooks: RunHooks): Promise<void> {
  const loaded = state.loaded;
  if (state.running || !loaded) return;
  clearError();
  const globalOn = input('global-enabled').checked;
  const keepPct = Number(input('global-keep').value);
  if (globalOn && !(keepPct >= 0 && keepPct <= 100)) { showError('The global "keep" percentage must lie between 0 and 100.'); return; }
  state.running = true;
  updateRunButton();
  const progress = $<HTMLProgressElement>('progress');
  progress.hidden = false; progress.value = 0;
  const t0 = performance.now();
  try {
    const { model } = loaded;
    const layers = state.layers.map(({ w, id, cfg }) => ({
      id, name: w.name, dims: w.dims, reduceAxis: w.reduceAxis, data: model.readFloat(w), cfg: { ...cfg },
    }));
    setStatus(`pruning ${layers.length} layers…`);
    const res = await pruneClient.request('prune', { layers, global: { enabled: globalOn, sparsity: 1 - keepPct / 100 } }, {
      transfer: layers.map((l) => l.data.buffer),
      onProgress: (p) => {
        progress.value = p.total ? p.done / p.total : 0;
        setStatus(`pruning: ${p.label} (${Math.floor(p.done)}/${p.total})`);
      },
    });
    const fresh = OnnxModel.parse(loaded.bytes, { externalFiles: loaded.external, fileName: loaded.fileName });
    for (const r of res.results) fresh.writeFloat(fresh.weight(r.name)!, r.data);
    state.run = { results: res.results, pruned: encodeWithData(fresh), ms: res.ms };
    const noGlobal = globalOn && !state.layers.some((l) => l.cfg.criterion === 'hard');
    setStatus(`pruned in ${(res.ms / 1000).toFixed(2)} s (${((performance.now() - t0) / 1000).toFixed(2)} s in all)${res.threads ? ' with threads' : ''}`
      + (noGlobal ? ' · note: global scope is on but no layer uses the hard threshold, so nothing was coupled' : ''));
    await hooks.done();
  } catch (e) {
    showError(`Pruning failed: ${describeError(e)}`);
    setStatus('');
  } finally {
    state.running = false;
    progress.hidden = true;
    updateRunButton();
  }
}

/**
 * The model's bytes and its external data. External tensors go to one data file: the name of the
 * original one (so the export pairs as the input did), or `<name>.pruned.onnx.data` when the input
 * spread them over several files.
 */
function encodeWithData(model: OnnxModel): ModelBytes {
  const locs = model.externalLocations;
  if (!locs.length) return { bytes: model.encode(), external: new Map() };
  const location = locs.length === 1 ? locs[0] : `${baseName()}.pruned.onnx.data`;
  const chunks: Uint8Array[] = [];
  const bytes = model.encode({ location, sink: (b: Uint8Array) => { chunks.push(b.slice()); } });
  const data = new Uint8Array(chunks.reduce((a, c) => a + c.length, 0));
  let off = 0;
  for (const c of chunks) { data.set(c, off); off += c.length; }
  return { bytes, external: new Map([[location, data]]) };
}
