// The sparsity playground: load an ONNX model, run one pruning job on it (goal, samples, recovery:
// the package's runJob in a worker, as the CLI runs it), inspect the masks, compare the models with
// onnxruntime-web, download; the per-layer controls one fold below. This file only wires the page's
// modules to its controls.
import { $, button, input, select, showError } from './dom.js';
import { renderDefaultsNote, resetToDefaults, defaultLayers } from './defaults.js';
import { evaluate } from './effect.js';
import { startEngine } from './engine.js';
import { exportMasksBin, exportMasksJson, exportModel } from './export.js';
import { applyBulk, renderLayerTable, syncBulkFields, updateRunButton, writeRow } from './layer-table.js';
import { loadDefault, loadFiles, setLoadHooks } from './model-load.js';
import { renderModelInfo } from './model-info.js';
import { initCalibPanel, setCalibModel } from './panels/calib-panel.js';
import { initChannelsPanel, setChannelsModel } from './panels/channels-panel.js';
import { initJobPanel, setJobModel } from './panels/job-panel.js';
import { initJobDownloads } from './panels/job-result.js';
import { onBarsClick, redraw, renderResults, selectLayer, zoom } from './results.js';
import { exportRecipe, runPruning } from './run.js';
import { state } from './state.js';
import { installTestSurface } from './test-surface.js';

window.addEventListener('error', (e) => showError(`Unexpected error: ${e.message}`));
window.addEventListener('unhandledrejection', (e) => showError(`Unexpected error: ${(e.reason as Error)?.message ?? e.reason}`));
installTestSurface();

initCalibPanel();
initChannelsPanel();
initJobPanel();
initJobDownloads();

setLoadHooks({
  reset() {
    void setChannelsModel(null, '', false);
    setCalibModel(null, '', false);
    setJobModel(null, false);
  },
  loaded(m) {
    state.layers = defaultLayers(m.model);
    state.others = m.model.weights.filter((w) => !w.prunable);
    renderModelInfo(m);
    renderLayerTable(selectLayer);
    renderDefaultsNote();
    $('config-card').hidden = false;
    setCalibModel(m.bytes, m.fileName, m.external.size > 0);
    void setChannelsModel(m.bytes, m.fileName, m.external.size > 0);
    setJobModel(m.bytes, m.external.size > 0);
    if (!state.layers.length) showError(`${m.fileName} has no Conv, ConvTranspose, Gemm or MatMul weights to prune.`);
    updateRunButton();
  },
});

// Loading
input('model-file').addEventListener('change', (e) => { const t = e.target as HTMLInputElement; if (t.files) void loadFiles(t.files); t.value = ''; });
button('load-default').addEventListener('click', () => void loadDefault());
const drop = $('drop');
for (const t of ['dragenter', 'dragover']) drop.addEventListener(t, (e) => { e.preventDefault(); drop.classList.add('over'); });
for (const t of ['dragleave', 'drop']) drop.addEventListener(t, () => drop.classList.remove('over'));
drop.addEventListener('drop', (e) => { e.preventDefault(); if (e.dataTransfer) void loadFiles(e.dataTransfer.files); });
window.addEventListener('dragover', (e) => e.preventDefault());
window.addEventListener('drop', (e) => e.preventDefault());

// Configuration
button('bulk-apply').addEventListener('click', applyBulk);
select('bulk-criterion').addEventListener('change', syncBulkFields);
syncBulkFields();
input('global-enabled').addEventListener('change', () => { state.layers.forEach(writeRow); updateRunButton(); });
const resetAll = () => resetToDefaults(() => { state.layers.forEach(writeRow); updateRunButton(); });
select('default-rule').addEventListener('change', resetAll);
button('reset-defaults').addEventListener('click', resetAll);

// Run, results, export
button('run').addEventListener('click', () => void runPruning({ done: async () => { renderResults(); await evaluate(); } }));
button('export').addEventListener('click', exportModel);
button('export-masks').addEventListener('click', exportMasksJson);
button('export-masks-bin').addEventListener('click', exportMasksBin);
button('export-recipe').addEventListener('click', exportRecipe);
select('layer-select').addEventListener('change', (e) => selectLayer(Number((e.target as HTMLSelectElement).value)));
button('zoom-in').addEventListener('click', () => zoom.by(1.5));
button('zoom-out').addEventListener('click', () => zoom.by(1 / 1.5));
button('zoom-fit').addEventListener('click', () => zoom.fit());
$('bars').addEventListener('click', onBarsClick);
let resizeTimer: ReturnType<typeof setTimeout> | undefined;
window.addEventListener('resize', () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(redraw, 150); });

updateRunButton();
void startEngine().then(updateRunButton);

// The page opens with its default model loaded (?model=none opens it empty).
if (!/^none$/i.test(new URLSearchParams(location.search).get('model') ?? '')) void loadDefault();
