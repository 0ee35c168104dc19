// Sparse training to a block sparsity with the proximal step (docs/API.md, the proximal step): the
// dense model is distilled towards itself as it was (the teacher) while, after every Adam step, each
// prunable weight goes through the block soft threshold with Adam's second moments as conditioners
// (Trainer.prox). Each step, a layer's threshold is the one that zeroes its share of blocks (read
// off the blocks' conditioned norms), the share following a cubic ramp to the target (Zhu & Gupta's
// gradual schedule), so the zeros arrive while the rest of the network can still adapt. Then each layer is projected to exactly the target (the blocks of least
// norm, as `pruneSparsity` picks them: most are zero already) and the result is recovered with the
// zeros held (recover(): masked distillation, the best held-out epoch kept).
import { TRAINING_DEFAULTS } from './defaults.js';
import * as sk from 'sparsekit-wasm';
import type { OnnxModel, OnnxWeight } from '../model.js';
import { OnnxError } from '../errors.js';
import { pruneSparsity } from '../prune.js';
import { heldOut } from '../calib/evaluate.js';
import { toRunner } from '../calib/ort-runner.js';
import { CancelledError, turn } from '../calib/cancel.js';
import type { InputSample } from '../calib/inputs.js';
import type { RecoverOptions, RecoverReport } from './types.js';
import { checkSoftmaxLoss, lossesOf, teacherTargets, trainSetup, trainingInputsProblem } from './train-setup.js';
import { epochBatches, makeBatch } from './batches.js';
import { writeParams } from './distill.js';
import { recover } from './recover.js';
import { lrSchedule } from './lr-schedule.js';
import { checkFeatureOptions, describeFeatures, openFeatures, withFeatures } from './features.js';
import { maskPadding } from './token-mask.js';
import { guardSync } from '../run-failure.js';
import { fileCutStore } from '../files.js';
import { dropValues } from '../train/graph.js';

/** Options of {@link proxPrune}: the target, the proximal phase, and the recovery after it. */
export interface ProxPruneOptions extends Omit<RecoverOptions, 'steps' | 'resume' | 'onCheckpoint' | 'onProgress' | 'epochs' | 'minutes'> {
  /** Fraction of blocks to zero in each prunable layer, in (0, 1). */
  sparsity: number;
  /** Block shape on the layer's 2-D view (outputs × inputs), default 4×4; a dim that does not divide falls back to the gcd. */
  block?: [number, number];
  /**
   * Where blocks compete: 'layer' (default; every layer reaches the target) or 'global' (one
   * threshold over the whole model's conditioned block norms, so sensitive layers keep more, as
   * pruneSparsity's global scope; the target is then the model's share of zero blocks).
   */
  scope?: 'layer' | 'global';
  /**
   * Length of the proximal phase: `epochs` (default 4 without `minutes`), `minutes`, or both (the
   * first reached ends it). With `minutes` alone the ramp follows the clock; with epochs, the steps.
   */
  epochs?: number;
  minutes?: number;
  /** Part of the proximal steps over which the target ramps up (default 0.75; the rest holds it). */
  ramp?: number;
  /** Masked recovery after the projection: epochs (default 2; 0: none) and/or a time budget. */
  recoverEpochs?: number;
  recoverMinutes?: number;
  onProgress?: (p: ProxProgress) => void;
}

export interface ProxProgress {
  phase: 'teacher' | 'prox' | 'project' | 'recover';
  step: number;
  steps: number;
  epoch?: number;
  epochs?: number;
  loss?: number;
  /** Zero blocks over all prunable layers now, and the ramp's target at this step. */
  sparsity?: number;
  target?: number;
  fidelity?: number;
  eta?: number;
}

export interface ProxLayerReport { name: string; block: [number, number]; blocks: number; zeroBlocks: number; lambda: number }

export interface ProxReport {
  /** Per proximal epoch: mean loss, block sparsity reached, held-out fidelity. */
  history: { epoch: number; loss: number; sparsity: number; fidelity: number }[];
  steps: number;
  /** Block sparsity when the proximal phase ended (before the projection) and after it. */
  reached: number;
  projected: { sparsity: number; fidelity: number };
  layers: ProxLayerReport[];
  /** The matched intermediate tensors of the proximal phase (empty without `features`). */
  features: { name: string; channels: number; teacherChannels: number; weight: number }[];
  /** The masked recovery after the projection (absent with recoverEpochs 0). */
  recovered?: RecoverReport;
  /** Held-out fidelity of the result. */
  fidelity: number;
  ms: number;
}

const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());
const bad = (msg: string) => new OnnxError('bad_calibration', msg, 'invalid_value');

/** A layer under the proximal step: its parameter, the view the block tiling uses, the block. */
interface ProxLayer { w: OnnxWeight; view: [number, number]; block: [number, number]; lambda: number; zero: number; blocks: number }

/**
 * The block view of a prunable weight as stored: (outputs, inputs) for a Conv / Gemm weight, (inputs,
 * outputs) for a MatMul's B, so the tiles are the ones `pruneSparsity` zeroes (the block transposed).
 */
function proxLayer(w: OnnxWeight, want: [number, number]): ProxLayer {
  const v = w.view!;
  const { block } = sk.fitBlock(v.rows, v.cols, want);
  return v.transposed
    ? { w, view: [v.cols, v.rows], block: [block[1], block[0]], lambda: 0, zero: 0, blocks: 0 }
    : { w, view: [v.rows, v.cols], block, lambda: 0, zero: 0, blocks: 0 };
}

function concat(parts: Float64Array[]): Float64Array {
  const out = new Float64Array(parts.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
}

const blockCount = (l: ProxLayer) => (l.view[0] / l.block[0]) * (l.view[1] / l.block[1]);

/** The ramp: 0 at the start, the target after `ramp` of the steps, cubic in between. */
export function rampTarget(target: number, step: number, steps: number, ramp: number): number {
  const t = Math.min(1, step / Math.max(1, ramp * steps));
  return target * (1 - (1 - t) ** 3);
}

/**
 * The proximal step zeroes block b exactly when ‖h ⊙ w_b‖ ≤ t (h = sqrt(v̂) + eps, Adam's conditioner;
 * docs/API.md). These conditioned norms are the blocks' scores: |w|·sqrt(v̂) is a first-order
 * estimate of what a weight contributes to the loss, so they compare across layers too.
 */
export function blockScores(w: Float32Array, v: Float32Array, view: [number, number], block: [number, number], bc2: number, eps: number): Float64Array {
  const [R, C] = view, [br, bc] = block;
  const scores = new Float64Array((R / br) * (C / bc));
  let i = 0;
  for (let r0 = 0; r0 < R; r0 += br) {
    for (let c0 = 0; c0 < C; c0 += bc) {
      let s = 0;
      for (let r = r0; r < r0 + br; r++) {
        for (let c = c0; c < c0 + bc; c++) { const j = r * C + c; const h = Math.sqrt(v[j] / bc2) + eps; s += (h * w[j]) ** 2; }
      }
      scores[i++] = Math.sqrt(s);
    }
  }
  return scores;
}

/**
 * The threshold that zeroes the k lowest-scoring blocks, set just below the k-th score: ties and
 * float rounding at the boundary can only leave a block for the cut, never zero one too many.
 */
export function thresholdBelow(scores: Float64Array, k: number): number {
  if (k <= 0 || !scores.length) return 0;
  const sorted = Float64Array.from(scores).sort();
  return sorted[Math.min(k, sorted.length) - 1] * (1 - 1e-6);
}

/** Adam's defaults in the training core (the conditioner of the proximal step uses them). */
const BETA2 = 0.999, ADAM_EPS = 1e-8;

/**
 * Prunes `model` to `opts.sparsity` of `opts.block` blocks per layer by proximal sparse training on
 * the unlabeled `samples`, then recovers it (see the file comment). The model's constants change only
 * at the end: an abort (`signal`) or a failure leaves it as it was.
 */
export async function proxPrune(model: OnnxModel, samples: InputSample[], opts: ProxPruneOptions): Promise<ProxReport> {
  if (!opts || typeof opts !== 'object' || !opts.ort) throw bad('proxPrune needs options with `ort` (an onnxruntime namespace or a runner)');
  if (!(opts.sparsity > 0 && opts.sparsity < 1)) throw new OnnxError('unsupported', `sparsity must be in (0, 1) (got ${opts.sparsity})`, 'invalid_sparsity');
  if (!Array.isArray(samples) || !samples.length) throw bad('proxPrune needs at least one training sample');
  const heavy = trainingInputsProblem(samples);
  if (heavy) throw bad(`proxPrune's training samples ${heavy}`);
  const want = opts.block ?? [4, 4];
  if (want.length !== 2 || !want.every((b) => Number.isInteger(b) && b >= 1)) throw new OnnxError('unsupported', `block must be two positive integers (got ${want.join('x')})`, 'invalid_block_shape');
  const epochs = opts.epochs ?? (opts.minutes ? Infinity : 4);
  if (!(epochs === Infinity || (Number.isInteger(epochs) && epochs >= 1))) throw bad(`epochs must be a positive integer (got ${epochs})`);
  if (opts.minutes !== undefined && !(opts.minutes > 0)) throw bad(`minutes must be > 0 (got ${opts.minutes})`);
  const ramp = opts.ramp ?? 0.75;
  if (!(ramp > 0 && ramp <= 1)) throw bad(`ramp must be in (0, 1] (got ${ramp})`);
  const recoverEpochs = opts.recoverEpochs ?? (opts.recoverMinutes ? Infinity : 2);
  if (!(recoverEpochs === Infinity || (Number.isInteger(recoverEpochs) && recoverEpochs >= 0))) throw bad(`recoverEpochs must be an integer >= 0 (got ${recoverEpochs})`);
  const budget = opts.minutes ? opts.minutes * 60000 : Infinity;
  const scope = opts.scope ?? 'layer';
  if (scope !== 'layer' && scope !== 'global') throw bad(`scope must be 'layer' or 'global' (got ${String(scope)})`);
  checkSoftmaxLoss(opts.softmaxLoss);
  checkFeatureOptions(opts);
  // the recovery after the cut runs on this schedule (the proximal phase keeps a constant lr: its
  // thresholds are lr · lambda): refused here, not after the proximal phase
  lrSchedule(opts);
  const t0 = now();
  const check = () => { if (opts.signal?.aborted) throw new CancelledError(); };
  const emit = (p: ProxProgress) => opts.onProgress?.(p);
  const runner = toRunner(opts.ort, opts.sessionOptions);
  // copies that read the weights where the model does (a file, the spill): none of them in JS again
  const teacher = model.copy();
  const work = model.copy();
  const evalSet = opts.evalSamples ?? samples;

  emit({ phase: 'teacher', step: 0, steps: 1 });
  // the caller's cut store (Node: 'file') takes a language model's reference outputs and the teacher's targets
  const store = opts.cutStore === 'file' ? await fileCutStore() : opts.cutStore;
  const held = await heldOut(runner, model, evalSet, { ...opts, store });
  const kinds = held.kinds;
  const measure = async (): Promise<number> => {
    check();
    return (await held.judge(work)).score;
  };

  const setup = trainSetup(work, kinds, opts.softmaxLoss);
  const teacherValues = await teacherTargets(runner, teacher, setup, samples, check, store);
  const targets = teacherValues.values;
  const featureTeacher = await openFeatures(runner, work, teacher, samples, opts, new Set(setup.trained.map((t) => t.tensor)), check);
  const features = featureTeacher?.features ?? [];
  const withF = withFeatures(setup.graph, lossesOf(setup), features);
  const { losses } = withF;
  // per-token losses of padded text count the real tokens only (token-mask.ts), as in recover's distillation
  const padding = maskPadding(samples, withF.graph, losses, [...teacherValues.dims, ...features.map((f) => f.dims)], targets);
  const { graph } = padding;

  // Dense start: nothing is held at zero; a block the threshold zeroes may come back until the projection.
  let trainer: sk.Trainer;
  try {
    trainer = guardSync('training core', undefined, () => new sk.Trainer(graph, { lr: opts.lr ?? TRAINING_DEFAULTS.lr, beta2: BETA2, eps: ADAM_EPS, masked: false }));
  } catch (e) { targets.release(); await featureTeacher?.release(); throw e; }
  dropValues(graph); // the trainer holds them now
  const history: ProxReport['history'] = [];
  let steps = 0, reached = 0;
  const trained = new Set(trainer.paramNames);
  const layers = work.prunable().filter((w) => trained.has(w.name)).map((w) => proxLayer(w, want));
  if (!layers.length) { trainer.free(); targets.release(); await featureTeacher?.release(); throw bad('no prunable weight of the model is trained (nothing for the proximal step)'); }
  try {
    trainer.setLosses(losses); // the loss per output kind, as recover's distillation trains, and the features'
    const size = opts.batchSize ?? TRAINING_DEFAULTS.batchSize, seed = opts.seed ?? 1;
    const perEpoch = epochBatches(samples, setup.graph.inputs, size, seed, 0).length;
    const total = epochs * perEpoch;
    let stop = false;
    const tp = now(); // the phase's clock: its budget and a clock-driven ramp start here
    for (let epoch = 0; epoch < epochs && !stop; epoch++) {
      const batches = epochBatches(samples, setup.graph.inputs, size, seed, epoch);
      let sum = 0, n = 0;
      for (let b = 0; b < batches.length; b++) {
        check();
        if (now() - tp >= budget) { stop = true; break; }
        const batch = makeBatch(samples, setup.graph.inputs, batches[b], targets);
        if (featureTeacher) batch.targets.push(...padding.features(await featureTeacher.batch(samples, batches[b]), batches[b]));
        sum += guardSync('training core', undefined, () => trainer.step(batch.inputs, batch.targets)) * batch.size;
        n += batch.size;
        steps++;
        // The ramp follows the steps, or the clock when only a time budget bounds the phase.
        const target = Number.isFinite(total) ? rampTarget(opts.sparsity, steps, total, ramp) : rampTarget(opts.sparsity, now() - tp, budget, ramp);
        let zero = 0, all = 0;
        const lr = opts.lr ?? TRAINING_DEFAULTS.lr, bc2 = 1 - BETA2 ** trainer.steps;
        // This step's thresholds: the ones that zero (just under) the ramp's share of blocks, per layer
        // or over the whole model.
        const scores = layers.map((l) => (target > 0 ? blockScores(trainer.param(l.w.name), trainer.secondMoments(l.w.name), l.view, l.block, bc2, ADAM_EPS) : new Float64Array(0)));
        const globalTau = scope === 'global' ? thresholdBelow(concat(scores), Math.floor(target * layers.reduce((a, l) => a + blockCount(l), 0))) : 0;
        for (const [i, l] of layers.entries()) {
          const tau = scope === 'global' ? globalTau : thresholdBelow(scores[i], Math.floor(target * blockCount(l)));
          l.lambda = tau / lr;
          const r = trainer.prox(l.w.name, l.block, l.lambda, { view: l.view });
          l.zero = r.zeroBlocks; l.blocks = r.blocks;
          zero += r.zeroBlocks; all += r.blocks;
        }
        reached = all ? zero / all : 0;
        const elapsed = now() - tp;
        const eta = Math.min(Number.isFinite(total) ? (total - steps) * (elapsed / steps) : Infinity, budget - elapsed) / 1000;
        emit({ phase: 'prox', step: b + 1, steps: batches.length, epoch: epoch + 1, epochs, loss: sum / n, sparsity: reached, target, eta: Math.max(0, eta) });
        await turn(); // a turn for an abort or a signal handler
      }
      if (!n) break;
      const params: Record<string, Float32Array> = {};
      for (const name of trainer.paramNames) params[name] = trainer.param(name);
      writeParams(work, params);
      const score = await measure();
      history.push({ epoch: epoch + 1, loss: sum / n, sparsity: reached, fidelity: score });
      emit({ phase: 'prox', step: batches.length, steps: batches.length, epoch: epoch + 1, epochs, loss: sum / n, sparsity: reached, fidelity: score });
    }
  } finally { trainer.free(); targets.release(); await featureTeacher?.release(); }

  // Exactly the target in every layer: the proximal phase zeroed most of these blocks already.
  emit({ phase: 'project', step: 0, steps: 1 });
  pruneSparsity(work, { sparsity: opts.sparsity, block: want, scope });
  const projected = { sparsity: blockSparsity(work, layers), fidelity: await measure() };
  held.release?.();
  emit({ phase: 'project', step: 1, steps: 1, sparsity: projected.sparsity, fidelity: projected.fidelity });

  let recovered: RecoverReport | undefined;
  if (recoverEpochs > 0) {
    recovered = await recover(work, teacher, samples, {
      ...opts, steps: ['distill'], epochs: Number.isFinite(recoverEpochs) ? recoverEpochs : undefined, minutes: opts.recoverMinutes, resume: undefined, onCheckpoint: undefined,
      onProgress: (p) => emit({ phase: 'recover', step: p.step, steps: p.steps, epoch: p.epoch, epochs: p.epochs, loss: p.loss, fidelity: p.fidelity, eta: p.eta }),
    });
  }
  check();
  const final = recovered ? recovered.after.score : projected.fidelity;
  // The one write into the caller's model.
  const target = model.constants(), source = work.constants();
  const changed = [...source.keys()].filter((n) => target.has(n) && trained.has(n));
  const values = changed.map((n) => work.readFloat(source.get(n)!.tensor));
  changed.forEach((n, i) => model.writeFloat(target.get(n)!.tensor, values[i]));
  return {
    history, steps, reached, projected, features: describeFeatures(features),
    layers: layers.map((l) => ({ name: l.w.name, block: l.block, blocks: l.blocks, zeroBlocks: l.zero, lambda: l.lambda })),
    recovered, fidelity: final, ms: now() - t0,
  };
}

/** Zero blocks over all layers of `work` now, with each layer's own tiling. */
function blockSparsity(work: OnnxModel, layers: ProxLayer[]): number {
  let zero = 0, all = 0;
  for (const l of layers) {
    const v = work.readFloat(work.weight(l.w.name)!);
    const [R, C] = l.view, [br, bc] = l.block;
    for (let r0 = 0; r0 < R; r0 += br) {
      for (let c0 = 0; c0 < C; c0 += bc) {
        let nz = false;
        for (let r = r0; r < r0 + br && !nz; r++) for (let c = c0; c < c0 + bc; c++) if (v[r * C + c] !== 0) { nz = true; break; }
        all++; if (!nz) zero++;
      }
    }
  }
  return all ? zero / all : 0;
}
