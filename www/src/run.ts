// The per-layer table's run: its settings as a recipe (layer-recipe.ts), run as one pruning job by
// the package's runJob in the job worker (as `sparsekit-wasm prune --recipe` runs it), the model it
// wrote (with its external data) and its weights kept for the views and the downloads.
import { $, clearError, describeError, download, input, setStatus, showError } from './dom.js';
import { layerRecipe, type GlobalScope } from './layer-recipe.js';
import { updateRunButton } from './layer-table.js';
import { baseName, state } from './state.js';
import { jobClient } from './workers.js';

/** What follows a successful run (set by main.ts: the result views, then the effect on the model). */
export interface RunHooks { done(): Promise<void> | void }

/** The global-scope fields, checked. */
function globalScope(): GlobalScope {
  const enabled = input('global-enabled').checked;
  const keep = Number(input('global-keep').value) / 100;
  if (enabled && !(keep >= 0 && keep <= 1)) throw new Error('The global "keep" percentage must lie between 0 and 100.');
  return { enabled, keep };
}

/** The table's recipe as it stands (the job card's "per layer" goal runs it too); throws on a field it cannot say. */
export function tableRecipe(): Record<string, unknown> {
  return layerRecipe(state.layers, globalScope());
}

/** The table's recipe as a file: `sparsekit-wasm prune IN.onnx -o OUT.onnx --recipe FILE` writes the same model. */
export function exportRecipe(): void {
  if (!state.loaded) return;
  clearError();
  try {
    download(`${baseName()}.recipe.json`, JSON.stringify(tableRecipe(), null, 2), 'application/json');
  } catch (e) { showError(describeError(e)); }
}

export async function runPruning(hooks: RunHooks): Promise<void> {
  const loaded = state.loaded;
  if (state.running || !loaded) return;
  clearError();
  let recipe: Record<string, unknown>;
  try { recipe = tableRecipe(); } catch (e) { showError(describeError(e)); return; }
  state.running = true;
  updateRunButton();
  const progress = $<HTMLProgressElement>('progress');
  progress.hidden = false; progress.value = 0;
  const t0 = performance.now();
  try {
    setStatus(`pruning ${state.layers.length} layers…`);
    const res = await jobClient.request('run', {
      bytes: loaded.bytes.slice(), external: [...loaded.external].map(([path, data]) => ({ path, data: data.slice() })),
      dataName: `${baseName()}.pruned.onnx.data`,
      goal: 'recipe', recipe, floor: null, amount: 0, nm: '2:4', levels: [], maxSteps: 1, method: 'magnitude', quantize: null,
      samples: { calibration: 0, heldOut: 0, images: [], text: null }, recover: null,
    }, {
      onProgress: (p) => {
        progress.value = p.total ? p.done / p.total : 0;
        setStatus(`pruning: ${p.label} (${Math.floor(p.done)}/${p.total})`);
      },
    });
    if (!res.bytes) throw new Error('the job wrote no model');
    const ids = new Map(state.layers.map((l) => [l.w.name, l.id]));
    const results = res.layers.filter((l) => ids.has(l.name)).map((l) => ({ ...l, id: ids.get(l.name)! }));
    state.run = { results, pruned: { bytes: res.bytes, external: new Map(res.external.map((f) => [f.path, f.data])) }, ms: res.ms };
    setStatus(`pruned in ${(res.ms / 1000).toFixed(2)} s (${((performance.now() - t0) / 1000).toFixed(2)} s in all) by one job: the recipe of this table`);
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
