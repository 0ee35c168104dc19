// The sparsity playground: load an ONNX model, configure pruning per layer, prune in a Web Worker
// with sparsekit-wasm, inspect the masks, compare the models with onnxruntime-web, export.
import { OnnxModel, OnnxError, resolveInputShape } from 'sparsekit-wasm/onnx';
import { compareOutputs } from './model-input.js';
import { defaultPlan, DEFAULT_RULE, NM24_RULE, planLayer } from './prune-core.js';
import { Heatmap, drawHistogram, drawSparsityBars, fmtNum } from './render.js';
import { initCalibPanel } from './calib-panel.js';
import { initChannelsPanel } from './channels-panel.js';

const $ = (id) => document.getElementById(id);
const newPruneWorker = () => new Worker(new URL('./prune-worker.js', import.meta.url), { type: 'module' });
let pruneWorker = newPruneWorker();
const evalWorker = new Worker(new URL('./eval-worker.js', import.meta.url), { type: 'module' });

const state = {
  fileName: null, bytes: null, external: new Map(), model: null, layers: [], others: [],
  results: null, pruned: null, selected: null, baseline: null, running: false, jobId: 0, engine: null,
};
window.__playground = state;   // for debugging and the tests

// ---------------------------------------------------------------- errors and status
function showError(message) {
  clearError();
  const div = document.createElement('div');
  div.className = 'error';
  div.dataset.testid = 'error';
  div.setAttribute('role', 'alert');
  const strong = document.createElement('strong');
  strong.textContent = 'Error: ';
  div.append(strong, document.createTextNode(message));
  $('error-slot').append(div);
}
function clearError() { $('error-slot').replaceChildren(); }
function setStatus(text) { $('status').textContent = text; }
window.addEventListener('error', (e) => showError(`Unexpected error: ${e.message}`));
window.addEventListener('unhandledrejection', (e) => showError(`Unexpected error: ${e.reason?.message ?? e.reason}`));

const fmtInt = (n) => n.toLocaleString('en-US');
function fmtBytes(n) {
  if (n == null) return '—';
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(2)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} B`;
}
const pct = (x) => `${(x * 100).toFixed(1)}%`;

// ---------------------------------------------------------------- worker plumbing
let engineInfo = null;
function startEngine(worker, threads) {
  return new Promise((resolve) => {
    const onMsg = (ev) => {
      if (ev.data.type === 'ready') { worker.removeEventListener('message', onMsg); resolve(ev.data); }
      if (ev.data.type === 'error' && ev.data.jobId == null) {
        worker.removeEventListener('message', onMsg);
        resolve({ failed: ev.data.error });
      }
    };
    worker.addEventListener('message', onMsg);
    worker.addEventListener('error', (e) => resolve({ failed: { message: e.message || 'the pruning worker failed to start' } }));
    // base: the page's base URL, under which the server puts the unbundled package (sparsekit/).
    worker.postMessage({ type: 'init', threads, base: document.baseURI });
  });
}
// ?threads=0 forces the single-threaded build (to compare; the results are the same).
const wantThreads = !/^(0|false|no|off)$/i.test(new URLSearchParams(location.search).get('threads') ?? '');
const engineReady = (async () => {
  const info = await startEngine(pruneWorker, wantThreads);
  if (!wantThreads || (!info.poolError && !info.failed)) return info;
  // The threaded build could not start (or start its pool): restart the worker on the single-threaded build.
  const why = info.poolError ?? info.failed.message;
  console.warn(`sparsekit-wasm: threaded build failed (${why}); using the single-threaded build`);
  pruneWorker.terminate();
  pruneWorker = newPruneWorker();
  return { ...(await startEngine(pruneWorker, false)), poolFailed: why };
})();
engineReady.then((info) => {
  engineInfo = info;
  state.engine = info;
  const badge = $('engine');
  if (info.failed) {
    badge.textContent = 'sparsekit-wasm failed to load';
    badge.className = 'badge bad';
    showError(`sparsekit-wasm could not be loaded: ${info.failed.message}`);
    return;
  }
  const why = !info.requested ? ' (threads off: ?threads=0)' : !info.isolated ? ' (page not cross-origin isolated)'
    : info.poolFailed ? ' (thread pool failed to start)' : info.source === 'bundled' ? ' (bundled copy)' : '';
  badge.textContent = info.threads ? `sparsekit-wasm · threads: ${info.numThreads} workers (${info.cores} cores)`
    : `sparsekit-wasm · single-threaded${why}`;
  badge.title = [
    `build: ${info.variant ?? '?'}`,
    info.threads ? `rayon pool: ${info.numThreads} workers; ${info.probe} distinct workers ran 64 probe tasks` : null,
    `package: ${info.source === 'unbundled' ? info.url : `bundled copy${info.loadError ? ` (unbundled load failed: ${info.loadError})` : ''}`}`,
    info.poolFailed ? `The threaded build could not start: ${info.poolFailed}` : null,
  ].filter(Boolean).join('\n');
  badge.dataset.testid = 'engine';
  badge.dataset.threads = String(info.threads ? info.numThreads : 1);
  badge.className = 'badge ok';
  updateRunButton();
});

function request(worker, msg, transfer = [], onProgress) {
  const jobId = ++state.jobId;
  return new Promise((resolve, reject) => {
    const onMsg = (ev) => {
      const d = ev.data;
      if (d.jobId !== jobId) return;
      if (d.type === 'progress') { onProgress?.(d); return; }
      worker.removeEventListener('message', onMsg);
      if (d.type === 'error') {
        const e = new Error(d.error.message);
        e.name = d.error.name; e.code = d.error.code;
        reject(e);
      } else resolve(d);
    };
    worker.addEventListener('message', onMsg);
    worker.postMessage({ ...msg, jobId }, transfer);
  });
}

// ---------------------------------------------------------------- loading
let loadGen = 0;   // bumped by every load: a slower, older load (the start-up default) must not win

async function loadFiles(files) {
  files = [...files];
  if (!files.length) return;
  const onnx = files.find((f) => /\.onnx$/i.test(f.name)) ?? (files.length === 1 ? files[0] : null);
  if (!onnx) {
    showError(`None of the chosen files is an .onnx model (${files.map((f) => f.name).join(', ')}).`);
    return;
  }
  loadGen++;
  resetModel();                                      // now, not after the reads: no stale rows meanwhile
  const external = new Map();
  for (const f of files) if (f !== onnx) external.set(f.name, new Uint8Array(await f.arrayBuffer()));
  await loadBytes(onnx.name, new Uint8Array(await onnx.arrayBuffer()), external);
}

async function loadDefault() {
  const url = $('default-model').value;
  const gen = ++loadGen;
  setStatus('downloading the default model…');
  try {
    const res = await fetch(url);
    if (!res.ok) throw new Error(`HTTP ${res.status} for ${url}`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (gen !== loadGen) return;                     // the user chose another model meanwhile
    await loadBytes(url.split('/').pop(), bytes, new Map());
  } catch (e) {
    showError(`Could not load the default model: ${e.message}`);
  } finally { setStatus(''); }
}

function resetModel() {
  Object.assign(state, { fileName: null, bytes: null, external: new Map(), model: null, layers: [], others: [], results: null, pruned: null, baseline: null });
  $('config-card').hidden = true;
  $('results-card').hidden = true;
  $('model-info').hidden = true;
  $('layers').querySelector('tbody').replaceChildren();
  calibPanel?.setModel(null);
  channelsPanel?.setModel(null);
}

async function loadBytes(name, bytes, external) {
  clearError();
  resetModel();
  let model;
  try {
    model = OnnxModel.parse(bytes, { externalFiles: external, fileName: name });
    const missing = model.missingExternalFiles();
    if (missing.length) {
      throw new OnnxError('missing_external', `"${name}" keeps its weights in the external data file${missing.length > 1 ? 's' : ''} ${missing.map((m) => `"${m}"`).join(', ')}. Choose the .onnx file together with ${missing.length > 1 ? 'them' : 'it'} (select or drop both at once).`);
    }
    for (const w of model.weights) model.readFloat(w);     // surfaces corrupt tensor data now
  } catch (e) {
    showError(e instanceof OnnxError ? `${name}: ${e.message}` : `${name} could not be read: ${e.message}`);
    return;
  }
  Object.assign(state, { fileName: name, bytes, external, model });
  // A layer's id is its row index: the worker's results and the layer picker refer to it.
  state.layers = model.prunable().map((w, id) => ({ w, id }));
  state.others = model.weights.filter((w) => !w.prunable);
  computeDefaults();
  renderModelInfo();
  renderLayerTable();
  $('config-card').hidden = false;
  calibPanel.setModel(model, bytes, name, external.size > 0);
  channelsPanel.setModel(bytes, name, external.size > 0);
  if (!state.layers.length) showError(`${name} has no Conv, ConvTranspose, Gemm or MatMul weights to prune.`);
  updateRunButton();
}

function renderModelInfo() {
  const m = state.model;
  const params = state.layers.reduce((a, l) => a + l.w.numel, 0);
  const allFloat = m.weights.reduce((a, w) => a + w.numel, 0);
  const ops = {};
  for (const l of state.layers) ops[l.w.op] = (ops[l.w.op] ?? 0) + 1;
  const info = $('model-info');
  info.hidden = false;
  info.replaceChildren();
  const dl = document.createElement('dl');
  const add = (k, v) => { const dt = document.createElement('dt'); dt.textContent = k; const dd = document.createElement('dd'); if (v instanceof Node) dd.append(v); else dd.textContent = v; dl.append(dt, dd); };
  add('File', `${state.fileName} (${fmtBytes(state.bytes.length)})${state.external.size ? ` + ${[...state.external.keys()].join(', ')}` : ''}`);
  add('Producer', `${m.model.producer_name || 'unknown producer'} ${m.model.producer_version || ''} · IR ${m.irVersion} · opset ${m.opsets.join(', ')}`);
  add('Graph', `${m.graph.node.length} nodes · ${m.weights.length} float tensors (${fmtInt(allFloat)} values)`);
  add('Prunable', `${state.layers.length} weights (${Object.entries(ops).map(([k, v]) => `${v} ${k}`).join(', ')}) · ${fmtInt(params)} parameters`);
  const inputs = document.createElement('span');
  for (const inp of m.inputs) {
    const label = document.createElement('label');
    label.className = 'input-shape';
    const field = document.createElement('input');
    field.value = resolveInputShape(inp, m.outputs).join('x');
    field.dataset.input = inp.name;
    field.size = 14;
    field.title = `declared [${inp.dims.join(', ')}]; dynamic dims resolved for the comparison run`;
    field.addEventListener('change', () => { state.baseline = null; });
    label.append(`${inp.name} `, field);
    inputs.append(label);
  }
  add('Test input', inputs);
  info.append(dl);
}

// ---------------------------------------------------------------- configuration
const parsePair = (s, allowAll) => {
  const parts = String(s).trim().toLowerCase().split(/\s*[x×,]\s*/);
  if (parts.length === 1 && allowAll && (parts[0] === 'all' || parts[0] === '-1')) return [-1, -1];
  if (parts.length !== 2) return null;
  const v = parts.map((p) => (allowAll && (p === 'all' || p === '-1') ? -1 : /^\d+$/.test(p) && +p > 0 ? +p : NaN));
  return v.some(Number.isNaN) ? null : v;
};
const fmtPair = (p) => (p[0] === -1 && p[1] === -1 ? 'all' : p.map((x) => (x === -1 ? 'all' : x)).join('x'));
const parseNM = (s) => { const m = /^\s*(\d+)\s*:\s*(\d+)\s*$/.exec(s); return m && +m[1] >= 1 && +m[2] > +m[1] && +m[2] <= 32 ? [+m[1], +m[2]] : null; };

function makeCell(row, node) { const td = document.createElement('td'); if (node instanceof Node) td.append(node); else td.textContent = node; row.append(td); return td; }

function renderLayerTable() {
  const tbody = $('layers').querySelector('tbody');
  tbody.replaceChildren();
  for (const layer of state.layers) {
    const { w } = layer;
    const tr = document.createElement('tr');
    tr.dataset.layer = w.name;
    layer.row = tr;
    const nameCell = makeCell(tr, w.name);
    nameCell.className = 'name';
    const why = document.createElement('div');
    why.className = 'why';
    why.dataset.testid = 'default-why';
    nameCell.append(why);
    makeCell(tr, w.op + (w.source === 'constant' ? '' : ''));
    makeCell(tr, w.dims.join('×') + (w.dtypeName !== 'float32' ? ` ${w.dtypeName}` : ''));
    makeCell(tr, fmtInt(w.numel)).className = 'num';
    const crit = document.createElement('select');
    for (const [v, t] of [['hard', 'hard'], ['soft', 'soft'], ['nm', 'N:M'], ['none', 'dense']]) crit.add(new Option(t, v));
    crit.dataset.field = 'criterion';
    makeCell(tr, crit);
    const mk = (field, size, title) => { const i = document.createElement('input'); i.dataset.field = field; i.size = size; i.title = title; makeCell(tr, i); return i; };
    mk('block', 5, 'block shape (rows x cols) in the 2-D view');
    mk('scope', 5, 'scope in blocks: all, 1xall, 2x2, …');
    const sp = mk('sparsity', 3, 'target sparsity (%)');
    sp.type = 'number'; sp.min = 0; sp.max = 100; sp.step = 5;
    mk('nm', 4, 'N:M pattern, e.g. 2:4');
    makeCell(tr, '').className = 'result';
    tr.addEventListener('change', (e) => readRow(layer, e.target));
    tr.addEventListener('click', (e) => { if (e.target.tagName === 'TD' && state.results) selectLayer(layer.id); });
    writeRow(layer);
    tbody.append(tr);
  }
  const det = $('other-weights');
  det.hidden = !state.others.length;
  det.querySelector('summary').textContent = `${state.others.length} other float tensors (biases, norms, constants): not pruned`;
  const ob = det.querySelector('tbody');
  ob.replaceChildren();
  for (const w of state.others.slice(0, 500)) {
    const tr = document.createElement('tr');
    makeCell(tr, w.name).className = 'name';
    makeCell(tr, useOf(w));
    makeCell(tr, w.dims.join('×') || 'scalar');
    makeCell(tr, fmtInt(w.numel)).className = 'num';
    ob.append(tr);
  }
  renderDefaultsNote();
  const ops = [...new Set(state.layers.map((l) => l.w.op))];
  const sel = $('bulk-op');
  sel.replaceChildren(new Option(`every (${state.layers.length})`, '*'));
  for (const op of ops) sel.add(new Option(`${op} (${state.layers.filter((l) => l.w.op === op).length})`, op));
}

/** How the graph uses a tensor that is not pruned, e.g. "Conv (input 2)" for a bias. */
function useOf(w) {
  if (w.op) return `${w.op} (weight)`;
  const [op, index] = (w.consumers[0] ?? '').split('#');
  return op ? `${op} (input ${index})` : 'unused';
}

// ---------------------------------------------------------------- default settings
const RULES = { magnitude: DEFAULT_RULE, nm24: NM24_RULE };
const currentRule = () => RULES[$('default-rule').value] ?? DEFAULT_RULE;

/** Default settings of every layer, from the weights alone (prune-core.js defaultPlan: no model run). */
function computeDefaults() {
  const t0 = performance.now();
  const plan = defaultPlan(state.layers.map(({ w }) => ({ dims: w.dims, reduceAxis: w.reduceAxis, op: w.op, data: state.model.readFloat(w) })), currentRule());
  state.defaultPlan = { ...plan, items: undefined, ms: performance.now() - t0 };
  state.layers.forEach((layer, i) => {
    const { cfg, kind, note } = plan.items[i];
    Object.assign(layer, { cfg, defaultCfg: JSON.stringify(cfg), defaultKind: kind, defaultNote: note });
  });
}

/** Re-applies the chosen default rule to every layer (the "Default settings" select). */
function resetToDefaults() {
  if (!state.model) return;
  computeDefaults();
  for (const layer of state.layers) writeRow(layer);
  renderDefaultsNote();
  updateRunButton();
  setStatus(`Default settings applied to ${state.layers.length} layer${state.layers.length === 1 ? '' : 's'}.`);
}

/** The note on the default settings: the rule in one sentence, and what it chose. */
function renderDefaultsNote() {
  const box = $('defaults-note');
  box.replaceChildren();
  if (!state.layers.length) return;
  const plan = state.defaultPlan;
  const by = (k) => state.layers.filter((l) => l.defaultKind === k);
  const params = state.layers.reduce((a, l) => a + l.w.numel, 0);
  const pruned = state.layers.reduce((a, l) => a + (l.defaultKind === 'dense' ? 0 : l.defaultKind === 'nm' ? 0.5 : l.cfg.sparsity) * l.w.numel, 0);
  const strong = document.createElement('strong');
  strong.textContent = 'Default settings: ';
  const sentence = document.createElement('span');
  sentence.dataset.testid = 'default-rule-sentence';
  sentence.textContent = plan.sentence;
  box.append(strong, sentence, ' ');
  const names = (list) => {
    const span = document.createElement('span');
    span.className = 'names';
    span.textContent = `${list.length} weight${list.length === 1 ? '' : 's'}`;
    span.title = list.map((l) => `${l.w.name} ${l.w.dims.join('×')}: ${l.defaultNote}`).join('\n');
    return span;
  };
  const parts = [];
  if (plan.rule.kind === 'nm24') {
    parts.push([names(by('nm')), ' 2:4'], [names(by('dense')), ' dense']);
    box.append('Here: ');
  } else {
    box.append(`Here: threshold |w| < ${plan.threshold.toPrecision(3)} → ${(pruned / params * 100).toFixed(1)}% of ${fmtInt(params)} weights; `);
    parts.push([names(by('global')), ' pruned by the threshold'], [names(by('capped')), ` capped at ${Math.round(plan.rule.cap * 100)}%`], [names(by('dense')), ' dense']);
  }
  parts.filter(([n]) => n.textContent[0] !== '0').forEach(([n, t], i) => { if (i) box.append(', '); box.append(n, t); });
  box.append(` (computed from the weights in ${(plan.ms / 1000).toFixed(2)} s; hover for the list; each row says what it got and why).`);
  const why = document.createElement('span');
  why.className = 'why-rule';
  // The measured figures belong to the bundled PaddleOCR models; any other model gets the rule's
  // reason and a pointer to the effect panel, which measures this model.
  const paddle = /ch_PP-OCRv4_det|ch_ppocr_mobile_v2\.0_cls|ch_PP-OCRv4_rec/.test(state.fileName || '');
  if (plan.rule.kind === 'nm24') {
    why.textContent = paddle
      ? ' One-shot 2:4 without fine-tuning can break a compact model (on this PaddleOCR model it drops the output cosine to 0.00–0.68; SparseGPT in the calibration card keeps it at 0.87–0.97); check the effect below.'
      : ' One-shot 2:4 without fine-tuning can break a compact model; check the effect below, or use SparseGPT in the calibration card.';
  } else {
    why.textContent = paddle
      ? ' Why: on the bundled PaddleOCR models this keeps the outputs at cosine ≥ 0.96 (det 0.99, cls 0.98, rec 0.96), where one-shot 2:4 on every eligible layer drops them to 0.00–0.68; a cap stops the threshold from emptying layers of small weights (squeeze-excitation blocks). 2:4 and block pruning stay one click away: the "2:4 where possible" preset, "Apply to all" or any row.'
      : ' Why: removing the smallest weights model-wide with a per-layer cap is the safest one-shot rule we measured (on the bundled PaddleOCR models: cosine ≥ 0.96 at 25%); the effect panel below measures it on this model. 2:4 and block pruning stay one click away: the "2:4 where possible" preset, "Apply to all" or any row.';
  }
  box.append(why);
}

function writeRow(layer) {
  const { cfg, row } = layer;
  const f = (name) => row.querySelector(`[data-field="${name}"]`);
  f('criterion').value = cfg.criterion;
  f('block').value = fmtPair(cfg.block);
  f('scope').value = fmtPair(cfg.scope);
  f('sparsity').value = Math.round(cfg.sparsity * 1000) / 10;
  f('nm').value = `${cfg.n}:${cfg.m}`;
  const nm = cfg.criterion === 'nm', dense = cfg.criterion === 'none';
  f('block').disabled = nm || dense; f('scope').disabled = nm || dense || $('global-enabled').checked && cfg.criterion === 'hard';
  f('sparsity').disabled = nm || dense || ($('global-enabled').checked && cfg.criterion === 'hard');
  f('nm').disabled = !nm;
  const plan = planLayer(layer.w.dims, cfg);
  const isDefault = JSON.stringify(cfg) === layer.defaultCfg;
  const why = row.querySelector('.why');
  why.textContent = isDefault ? `default: ${layer.defaultNote}` : `changed (default: ${layer.defaultNote})`;
  why.classList.toggle('changed', !isDefault);
  row.dataset.default = isDefault ? layer.defaultKind : 'changed';
  row.title = nm || dense ? '' : plan.notes.join('\n');
  f('block').classList.toggle('warn', !nm && !dense && plan.notes.some((n) => n.startsWith('block')));
  for (const el of row.querySelectorAll('input')) el.classList.remove('invalid');
}

function readRow(layer, target) {
  const { cfg } = layer;
  const v = target.value;
  let ok = true;
  switch (target.dataset.field) {
    case 'criterion': cfg.criterion = v; break;
    case 'block': { const p = parsePair(v, true); ok = !!p; if (p) cfg.block = p; break; }
    case 'scope': { const p = parsePair(v, true); ok = !!p; if (p) cfg.scope = p; break; }
    case 'sparsity': { const x = Number(v); ok = v !== '' && x >= 0 && x <= 100; if (ok) cfg.sparsity = x / 100; break; }
    case 'nm': { const p = parseNM(v); ok = !!p; if (p) [cfg.n, cfg.m] = p; break; }
    default: return;
  }
  if (ok) writeRow(layer); else target.classList.add('invalid');
  updateRunButton();
}

function applyBulk() {
  const op = $('bulk-op').value;
  const block = parsePair($('bulk-block').value, true);
  const scope = parsePair($('bulk-scope').value, true);
  const sparsity = Number($('bulk-sparsity').value);
  const nm = parseNM($('bulk-nm').value);
  const bad = [!block && 'block', !scope && 'scope', !(sparsity >= 0 && sparsity <= 100) && 'sparsity', !nm && 'N:M'].filter(Boolean);
  if (bad.length) { setStatus(`Invalid ${bad.join(', ')} in "apply to all".`); return; }
  let count = 0;
  for (const layer of state.layers) {
    if (op !== '*' && layer.w.op !== op) continue;
    Object.assign(layer.cfg, { criterion: $('bulk-criterion').value, block, scope, sparsity: sparsity / 100, n: nm[0], m: nm[1] });
    writeRow(layer);
    count++;
  }
  setStatus(`Applied to ${count} layer${count === 1 ? '' : 's'}.`);
  updateRunButton();
}

function updateRunButton() {
  const invalid = state.layers.some((l) => l.row?.querySelector('input.invalid'));
  $('run').disabled = !state.model || !state.layers.length || state.running || !engineInfo || !!engineInfo.failed || invalid;
  $('global-keep').disabled = !$('global-enabled').checked;
}

// ---------------------------------------------------------------- pruning
async function runPruning() {
  if (state.running) return;
  clearError();
  const globalOn = $('global-enabled').checked;
  const keepPct = Number($('global-keep').value);
  if (globalOn && !(keepPct >= 0 && keepPct <= 100)) { showError('The global "keep" percentage must lie between 0 and 100.'); return; }
  state.running = true;
  updateRunButton();
  const progress = $('progress');
  progress.hidden = false; progress.value = 0;
  const t0 = performance.now();
  try {
    const model = state.model;
    const layers = state.layers.map(({ w, id, cfg }) => ({
      id, name: w.name, dims: w.dims, reduceAxis: w.reduceAxis, data: model.readFloat(w), cfg: { ...cfg },
    }));
    setStatus(`pruning ${layers.length} layers…`);
    const res = await request(pruneWorker, { type: 'prune', layers, global: { enabled: globalOn, sparsity: 1 - keepPct / 100 } },
      layers.map((l) => l.data.buffer), (p) => {
        progress.value = p.total ? p.done / p.total : 0;
        setStatus(`pruning: ${p.label} (${Math.floor(p.done)}/${p.total})`);
      });
    // Write the pruned weights into a fresh copy of the original model and re-encode it.
    const fresh = OnnxModel.parse(state.bytes, { externalFiles: state.external, fileName: state.fileName });
    for (const r of res.results) fresh.writeFloat(fresh.weight(r.name), r.data);
    state.pruned = encodeWithData(fresh);
    state.results = res.results;
    state.pruneMs = res.ms;
    const ms = performance.now() - t0;
    const noGlobal = globalOn && !state.layers.some((l) => l.cfg.criterion === 'hard');
    setStatus(`pruned in ${(res.ms / 1000).toFixed(2)} s (${(ms / 1000).toFixed(2)} s in all)${res.threads ? ' with threads' : ''}`
      + (noGlobal ? ' · note: global scope is on but no layer uses the hard threshold, so nothing was coupled' : ''));
    renderResults();
    await evaluate();
  } catch (e) {
    showError(`Pruning failed: ${e.code ? `[${e.code}] ` : ''}${e.message}`);
    setStatus('');
  } finally {
    state.running = false;
    progress.hidden = true;
    updateRunButton();
  }
}

/**
 * The model's bytes and its external data as {bytes, external: Map name -> bytes}. External tensors
 * go to one data file: the name of the original one (so the export pairs as the input did), or
 * `<name>.pruned.onnx.data` when the input spread them over several files.
 */
function encodeWithData(model) {
  const locs = model.externalLocations;
  if (!locs.length) return { bytes: model.encode(), external: new Map() };
  const location = locs.length === 1 ? locs[0] : `${baseName()}.pruned.onnx.data`;
  const chunks = [];
  const bytes = model.encode({ location, sink: (b) => chunks.push(b.slice()) });
  const data = new Uint8Array(chunks.reduce((a, c) => a + c.length, 0));
  let off = 0;
  for (const c of chunks) { data.set(c, off); off += c.length; }
  return { bytes, external: new Map([[location, data]]) };
}

function totals(results) {
  const t = { params: 0, nnz: 0, dense: 0, csr: 0, bsr: 0, nm24: 0, nm24Layers: 0 };
  for (const r of results) {
    t.params += r.numel; t.nnz += r.nnz; t.dense += r.bytes.dense; t.csr += r.bytes.csr; t.bsr += r.bytes.bsr;
    if (r.bytes.nm24 != null) { t.nm24 += r.bytes.nm24; t.nm24Layers++; } else t.nm24 += r.bytes.dense;
  }
  t.sparsity = t.params ? 1 - t.nnz / t.params : 0;
  return t;
}

/** One figure of a totals row: value (with a test id), label, optional sub-line. */
function statTile(label, value, testid, sub) {
  const d = document.createElement('div'); d.className = 'stat';
  const v = document.createElement('div'); v.className = 'value'; v.textContent = value; if (testid) v.dataset.testid = testid;
  const l = document.createElement('div'); l.className = 'label'; l.textContent = label;
  d.append(v, l);
  if (sub) { const s = document.createElement('div'); s.className = 'sub'; s.textContent = sub; d.append(s); }
  return d;
}

function renderResults() {
  const results = state.results;
  $('results-card').hidden = false;
  const t = totals(results);
  const box = $('totals');
  box.replaceChildren();
  const stat = (label, value, testid, sub) => box.append(statTile(label, value, testid, sub));
  stat('total sparsity', pct(t.sparsity), 'total-sparsity', `over ${results.length} prunable weights`);
  stat('parameters', fmtInt(t.params));
  stat('non-zeros', fmtInt(t.nnz));
  stat('dense', fmtBytes(t.dense), null, 'float32');
  stat('CSR', fmtBytes(t.csr), null, `${(t.csr / t.dense * 100).toFixed(0)}% of dense`);
  stat('BSR', fmtBytes(t.bsr), null, `${(t.bsr / t.dense * 100).toFixed(0)}% of dense`);
  stat('2:4 form', fmtBytes(t.nm24), null, `${t.nm24Layers}/${results.length} layers 2:4; others dense`);
  for (const r of results) {
    const layer = state.layers[r.id];
    const cell = layer.row.querySelector('.result');
    cell.textContent = pct(r.sparsity);
    cell.title = [`${r.pattern}${r.global ? ' (global)' : ''}`, ...r.notes].join('\n');
    cell.classList.toggle('noted', r.notes.length > 0);
  }
  const sel = $('layer-select');
  sel.replaceChildren(...results.map((r) => new Option(`${r.name} · ${pct(r.sparsity)}`, r.id)));
  const first = results.find((r) => r.id === state.selected) ?? results.find((r) => r.criterion !== 'none') ?? results[0];
  selectLayer(first.id);
}

function selectLayer(id) {
  const r = state.results.find((x) => x.id === Number(id));
  if (!r) return;
  state.selected = r.id;
  $('layer-select').value = String(r.id);
  const meta = $('layer-meta');
  meta.replaceChildren();
  const line = (text, cls) => { const p = document.createElement('div'); p.textContent = text; if (cls) p.className = cls; meta.append(p); };
  line(`${r.dims.join('×')} viewed as ${r.rows}×${r.cols} · ${r.pattern}${r.global ? ' · global scope' : r.criterion === 'hard' || r.criterion === 'soft' ? ` · scope ${fmtPair(r.scope)}` : ''}`);
  line(`${r.criterion === 'nm' ? 'elements' : 'blocks'} kept ${fmtInt(r.blocksKept)} / ${fmtInt(r.blocksTotal)} · sparsity ${pct(r.sparsity)} · ${fmtInt(r.nnz)} non-zeros · CSR ${fmtBytes(r.bytes.csr)} · BSR(${r.bytes.bsrBlock.join('x')}) ${fmtBytes(r.bytes.bsr)}${r.bytes.nm24 != null ? ` · 2:4 ${fmtBytes(r.bytes.nm24)}` : ''}`);
  for (const n of r.notes) line(`note: ${n}`, 'note');
  heatmap.setLayer(r);
  drawHistogram($('histogram'), r);
  drawBars();
}

function drawBars() {
  const geo = drawSparsityBars($('bars'), state.results, state.selected);
  state.barGeo = geo;
}

// ---------------------------------------------------------------- comparison with onnxruntime-web
function inputSpecs() {
  return state.model.inputs.map((inp) => {
    const field = document.querySelector(`#model-info input[data-input="${CSS.escape(inp.name)}"]`);
    const shape = (field?.value ?? '').split(/[x×, ]+/).filter(Boolean).map(Number);
    if (!shape.length || shape.some((d) => !(Number.isInteger(d) && d > 0))) throw new Error(`invalid test input shape "${field?.value}" for ${inp.name}`);
    return { name: inp.name, elemType: inp.elemType || 1, shape };
  });
}

async function runOrt(bytes, external) {
  const inputs = inputSpecs();
  const externalData = [...external].map(([path, data]) => ({ path, data: data.slice() }));
  return request(evalWorker, { type: 'run', model: bytes.slice(), externalData, inputs });
}

async function evaluate() {
  const box = $('effect');
  box.textContent = 'running the original and the pruned model with onnxruntime-web…';
  try {
    const inputs = inputSpecs();
    $('eval-input').textContent = `(deterministic random input ${inputs.map((i) => `${i.name}: ${i.shape.join('×')}`).join(', ')})`;
    const key = JSON.stringify(inputs);
    if (!state.baseline || state.baseline.key !== key) state.baseline = { key, run: await runOrt(state.bytes, state.external) };
    const pruned = await runOrt(state.pruned.bytes, state.pruned.external);
    const cmp = compareOutputs(state.baseline.run.outputs, pruned.outputs);
    state.comparison = cmp;
    box.replaceChildren();
    const big = document.createElement('div');
    big.className = 'totals';
    const stat = (label, value, testid) => big.append(statTile(label, value, testid));
    stat('cosine similarity', cmp.cosine.toFixed(5), 'cosine');
    stat('max |Δ|', fmtNum(cmp.maxAbs), 'max-abs-diff');
    stat('inference (original)', `${state.baseline.run.runMs.toFixed(0)} ms`);
    stat('inference (pruned)', `${pruned.runMs.toFixed(0)} ms`);
    box.append(big);
    if (cmp.outputs.length > 1) {
      const ul = document.createElement('ul');
      for (const o of cmp.outputs) { const li = document.createElement('li'); li.textContent = `${o.name}: cosine ${o.cosine.toFixed(5)}, max |Δ| ${fmtNum(o.maxAbs)}`; ul.append(li); }
      box.append(ul);
    }
  } catch (e) {
    box.textContent = '';
    showError(`Running the models with onnxruntime-web failed: ${e.message}`);
  }
}

// ---------------------------------------------------------------- export
function download(name, data, type = 'application/octet-stream') {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const a = document.createElement('a');
  a.href = url; a.download = name; a.style.display = 'none';
  document.body.append(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
const baseName = () => state.fileName.replace(/\.onnx$/i, '');

function elementMask(r) {
  if (r.criterion === 'nm') return r.blockKeep;
  const [bh, bw] = r.block, gc = r.grid[1];
  const m = new Uint8Array(r.rows * r.cols);
  for (let i = 0; i < r.rows; i++) for (let j = 0; j < r.cols; j++) m[i * r.cols + j] = r.blockKeep[((i / bh) | 0) * gc + ((j / bw) | 0)];
  return m;
}

function b64(u8) {
  let s = '';
  for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode.apply(null, u8.subarray(i, i + 0x8000));
  return btoa(s);
}

function masksPayload() {
  const masks = state.results.map(elementMask);
  let offset = 0;
  const t = totals(state.results);
  const json = {
    format: 'sparsekit-playground-masks', version: 1, model: state.fileName, createdAt: new Date().toISOString(),
    totalSparsity: t.sparsity, parameters: t.params, nonZeros: t.nnz,
    global: $('global-enabled').checked ? { enabled: true, keep: Number($('global-keep').value) / 100 } : { enabled: false },
    binary: { file: `${baseName()}.masks.bin`, encoding: 'one uint8 per element (1 keeps, 0 prunes), in the weight\'s storage order, layers concatenated' },
    layers: state.results.map((r, i) => {
      const { w } = state.layers[r.id];
      const entry = {
        name: r.name, op: w.op, shape: r.dims, dtype: w.dtypeName, view: [r.rows, r.cols], criterion: r.criterion, pattern: r.pattern,
        global: !!r.global, block: r.block, scope: r.scope, reduceAxis: r.reduceAxis, sparsity: r.sparsity, nnz: r.nnz, numel: r.numel,
        blocksKept: r.blocksKept, blocksTotal: r.blocksTotal, notes: r.notes, offset, length: masks[i].length,
        blockGrid: r.grid, blockKeepBase64: b64(r.blockKeep),
      };
      if (r.criterion === 'nm') Object.assign(entry, { n: r.n, m: r.m });
      if (r.criterion !== 'nm' && r.criterion !== 'none') entry.sparsityTarget = r.global ? 1 - Number($('global-keep').value) / 100 : r.sparsityTarget;
      offset += masks[i].length;
      return entry;
    }),
  };
  const bin = new Uint8Array(offset);
  masks.forEach((m, i) => bin.set(m, json.layers[i].offset));
  return { json, bin };
}

function exportModel() {
  if (!state.pruned) return;
  download(`${baseName()}.pruned.onnx`, state.pruned.bytes);
  for (const [name, data] of state.pruned.external) download(name, data);
}

// ---------------------------------------------------------------- wiring
const heatmap = new Heatmap($('heatmap'), $('tooltip'));
// var: resetModel() may run before this line only in theory; it checks calibPanel?.
var calibPanel = initCalibPanel({ showError, download });
var channelsPanel = initChannelsPanel({ showError, download, evalRequest: (msg) => request(evalWorker, msg), inputSpecs });
$('model-file').addEventListener('change', (e) => { loadFiles(e.target.files); e.target.value = ''; });
$('load-default').addEventListener('click', loadDefault);
const drop = $('drop');
['dragenter', 'dragover'].forEach((t) => drop.addEventListener(t, (e) => { e.preventDefault(); drop.classList.add('over'); }));
['dragleave', 'drop'].forEach((t) => drop.addEventListener(t, () => drop.classList.remove('over')));
drop.addEventListener('drop', (e) => { e.preventDefault(); loadFiles(e.dataTransfer.files); });
window.addEventListener('dragover', (e) => e.preventDefault());
window.addEventListener('drop', (e) => e.preventDefault());
$('bulk-apply').addEventListener('click', applyBulk);
$('bulk-criterion').addEventListener('change', () => {
  const nm = $('bulk-criterion').value === 'nm';
  $('bulk-nm').disabled = !nm; $('bulk-block').disabled = nm; $('bulk-scope').disabled = nm; $('bulk-sparsity').disabled = nm;
});
$('bulk-criterion').dispatchEvent(new Event('change'));
$('global-enabled').addEventListener('change', () => { state.layers.forEach(writeRow); updateRunButton(); });
$('run').addEventListener('click', runPruning);
$('default-rule').addEventListener('change', resetToDefaults);
$('reset-defaults').addEventListener('click', resetToDefaults);
$('export').addEventListener('click', exportModel);
$('export-masks').addEventListener('click', () => { const { json } = masksPayload(); download(`${baseName()}.masks.json`, JSON.stringify(json, null, 1), 'application/json'); });
$('export-masks-bin').addEventListener('click', () => { const { bin } = masksPayload(); download(`${baseName()}.masks.bin`, bin); });
$('layer-select').addEventListener('change', (e) => selectLayer(e.target.value));
$('zoom-in').addEventListener('click', () => heatmap.zoomBy(1.5));
$('zoom-out').addEventListener('click', () => heatmap.zoomBy(1 / 1.5));
$('zoom-fit').addEventListener('click', () => heatmap.fit());
$('bars').addEventListener('click', (e) => {
  if (!state.results || !state.barGeo) return;
  const i = Math.floor((e.offsetY - state.barGeo.top) / state.barGeo.row);
  if (i >= 0 && i < state.results.length) selectLayer(state.results[i].id);
});
let resizeTimer;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => { if (state.results && state.selected != null) { heatmap.fit(); drawHistogram($('histogram'), state.results.find((r) => r.id === state.selected)); drawBars(); } }, 150);
});
updateRunButton();

// The page opens with its default model loaded (?model=none opens it empty).
if (!/^none$/i.test(new URLSearchParams(location.search).get('model') ?? '')) loadDefault();
