// The calibration card: the method (magnitude / Wanda / SparseGPT) and presets, layers kept dense,
// calibration options, progress and cancel, per-layer relative reconstruction error, the held-out
// fidelity and output cosine, and the side-by-side comparison of the three methods. Each run is a
// PruneJob run by the package's runJob (workers/calib-worker.ts). The layers and input shapes come
// from the package's ONNX module.
import { OnnxModel, findLayers, resolveInputShape, isDensePrediction, CALIB_DEFAULTS, type CalibLayer, type CalibLayerReport, type JobMethod, type JobReport } from 'sparsekit-wasm/onnx';
import { $, button, download, input, select, showError } from '../dom.js';
import { loadUserImages } from '../calib/user-images.js';
import { WorkerError } from '../protocol.js';
import type { CalibCompareRow, CalibRequest, CalibStep } from '../workers/api.js';
import { fidelityList } from '../fidelity-view.js';
import { parseNM } from '../format.js';
import { calibClient } from '../workers.js';


let model: OnnxModel | null = null, bytes: Uint8Array | null = null, fileName = '', layers: CalibLayer[] = [];
let busy = false, pruned: Uint8Array | null = null, controller: AbortController | null = null;
/** Layers kept dense (the job's recipe leaves them out); every other layer gets the card's method. */
const dense: Record<string, true> = {};

function target(): CalibRequest['target'] {
  if (select('calib-pattern').value === 'nm') {
    // the page's one N:M parser, the package's (format.ts parseNM): the CLI's and the module's patterns
    const nm = parseNM(input('calib-nm').value);
    if (!nm) throw new Error(`invalid N:M "${input('calib-nm').value}" (N:M with 1 <= N <= M, e.g. 2:4)`);
    return { nm };
  }
  const s = Number(input('calib-sparsity').value) / 100;
  if (!(s >= 0 && s <= 1)) throw new Error('sparsity must be between 0 and 100%');
  return { sparsity: s };
}

function renderTable(report: JobReport | null): void {
  const tbody = $('calib-layers').querySelector('tbody')!;
  tbody.replaceChildren();
  // calibrated jobs report CalibLayerReports; magnitude, the plain per-layer report
  const byName = new Map((report?.prune?.layers ?? []).map((r) => [r.name, r as Partial<CalibLayerReport> & typeof r]));
  for (const l of layers) {
    const tr = document.createElement('tr');
    const td = (x: Node | string) => { const c = document.createElement('td'); if (x instanceof Node) c.append(x); else c.textContent = x; tr.append(c); return c; };
    td(l.name); td(l.op); td(`${l.rows}×${l.cols}${l.transposed ? ' (transposed)' : ''}${l.group > 1 ? ` · group ${l.group}` : ''}`);
    const sel = document.createElement('select');
    sel.setAttribute('aria-label', `criterion of ${l.name}`);
    sel.append(new Option('(the card\'s method)', ''), new Option('keep dense', 'dense'));
    sel.value = dense[l.name] ? 'dense' : '';
    sel.addEventListener('change', () => { if (sel.value) dense[l.name] = true; else delete dense[l.name]; });
    td(sel);
    const r = byName.get(l.name);
    td(r ? (r.method ?? (r.zeros > 0 ? report!.method : 'dense')) : '');
    td(r ? `${(r.sparsity * 100).toFixed(1)}%` : '');
    td(r && r.relError != null ? r.relError.toFixed(4) : r ? '—' : '').dataset.testid = 'calib-relerr';
    td(r ? (r.notes ?? (r.note ? [r.note] : [])).join('; ') : (l.note ?? ''));
    tbody.append(tr);
  }
}

function setBusy(on: boolean, label = ''): void {
  busy = on;
  button('calib-run').disabled = on || !model;
  button('calib-compare').disabled = on || !model;
  button('calib-cancel').disabled = !on;
  $('calib-progress').hidden = !on;
  $('calib-status').textContent = label;
}

function onProgress(d: CalibStep): void {
  $<HTMLProgressElement>('calib-progress').value = d.total ? d.done / d.total : 0;
  $('calib-status').textContent = `${d.phase} · ${Math.floor(d.done)}/${d.total} layers${d.layer ? ` · ${d.layer}` : ''}`;
}

async function options(m: OnnxModel, b: Uint8Array): Promise<CalibRequest> {
  const first = m.inputs[0];
  const shape = first ? resolveInputShape(first, m.outputs) : [];
  const files = [...(input('calib-images').files ?? [])];
  const images = files.length && shape.length === 4 ? await loadUserImages(files, [shape[2], shape[3]]) : [];
  const num = (id: string, min: number) => {
    const v = Number(input(id).value);
    if (!(v >= min)) throw new Error(`${input(id).getAttribute('aria-label') ?? id} must be >= ${min}`);
    return v;
  };
  return {
    bytes: b.slice(), criterion: select('calib-criterion').value as JobMethod, dense: { ...dense }, target: target(),
    pages: Math.floor(num('calib-pages', 0)), heldOut: Math.floor(num('calib-heldout', 1)), images,
    sequential: !input('calib-onepass').checked, percDamp: num('calib-damp', 0),
    normalization: select('calib-norm').value === 'imagenet' ? 'imagenet' : 'symmetric',
  };
}

function showRun(res: { report: JobReport; engine: string }, heldOut: number, ms: number): void {
  renderTable(res.report);
  const fid = res.report.fidelity!; // the card's jobs are measured on held-out samples
  const p = res.report.prune;
  const s = $('calib-summary');
  s.replaceChildren();
  const f = document.createElement('strong');
  f.dataset.testid = 'calib-fidelity';
  f.textContent = fid.score.toFixed(4);
  s.append('Fidelity on held-out inputs (worst output, label-free, against the original): ', f, document.createElement('br'));
  const v = document.createElement('strong');
  v.dataset.testid = 'calib-cosine';
  v.textContent = fid.cosine.toFixed(5);
  s.append('Output cosine on held-out inputs (mean over ', String(heldOut), '): ', v,
    ` · ${res.report.method}${p?.calibration ? `, ${p.sequential ? 'sequential' : 'one pass'}, ${p.calibration} calibration inputs, ${p.passes} model passes` : ''}, ${(ms / 1000).toFixed(1)} s · kernels: ${res.engine}`);
  s.append(fidelityList(fid));
  $('calib-export').hidden = false;
}

function showCompare(rows: CalibCompareRow[]): void {
  const tbody = $('calib-compare-table').querySelector('tbody')!;
  tbody.replaceChildren();
  for (const r of rows) {
    const tr = document.createElement('tr');
    tr.dataset.criterion = r.criterion;
    for (const x of [r.criterion, `${r.fidelity.toFixed(4)} (${r.worst})`, r.cosine.toFixed(5), String(r.layers)]) { const td = document.createElement('td'); td.textContent = x; tr.append(td); }
    (tr.children[1] as HTMLElement).dataset.testid = `compare-fidelity-${r.criterion}`;
    (tr.children[1] as HTMLElement).dataset.score = String(r.fidelity);
    (tr.children[2] as HTMLElement).dataset.testid = `compare-${r.criterion}`;
    tbody.append(tr);
  }
  $('calib-compare-table').hidden = false;
}

async function run(op: 'run' | 'compare'): Promise<void> {
  if (!model || !bytes || busy) return;
  let msg: CalibRequest;
  try { msg = await options(model, bytes); } catch (e) { showError((e as Error).message); return; }
  if (msg.pages + msg.images.length < 1) { showError('Calibration needs at least one page or image.'); return; }
  setBusy(true, 'starting…');
  const t0 = performance.now();
  controller = new AbortController();
  const opts = { onProgress, signal: controller.signal };
  try {
    if (op === 'run') {
      const res = await calibClient.request('run', msg, opts);
      pruned = res.bytes;
      showRun(res, msg.heldOut, performance.now() - t0);
    } else {
      showCompare((await calibClient.request('compare', msg, opts)).rows);
    }
    setBusy(false, 'done');
  } catch (e) {
    const cancelled = e instanceof WorkerError && e.code === 'cancelled';
    setBusy(false, cancelled ? 'cancelled' : '');
    if (!cancelled) showError(`Calibration failed: ${(e as Error).message}`);
  } finally { controller = null; }
}

function applyPreset(preset: string): void {
  const [criterion, ...rest] = preset.split(':');
  select('calib-criterion').value = criterion;
  if (rest.length === 2) { select('calib-pattern').value = 'nm'; input('calib-nm').value = rest.join(':'); }
  else { select('calib-pattern').value = 'unstructured'; input('calib-sparsity').value = rest[0]; }
  select('calib-pattern').dispatchEvent(new Event('change'));
  for (const k of Object.keys(dense)) delete dense[k];
  renderTable(null);
}

export function initCalibPanel(): void {
  // The fields start at the package's one defaults table, which the CLI and the module read too.
  input('calib-damp').value = String(CALIB_DEFAULTS.percDamp);
  button('calib-run').addEventListener('click', () => run('run'));
  button('calib-compare').addEventListener('click', () => run('compare'));
  button('calib-cancel').addEventListener('click', () => { controller?.abort(); $('calib-status').textContent = 'cancelling…'; });
  select('calib-pattern').addEventListener('change', () => { const nm = select('calib-pattern').value === 'nm'; input('calib-nm').disabled = !nm; input('calib-sparsity').disabled = nm; });
  select('calib-pattern').dispatchEvent(new Event('change'));
  for (const b of document.querySelectorAll<HTMLButtonElement>('#calib-card [data-preset]')) b.addEventListener('click', () => applyPreset(b.dataset.preset ?? ''));
  button('calib-export').addEventListener('click', () => { if (pruned) download(fileName.replace(/\.onnx$/i, '') + '.calibrated.onnx', pruned); });
}

/** A new model was loaded, or none (models with external data: calibration is not offered). */
export function setCalibModel(b: Uint8Array | null, name: string, hasExternal: boolean): void {
  if (busy) { calibClient.restart(); setBusy(false, ''); }
  model = hasExternal || !b ? null : OnnxModel.parse(b);
  bytes = b; fileName = name; pruned = null;
  for (const k of Object.keys(dense)) delete dense[k];
  layers = model ? findLayers(model) : [];
  $('calib-card').hidden = !b;
  $('calib-unsupported').hidden = !hasExternal;
  $('calib-export').hidden = true;
  $('calib-compare-table').hidden = true;
  $('calib-summary').replaceChildren();
  select('calib-norm').value = model && isDensePrediction(model) ? 'imagenet' : 'symmetric';
  renderTable(null);
  setBusy(false, '');
}
