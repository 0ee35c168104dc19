// Recovery of a pruned model towards its original (the teacher), without labels: closed-form steps
// first (per-channel statistics correction, least-squares refit of the pointwise convolutions), each
// kept only if the held-out fidelity does not drop, then gradient distillation with the training
// core, keeping the best-scoring parameters. The caller's model changes only at the very end: an
// abort (signal) or a failure anywhere before leaves it as it was.
import * as sk from 'sparsekit-wasm';
import type { OnnxModel } from '../model.js';
import { OnnxError } from '../errors.js';
import { capture } from '../calib/sweep.js';
import { heldOut } from '../calib/evaluate.js';
import { toRunner } from '../calib/ort-runner.js';
import { CancelledError } from '../calib/cancel.js';
import type { InputSample } from '../calib/inputs.js';
import type { FidelityReport } from '../fidelity/types.js';
import type { RecoverOptions, RecoverPhase, RecoverProgress, RecoverReport, StepReport } from './types.js';
import { fitLayers, type FitLayer } from './layers.js';
import { ChannelStats } from './channel-stats.js';
import { correctStatistics } from './stats-correction.js';
import { fitPointwise } from './lsq-fit.js';
import { checkSoftmaxLoss, teacherTargets, trainSetup, trainingInputsProblem } from './train-setup.js';
import { distill } from './distill.js';
import { lrSchedule } from './lr-schedule.js';
import { checkFeatureOptions, describeFeatures, openFeatures } from './features.js';
import { guardSync } from '../run-failure.js';
import { fileCutStore } from '../files.js';
import { trimProbe } from './trim-padding.js';

const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());
const bad = (msg: string) => new OnnxError('bad_calibration', msg, 'invalid_value');

function checkOptions(opts: RecoverOptions, samples: InputSample[]) {
  if (!opts || typeof opts !== 'object' || !opts.ort) throw bad('recover needs options with `ort` (an onnxruntime namespace or a runner)');
  if (!Array.isArray(samples) || !samples.length) throw bad('recover needs at least one training sample');
  const heavy = trainingInputsProblem(samples);
  if (heavy) throw bad(`recover's training samples ${heavy}`);
  if (opts.evalSamples && !opts.evalSamples.length) throw bad('evalSamples is empty');
  const pos = (v: number | undefined, what: string, int = false) => {
    if (v !== undefined && !(Number.isFinite(v) && v > 0 && (!int || Number.isInteger(v)))) throw bad(`${what} must be a positive ${int ? 'integer' : 'number'} (got ${v})`);
  };
  pos(opts.epochs, 'epochs', true); pos(opts.minutes, 'minutes'); pos(opts.lr, 'lr'); pos(opts.batchSize, 'batchSize', true);
  if (opts.ridge !== undefined && !(opts.ridge >= 0)) throw bad(`ridge must be >= 0 (got ${opts.ridge})`);
  for (const s of opts.steps ?? []) if (!['stats', 'lsq', 'distill'].includes(s)) throw bad(`unknown step "${s}" (stats, lsq, distill)`);
  if (opts.resume && (opts.resume.version !== 1 || typeof opts.resume.params !== 'object')) throw bad('resume is not a recover checkpoint (version 1)');
  checkSoftmaxLoss(opts.softmaxLoss);
  for (const k of ['trimPadding', 'groupByLength'] as const) if (opts[k] !== undefined && typeof opts[k] !== 'boolean') throw bad(`${k} must be true or false (got ${String(opts[k])})`);
  checkFeatureOptions(opts);
  lrSchedule(opts); // refuses a bad schedule or warm-up before anything runs
}

/** The current values of `names` (to roll a step back). */
function saveTensors(m: OnnxModel, names: Iterable<string>): Map<string, Float32Array> {
  const consts = m.constants();
  return new Map([...names].map((n) => [n, m.readFloat(consts.get(n)!.tensor)]));
}
function restoreTensors(m: OnnxModel, saved: Map<string, Float32Array>) {
  const consts = m.constants();
  for (const [n, v] of saved) m.writeFloat(consts.get(n)!.tensor, v);
}

/**
 * Recovers `pruned` towards `teacher` on the unlabeled `samples` (see the file comment). Returns what
 * each step did and the held-out fidelity before and after; `pruned`'s constants are updated at the end.
 * A model with an operator the training core lacks is refused (OnnxError, reason `unsupported_op`,
 * naming it) before anything runs when distillation is asked for.
 */
export async function recover(pruned: OnnxModel, teacher: OnnxModel, samples: InputSample[], opts: RecoverOptions): Promise<RecoverReport> {
  checkOptions(opts, samples);
  const t0 = now();
  const steps = opts.steps ?? ['stats', 'lsq', 'distill'];
  const check = () => { if (opts.signal?.aborted) throw new CancelledError(); };
  const emit = (phase: RecoverPhase, p: Omit<RecoverProgress, 'phase'>) => opts.onProgress?.({ phase, ...p });
  const runner = toRunner(opts.ort, opts.sessionOptions);
  // A copy that reads the pruned model's weights where it does (a file, the spill): no second copy in JS.
  const work = pruned.copy();
  const evalSet = opts.evalSamples ?? samples;

  // The caller's cut store (Node: 'file', a scratch file) takes what would be held whole: a language
  // model's reference outputs (streamed-held-out.ts), the teacher's targets, the best parameters.
  const store = opts.cutStore === 'file' ? await fileCutStore() : opts.cutStore;
  // The teacher on the held-out samples, once: the reference of every fidelity measured here.
  emit('teacher', { step: 0, steps: 1 });
  const held = await heldOut(runner, teacher, evalSet, { ...opts, store });
  const kinds = held.kinds;
  const distilling = steps.includes('distill');
  // Refused by name here, before any run of the student (its setup, a copy of every weight, let go).
  if (distilling) guardSync('training core', undefined, () => new sk.Trainer(trainSetup(work, kinds, opts.softmaxLoss).graph)).free();
  const measure = async (): Promise<FidelityReport> => {
    check();
    return held.judge(work);
  };
  emit('eval', { step: 0, steps: 1 });
  const before = await measure();
  let current = before.score;
  emit('eval', { step: 1, steps: 1, fidelity: current });

  const closedForm: StepReport[] = [];
  const changed = new Set<string>();
  const layers: FitLayer[] = fitLayers(work);
  const maps = new Map<string, Int32Array>();
  const teacherHas = new Set<string>();
  for (const n of teacher.graph.node) for (const o of n.output) if (o) teacherHas.add(o);
  const wanted = layers.filter((l) => teacherHas.has(l.output));
  const closed = opts.resume ? [] : steps.filter((s): s is 'stats' | 'lsq' => s !== 'distill');

  const teacherStats = new Map<string, ChannelStats>();
  if (closed.length && wanted.length) {
    // Channel counts of the teacher's tensors, from its own layers of the same output names.
    const tLayers = new Map(fitLayers(teacher).map((l) => [l.output, l]));
    for (const l of wanted) {
      const tc = tLayers.get(l.output)?.channels;
      if (tc !== undefined) teacherStats.set(l.output, new ChannelStats(tc, tc !== l.channels));
    }
    emit('teacher', { step: 0, steps: 1 });
    await capture(runner, teacher, [...teacherStats.keys()], samples, (name, t) => teacherStats.get(name)!.add(t), check);
  }
  // A weight held on a quantization grid is left to distillation, which keeps it there.
  const onGrid = (l: FitLayer) => !!opts.grids?.has(l.weight);
  const matched = wanted.filter((l) => teacherStats.has(l.output));
  for (const step of closed) {
    const ts = now();
    const saved = saveTensors(work, matched.flatMap((l) => [l.weight, l.bias]));
    const notes: string[] = [];
    let touched = new Set<string>();
    const onLayer = (d: number, n: number) => emit(step, { step: d, steps: n, fidelity: current });
    if (step === 'stats') {
      touched = await correctStatistics(work, opts.scale ? matched.filter((l) => !onGrid(l)) : matched, { runner, samples, teacher: teacherStats, maps, check, onLayer }, !!opts.scale);
    } else {
      touched = await fitPointwise(work, matched.filter((l) => !onGrid(l)), { runner, teacher, samples, maps, ridge: opts.ridge ?? 0.01, check, onLayer });
      if (!touched.size) notes.push('no pointwise (1×1) convolution with a teacher tensor of the same name');
    }
    const layersChanged = matched.filter((l) => touched.has(l.bias)).length;
    const after = touched.size ? (await measure()).score : current;
    const prev = current;
    const applied = touched.size > 0 && after >= prev;
    if (applied) { for (const n of touched) changed.add(n); current = after; } else restoreTensors(work, saved);
    if (touched.size && !applied) notes.push(`rolled back: held-out fidelity ${after.toFixed(4)} < ${prev.toFixed(4)}`);
    closedForm.push({ step, layers: layersChanged, before: prev, after, applied, ms: now() - ts, notes });
    emit('eval', { step: 1, steps: 1, fidelity: current });
  }

  let distilled: RecoverReport['distill'];
  if (distilling) {
    check();
    // The student's setup was made from `work` before the closed-form steps: its initializer values
    // are copies, so it is made again from the model as it is now.
    const now_ = trainSetup(work, kinds, opts.softmaxLoss);
    // The teacher's values of the trained tensors (outputs, logits before a final Softmax, a language model's distributions).
    emit('teacher', { step: 0, steps: 1 });
    // a language model's next-token distributions are samples × tokens × vocabulary floats (held-arrays.ts)
    const targets = await teacherTargets(runner, teacher, now_, samples, check, store);
    try {
      const source = await openFeatures(runner, work, teacher, samples, opts, new Set(now_.trained.map((t) => t.tensor)), check);
      try {
        // padded text: one teacher run on a sample cut to its real tokens says whether batches may be trimmed
        const trimmable = opts.trimPadding !== false && await trimProbe(runner, teacher, now_, samples, targets.values);
        distilled = await distill(work, {
          setup: now_, samples, targets: targets.values, dims: targets.dims, store,
          score: async () => (await measure()).score, check, start: current,
          progress: (p) => emit('distill', p), features: source, trimmable,
        }, opts);
        distilled.features = describeFeatures(source?.features ?? []);
      } finally { await source?.release(); }
    } finally { targets.values.release(); }
    for (const name of now_.graph.initializers.map((i) => i.name)) if (!(now_.graph.frozen ?? []).includes(name)) changed.add(name);
  }

  emit('eval', { step: 0, steps: 1 });
  const after = await measure();
  held.release?.();
  check();
  // The one write into the caller's model: every constant that may have changed.
  const target = pruned.constants(), source = work.constants();
  const names = [...changed].filter((n) => target.has(n) && source.has(n) && target.get(n)!.tensor.data_type !== 7 && target.get(n)!.tensor.data_type !== 6);
  const values = names.map((n) => work.readFloat(source.get(n)!.tensor));
  names.forEach((n, i) => pruned.writeFloat(target.get(n)!.tensor, values[i]));
  emit('eval', { step: 1, steps: 1, fidelity: after.score });
  return { before, after, closedForm, distill: distilled, changed: names, judgedOn: opts.evalSamples ? 'eval' : 'training', samples: samples.length, ms: now() - t0 };
}
