// The recovery card: bring a pruned model back towards the loaded original without labels
// (workers/recover-worker.ts runs the package's recover(): statistics correction, least-squares
// refit, distillation, each kept only if the held-out fidelity does not drop). The student is any
// model another card made (pruned-models.ts) or a pruned .onnx the user gives; the teacher is the
// loaded model. While it runs, the card draws the held-out fidelity after each step and epoch;
// Cancel leaves nothing; the result can be downloaded.
import type { RecoverProgress, RecoverReport } from 'sparsekit-wasm/onnx';
import { $, button, download, input, select, showError, statTile } from '../dom.js';
import { fmtBytes } from '../format.js';
import { fidelityList, fidelitySub } from '../fidelity-view.js';
import { WorkerError } from '../protocol.js';
import { SOURCE_LABELS, onPrunedChange, prunedModels, type PrunedSource } from '../pruned-models.js';
import { svgEl as el } from '../render/svg.js';
import type { RecoverRequest, RecoverResult } from '../workers/api.js';
import { recoverClient } from '../workers.js';

let teacher: Uint8Array | null = null, fileName = '', uploaded: { bytes: Uint8Array; name: string } | null = null;
let result: RecoverResult | null = null, controller: AbortController | null = null, gen = 0;

/** The live curve: one point per held-out measurement (after each closed-form step, after each epoch). */
interface CurvePoint { label: string; fidelity: number }
let points: CurvePoint[] = [];
let lastPhase = '';

const FILE_SOURCE = 'file';

function studentBytes(): Uint8Array | null {
  const v = select('recover-source').value;
  if (v === FILE_SOURCE) return uploaded?.bytes ?? null;
  return prunedModels().get(v as PrunedSource) ?? null;
}

function renderSources(): void {
  const sel = select('recover-source');
  const keep = sel.value;
  sel.replaceChildren();
  for (const [src, bytes] of prunedModels()) {
    const o = document.createElement('option');
    o.value = src; o.textContent = `${SOURCE_LABELS[src]} (${fmtBytes(bytes.length)})`;
    sel.append(o);
  }
  const f = document.createElement('option');
  f.value = FILE_SOURCE; f.textContent = uploaded ? `file: ${uploaded.name}` : 'a pruned .onnx file…';
  sel.append(f);
  if ([...sel.options].some((o) => o.value === keep)) sel.value = keep;
  input('recover-file').hidden = sel.value !== FILE_SOURCE;
  button('recover-run').disabled = !!controller || !teacher || !studentBytes();
}

function readRequest(): RecoverRequest {
  const student = studentBytes();
  if (!teacher || !student) throw new Error('Choose a pruned model to recover (make one in a card above, or give a file).');
  const num = (id: string) => Number(input(id).value);
  const steps = (['stats', 'lsq', 'distill'] as const).filter((s) => input(`recover-step-${s}`).checked);
  if (!steps.length) throw new Error('Choose at least one recovery step.');
  const samples = Math.floor(num('recover-samples')), heldOut = Math.floor(num('recover-heldout'));
  if (!(samples >= 1 && heldOut >= 1)) throw new Error('Recovery needs at least one training and one held-out sample.');
  const epochs = Math.floor(num('recover-epochs')), minutes = num('recover-minutes'), lr = num('recover-lr'), batchSize = Math.floor(num('recover-batch'));
  const features = num('recover-features');
  if (!(epochs >= 1)) throw new Error('Epochs must be at least 1.');
  if (!(minutes >= 0)) throw new Error('Minutes must be 0 (no time budget) or more.');
  if (!(lr > 0)) throw new Error('The learning rate must be positive.');
  if (!(batchSize >= 1)) throw new Error('The batch holds at least one sample.');
  if (!(Number.isInteger(features) && features >= 0)) throw new Error('Matched blocks: a whole number, 0 for the outputs only.');
  return { teacher: teacher.slice(), student: student.slice(), samples, heldOut, steps, epochs, minutes, lr, batchSize, features };
}

function setBusy(on: boolean, label = ''): void {
  button('recover-cancel').disabled = !on;
  $('recover-progress').hidden = !on;
  $('recover-status').textContent = label;
  renderSources();
}

const PHASE_TEXT: Record<RecoverProgress['phase'], string> = {
  teacher: 'running the original', stats: 'statistics correction', lsq: 'least-squares refit', distill: 'distillation', eval: 'held-out fidelity',
};

function onProgress(p: RecoverProgress): void {
  $<HTMLProgressElement>('recover-progress').value = p.steps ? Math.min(1, p.step / p.steps) : 0;
  const parts = [PHASE_TEXT[p.phase]];
  if (p.epoch !== undefined) parts.push(`epoch ${p.epoch}${p.epochs !== undefined && Number.isFinite(p.epochs) ? `/${p.epochs}` : ''}`);
  parts.push(`${p.step}/${p.steps}`);
  if (p.loss !== undefined) parts.push(`loss ${p.loss.toExponential(2)}`);
  if (p.eta !== undefined) parts.push(`~${Math.ceil(p.eta)} s left`);
  $('recover-status').textContent = parts.join(' · ');
  // A measurement: the end of an 'eval' phase (before anything, after each closed-form step, at the
  // end) or the end of an epoch. The label says what it follows.
  if (p.phase !== 'eval' && p.phase !== 'teacher') lastPhase = p.phase;
  const measured = p.fidelity !== undefined && ((p.phase === 'eval' && p.step === p.steps) || (p.phase === 'distill' && p.step === p.steps && p.epoch !== undefined));
  if (!measured) return;
  const label = p.phase === 'distill' ? `epoch ${p.epoch}` : points.length === 0 ? 'pruned' : lastPhase === 'distill' ? 'best' : lastPhase || 'eval';
  const prev = points[points.length - 1];
  if (prev && prev.label === label && prev.fidelity === p.fidelity) return;
  points.push({ label, fidelity: p.fidelity! });
  renderCurve();
}

/** Held-out fidelity per measurement, left to right in the order the run made them. */
function renderCurve(): void {
  const box = $('recover-curve');
  box.replaceChildren();
  if (!points.length) return;
  const W = 420, H = 170, L = 48, R = 12, T = 12, B = 34;
  const lo = Math.max(0, Math.min(...points.map((p) => p.fidelity)) - 0.02);
  const x = (i: number) => L + (points.length === 1 ? 0.5 : i / (points.length - 1)) * (W - L - R);
  const y = (v: number) => T + (1 - (v - lo) / Math.max(1e-6, 1 - lo)) * (H - T - B);
  const svg = el('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': 'Held-out fidelity during recovery' });
  svg.append(el('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#888' }), el('line', { x1: L, y1: T, x2: L, y2: H - B, stroke: '#888' }));
  for (const v of [lo, 1]) svg.append(el('text', { x: L - 4, y: y(v) + 3, 'text-anchor': 'end', 'font-size': 10 }, v.toFixed(3)));
  svg.append(el('polyline', { points: points.map((p, i) => `${x(i)},${y(p.fidelity)}`).join(' '), fill: 'none', stroke: '#579' }));
  points.forEach((p, i) => {
    const c = el('circle', { cx: x(i), cy: y(p.fidelity), r: 4, fill: '#2a8' });
    c.dataset.testid = `recover-point-${i}`;
    c.dataset.fidelity = String(p.fidelity);
    c.dataset.label = p.label;
    c.append(el('title', {}, `${p.label}: held-out fidelity ${p.fidelity.toFixed(4)}`));
    svg.append(c);
    if (points.length <= 12) svg.append(el('text', { x: x(i), y: H - B + 14, 'text-anchor': 'middle', 'font-size': 9 }, p.label));
  });
  box.append(svg);
}

function stepLine(r: RecoverReport): string {
  const parts = r.closedForm.map((s) => `${s.step === 'stats' ? 'statistics correction' : 'least-squares refit'}: ${s.layers} layers, ${s.before.toFixed(4)} → ${s.after.toFixed(4)} ${s.applied ? 'kept' : 'rolled back'}${s.notes.length ? ` (${s.notes.join('; ')})` : ''}`);
  const d = r.distill;
  if (d) parts.push(`distillation: ${d.epochs} epochs, ${d.steps} steps, best ${d.bestScore.toFixed(4)} at epoch ${d.bestEpoch} (stopped by ${d.stopped}), ${d.params.toLocaleString('en-US')} parameters trained, ${fmtBytes(d.stateBytes)} of state${d.features?.length ? `, ${d.features.length} matched block outputs (${d.features.map((f) => f.name).join(', ')})` : ''}`);
  return parts.join(' · ');
}

function renderResult(r: RecoverResult, req: RecoverRequest): void {
  const s = $('recover-summary');
  s.replaceChildren();
  const { before, after } = r.report;
  s.dataset.before = String(before.score);
  s.dataset.after = String(after.score);
  const totals = document.createElement('div');
  totals.className = 'totals';
  totals.append(
    statTile('held-out fidelity before → after', `${before.score.toFixed(4)} → ${after.score.toFixed(4)}`, 'recover-fidelity', fidelitySub(after)),
    statTile('worst output', after.worst, 'recover-worst'),
    statTile('recovery', `${(r.ms / 1000).toFixed(1)} s`, null, `${req.samples} training and ${req.heldOut} held-out generated samples`),
  );
  const note = document.createElement('p');
  note.className = 'note';
  note.dataset.testid = 'recover-steps';
  note.textContent = stepLine(r.report);
  s.append(totals, note, fidelityList(after));
  button('recover-export').hidden = false;
}

async function run(): Promise<void> {
  if (!teacher || controller) return;
  let req: RecoverRequest;
  try { req = readRequest(); } catch (e) { showError((e as Error).message); return; }
  const my = ++gen;
  result = null;
  points = []; lastPhase = '';
  $('recover-curve').replaceChildren();
  $('recover-summary').replaceChildren();
  button('recover-export').hidden = true;
  controller = new AbortController();
  setBusy(true, 'starting…');
  try {
    const r = await recoverClient.request('run', req, { onProgress, signal: controller.signal });
    if (my !== gen) return;
    result = r;
    controller = null;
    renderResult(r, req);
    setBusy(false, 'done');
  } catch (e) {
    if (my !== gen) return;
    controller = null;
    const cancelled = e instanceof WorkerError && e.code === 'cancelled';
    setBusy(false, cancelled ? 'cancelled' : '');
    if (!cancelled) showError(`Recovery failed: ${(e as Error).message}`);
  }
}

function cancel(): void {
  const c = controller;
  if (!c) return;
  $('recover-status').textContent = 'cancelling…';
  recoverClient.cancel(c);
}

export function initRecoverPanel(): void {
  button('recover-run').addEventListener('click', () => void run());
  button('recover-cancel').addEventListener('click', cancel);
  select('recover-source').addEventListener('change', renderSources);
  input('recover-file').addEventListener('change', async (e) => {
    const f = (e.target as HTMLInputElement).files?.[0];
    if (!f) return;
    uploaded = { bytes: new Uint8Array(await f.arrayBuffer()), name: f.name };
    renderSources();
    select('recover-source').value = FILE_SOURCE;
    renderSources();
  });
  button('recover-export').addEventListener('click', () => { if (result) download(`${fileName.replace(/\.onnx$/i, '')}.recovered.onnx`, result.bytes); });
  onPrunedChange(() => {
    // A card just made a model: offer it first.
    const newest = [...prunedModels().keys()].pop();
    renderSources();
    if (newest && !controller) { select('recover-source').value = newest; renderSources(); }
  });
}

/** A new model was loaded (the teacher), or none (models with external data: recovery is not offered). */
export function setRecoverModel(b: Uint8Array | null, name: string, hasExternal: boolean): void {
  if (controller) { gen++; controller = null; recoverClient.restart(); }
  teacher = hasExternal ? null : b; fileName = name; result = null; uploaded = null; points = [];
  $('recover-card').hidden = !b;
  $('recover-unsupported').hidden = !hasExternal;
  button('recover-export').hidden = true;
  $('recover-summary').replaceChildren();
  $('recover-curve').replaceChildren();
  setBusy(false, '');
}
