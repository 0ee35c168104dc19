// The job's result, as the job card shows it: what the job removed and the held-out fidelity it
// kept (every output listed), the search's map and curve when the goal had a floor, what recovery
// did, the weights view (masks per layer, results.ts) of the model written, and its download.
import { $, button, download, statTile } from '../dom.js';
import { evaluate } from '../effect.js';
import { fmtInt } from '../format.js';
import { fidelityList, fidelitySub } from '../fidelity-view.js';
import { renderResults } from '../results.js';
import { baseName, state } from '../state.js';
import type { JobRequest, JobResultMsg } from '../workers/api.js';
import { renderRecoverSummary } from './recover-view.js';
import { renderCurve, renderMap, resetSearchView } from './search-view.js';

let result: JobResultMsg | null = null, goal = '';

export function clearJobResult(): void {
  result = null;
  button('goal-export').hidden = true;
  button('goal-recipe').hidden = true;
  $('goal-summary').replaceChildren();
  resetSearchView();
}

const measuredOn = (r: JobResultMsg) => [
  r.measuredOn.images ? `${r.measuredOn.images} of your images` : '', r.measuredOn.generated ? `${r.measuredOn.generated} generated samples` : '',
  r.measuredOn.text ? `${r.measuredOn.text - r.measuredOn.calibration} held-out text samples` : '',
].filter(Boolean).join(' and ') || 'no held-out samples';

/** The weights view below the card shows the job's model; the layer table's rows get its sparsity. */
async function showWeights(r: JobResultMsg, bytes: Uint8Array): Promise<void> {
  const ids = new Map(state.layers.map((l) => [l.w.name, l.id]));
  const results = r.layers.filter((l) => ids.has(l.name)).map((l) => ({ ...l, id: ids.get(l.name)! }));
  if (!results.length) return;
  state.run = { results, pruned: { bytes, external: new Map(r.external.map((f) => [f.path, f.data])) }, ms: r.ms };
  renderResults();
  await evaluate();
}

export async function renderJobResult(r: JobResultMsg, req: JobRequest): Promise<void> {
  result = r; goal = req.goal;
  const s = $('goal-summary');
  s.replaceChildren();
  const search = r.search;
  if (search) {
    renderMap(search.table, (search.recipe as { layers?: Record<string, unknown> }).layers ?? {});
    const chosen = r.bytes ? search.steps.filter((p) => p.pass).reduce<(typeof search.steps)[number] | null>((a, p) => (!a || p.gain > a.gain ? p : a), null) : null;
    renderCurve(search.steps, req.floor ?? 0, r.params.before, chosen?.removed ?? null);
  }
  Object.assign(s.dataset, {
    paramsBefore: String(r.params.before), paramsAfter: String(r.params.after), zerosBefore: String(r.zeros.before), zerosAfter: String(r.zeros.after),
    images: String(r.measuredOn.images), generated: String(r.measuredOn.generated), text: String(r.measuredOn.text), mode: r.report?.mode ?? 'search',
  });
  if (!r.bytes || !r.report) {
    s.textContent = `No plan met the floor ${req.floor} (${search?.steps.length ?? 0} verified). Lower the floor or try smaller levels.`;
    s.dataset.outcome = 'none';
    return;
  }
  s.dataset.outcome = 'plan';
  const zeros = req.goal === 'nm' || req.goal === 'sparsity' || req.goal === 'recipe';
  const removed = zeros ? r.zeros.after - r.zeros.before : r.params.before - r.params.after;
  const f = r.report.fidelity;
  const totals = document.createElement('div');
  totals.className = 'totals';
  totals.append(statTile(zeros ? `weights zeroed (${req.goal === 'nm' ? req.nm : req.goal === 'recipe' ? 'per layer' : 'sparsity'})` : 'parameters removed', fmtInt(removed), 'goal-removed', `${(100 * removed / Math.max(1, r.params.before)).toFixed(1)}% of ${fmtInt(r.params.before)}`));
  if (f) {
    totals.append(
      statTile('held-out fidelity', f.score.toFixed(4), 'goal-fidelity', `${req.floor !== null ? `floor ${req.floor} · ` : ''}${fidelitySub(f)}`),
      statTile('worst output', f.worst, 'goal-worst'),
    );
  }
  const ly = r.report.layers;
  if (ly) totals.append(statTile('residual blocks removed', `${ly.removed.length} of ${ly.blocks.length}`, 'goal-blocks', `least influence on the calibration samples: ${ly.removed.map((i) => `block ${i} (${ly.blocks[i].influence.toFixed(3)})`).join(', ')}`));
  if (r.report.quantize) totals.append(statTile('quantized', r.report.quantize.scheme, 'goal-quantized', `${r.report.quantize.layers.length} weights`));
  const u = r.report.unreachableTokens;
  if (u?.tables.length) totals.append(statTile('token rows zeroed', fmtInt(u.tables.reduce((a, t) => a + t.rows, 0)), 'goal-token-rows', `${fmtInt(u.tokens)} of the tokenizer's ${fmtInt(u.vocabSize)} ids no text produces`));
  totals.append(statTile('job', `${(r.ms / 1000).toFixed(1)} s`, null, [
    search ? `${search.table.units.length} units × ${search.table.levels.length} levels, ${search.steps.length} plans verified, ${search.runs} runs` : r.report.mode,
    `method ${r.report.method}`, r.measuredOn.calibration ? `${r.measuredOn.calibration} calibration samples` : '', `measured on ${measuredOn(r)}`,
  ].filter(Boolean).join(' · ')));
  s.append(totals);
  if (f) s.append(fidelityList(f));
  if (r.report.recover) renderRecoverSummary(r.report.recover);
  button('goal-export').hidden = false;
  button('goal-recipe').hidden = !search;
  await showWeights(r, r.bytes);
}

export function initJobDownloads(): void {
  const base = () => `${baseName()}.job-${goal}`;
  button('goal-export').addEventListener('click', () => { if (result?.bytes) download(`${base()}.onnx`, result.bytes); });
  button('goal-recipe').addEventListener('click', () => { if (result?.search) download(`${base()}.recipe.json`, JSON.stringify(result.search.recipe, null, 2), 'application/json'); });
}
