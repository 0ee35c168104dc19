// The default settings of every layer, from the weights alone (the package's defaultPlan, no model
// run), and the note that says the rule, what it chose and why.
import { defaultPlan, DEFAULT_RULE, NM24_RULE, type PlanRule } from 'sparsekit-wasm';
import { $, select, setStatus } from './dom.js';
import { fmtInt } from './format.js';
import { state, type Layer } from './state.js';
import type { OnnxModel } from 'sparsekit-wasm/onnx';

const RULES: Record<string, PlanRule> = { magnitude: DEFAULT_RULE, nm24: NM24_RULE };
const currentRule = () => RULES[select('default-rule').value] ?? DEFAULT_RULE;

/** The prunable weights of `model` as layers with their default settings (state.defaults gets the plan). */
export function defaultLayers(model: OnnxModel): Layer[] {
  const t0 = performance.now();
  const weights = model.prunable();
  const plan = defaultPlan(weights.map((w) => ({ dims: w.dims, reduceAxis: w.reduceAxis, op: w.op, data: model.readFloat(w) })), currentRule());
  const { items, ...summary } = plan;
  state.defaults = { ...summary, ms: performance.now() - t0 };
  return weights.map((w, id) => {
    const { cfg, kind, note } = items[id];
    return { w, id, cfg, defaultCfg: JSON.stringify(cfg), defaultKind: kind, defaultNote: note, row: null };
  });
}

/** Re-applies the chosen default rule to every layer (the "Default settings" select); `redraw` rewrites the rows. */
export function resetToDefaults(redraw: () => void): void {
  if (!state.loaded) return;
  // In place: the table's rows hold their layer objects.
  defaultLayers(state.loaded.model).forEach(({ cfg, defaultCfg, defaultKind, defaultNote }, i) => {
    Object.assign(state.layers[i], { cfg, defaultCfg, defaultKind, defaultNote });
  });
  redraw();
  renderDefaultsNote();
  setStatus(`Default settings applied to ${state.layers.length} layer${state.layers.length === 1 ? '' : 's'}.`);
}

const PADDLE = /ch_PP-OCRv4_det|ch_ppocr_mobile_v2\.0_cls|ch_PP-OCRv4_rec/;

/** The note on the default settings: the rule in one sentence, and what it chose. */
export function renderDefaultsNote(): void {
  const box = $('defaults-note');
  box.replaceChildren();
  const plan = state.defaults;
  if (!state.layers.length || !plan) return;
  const by = (k: Layer['defaultKind']) => state.layers.filter((l) => l.defaultKind === k);
  const params = state.layers.reduce((a, l) => a + l.w.numel, 0);
  const pruned = state.layers.reduce((a, l) => a + (l.defaultKind === 'dense' ? 0 : l.defaultKind === 'nm' ? 0.5 : l.cfg.sparsity) * l.w.numel, 0);
  const strong = document.createElement('strong');
  strong.textContent = 'Default settings: ';
  const sentence = document.createElement('span');
  sentence.dataset.testid = 'default-rule-sentence';
  sentence.textContent = plan.sentence;
  box.append(strong, sentence, ' ');
  const names = (list: Layer[]) => {
    const span = document.createElement('span');
    span.className = 'names';
    span.textContent = `${list.length} weight${list.length === 1 ? '' : 's'}`;
    span.title = list.map((l) => `${l.w.name} ${l.w.dims.join('×')}: ${l.defaultNote}`).join('\n');
    return span;
  };
  const parts: [HTMLSpanElement, string][] = [];
  if (plan.rule.kind === 'nm24') {
    parts.push([names(by('nm')), ' 2:4'], [names(by('dense')), ' dense']);
    box.append('Here: ');
  } else {
    box.append(`Here: threshold |w| < ${(plan.threshold ?? 0).toPrecision(3)} → ${(pruned / params * 100).toFixed(1)}% of ${fmtInt(params)} weights; `);
    parts.push([names(by('global')), ' pruned by the threshold'], [names(by('capped')), ` capped at ${Math.round(plan.rule.cap * 100)}%`], [names(by('dense')), ' dense']);
  }
  parts.filter(([n]) => n.textContent?.[0] !== '0').forEach(([n, t], i) => { if (i) box.append(', '); box.append(n, t); });
  box.append(` (computed from the weights in ${(plan.ms / 1000).toFixed(2)} s; hover for the list; each row says what it got and why).`);
  const why = document.createElement('span');
  why.className = 'why-rule';
  // The measured figures belong to the bundled PaddleOCR models; any other model gets the rule's
  // reason and a pointer to the effect panel, which measures this model.
  const paddle = PADDLE.test(state.loaded?.fileName ?? '');
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
