// Compression to a fidelity floor: per-unit settings allocated from the sensitivity table (allocate.ts)
// under a budget of summed lone-unit fidelity loss, each candidate plan written as a recipe, applied to
// a copy of the model exactly as `prune --recipe` applies it, and verified on the held-out samples
// with the real fidelity. The budget is searched (doubled / halved from 1 - floor, then bisected)
// and the best verified plan kept: summed lone losses only approximate the joint loss, so the
// verification, not the table, decides.
import { OnnxModel } from '../model.js';
import { OnnxError } from '../errors.js';
import { toRunner, type ModelRunner, type OrtLike } from '../calib/ort-runner.js';
import type { InputSample } from '../calib/inputs.js';
import type { Outputs } from '../calib/evaluate.js';
import { CancelledError } from '../calib/cancel.js';
import { applyRecipe, type ApplyRecipeOptions, type RecipeReport } from '../recipe/apply.js';
import { recipeJson, type Setting } from '../recipe/recipe.js';
import type { HeadUnit } from '../channels.js';
import { countZeros } from '../prune.js';
import { fidelity, lowerBound, type BoundedFidelity, type FidelityReport, type FidelityOptions } from './fidelity-link.js';
import { newCounter, runBytes } from './model-runs.js';
import { allocate, type Objective } from './allocate.js';
import { byteSizer } from '../served-bytes.js';
import { sensitivity, type Method, type SearchMode, type SensitivityResult } from './sensitivity.js';
import type { LayerBits, QuantizeOptions } from '../quant/quantize.js';
import { quantizePass, type GptqPassOptions, type QuantizePassResult } from '../calib/quantize-pass.js';

export interface CompressOptions {
  ort: OrtLike | ModelRunner;
  sessionOptions?: object;
  eval: InputSample[];
  calibration?: InputSample[];
  mode: SearchMode;
  /** The floor: the verified fidelity of the written plan is at least this, in (0, 1]. */
  minFidelity: number;
  objective?: Objective;
  method?: Method;
  levels?: number[];
  nm?: [number, number];
  roundTo?: number;
  /** Channels: grouped-query attention's unit (HeadUnit; default 'groups'), written into the recipe. */
  heads?: HeadUnit;
  percDamp?: number;
  /** Channels with wanda / sparsegpt: the calibrated removal's score and refit when the plan is written (ApplyRecipeOptions). */
  channels?: ApplyRecipeOptions['channels'];
  /** A table computed before (the same model, mode, levels and eval samples): skips the sensitivity step. */
  table?: SensitivityResult;
  /** Sensitivity: levels of a unit below this fidelity are not run (default 2F - 1 - 0.05; see SensitivityOptions.stopBelow). */
  stopBelow?: number;
  /**
   * The sensitivity table is measured on the first this many eval samples (default: all of them);
   * every candidate plan is still verified on all of them. The table only ranks units and levels,
   * so a smaller proxy set makes it that much cheaper (one cell = one pass over its samples) while
   * the floor is still checked on the full set.
   */
  tableSamples?: number;
  /**
   * Hold the floor to the lower bound of each output's fidelity at this confidence, in (0, 1)
   * (e.g. 0.95; default: off, the measured score). A plan chosen because it just meets the floor on
   * the eval samples meets it on other samples only about half the time; the bound
   * (fidelity/confidence.ts) makes the floor hold on unseen samples with this confidence, for
   * outputs whose score is a share of counted decisions.
   */
  confidence?: number;
  /**
   * The mixed search (objective bytes, modes sparsity / nm): each unit also chooses its bits
   * (quant-cells.ts), and every candidate plan is quantized as the job writes it — these options
   * with each layer's chosen bits, GPTQ through `gptq` when given, else round to nearest — before its
   * fidelity is verified, so the plan kept is the model written.
   */
  quantize?: { options: QuantizeOptions; gptq?: GptqPassOptions };
  /** Verifications of candidate plans, at most (default 8). */
  maxSteps?: number;
  fidelityOptions?: FidelityOptions;
  signal?: AbortSignal;
  onProgress?: (p: { phase: 'sensitivity' | 'verify'; done: number; total: number; label: string }) => void;
}

export interface PlanStep {
  budget: number; predicted: number; gain: number; fidelity: number; worst: string; pass: boolean; removed: number;
  /** With `confidence`: the lower bound the floor was held to, and its output. */
  bound?: number; boundWorst?: string;
}

export interface CompressResult {
  /** The pruned copy (the input model is left as it was); null when no plan met the floor. */
  model: OnnxModel | null;
  /** The chosen plan as recipe JSON (prune --recipe applies it again to the same model). */
  recipe: Record<string, unknown>;
  report: RecipeReport | null;
  fidelity: FidelityReport;
  /** With `confidence`: the chosen plan's lower bound (what met the floor). */
  bound: BoundedFidelity | null;
  table: SensitivityResult;
  /** The mixed search: the chosen plan's quantization (the model is already quantized). */
  quantized?: QuantizePassResult;
  steps: PlanStep[];
  sessions: number;
  runs: number;
  ms: { total: number; model: number; library: number; apply: number; sensitivity: number };
}

/**
 * A plan as recipe settings per unit name. Mixed (`bits`): every chosen cell says its bits, float
 * included, since a setting without them would take the job's scheme when applied again.
 */
function planOf(table: SensitivityResult, choice: number[], mode: SearchMode, nm?: [number, number], bits = false): Map<string, Setting> {
  const m = new Map<string, Setting>();
  table.units.forEach((u, i) => {
    const k = choice[i];
    if (k < 0) return;
    const { level, quantize } = u.cells[k];
    const q = bits ? { quantize: quantize ?? 'float' as const } : {};
    m.set(u.name, mode === 'channels' ? { kind: 'channels', channels: level as number } : level === 'dense' ? { kind: 'dense', ...q }
      : mode === 'nm' ? { kind: 'nm', nm: nm!, ...q } : { kind: 'sparsity', sparsity: level as number, ...q });
  });
  return m;
}

export async function compress(model: OnnxModel, opts: CompressOptions): Promise<CompressResult> {
  const t0 = performance.now();
  const F = opts.minFidelity;
  if (typeof F !== 'number' || !(F > 0) || F > 1) throw new OnnxError('unsupported', `minFidelity must be in (0, 1] (got ${String(F)})`, 'invalid_arguments');
  const objective = opts.objective ?? 'params';
  if (!['params', 'flops', 'latency', 'bytes'].includes(objective)) throw new OnnxError('unsupported', `objective must be params, flops, latency or bytes (got ${String(objective)})`, 'invalid_arguments');
  if (objective === 'latency' && opts.mode !== 'channels') {
    throw new OnnxError('unsupported', 'objective latency needs channel removal: zeros from sparsity or N:M do not make onnxruntime faster on this machine', 'invalid_arguments');
  }
  const conf = opts.confidence;
  if (conf !== undefined && (typeof conf !== 'number' || !(conf > 0 && conf < 1))) throw new OnnxError('unsupported', `confidence must be in (0, 1) (got ${String(conf)})`, 'invalid_arguments');
  const method = opts.method ?? 'magnitude';
  const mixed = opts.quantize;
  if (mixed && (objective !== 'bytes' || opts.mode === 'channels')) {
    throw new OnnxError('unsupported', 'the mixed search (quantize) chooses bits by the bytes they save: it needs objective bytes and mode sparsity or nm', 'invalid_arguments');
  }
  const runner = toRunner(opts.ort, opts.sessionOptions);
  const count = newCounter();
  const check = () => { if (opts.signal?.aborted) throw new CancelledError(); };
  const nt = opts.tableSamples ?? opts.eval.length;
  if (!Number.isInteger(nt) || nt < 1) throw new OnnxError('unsupported', `tableSamples must be a positive integer (got ${String(opts.tableSamples)})`, 'invalid_arguments');
  const ts = performance.now();
  const table = opts.table ?? await sensitivity(model, {
    ort: runner, eval: opts.eval.slice(0, nt), calibration: opts.calibration, mode: opts.mode, levels: opts.levels, nm: opts.nm,
    method, roundTo: opts.roundTo, heads: opts.heads, percDamp: opts.percDamp, fidelityOptions: opts.fidelityOptions, signal: opts.signal,
    measureLatency: objective === 'latency', quantize: mixed?.options, measureBytes: objective === 'bytes' ? await byteSizer() : undefined, stopBelow: opts.stopBelow ?? Math.max(0, 2 * F - 1 - 0.05),
    onProgress: (p) => opts.onProgress?.({ phase: 'sensitivity', done: p.done, total: p.total, label: `${p.unit} ${p.level}` }),
  });
  if (objective === 'bytes' && table.units.some((u) => u.cells.some((c) => c.removed > 0 && c.bytes === undefined))) {
    throw new OnnxError('unsupported', 'objective bytes needs a sensitivity table measured with measureBytes (the given table has no bytes per cell)', 'invalid_arguments');
  }
  const sensMs = opts.table ? 0 : performance.now() - ts;
  if (!opts.table) { count.sessions += table.sessions; count.runs += table.runs; count.ms += table.ms.model; }
  const bytes = model.encode();
  const reference: Outputs[] = await runBytes(runner, bytes, opts.eval, count, opts.signal);
  // the held-out samples' token ids and masks: perplexity's targets, padding left out (fidelity/language-model.ts)
  const fidOpts = { ...opts.fidelityOptions, inputs: opts.eval };
  const meta = (extra: object) => ({ objective, minFidelity: F, ...(conf !== undefined ? { confidence: conf } : {}), mode: opts.mode, method, samples: opts.eval.length, ...extra });
  // mixed: the units the plan leaves alone stay float (the default), whatever the job's scheme
  const recipeFor = (plan: Map<string, Setting>, extra: object) => recipeJson({ layers: plan, method, ...(mixed ? { default: { kind: 'dense', quantize: 'float' } as Setting } : {}), ...(opts.mode === 'channels' ? { roundTo: opts.roundTo ?? 8, heads: opts.heads } : {}), meta: meta(extra) });

  const zeros0 = model.prunable().reduce((a, w) => a + countZeros(model.readFloat(w)), 0);
  let applyMs = 0;
  type Best = { model: OnnxModel; recipe: Record<string, unknown>; report: RecipeReport; fid: FidelityReport; bound: BoundedFidelity | null; gain: number; quantized?: QuantizePassResult };
  const kept: { best: Best | null } = { best: null };
  const steps: PlanStep[] = [];
  const seen = new Map<string, PlanStep>();
  const maxSteps = opts.maxSteps ?? 8;
  const verify = async (budget: number): Promise<boolean> => {
    check();
    const a = allocate(table, budget, objective);
    const plan = planOf(table, a.choice, opts.mode, opts.nm, !!mixed);
    const key = a.choice.join(',');
    const prior = seen.get(key);
    if (prior) { steps.push({ ...prior, budget }); return prior.pass; }
    opts.onProgress?.({ phase: 'verify', done: steps.length, total: maxSteps, label: `budget ${budget.toPrecision(3)}` });
    const recipe = recipeFor(plan, { budget });
    const m = OnnxModel.parse(bytes);
    const tr = performance.now();
    const report = await applyRecipe(m, recipe, { method, ort: runner, calibration: opts.calibration, percDamp: opts.percDamp, channels: opts.channels, signal: opts.signal });
    let quantized: QuantizePassResult | undefined;
    if (mixed) {
      const bits = (w: { name: string }): LayerBits => { const s = plan.get(w.name); return (s && s.kind !== 'channels' ? s.quantize : undefined) ?? 'float'; };
      quantized = await quantizePass(m, { ...mixed.options, layerBits: bits }, mixed.gptq);
    }
    applyMs += performance.now() - tr;
    if (report.passes) { count.sessions += report.passes; count.runs += report.passes * (opts.calibration?.length ?? 0); }
    const out = await runBytes(runner, m.encode(), opts.eval, count, opts.signal);
    const fid = fidelity(reference, out, fidOpts);
    const removed = opts.mode === 'channels' ? report.params.before - report.params.after : report.zeros - zeros0;
    const bound = conf !== undefined ? lowerBound(fid, conf) : null;
    const held = bound ? bound.score : fid.score;
    const step: PlanStep = { budget, predicted: a.cost, gain: a.gain, fidelity: fid.score, worst: fid.worst, pass: held >= F, removed, ...(bound ? { bound: bound.score, boundWorst: bound.worst } : {}) };
    seen.set(key, step);
    steps.push(step);
    if (step.pass && (!kept.best || a.gain > kept.best.gain)) kept.best = { model: m, recipe, report, fid, bound, gain: a.gain, quantized };
    return step.pass;
  };
  // Budget search: start at the floor's own slack; grow while plans pass, shrink while they fail, then bisect.
  let lo = 0, hi = Infinity, b = Math.max(1e-4, 1 - F);
  while (steps.length < maxSteps) {
    const pass = await verify(b);
    if (pass) lo = b; else hi = b;
    if (hi === Infinity) b *= 2;
    else if (lo === 0) b /= 4;
    else b = (lo + hi) / 2;
    if (hi !== Infinity && lo > 0 && hi / lo < 1.05) break;
    if (lo === 0 && b < 1e-6) break;
  }
  const total = performance.now() - t0;
  // Calibrated plans (wanda / sparsegpt) run the model inside applyRecipe: that time is in `apply`, not `model`.
  const ms = { total, model: count.ms, library: total - count.ms - applyMs, apply: applyMs, sensitivity: sensMs };
  const chosen = kept.best;
  if (!chosen) {
    const fid = fidelity(reference, reference, fidOpts);
    return { model: null, recipe: recipeFor(new Map(), { note: 'no plan met the floor' }), report: null, fidelity: fid, bound: null, table, steps, sessions: count.sessions, runs: count.runs, ms };
  }
  (chosen.recipe.meta as Record<string, unknown>).fidelity = chosen.fid.score;
  if (chosen.bound) (chosen.recipe.meta as Record<string, unknown>).fidelityBound = chosen.bound.score;
  return {
    model: chosen.model, recipe: chosen.recipe, report: chosen.report, fidelity: chosen.fid, bound: chosen.bound, table,
    ...(chosen.quantized ? { quantized: chosen.quantized } : {}), steps, sessions: count.sessions, runs: count.runs, ms,
  };
}
