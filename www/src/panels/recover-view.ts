// Recovery as the job's last step, as the job card shows it: the held-out fidelity after each
// closed-form step and epoch drawn live from the job's progress (the package's recover() inside
// runJob: statistics correction, least-squares refit, distillation, each kept only if the held-out
// fidelity does not drop), and what each step did once the job is done.
import type { RecoverReport } from 'sparsekit-wasm/onnx';
import { $, statTile } from '../dom.js';
import { fmtBytes } from '../format.js';
import { fidelityList, fidelitySub } from '../fidelity-view.js';
import { svgEl as el } from '../render/svg.js';
import type { JobStep } from '../workers/api.js';

/** The live curve: one point per held-out measurement (after each closed-form step, after each epoch). */
interface CurvePoint { label: string; fidelity: number }
let points: CurvePoint[] = [];
let lastPhase = '';

const PHASE_TEXT: Record<string, string> = {
  teacher: 'running the original', stats: 'statistics correction', lsq: 'least-squares refit', distill: 'distillation', eval: 'held-out fidelity',
};
const RECOVER_PHASES = new Set(Object.keys(PHASE_TEXT));

/** Clears the curve (a new job). */
export function resetRecoverView(): void {
  points = []; lastPhase = '';
  $('recover-curve').replaceChildren();
  $('recover-summary').replaceChildren();
}

/** A progress event of the job: a recovery phase's text for the status line (null: not recovery), the curve extended. */
export function recoverProgress(p: JobStep): string | null {
  if (!RECOVER_PHASES.has(p.phase)) return null;
  // A measurement: the end of an 'eval' phase (before anything, after each closed-form step, at the
  // end) or the end of an epoch. The label says what it follows.
  if (p.phase !== 'eval' && p.phase !== 'teacher') lastPhase = p.phase;
  const measured = p.fidelity !== undefined && ((p.phase === 'eval' && p.done === p.total) || (p.phase === 'distill' && p.done === p.total && p.epoch !== undefined));
  if (measured) {
    const label = p.phase === 'distill' ? `epoch ${p.epoch}` : points.length === 0 ? 'pruned' : lastPhase === 'distill' ? 'best' : lastPhase || 'eval';
    const prev = points[points.length - 1];
    if (!(prev && prev.label === label && prev.fidelity === p.fidelity)) { points.push({ label, fidelity: p.fidelity! }); renderCurve(); }
  }
  return [PHASE_TEXT[p.phase], p.epoch !== undefined ? `epoch ${p.epoch}` : '', `${p.done}/${p.total}`].filter(Boolean).join(' · ');
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

/** What recovery did: fidelity before and after, each step, every output's score. */
export function renderRecoverSummary(r: RecoverReport): void {
  const s = $('recover-summary');
  s.replaceChildren();
  const { before, after } = r;
  s.dataset.before = String(before.score);
  s.dataset.after = String(after.score);
  const totals = document.createElement('div');
  totals.className = 'totals';
  totals.append(
    statTile('recovery: held-out fidelity before → after', `${before.score.toFixed(4)} → ${after.score.toFixed(4)}`, 'recover-fidelity', fidelitySub(after)),
    statTile('worst output', after.worst, 'recover-worst'),
  );
  const note = document.createElement('p');
  note.className = 'note';
  note.dataset.testid = 'recover-steps';
  note.textContent = stepLine(r);
  s.append(totals, note, fidelityList(after));
}
