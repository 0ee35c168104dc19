// The search's figures as the job card shows them when the goal has a fidelity floor: the
// sensitivity map (units × levels, each cell shaded by the model's fidelity with that unit alone
// pruned at that level, the chosen setting last) and the curve of what each verified plan removes
// against its measured fidelity, the floor dashed.
import type { PlanStep, SensitivityResult } from 'sparsekit-wasm/onnx';
import { $ } from '../dom.js';
import { fmtInt } from '../format.js';
import { svgEl } from '../render/svg.js';

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
export function renderMap(t: SensitivityResult, chosen: Record<string, unknown>): void {
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

/** Hides the map and the curve (a new job, or one without a floor). */
export function resetSearchView(): void {
  $('goal-map-wrap').hidden = true;
  $('goal-curve').replaceChildren();
}

const el = svgEl;

/** Each distinct verified plan: parameters removed (x) against its measured fidelity (y), the floor dashed. */
export function renderCurve(steps: PlanStep[], floor: number, total: number, chosenRemoved: number | null): void {
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

