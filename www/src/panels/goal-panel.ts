// The goal-first card: choose smaller / faster / 2:4 and a fidelity floor, run the package's search
// (workers/search-worker.ts: sensitivity, then plans verified on the whole model) with progress and
// cancel, then read the sensitivity map (units × levels, shaded by fidelity), the curve of what each
// verified plan removes against its fidelity, the chosen plan's figures, and download the model and
// its recipe (`sparsekit-wasm prune --recipe` applies it again).
import type { PlanStep, SensitivityResult } from 'sparsekit-wasm/onnx';
import { $, button, download, input, select, showError, statTile } from '../dom.js';
import { fmtInt } from '../format.js';
import { fidelityList, fidelitySub } from '../fidelity-view.js';
import { WorkerError } from '../protocol.js';
import type { SearchRequest, SearchResult, SearchStep } from '../workers/api.js';
import { searchClient } from '../workers.js';
import { offerPruned } from '../pruned-models.js';
import { svgEl } from '../render/svg.js';

let bytes: Uint8Array | null = null, fileName = '', result: SearchResult | null = null;
let controller: AbortController | null = null, gen = 0;

function readRequest(b: Uint8Array): SearchRequest {
  const goal = select('goal-kind').value as SearchRequest['goal'];
  const minFidelity = Number(input('goal-floor').value);
  if (!(minFidelity > 0 && minFidelity <= 1)) throw new Error('The fidelity floor must be in (0, 1].');
  const samples = Math.floor(Number(input('goal-samples').value));
  const images = [...(input('goal-images').files ?? [])];
  if (!(samples >= 0 && samples + images.length >= 1)) throw new Error('The search needs at least one sample: generated, or your images.');
  const maxSteps = Math.floor(Number(input('goal-steps').value));
  if (!(maxSteps >= 1)) throw new Error('At least one plan must be verified.');
  const levels = input('goal-levels').value.split(/[\s,]+/).filter(Boolean).map(Number);
  if (goal !== 'nm' && (!levels.length || levels.some((l) => !(l > 0 && l < 1)))) throw new Error('Channel levels are fractions in (0, 1), e.g. 0.25, 0.5.');
  return { bytes: b.slice(), goal, minFidelity, samples, images, levels, maxSteps };
}

function setBusy(on: boolean, label = ''): void {
  button('goal-run').disabled = on || !bytes;
  button('goal-cancel').disabled = !on;
  $('goal-progress').hidden = !on;
  $('goal-status').textContent = label;
}

function onProgress(p: SearchStep): void {
  $<HTMLProgressElement>('goal-progress').value = p.total ? Math.min(1, p.done / p.total) : 0;
  const what = p.phase === 'sensitivity' ? 'sensitivity' : 'verifying plans';
  $('goal-status').textContent = `${what} · ${p.done}/${p.total}${p.label ? ` · ${p.label}` : ''}`;
}

/** Red (0.5 and below) through yellow to green (1): how much of the original's behaviour a cell keeps. */
function shade(f: number): string {
  const t = Math.max(0, Math.min(1, (f - 0.5) / 0.5));
  return `hsl(${Math.round(120 * t)} 70% ${Math.round(78 + 10 * t)}%)`;
}

const levelLabel = (l: number | string, mode: string) => (typeof l === 'number' ? `${mode === 'channels' ? '−' : ''}${Math.round(l * 1000) / 10}%` : l);

/** A recipe setting as the map's last column reads it (recipe.ts settingJson). */
function settingLabel(s: unknown): string {
  if (s === undefined || s === 'dense') return 'dense';
  const o = s as { channels?: number; nm?: string; sparsity?: number };
  if (o.channels !== undefined) return `−${Math.round(o.channels * 1000) / 10}% channels`;
  if (o.nm !== undefined) return o.nm;
  if (o.sparsity !== undefined) return `${Math.round(o.sparsity * 1000) / 10}% sparse`;
  return JSON.stringify(s);
}

/** Units × levels, each cell the model's fidelity with that unit alone pruned at that level. */
function renderMap(t: SensitivityResult, chosen: Record<string, unknown>): void {
  const thead = $('goal-map').querySelector('thead')!, tbody = $('goal-map').querySelector('tbody')!;
  const hr = document.createElement('tr');
  for (const h of [t.mode === 'channels' ? 'Channel group (first producer)' : 'Layer', 'Op', 'Params', ...t.levels.map((l) => levelLabel(l, t.mode)), 'Chosen']) {
    const th = document.createElement('th'); th.textContent = h; hr.append(th);
  }
  thead.replaceChildren(hr);
  tbody.replaceChildren();
  t.units.forEach((u, i) => {
    const tr = document.createElement('tr');
    const td = (x: string) => { const c = document.createElement('td'); c.textContent = x; tr.append(c); return c; };
    td(u.name); td(u.op); td(fmtInt(u.params));
    u.cells.forEach((c, j) => {
      const cell = td(`${c.skipped ? '≤' : ''}${c.fidelity.toFixed(3)}`);
      cell.className = `cell${c.skipped ? ' skipped' : ''}`;
      cell.style.background = shade(c.fidelity);
      cell.dataset.testid = `goal-cell-${i}-${j}`;
      cell.dataset.fidelity = String(c.fidelity);
      cell.title = `${u.name} at ${levelLabel(c.level, t.mode)}: fidelity ${c.fidelity.toFixed(4)}${c.worst ? ` (worst output ${c.worst})` : ''}, ${fmtInt(c.removed)} parameters removed`
        + `${c.latencyMs !== undefined ? `, ${c.latencyMs.toFixed(2)} ms saved` : ''}${c.skipped ? ' · not run: the previous level already fell below the search\'s cut-off' : ''}`;
    });
    td(settingLabel(chosen[u.name])).dataset.testid = `goal-chosen-${i}`;
    tbody.append(tr);
  });
  $('goal-map-wrap').hidden = false;
}

const el = svgEl;

/** Each distinct verified plan: parameters removed (x) against its measured fidelity (y), the floor dashed. */
function renderCurve(steps: PlanStep[], floor: number, total: number, chosenRemoved: number | null): void {
  const seen = new Set<string>();
  const pts = steps.filter((s) => { const k = `${s.removed}|${s.fidelity}`; if (seen.has(k)) return false; seen.add(k); return true; })
    .sort((a, b) => a.removed - b.removed);
  const box = $('goal-curve');
  box.replaceChildren();
  if (!pts.length) return;
  const W = 420, H = 190, L = 48, R = 12, T = 12, B = 34;
  const xMax = Math.max(1, ...pts.map((p) => p.removed)) * 1.05;
  const yMin = Math.max(0, Math.min(floor, ...pts.map((p) => p.fidelity)) - 0.02);
  const x = (v: number) => L + (v / xMax) * (W - L - R);
  const y = (v: number) => T + (1 - (v - yMin) / Math.max(1e-6, 1 - yMin)) * (H - T - B);
  const svg = el('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': 'Parameters removed against fidelity, per verified plan' });
  svg.append(el('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#888' }), el('line', { x1: L, y1: T, x2: L, y2: H - B, stroke: '#888' }));
  svg.append(el('line', { x1: L, y1: y(floor), x2: W - R, y2: y(floor), stroke: '#c33', 'stroke-dasharray': '4 3' }),
    el('text', { x: W - R, y: y(floor) - 3, 'text-anchor': 'end', 'font-size': 10, fill: '#c33' }, `floor ${floor}`));
  for (const v of [yMin, 1]) svg.append(el('text', { x: L - 4, y: y(v) + 3, 'text-anchor': 'end', 'font-size': 10 }, v.toFixed(3)));
  svg.append(el('text', { x: W - R, y: H - 6, 'text-anchor': 'end', 'font-size': 10 }, `${fmtInt(Math.round(xMax / 1.05))} removed (of ${fmtInt(total)})`),
    el('text', { x: L, y: H - 6, 'font-size': 10 }, '0'));
  svg.append(el('polyline', { points: pts.map((p) => `${x(p.removed)},${y(p.fidelity)}`).join(' '), fill: 'none', stroke: '#579' }));
  pts.forEach((p, i) => {
    const c = el('circle', { cx: x(p.removed), cy: y(p.fidelity), r: p.removed === chosenRemoved && p.pass ? 6 : 4, fill: p.pass ? '#2a8' : '#d44', stroke: p.removed === chosenRemoved && p.pass ? '#000' : 'none' });
    c.dataset.testid = `goal-point-${i}`;
    c.dataset.removed = String(p.removed);
    c.dataset.fidelity = String(p.fidelity);
    c.append(el('title', {}, `${fmtInt(p.removed)} removed · fidelity ${p.fidelity.toFixed(4)} (worst ${p.worst}) · ${p.pass ? 'meets' : 'below'} the floor`));
    svg.append(c);
  });
  const cap = document.createElement('p');
  cap.className = 'legend';
  cap.textContent = `Verified plans (${pts.length}): green meets the floor, red does not; the ringed one is written.`;
  box.append(svg, cap);
}

const measuredOn = (r: SearchResult) => [r.measuredOn.images ? `${r.measuredOn.images} of your images` : '', r.measuredOn.generated ? `${r.measuredOn.generated} generated samples` : ''].filter(Boolean).join(' and ');

function renderResult(r: SearchResult, req: SearchRequest): void {
  const s = $('goal-summary');
  s.replaceChildren();
  const chosen = r.bytes ? r.steps.filter((p) => p.pass).reduce<PlanStep | null>((a, p) => (!a || p.gain > a.gain ? p : a), null) : null;
  const recipe = JSON.parse(r.recipe) as { layers?: Record<string, unknown> };
  renderMap(r.table, recipe.layers ?? {});
  renderCurve(r.steps, req.minFidelity, r.params.before, chosen?.removed ?? null);
  s.dataset.paramsBefore = String(r.params.before);
  s.dataset.paramsAfter = String(r.params.after);
  s.dataset.images = String(r.measuredOn.images);
  s.dataset.generated = String(r.measuredOn.generated);
  if (!r.bytes) {
    s.textContent = `No plan met the floor ${req.minFidelity} (${r.steps.length} verified). Lower the floor or try smaller levels.`;
    s.dataset.outcome = 'none';
    return;
  }
  s.dataset.outcome = 'plan';
  const removed = req.goal === 'nm' ? r.zeros.after - r.zeros.before : r.params.before - r.params.after;
  const totals = document.createElement('div');
  totals.className = 'totals';
  totals.append(
    statTile(req.goal === 'nm' ? 'weights zeroed (2:4)' : 'parameters removed', fmtInt(removed), 'goal-removed', `${(100 * removed / Math.max(1, r.params.before)).toFixed(1)}% of ${fmtInt(r.params.before)}`),
    statTile('verified fidelity', r.fidelity.score.toFixed(4), 'goal-fidelity', `floor ${req.minFidelity} · ${fidelitySub(r.fidelity)}`),
    statTile('worst output', r.fidelity.worst, 'goal-worst'),
    statTile('search', `${(r.ms / 1000).toFixed(1)} s`, null, `${r.table.units.length} units × ${r.table.levels.length} levels, ${r.steps.length} plans verified, ${r.runs} runs on ${measuredOn(r)}`),
  );
  s.append(totals, fidelityList(r.fidelity));
  button('goal-export').hidden = false;
  button('goal-recipe').hidden = false;
}

async function run(): Promise<void> {
  if (!bytes || controller) return;
  let req: SearchRequest;
  try { req = readRequest(bytes); } catch (e) { showError((e as Error).message); return; }
  const my = ++gen;
  result = null;
  button('goal-export').hidden = true;
  button('goal-recipe').hidden = true;
  $('goal-summary').replaceChildren();
  controller = new AbortController();
  setBusy(true, 'starting…');
  try {
    const r = await searchClient.request('run', req, { onProgress, signal: controller.signal });
    if (my !== gen) return;
    result = r;
    if (r.bytes) offerPruned('goal', r.bytes);
    renderResult(r, req);
    setBusy(false, r.bytes ? 'done' : 'no plan met the floor');
  } catch (e) {
    if (my !== gen) return;
    const cancelled = e instanceof WorkerError && e.code === 'cancelled';
    setBusy(false, cancelled ? 'cancelled' : '');
    if (!cancelled) showError(`The search failed: ${(e as Error).message}`);
  } finally { if (my === gen) controller = null; }
}

function cancel(): void {
  const c = controller;
  if (!c) return;
  $('goal-status').textContent = 'cancelling…';
  searchClient.cancel(c);
}

export function initGoalPanel(): void {
  button('goal-run').addEventListener('click', () => void run());
  button('goal-cancel').addEventListener('click', cancel);
  select('goal-kind').addEventListener('change', () => { input('goal-levels').disabled = select('goal-kind').value === 'nm'; });
  const base = () => fileName.replace(/\.onnx$/i, '') + `.goal-${select('goal-kind').value}`;
  button('goal-export').addEventListener('click', () => { if (result?.bytes) download(`${base()}.onnx`, result.bytes); });
  button('goal-recipe').addEventListener('click', () => { if (result) download(`${base()}.recipe.json`, result.recipe, 'application/json'); });
}

/** A new model was loaded, or none (models with external data: the search is not offered). */
export function setGoalModel(b: Uint8Array | null, name: string, hasExternal: boolean): void {
  if (controller) { gen++; controller = null; searchClient.restart(); }
  bytes = hasExternal ? null : b; fileName = name; result = null;
  $('goal-card').hidden = !b;
  $('goal-unsupported').hidden = !hasExternal;
  button('goal-export').hidden = true;
  button('goal-recipe').hidden = true;
  $('goal-summary').replaceChildren();
  $('goal-curve').replaceChildren();
  $('goal-map-wrap').hidden = true;
  setBusy(false, '');
}
