// Gradient distillation, end to end: the student (the pruned model, its zeros held at zero by the
// masked Adam of the training core; removed channels are absent from its shapes) is trained towards
// the teacher's outputs on unlabeled samples. After every epoch the held-out fidelity is measured
// with onnxruntime and the best-scoring parameters are kept; a checkpoint may be saved.
import { TRAINING_DEFAULTS } from './defaults.js';
import * as sk from 'sparsekit-wasm';
import type { OnnxModel } from '../model.js';
import type { InputSample } from '../calib/inputs.js';
import type { RecoverOptions, RecoverProgress, RecoverReport, RecoverState } from './types.js';
import { lossesOf, type TrainSetup } from './train-setup.js';
import { epochBatches, makeBatch, staticBatchHint } from './batches.js';
import { withFeatures } from './features.js';
import { maskPadding } from './token-mask.js';
import type { FeatureTeacher } from './feature-teacher.js';
import { HeldArrays } from './held-arrays.js';
import { turn } from '../calib/cancel.js';
import type { CutStore } from '../calib/cut-store.js';
import { dropValues } from '../train/graph.js';
import { guardSync } from '../run-failure.js';
import { lrAt, lrSchedule, runShare } from './lr-schedule.js';
import { batchLength, paddingTrim, trimBatch, trimmedLosses, trimSamples } from './trim-padding.js';

export interface DistillContext {
  setup: TrainSetup;
  samples: InputSample[];
  /** Per trained tensor (setup.trained order), the teacher's values per sample, and their dims on one sample. */
  targets: HeldArrays;
  dims: number[][];
  /** Held-out score of the parameters in `work` (writes them first). */
  score: () => Promise<number>;
  check: () => void;
  progress: (p: Omit<RecoverProgress, 'phase'>) => void;
  /** The score before any gradient step. */
  start: number;
  /** Where the best epoch's parameters wait (the targets' store); none: memory. */
  store?: CutStore;
  /** Matched intermediate tensors and the teacher's values of them per batch (none: outputs only). */
  features?: FeatureTeacher;
  /** The teacher gave the padded values on a sample cut to its real tokens (trim-padding.ts' trimProbe): batches may be trimmed. */
  trimmable?: boolean;
}

const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());

/** Writes parameter values into the model's constants. */
export function writeParams(work: OnnxModel, params: Record<string, Float32Array>): void {
  const consts = work.constants();
  for (const [name, v] of Object.entries(params)) work.writeFloat(consts.get(name)!.tensor, v);
}

function snapshot(t: sk.Trainer): Record<string, Float32Array> {
  const out: Record<string, Float32Array> = {};
  for (const n of t.paramNames) out[n] = t.param(n);
  return out;
}

export async function distill(work: OnnxModel, ctx: DistillContext, opts: RecoverOptions): Promise<NonNullable<RecoverReport['distill']>> {
  const t0 = now();
  const epochs = opts.epochs ?? (opts.minutes ? Infinity : TRAINING_DEFAULTS.epochs);
  const budget = opts.minutes ? opts.minutes * 60000 : Infinity;
  const size = opts.batchSize ?? TRAINING_DEFAULTS.batchSize;
  const seed = opts.seed ?? 1;
  const resume: RecoverState | undefined = opts.resume;
  if (resume) writeParams(work, resume.params);
  const features = ctx.features?.features ?? [];
  const withF = withFeatures(ctx.setup.graph, lossesOf(ctx.setup), features);
  const { losses } = withF;
  // per-token losses of padded text count the real tokens only (token-mask.ts)
  const padding = maskPadding(ctx.samples, withF.graph, losses, [...ctx.dims, ...features.map((f) => f.dims)], ctx.targets);
  const { graph } = padding;
  // batches of padded text cut to their longest real token (trim-padding.ts), grouped by length unless asked not to
  const trim = opts.trimPadding === false ? undefined : paddingTrim(ctx.samples, graph.inputs, padding.mask, ctx.dims.length, !!ctx.trimmable);
  const lengths = trim && (opts.groupByLength ?? TRAINING_DEFAULTS.groupByLength) ? trim.lengths : undefined;
  const schedule = lrSchedule(opts);
  const trainer = guardSync('training core', undefined, () => new sk.Trainer(graph, { lr: schedule.lr, masked: true }));
  dropValues(graph); // the trainer holds them now
  let cleanup = () => {};
  try {
    trainer.setLosses(losses);
    // Weights held on their quantization grids (quant/held-codes.ts), before a checkpoint's state,
    // whose values for them are the float masters. The trainer was built from the codes' values:
    // its keep-masks hold every zero the file will have, pruned or rounded to code 0.
    const trained = new Set(trainer.paramNames);
    for (const [name, g] of opts.grids ?? []) if (trained.has(name)) trainer.holdGrid(name, g.scale, g.lo, g.hi);
    // Adam's moments too (and the keep-masks of the first run), when the checkpoint has them.
    if (resume?.trainer) trainer.loadState(resume.trainer);
    const names = trainer.paramNames;
    const params = names.reduce((a, n) => a + trainer.param(n).length, 0);
    // The best epoch's parameters, one tensor at a time, in the caller's store when there is one
    // (held-arrays.ts): the set is the student's size, read once at the end.
    const best = new HeldArrays(1, ctx.store);
    const keep = (value: (n: string) => Float32Array) => names.forEach((n, i) => best.set(0, i, value(n)));
    cleanup = () => best.release();
    keep((n) => (resume ? resume.best[n] : trainer.param(n)));
    let bestScore = resume ? resume.bestScore : ctx.start;
    let bestEpoch = 0;
    const history = resume ? [...resume.history] : [];
    if (resume) for (const h of history) if (h.fidelity === bestScore) bestEpoch = h.epoch;
    let epoch = resume ? resume.epoch : 0;
    let steps = resume ? resume.steps : 0;
    const perEpoch = epochBatches(ctx.samples, graph.inputs, size, seed, 0, lengths).length;
    // Where a step's time goes (ms): the teacher's feature runs, the training core's step, the rest of
    // the batch's making; the held-out scoring; and the tokens per sample the steps ran at.
    const timing = { teacherMs: 0, stepMs: 0, batchMs: 0, scoreMs: 0 };
    let tokenSum = 0, tokenSamples = 0, lastL = trim?.tokens ?? 0;
    let stepsHere = 0;
    let stopped: 'epochs' | 'time' = 'epochs';
    // The schedule follows the share of the run done: steps of those the epochs plan, time of the budget.
    const planned = epochs * perEpoch;
    let lr = schedule.lr;
    while (epoch < epochs) {
      if (now() - t0 >= budget) { stopped = 'time'; break; }
      const batches = epochBatches(ctx.samples, graph.inputs, size, seed, epoch, lengths);
      let sum = 0, n = 0;
      for (let b = 0; b < batches.length; b++) {
        ctx.check();
        if (now() - t0 >= budget) { stopped = 'time'; break; }
        const next = lrAt(schedule, runShare(steps, planned, now() - t0, budget));
        if (next !== lr) { trainer.setLr(next); lr = next; }
        const tb = now();
        let batch = makeBatch(ctx.samples, graph.inputs, batches[b], ctx.targets);
        let from = ctx.samples, idx = batches[b];
        if (trim) {
          const L = batchLength(trim, idx);
          batch = trimBatch(batch, L, trim);
          if (L < trim.tokens) { from = trimSamples(ctx.samples, idx, L, trim.tokens); idx = idx.map((_, j) => j); }
          if (L !== lastL) { trainer.setLosses(trimmedLosses(losses, L, trim)); lastL = L; }
          tokenSum += L * batch.size; tokenSamples += batch.size;
        }
        const tt = now();
        if (ctx.features) batch.targets.push(...padding.features(await ctx.features.batch(from, idx), idx, from));
        const ts = now();
        try {
          sum += guardSync('training core', undefined, () => trainer.step(batch.inputs, batch.targets)) * batch.size;
        } catch (e) { throw staticBatchHint(e, work.inputs.filter((i) => graph.inputs.includes(i.name)), batch.size); }
        const te = now();
        timing.batchMs += tt - tb; timing.teacherMs += ts - tt; timing.stepMs += te - ts;
        n += batch.size;
        steps++; stepsHere++;
        const elapsed = now() - t0;
        const left = Number.isFinite(epochs) ? ((epochs - epoch) * perEpoch - (b + 1)) * (elapsed / stepsHere) : Infinity;
        const eta = Math.min(left, budget - elapsed) / 1000;
        ctx.progress({ step: b + 1, steps: batches.length, epoch: epoch + 1, epochs, loss: sum / n, eta: Number.isFinite(eta) ? Math.max(0, eta) : undefined, fidelity: bestScore, lr: trainer.lr });
        await turn(); // a turn for an abort or a signal handler
      }
      if (!n) break;
      epoch++;
      // into the work model one tensor at a time (for a model read from a file: its spill)
      for (const name of names) writeParams(work, { [name]: trainer.param(name) });
      const tsc = now();
      const score = await ctx.score();
      timing.scoreMs += now() - tsc;
      history.push({ epoch, loss: sum / n, fidelity: score });
      // A tie goes to the later epoch: the same decisions at a lower training loss.
      if (score >= bestScore) { keep((name) => trainer.param(name)); bestScore = score; bestEpoch = epoch; }
      ctx.progress({ step: batches.length, steps: batches.length, epoch, epochs, loss: sum / n, fidelity: score });
      if (opts.onCheckpoint) {
        const bestNow = Object.fromEntries(names.map((name, i) => [name, best.get(0, i)]));
        await opts.onCheckpoint({ version: 1, epoch, steps, params: snapshot(trainer), best: bestNow, bestScore, history: [...history], trainer: trainer.saveState() });
      }
      if (stopped === 'time') break;
    }
    names.forEach((name, i) => writeParams(work, { [name]: best.get(0, i) }));
    return { epochs: epoch, steps, bestScore, bestEpoch, history, ...(padding.mask ? { paddingMasked: padding.mask.input } : {}), losses: Object.fromEntries(ctx.setup.trained.map((t) => [t.output, { kind: t.kind, loss: t.loss }])), params, stateBytes: trainer.stateBytes, ms: now() - t0, stopped, schedule: { ...schedule, lastLr: lr }, timing,
      ...(trim ? { trimmed: { tokens: trim.tokens, meanTokens: tokenSamples ? tokenSum / tokenSamples : trim.tokens, grouped: !!lengths } } : {}) };
  } finally { trainer.free(); cleanup(); }
}
