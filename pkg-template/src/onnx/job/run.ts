// runJob: one PruneJob on one model — prune (one-shot, recipe, search or sparse training), then
// recover towards the original if asked, then the held-out fidelity of the result. Every face (the
// CLI, the module's callers, the playground) runs jobs through here, so the same job writes the
// same model wherever it is built.
import type { OnnxModel } from '../model.js';
import { OnnxError } from '../errors.js';
import { pruneSparsity, pruneNm, type PruneReport } from '../prune.js';
import { removeChannels } from '../channels/remove.js';
import { calibratePrune, type CalibProgress, type CalibReport } from '../calib/calibrate.js';
import { removeChannelsCalibrated } from '../calib/calibrated-channels.js';
import { heldOut, type EvaluateReport } from '../calib/evaluate.js';
import { fileCutStore } from '../files.js';
import { toRunner, type ModelRunner } from '../calib/ort-runner.js';
import { applyRecipe, planRecipe, type RecipeReport } from '../recipe/apply.js';
import { compress, type CompressResult } from '../search/compress.js';
import { searchLayerCount, type LayerCountStep } from '../search/layer-count.js';
import { fidelity as measure, wilsonLower } from '../fidelity/index.js';
import { recover, proxPrune, type ProxReport, type RecoverReport } from '../recover/index.js';
import type { ChannelReport } from '../channels/index.js';
import type { ConsumerReport, HeadGroupReport } from '../calib/calibrated-channels.js';
import { checkJob, jobTrains } from './check.js';
import { findResidualBlocks, removeResidualBlocks } from '../residual-blocks.js';
import { blockInfluence, checkRemovalCount, leastInfluential, type BlockInfluence } from '../calib/block-influence.js';
import { JobError } from '../errors.js';
import { FloorError } from './floor-error.js';
import { JOB_DEFAULTS } from './defaults.js';
import { defaultDense, lmHeads, type KeptDense } from './keep-dense.js';
import { owlSparsities, type OwlLayer } from '../calib/owl.js';
import type { JobEnv, JobProgress, PruneJob } from './types.js';
import { detectQuantized } from '../quant/detect.js';
import { dequantizeModel, requantizeOptions, type QuantRecord } from '../quant/dequantize.js';
import { quantizeModel, plannedGrids, type LayerBits, type QuantReport, type QuantizeOptions } from '../quant/quantize.js';
import { gptqCodes, quantizePass, type GptqPassOptions, type QuantizePassResult } from '../calib/quantize-pass.js';
import { heldCodes, holdCodes, type HeldQuantization } from '../quant/held-codes.js';
import { resolvedBits } from '../recipe/match.js';
import { tjsLayout, type TjsOutput } from '../text/tjs-layout.js';
import { zeroUnreachableRows, type UnreachableRowsReport } from '../text/unreachable-tokens.js';

/** The report of whichever pruning ran: every one-shot path gives a PruneReport, the calibrated and channel paths add their figures. */
export type JobPruneReport = PruneReport & { calibration?: CalibReport['calibration'] | null; sequential?: boolean | null; passes?: number | null; sweep?: CalibReport['sweep']; time?: CalibReport['time'] } & {
  compensation?: ConsumerReport[]; groups?: ChannelReport['groups']; folded?: ChannelReport['folded']; queryGroups?: number;
  /** The attention heads' measured influence and kept counts (channels with the 'influence' score). */
  heads?: HeadGroupReport[];
  recipe?: RecipeReport['recipe'];
};

/** The held-out fidelity of the result, with how many counted decisions its score rests on. */
export interface JobFidelity extends EvaluateReport {
  samples: number;
  /** The fewest counted decisions (rows, symbols, boxes, regions) behind an output's score; undefined when every output is generic. */
  decisions?: number;
}

export interface JobReport {
  mode: PruneJob['mode']['kind'];
  method: 'magnitude' | 'wanda' | 'sparsegpt';
  /** The pruning's own report (absent for prox, whose report is `prox`). */
  prune?: JobPruneReport;
  search?: Omit<CompressResult, 'model' | 'report' | 'quantized'>;
  /** Layer removal: every residual block's measured influence, the blocks removed, the node counts. */
  layers?: {
    /** Every block found, with its influence; `kept` says why one cannot go (it writes a graph output). */
    blocks: { input: string; output: string; influence: number; kept?: string }[]; removed: number[]; nodesBefore: number; nodesAfter: number;
    /** The search over the count (mode search, target layers): each count judged, in the order judged. */
    search?: { minFidelity: number; confidence?: number; steps: LayerCountStep[] };
  };
  prox?: ProxReport;
  recover?: RecoverReport;
  /** Per-layer sparsities of `allocation: 'owl'`, with each layer's share of outlier weights. */
  allocation?: OwlLayer[];
  /** The layers the sparsity / N:M modes left dense (PruneJob.keepDense, or the default), and why. */
  keptDense?: KeptDense[];
  /** With `tokenizer`: the token embedding rows no text reaches, zeroed (text/unreachable-tokens.ts). */
  unreachableTokens?: UnreachableRowsReport;
  /**
   * The quantization written (asked for, or the input's own scheme written again); `gptq` when the
   * codes were compensated on the calibration samples, and its time.
   */
  quantize?: QuantReport & {
    source: 'asked' | 'input';
    /** GPTQ's pass: joint with SparseGPT's pruning, before a recovery that held its codes, or after the pruning. */
    gptq?: { pass: 'joint' | 'before-recovery' | 'after'; layers: number; ms: number };
    /** The codes were held on their grids through recovery (quant/held-codes.ts): the file is the recovered model. */
    heldThroughRecovery?: true;
  };
  fidelity?: JobFidelity;
  /** With `output: { layout: 'transformers.js' }`: the dtype the result is and its file in the folder. */
  output?: TjsOutput;
  ms: number;
}

export interface JobResult {
  /** The pruned model: the one given, changed in place, except for the search, which returns a pruned copy. */
  model: OnnxModel;
  report: JobReport;
}

const fewestDecisions = (f: { outputs: { decisions?: number }[] }) => {
  const d = f.outputs.map((o) => o.decisions).filter((x): x is number => x !== undefined);
  return d.length ? Math.min(...d) : undefined;
};

/** The report's row of each block: where it reads and writes the stream, and its measured influence. */
const blockRows = (influence: BlockInfluence[]): NonNullable<JobReport['layers']>['blocks'] =>
  influence.map((b) => ({ input: b.block.input, output: b.block.output, influence: b.influence, ...(b.block.removable ? {} : { kept: b.block.why ?? 'not removable' }) }));

function needRunner(env: JobEnv, why: string): ModelRunner {
  if (!env.ort) throw new JobError('ort', `is needed by ${why} (onnxruntime-node or -web, or a runner)`);
  return toRunner(env.ort, env.sessionOptions);
}

/**
 * The search's floor against what its held-out samples can show: with `confidence`, a score that is
 * a share of n decisions has a lower bound of at most n / (n + z²) even when every decision agrees,
 * so a floor above that is refused before the first plan runs (issue: 256 decisions at 0.95 cap
 * the bound at 0.9896, below a 0.99 floor).
 */
function checkReachable(reference: ReturnType<typeof measure>, minFidelity: number, confidence: number | undefined): void {
  if (confidence === undefined) return;
  for (const o of reference.outputs) {
    if (o.decisions === undefined) continue;
    const best = wilsonLower(1, o.decisions, confidence);
    if (best < minFidelity) {
      throw new FloorError(`the floor ${minFidelity} cannot be held at confidence ${confidence} on these held-out samples: output ${o.name} rests on ${o.decisions} decisions, whose lower bound is at most ${best.toFixed(4)} even with all of them kept; give more held-out samples, a lower floor or a lower confidence`);
    }
  }
}

export async function runJob(model: OnnxModel, job: PruneJob, env: JobEnv = {}): Promise<JobResult> {
  const t0 = performance.now();
  const { method } = checkJob(job);
  const mode = job.mode;
  // A quantized input (a transformers.js q8 / q4 file): read back to float, pruned, then written
  // again in its scheme. Refused by name before any change when a form cannot be read.
  const detected = detectQuantized(model);
  if (detected.refused.length) throw new OnnxError('unsupported', `this model holds quantized weights in a form that cannot be read back: ${detected.refused.join('; ')}`, 'invalid_value');

  const emit = (p: JobProgress) => env.onProgress?.(p);
  const step = (phase: string) => (done: number, total: number, label?: string) => emit({ phase, done, total, label });
  const calibProgress = (p: CalibProgress) => { if (p.phase !== 'done') emit({ phase: p.phase, done: Math.floor(p.done), total: p.total, label: p.layer }); };
  const calibration = job.calibration?.samples;
  // The pruning's statistics (Wanda, SparseGPT, GPTQ, channel scores, OWL, block influence) read the
  // first `statsLimit` samples; recovery and sparse training read all of them (types.ts says why).
  const statsLimit = job.calibration?.statsLimit ?? (jobTrains(job) ? JOB_DEFAULTS.trainingStatsLimit : Infinity);
  const stats = calibration && calibration.length > statsLimit ? calibration.slice(0, statsLimit) : calibration;
  const kinds = job.eval?.kinds;
  const evalSamples = job.eval?.samples;
  // A recipe's own bits per layer (its `quantize` entries): checked, every name and pattern matched, before any change.
  const recipeBits = mode.kind === 'recipe' ? resolvedBits(planRecipe(model, mode.recipe).resolved) : new Map<string, string>();
  // GPTQ wherever there are calibration samples, unless round-to-nearest is asked for (check.ts
  // refuses 'gptq' without samples); round-to-nearest is the path without them. A quantized input
  // written again in its own forms is quantized the same way (joint with SparseGPT where it prunes).
  const quantizing = !!job.quantize || recipeBits.size > 0 || detected.sites.length > 0;
  const gptq = quantizing && !!calibration && (job.quantize?.method ?? 'gptq') === 'gptq';
  const runner = evalSamples || method !== 'magnitude' || (mode.kind === 'sparsity' && mode.allocation === 'owl') || mode.kind === 'search' || mode.kind === 'prox' || mode.kind === 'layers' || job.recover !== undefined || gptq ? needRunner(env, 'this job') : undefined;
  // the reference is the model as given (quantized or not); what follows works on float weights
  // a language model's reference outputs wait in the caller's cut store (Node: a scratch file), not in
  // memory (samples × tokens × vocabulary floats). The file opens at its first put (cut-file.ts), and
  // only a language model's held-out set puts, so another job's store creates no file.
  const heldStore = evalSamples && runner ? (env.cutStore === 'file' ? await fileCutStore() : env.cutStore) : undefined;
  const held = evalSamples && runner ? await heldOut(runner, model, evalSamples, { kinds, signal: env.signal, store: heldStore }) : undefined;
  const record: QuantRecord | undefined = detected.sites.length ? dequantizeModel(model) : undefined;
  // rows of the token embedding no text reaches: zero in every model that follows, the teacher's too
  const unreachable = job.tokenizer !== undefined ? zeroUnreachableRows(model, job.tokenizer) : undefined;
  // read after dequantizing, where a quantized language model's embedding table is a float again
  // A language model (keep-dense.ts finds its head) gets the language-model defaults.
  const languageModel = lmHeads(model).length > 0;
  const percDamp = job.calibration?.percDamp ?? (languageModel ? JOB_DEFAULTS.lmPercDamp : JOB_DEFAULTS.percDamp);
  // The calibrated channel removal's settings, the same whichever mode removes channels (one-shot, recipe, search).
  const channelCalib = { refit: job.calibration?.refit, centre: job.calibration?.centre, score: languageModel ? JOB_DEFAULTS.transformerChannelScore : undefined };
  // The layers the sparsity / N:M modes leave dense (the job's list, or the defaults: a language
  // model's head, a fixed projection such as YOLOv8's DFL);
  // the quantizer can write them at 8 bits (quantize.keptDense).
  const kept = mode.kind === 'sparsity' || mode.kind === 'nm'
    ? (job.keepDense ? job.keepDense.map((name) => ({ name, why: 'named by the job' })) : defaultDense(model)) : [];
  const dense = new Set(kept.map((k) => k.name));
  const quantOpts: QuantizeOptions | undefined = job.quantize ? {
    scheme: job.quantize.scheme, group: job.quantize.group, embeddings: job.quantize.embeddings,
    // int4 MatMuls: widened to the int8 graph at load (onnxruntime-web WASM's speed) except in a
    // language model, whose activations' outliers per-tensor int8 handles worst and which runs
    // 4-bit MatMulNBits where it runs best (WebGPU)
    int4MatMul: job.quantize.int4MatMul ?? (languageModel ? 'nbits' : 'dynamic'),
    ...(job.quantize.keptDense === 'int8' ? { eightBit: (w: { name: string }) => dense.has(w.name) } : {}),
    // a layer the recipe names keeps its own bits; the others take the job's scheme
    ...(recipeBits.size ? { layerBits: (w: { name: string }) => recipeBits.get(w.name) as LayerBits | undefined } : {}),
  } : recipeBits.size ? {
    // no job quantization: the recipe's layers get its bits, every other layer stays float
    scheme: [...recipeBits.values()].includes('int4') ? 'int4' : 'int8', layerBits: (w: { name: string }) => (recipeBits.get(w.name) ?? 'float') as LayerBits,
  } : record ? requantizeOptions(model, record) : undefined;
  // where the written forms come from: the job's (or its recipe's) quantization, or the input's own
  const source: 'asked' | 'input' = job.quantize || recipeBits.size ? 'asked' : 'input';
  const gptqOpts: GptqPassOptions | undefined = gptq ? {
    runner: runner!, sessionOptions: env.sessionOptions, signal: env.signal, calibration: stats!, cutStore: env.cutStore,
    sequential: job.calibration?.sequential ?? JOB_DEFAULTS.sequential, percDamp: job.calibration?.percDamp ?? JOB_DEFAULTS.gptqPercDamp,
    actOrder: job.calibration?.actOrder ?? JOB_DEFAULTS.actOrder, scaleSearch: job.calibration?.scaleSearch ?? JOB_DEFAULTS.scaleSearch, onProgress: calibProgress,
  } : undefined;
  // The original, for recovery's teacher (in float): a copy that reads the weights where the model
  // does (its file, the spill), so the pruning's writes do not reach it and no bytes are copied.
  const teacher = job.recover !== undefined ? model.copy() : undefined;
  const sess = { ort: runner, sessionOptions: env.sessionOptions, cutStore: env.cutStore, signal: env.signal };

  let pruned = model;
  const report: JobReport = { mode: mode.kind, method, ms: 0, ...(unreachable ? { unreachableTokens: unreachable } : {}) };
  // SparseGPT's joint mode: the pruning's column loop also quantizes, one factorisation per layer
  // (with recovery after it, the codes are held on their grids while it trains).
  const joint = gptq && method === 'sparsegpt' && (mode.kind === 'sparsity' || mode.kind === 'nm');
  let gptqRun: { pass: 'joint'; layers: number; ms: number; codes: NonNullable<CalibReport['quantized']> } | undefined;
  // The mixed search (search target sparsity / nm by served bytes, with quantize): each unit's bits
  // chosen beside its pruning, the plan quantized inside the search's verification.
  const mixed = !!job.quantize && mode.kind === 'search' && (mode.target === 'sparsity' || mode.target === 'nm') && (mode.objective ?? JOB_DEFAULTS.objective) === 'bytes';
  let mixedRun: QuantizePassResult | undefined;
  switch (mode.kind) {
    case 'sparsity':
    case 'nm': {
      const names = new Set(model.prunable().map((w) => w.name));
      for (const k of dense) if (!names.has(k)) throw new JobError('keepDense', `names no prunable weight of this model: "${k}"`);
      report.keptDense = kept;
      // OWL: a sparsity per layer from its outliers (one pass over the dense model), the mean kept.
      const owl = mode.kind === 'sparsity' && mode.allocation === 'owl'
        ? await owlSparsities(model, { runner: runner!, calibration: stats!, sparsity: mode.sparsity, include: (l) => !dense.has(l.name) })
        : undefined;
      if (owl) report.allocation = owl;
      const own = new Map(owl?.map((o) => [o.name, o.sparsity]));
      const layerTarget = dense.size || owl ? (w: { name: string }) => (dense.has(w.name) ? null : own.get(w.name)) : undefined;
      report.prune = method === 'magnitude'
        ? (mode.kind === 'sparsity'
          ? pruneSparsity(model, { sparsity: mode.sparsity, block: mode.block, scope: mode.scope, layerTarget, onProgress: step('prune') })
          : pruneNm(model, { nm: mode.nm, layerTarget, onProgress: step('prune') }))
        : await calibratePrune(model, {
          ...sess, ort: runner!, calibration: stats!, criterion: (l) => (dense.has(l.name) ? 'dense' : method), ...(mode.kind === 'nm' ? { nm: mode.nm } : { sparsity: mode.sparsity }),
          ...(owl ? { layerTarget: (l: { name: string }) => (own.has(l.name) ? { sparsity: own.get(l.name)! } : undefined) } : {}),
          sequential: job.calibration?.sequential ?? JOB_DEFAULTS.sequential, percDamp, refit: job.calibration?.refit ?? JOB_DEFAULTS.refit, onProgress: calibProgress,
          ...(joint ? { quantize: { grids: plannedGrids(model, quantOpts!), scaleSearch: job.calibration?.scaleSearch } } : {}),
        });
      if (joint) {
        const { quantized, ...rest } = report.prune as CalibReport;
        gptqRun = { pass: 'joint', layers: quantized!.size, ms: rest.ms, codes: quantized! };
        report.prune = rest;
      }
      break;
    }
    case 'channels': {
      const roundTo = mode.roundTo ?? JOB_DEFAULTS.roundTo;
      const scope = mode.scope ?? JOB_DEFAULTS.scope;
      report.prune = method === 'magnitude'
        ? removeChannels(model, { fraction: mode.fraction, scope, roundTo, heads: mode.heads, onProgress: step('channels') })
        : await removeChannelsCalibrated(model, {
          ...sess, ort: runner!, calibration: stats!, method, fraction: mode.fraction, scope, roundTo, heads: mode.heads, percDamp, ...channelCalib, score: mode.score ?? channelCalib.score,
          onProgress: step('channels'), onCalibProgress: calibProgress,
        });
      break;
    }
    case 'layers': {
      const blocks = findResidualBlocks(model);
      // a count more than the blocks that may go is refused before their influence is measured
      checkRemovalCount(blocks, mode.count);
      emit({ phase: 'influence', done: 0, total: blocks.length });
      const influence = await blockInfluence(model, runner!, stats!, { blocks, signal: env.signal });
      const removed = removeResidualBlocks(model, leastInfluential(influence, mode.count), blocks);
      report.layers = { blocks: blockRows(influence), ...removed };
      break;
    }
    case 'recipe': {
      report.prune = await applyRecipe(model, mode.recipe, {
        ...sess, method, calibration: stats, percDamp, channels: channelCalib, onProgress: step('recipe'), onCalibProgress: calibProgress,
      });
      break;
    }
    case 'search': {
      // (the reference read back whole only when a confidence asks for its decision counts)
      if (mode.confidence !== undefined) checkReachable(measure(held!.reference, held!.reference, { kinds: held!.kinds }), mode.minFidelity, mode.confidence);
      if (mode.target === 'layers') {
        const res = await searchLayerCount(model, {
          runner: runner!, calibration: stats!, held: held!, minFidelity: mode.minFidelity, confidence: mode.confidence, signal: env.signal,
          onProgress: (p) => emit({ phase: p.phase, done: p.done, total: p.total, label: p.label }),
        });
        const search = { minFidelity: mode.minFidelity, ...(mode.confidence === undefined ? {} : { confidence: mode.confidence }), steps: res.steps };
        if (!res.model) {
          const s = res.steps[0];
          throw new FloorError(`removing even the least influential block misses the floor ${mode.minFidelity} (it scored ${(s.bound ?? s.fidelity).toFixed(4)}${mode.confidence === undefined ? '' : `, its lower bound at confidence ${mode.confidence}`}); nothing written`);
        }
        pruned = res.model;
        report.layers = { blocks: blockRows(res.influence), ...res.removed!, search };
        break;
      }
      const res = await compress(model, {
        ...sess, ort: runner!, eval: evalSamples!, calibration: stats, mode: mode.target, nm: mode.nm, levels: mode.levels,
        objective: mode.objective ?? JOB_DEFAULTS.objective, method, minFidelity: mode.minFidelity, confidence: mode.confidence,
        roundTo: mode.roundTo ?? JOB_DEFAULTS.roundTo, heads: mode.heads, percDamp, channels: channelCalib, maxSteps: mode.maxSteps ?? JOB_DEFAULTS.maxSteps,
        tableSamples: mode.tableSamples, fidelityOptions: { kinds: held!.kinds },
        // the mixed search: quantization chosen per layer, the plan verified as written (below)
        ...(mixed ? { quantize: { options: quantOpts!, gptq: gptqOpts } } : {}),
        onProgress: (p) => emit({ phase: p.phase, done: p.done, total: p.total, label: p.label }),
      });
      const { model: chosen, report: chosenReport, quantized: chosenQuant, ...search } = res;
      report.search = search;
      if (chosenQuant) mixedRun = chosenQuant;
      if (!chosen) {
        const best = Math.max(...res.steps.map((s) => s.bound ?? s.fidelity));
        throw new FloorError(`no plan met the floor ${mode.minFidelity} (the lightest plan tried scored ${best.toFixed(4)}${mode.confidence === undefined ? '' : `, its lower bound at confidence ${mode.confidence}`}); nothing written`, search);
      }
      pruned = chosen;
      report.prune = chosenReport ?? undefined;
      break;
    }
    case 'prox': {
      const t = job.training ?? {};
      report.prox = await proxPrune(model, calibration!, {
        ...sess, ort: runner!, evalSamples, kinds, sparsity: mode.sparsity, block: mode.block ?? [...JOB_DEFAULTS.proxBlock] as [number, number],
        scope: mode.scope, epochs: mode.epochs, minutes: mode.minutes, ramp: mode.ramp, recoverEpochs: mode.recoverEpochs, recoverMinutes: mode.recoverMinutes,
        lr: t.lr, schedule: t.schedule, warmup: t.warmup, batchSize: t.batchSize ?? JOB_DEFAULTS.batchSize, features: t.features, featureWeight: t.featureWeight, softmaxLoss: t.softmaxLoss,
        onProgress: (p) => emit({ phase: p.phase, done: p.step, total: p.steps, epoch: p.epoch, epochs: p.epochs, loss: p.loss, fidelity: p.fidelity, eta: p.eta }),
      });
      break;
    }
    default:
      throw new OnnxError('unsupported', `unknown job mode ${String((mode as { kind?: unknown }).kind)}`, 'invalid_arguments');
  }

  // Quantization with recovery: the codes first (joint SparseGPT's, GPTQ's on the pruned model, or
  // round-to-nearest), held on their grids while recovery trains, so the file is the model recovery
  // judged (quant/held-codes.ts); a quantized input on its own forms' grids. The mixed search's plan
  // is quantized inside its verification.
  const gridOpts = teacher && !mixed ? quantOpts : undefined;
  let onGrids: HeldQuantization | undefined;
  let gptqBefore: { layers: number; ms: number } | undefined;
  if (gridOpts) {
    let given = gptqRun?.codes;
    if (!given && gptqOpts) {
      const r = await gptqCodes(pruned, gridOpts, gptqOpts);
      given = r.given;
      gptqBefore = { layers: r.layers, ms: r.ms };
    }
    onGrids = holdCodes(pruned, gridOpts, given);
  }
  if (teacher) {
    const t = job.recover === true ? {} : job.recover ?? {};
    report.recover = await recover(pruned, teacher, calibration!, {
      ...(onGrids ? { grids: onGrids.grids } : {}),
      ...sess, ort: runner!, evalSamples, kinds, epochs: t.epochs, minutes: t.minutes,
      lr: t.lr, schedule: t.schedule, warmup: t.warmup, batchSize: t.batchSize, steps: t.steps, features: t.features, featureWeight: t.featureWeight, softmaxLoss: t.softmaxLoss,
      trimPadding: t.trimPadding, groupByLength: t.groupByLength,
      onProgress: (p) => emit({ phase: p.phase, done: p.step, total: p.steps, epoch: p.epoch, epochs: p.epochs, loss: p.loss, fidelity: p.fidelity, eta: p.eta }),
    });
  }

  if (onGrids) {
    const q = quantizeModel(pruned, { ...gridOpts!, given: heldCodes(pruned, onGrids), onProgress: step('quantize') });
    const pass = gptqRun ? { pass: gptqRun.pass, layers: gptqRun.layers, ms: Math.round(gptqRun.ms) } : gptqBefore ? { pass: 'before-recovery' as const, layers: gptqBefore.layers, ms: Math.round(gptqBefore.ms) } : undefined;
    report.quantize = { ...q, source, heldThroughRecovery: true, ...(pass ? { gptq: pass } : {}) };
  } else if (mixedRun) {
    // the mixed search's plan, quantized and verified as a whole (search/compress.ts)
    report.quantize = { ...mixedRun.report, source: 'asked', ...(mixedRun.gptq ? { gptq: { pass: 'after' as const, layers: mixedRun.gptq.layers, ms: Math.round(mixedRun.gptq.ms) } } : {}) };
  } else if (gptqRun) {
    const q = quantizeModel(pruned, { ...quantOpts!, given: gptqRun.codes, onProgress: step('quantize') });
    report.quantize = { ...q, source, gptq: { pass: gptqRun.pass, layers: gptqRun.layers, ms: Math.round(gptqRun.ms) } };
  } else if (quantOpts) {
    // GPTQ after the pruning (and recovery), or round to nearest: calib/quantize-pass.ts
    const q = await quantizePass(pruned, { ...quantOpts, onProgress: step('quantize') }, gptqOpts);
    report.quantize = { ...q.report, source, ...(q.gptq ? { gptq: { pass: 'after' as const, layers: q.gptq.layers, ms: Math.round(q.gptq.ms) } } : {}) };
  }

  if (job.output?.layout === 'transformers.js') report.output = tjsLayout(pruned);

  if (held && evalSamples) {
    const f = await held.judge(pruned);
    report.fidelity = { ...f, samples: evalSamples.length, decisions: fewestDecisions(f) };
    held.release?.();
  }
  report.ms = performance.now() - t0;
  return { model: pruned, report };
}
