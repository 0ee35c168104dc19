// Calibration-aware pruning of a whole ONNX model: capture each layer's input, accumulate its
// statistics, prune it, and move on. Sequential by default: the inputs of layer k are captured from
// the model whose layers < k are already pruned (as SparseGPT does), so each layer compensates the
// errors of the ones before it. The captures run the calibration set through the graph once, segment
// by segment (sweep.ts): each group's inputs are computed from the previous cut with the layers
// before it already pruned, not by re-running the model.
import type { OnnxModel, TensorProto } from '../model.js';
import { OnnxError } from '../errors.js';
import { checkSparsity, layerReport, type LayerReport, type PruneReport } from '../prune.js';
import { findLayers, captureGroups, type CalibLayer } from './layers.js';
import { pruneLayer, allowsNm, viewValues, type Criterion, type MethodUsed, type Target, type LayerStats } from './layer-prune.js';
import { quantizeLayer, type LayerQuantizeResult } from './layer-quantize.js';
import { toRunner, type ModelRunner, type OrtLike } from './ort-runner.js';
import type { InputSample } from './inputs.js';
import { CancelledError, turn } from './cancel.js';
import { CALIB_DEFAULTS } from './defaults.js';
import { asF32 } from './tensor.js';
import { Sweep, type SweepStats } from './sweep.js';
import { withRollback } from './rollback.js';
import { SharedStats, type SharingStats } from './shared-stats.js';
import type { CutStore } from './cut-store.js';
import { fileCutStore } from '../files.js';

/** Progress in layers (fractional while capturing). */
export interface CalibProgress {
  done: number; total: number; phase: 'capture' | 'prune' | 'done'; layer: string;
  /** The time spent so far, per phase (calibratePrune gives it; the CLI prints the final one in its summary). */
  time?: CalibTime;
}

export interface CalibrateOptions {
  /** onnxruntime-node or onnxruntime-web (the namespace), or a runner (makeOrtRunner). */
  ort: OrtLike | ModelRunner;
  /** InferenceSession options when `ort` is a namespace (threads, execution providers). */
  sessionOptions?: object;
  /** Calibration samples: makeInputSet, readCalibrationDir, or your own. */
  calibration: InputSample[];
  /**
   * The criterion of every layer (default 'sparsegpt'), or per layer: a function returning a
   * criterion, or null / 'dense' to leave the layer out.
   */
  criterion?: Criterion | ((layer: CalibLayer) => Criterion | 'dense' | null | undefined);
  /** Unstructured: fraction of each layer's weights pruned (per row for Wanda, per block of columns for SparseGPT). */
  sparsity?: number;
  /** Keep n of every m consecutive inputs of each row. Exactly one of sparsity / nm. */
  nm?: [number, number];
  /**
   * Per-layer target (recipes, searched plans): overrides sparsity / nm for the layers it returns a
   * target for; with it, sparsity / nm may both be absent (then every layer needs one here or a
   * 'dense' criterion). Targets are checked before anything runs.
   */
  layerTarget?: (layer: CalibLayer) => Target | undefined;
  /** Default true (see the file comment); false captures every input from the unpruned model in one pass. */
  sequential?: boolean;
  /** SparseGPT's lazy block (default in CALIB_DEFAULTS; rounded down to a multiple of m for N:M). */
  blockSize?: number;
  /** SparseGPT's damping (default in CALIB_DEFAULTS); raise it when a layer reports singular_hessian. */
  percDamp?: number;
  /** SparseGPT only where a layer saw >= minVectors calibration vectors per input (else Wanda). */
  minVectors?: number;
  /** SparseGPT's refit steps after each layer's solve (default in CALIB_DEFAULTS; 0: SparseGPT's own weights). */
  refit?: number;
  /**
   * Default true: layers that read the same tensor the same way (q / k / v, gate / up, convolutions
   * of one feature map with one geometry) share one Hessian, accumulated once (shared-stats.ts);
   * false accumulates one per layer (same bits, more work).
   */
  shareStatistics?: boolean;
  /**
   * Quantize each layer given a grid here (by weight name; quant/quantize.ts `plannedGrids`) as it
   * is calibrated: GPTQ through its Hessian, in sequence, so each later layer's inputs come from
   * the layers before it already quantized. With criterion sparsegpt, SparseGPT's joint mode prunes
   * and quantizes in one factorisation; other criteria prune first and GPTQ keeps their zeros as
   * its mask. Without a target (sparsity / nm / layerTarget) it only quantizes, keeping the zeros
   * each layer already holds; layers without a grid are then left as they are. The codes are in
   * the report's `quantized`, for quantizeModel's `given`. `method: 'rtn'` rounds to nearest
   * instead (same passes, each layer's calibration error still measured: the baseline GPTQ is
   * judged against).
   */
  quantize?: {
    grids: ReadonlyMap<string, LayerGrid>; method?: 'gptq' | 'rtn';
    /** GPTQ's act-order with static groups where a layer is quantized without a target (default in CALIB_DEFAULTS). */
    actOrder?: boolean;
    /** GPTQ's scale search per group (default in CALIB_DEFAULTS for layers without a target; false with one). */
    scaleSearch?: boolean;
  };
  /**
   * The most the sweep's cut between captures may hold over all samples, in bytes (default in
   * CALIB_DEFAULTS): over it, what can be computed again from what stays at hand (a decoder's masks,
   * positions, normalized inputs and MLP product, from the residual stream) is recomputed by the
   * next capture instead of held for every sample. The same weights either way.
   */
  cacheBudget?: number;
  /**
   * Where the cut goes past `cacheBudget` once what can be recomputed is left out (cut-store.ts):
   * a store of your own, or 'file' (Node: an unlinked scratch file); none: it stays in memory. The
   * same weights either way.
   */
  cutStore?: CutStore | 'file';
  /** Cancels between model runs and layers (CancelledError, code 'cancelled'). */
  signal?: AbortSignal;
  onProgress?: (p: CalibProgress) => void;
}

/** A quantization grid as quant/ describes it (int4 blocks of `group`; 0 = per output row; reduceRange = 7 bits). */
export interface LayerGrid { bits: number; group: number; reduceRange?: boolean }

/** A layer's codes in the view layout (quant/grid.ts `QuantizedView`) and how they were found. */
export interface CalibratedCodes {
  qv: { rows: number; cols: number; codes: Int8Array; scales: Float32Array; groupsPerRow: number; width: number };
  method: 'gptq' | 'rtn';
  relError: number | null;
  notes?: string[];
}

/** One layer of a calibration report: the common figures (prune.ts) and what calibration did. */
export interface CalibLayerReport extends LayerReport {
  node: string;
  view: { rows: number; cols: number; transposed: boolean; group: number };
  /** The criterion asked for, and the one applied (fallbacks said in `notes`). */
  requested: Criterion;
  method: MethodUsed;
  /** Relative reconstruction error on the calibration inputs (API.md step 5); null without statistics. */
  relError: number | null;
  notes: string[];
  ms: number;
}

/**
 * Where a calibrated prune spent its time (ms), phase by phase. The phases do not overlap, so
 * model + cut + capture + statistics + prune <= the report's `ms` (what is left is bookkeeping
 * between them), and library = ms - model.
 */
export interface CalibTime {
  /** The forward in onnxruntime: sessions created, runs and releases. */
  model: number;
  /** The library: everything else (the sum of the phases below, and what lies between them). */
  library: number;
  /** Cutting the graph into segments and encoding them. */
  cut: number;
  /** Capture: feeding the cached cut back, collecting and converting the outputs (the sweep outside onnxruntime, the cut and the statistics). */
  capture: number;
  /** Accumulating the inputs' statistics (Hessians). */
  statistics: number;
  /** Pruning the layers: solve + write + report. */
  prune: number;
  /** Of prune: the criterion's own work (magnitude, Wanda scores and masks, SparseGPT's factor and column loop, the reconstruction error). */
  solve: number;
  /** Of prune: reading each weight and writing it back into the model (with its rollback copy). */
  write: number;
  /** Of prune: each layer's report (counting its zeros and bytes) and progress. */
  report: number;
}

export interface CalibReport extends PruneReport {
  mode: 'sparsity' | 'nm';
  layers: CalibLayerReport[];
  sequential: boolean;
  /** Calibration samples used. */
  calibration: number;
  /** onnxruntime sessions created for capture: one per graph segment run. */
  passes: number;
  /** What the captures ran: segments, runs, nodes run (nodeRuns / graphNodes / samples = the cost in runs of the model), the largest cut held. */
  sweep: SweepStats;
  /** Hessians accumulated against one per layer (shareStatistics). */
  hessians: SharingStats;
  /** With `quantize`: each quantized layer's codes, by weight name. */
  quantized?: Map<string, CalibratedCodes>;
  time: CalibTime;
  ms: number;
}

const CRITERIA: readonly string[] = ['magnitude', 'wanda', 'sparsegpt'];
const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());

/** The phases' times so far (see CalibTime), from the sweep's counters and the loop's. */
function timeOf(elapsed: number, s: SweepStats, t: { capture: number; statistics: number; solve: number; write: number; report: number }): CalibTime {
  return { model: s.ortMs, library: elapsed - s.ortMs, cut: s.cutMs, ...t, prune: t.solve + t.write + t.report };
}

/** Checks the options before anything runs or changes; returns the target and the plan. */
function validate(model: OnnxModel, o: CalibrateOptions) {
  const arg = (msg: string, code = 'invalid_arguments') => new OnnxError('unsupported', msg, code);
  if (o.sparsity !== undefined && o.nm !== undefined) throw arg('calibration needs exactly one of sparsity / nm');
  if (o.sparsity === undefined && o.nm === undefined && !o.layerTarget && !o.quantize) throw arg('calibration needs exactly one of sparsity / nm');
  let target: Target | undefined;
  if (o.nm) {
    const [n, m] = o.nm;
    if (!(Number.isInteger(n) && Number.isInteger(m) && n >= 1 && m >= 1 && n <= m)) throw arg(`nm must be [n, m] with 1 <= n <= m (got ${JSON.stringify(o.nm)})`, 'invalid_nm_pattern');
    target = { nm: [n, m] };
  } else if (o.sparsity !== undefined) target = { sparsity: checkSparsity(o.sparsity) };
  const quantOnly = !!o.quantize && o.sparsity === undefined && o.nm === undefined && !o.layerTarget;
  const blockSize = o.blockSize ?? CALIB_DEFAULTS.blockSize, percDamp = o.percDamp ?? (quantOnly ? CALIB_DEFAULTS.gptqPercDamp : CALIB_DEFAULTS.percDamp);
  if (!Number.isInteger(blockSize) || blockSize < 1) throw arg(`blockSize must be a positive integer (got ${blockSize})`);
  if (!(Number.isFinite(percDamp) && percDamp >= 0)) throw arg(`percDamp must be a finite number >= 0 (got ${percDamp})`);
  const refit = o.refit ?? CALIB_DEFAULTS.refit;
  if (!(Number.isInteger(refit) && refit >= 0 && refit <= 10000)) throw arg(`refit must be an integer from 0 to 10000 (got ${refit})`);
  if (!Array.isArray(o.calibration) || !o.calibration.length) throw arg('calibration needs at least one sample');
  if (o.cacheBudget !== undefined && !(typeof o.cacheBudget === 'number' && o.cacheBudget >= 0)) throw arg(`cacheBudget must be a number of bytes >= 0 (got ${String(o.cacheBudget)})`);
  if (o.cutStore !== undefined && o.cutStore !== 'file' && !(typeof o.cutStore === 'object' && o.cutStore && ['put', 'read', 'free'].every((k) => typeof (o.cutStore as unknown as Record<string, unknown>)[k] === 'function'))) throw arg(`cutStore must be 'file' or an object with put, read and free (got ${typeof o.cutStore === 'string' ? `"${o.cutStore}"` : typeof o.cutStore})`);
  const c = o.criterion ?? CALIB_DEFAULTS.criterion;
  if (typeof c !== 'function' && !CRITERIA.includes(c)) throw arg(`criterion must be magnitude, wanda or sparsegpt (got "${String(c)}")`);
  // The segments are run from memory with their initializers read in (graph-cut.ts); a Constant's,
  // a subgraph's or a function's external tensor would stay a reference to a file onnxruntime has not got.
  const initializers = new Set<TensorProto>(model.graph.initializer);
  for (const sp of model.graph.sparse_initializer ?? []) for (const t of [sp.values, sp.indices]) if (t) initializers.add(t);
  const elsewhere = model.externalTensors().find((t) => !initializers.has(t));
  if (elsewhere) {
    throw arg(`calibration runs the model from memory in onnxruntime, reading external data in for the graph's initializers only: "${elsewhere.name}" (a Constant, subgraph or function tensor) is external`, 'unsupported_environment');
  }
  // Layers left dense that have a grid (a language-model head kept dense) are quantized by GPTQ in
  // the same sweep, without a target: round-to-nearest for them would be the joint pass's weak spot.
  const gridOnly = new Set<CalibLayer>();
  const plan = (l: CalibLayer): Criterion | null => {
    if (quantOnly) return o.quantize!.grids.has(l.weight.name) ? 'sparsegpt' : null;
    const k = typeof c === 'function' ? c(l) : c;
    if ((k == null || k === 'dense') && o.quantize?.grids.has(l.weight.name)) { gridOnly.add(l); return 'sparsegpt'; }
    if (k == null || k === 'dense') return null;
    if (!CRITERIA.includes(k)) throw arg(`criterion of ${l.name} must be magnitude, wanda, sparsegpt or dense (got "${String(k)}")`);
    return k;
  };
  return { target, plan, blockSize, percDamp, refit, quantOnly, gridOnly };
}

/** A layer's own target: the per-layer one or the common one, checked (see layerTarget). */
function targetFor(o: CalibrateOptions, common: Target | undefined, l: CalibLayer, quantOnly: boolean): Target | undefined {
  if (quantOnly) return undefined;
  const t = o.layerTarget?.(l) ?? common;
  if (!t) throw new OnnxError('unsupported', `layer ${l.name} has no target (sparsity or nm)`, 'invalid_arguments');
  if (t.nm) {
    const [n, m] = t.nm;
    if (!(Number.isInteger(n) && Number.isInteger(m) && n >= 1 && m >= 1 && n <= m)) throw new OnnxError('unsupported', `nm of ${l.name} must be [n, m] with 1 <= n <= m (got ${JSON.stringify(t.nm)})`, 'invalid_nm_pattern');
    return { nm: [n, m] };
  }
  return { sparsity: checkSparsity(t.sparsity, `sparsity of ${l.name}`) };
}

/**
 * One layer pruned (unless quantize-only) and quantized on `grid`: SparseGPT's joint mode for the
 * sparsegpt criterion (one factorisation; its fallbacks are quantizeLayer's), else the criterion's
 * pruning and then GPTQ with the pruned zeros as its mask. Records the codes in `out`.
 */
function solveQuantized(p: {
  layer: CalibLayer; stored: Float32Array; stats?: LayerStats; criterion: Criterion; target?: Target; blockSize: number; percDamp: number; minVectors: number; grid: LayerGrid;
  method: 'gptq' | 'rtn'; actOrder: boolean; scaleSearch: boolean;
}, out: Map<string, CalibratedCodes>): { data: Float32Array; method: MethodUsed; notes: string[]; relError: number | null } {
  const { layer, stats, grid, target } = p;
  const bits = grid.reduceRange ? 7 : grid.bits;
  const group = grid.group > 0 ? grid.group : undefined;
  // int4 is written as MatMulNBits: onnxruntime's 16-level grid (grid.ts), the same in GPTQ's loop.
  const common = { layer, stats, bits, group, fullRange: grid.bits === 4, method: p.method, blockSize: p.blockSize, percDamp: p.percDamp, minVectors: p.minVectors, actOrder: p.actOrder, scaleSearch: p.scaleSearch };
  const nmFits = !target?.nm || allowsNm(layer, target.nm[1]);
  let q: LayerQuantizeResult;
  let method: MethodUsed = target ? p.criterion : 'dense';
  const notes: string[] = [];
  if (target && p.criterion === 'sparsegpt' && nmFits) {
    q = quantizeLayer({ ...common, stored: p.stored, target });
    if (q.method === 'rtn') method = 'magnitude';
  } else {
    let stored = p.stored;
    if (target) {
      const pr = pruneLayer({ ...common, stored, criterion: p.criterion, target });
      stored = pr.data;
      method = pr.method;
      notes.push(...pr.notes);
    }
    const w = viewValues(stored, layer);
    const keep = w.some((x) => x === 0) ? Uint8Array.from(w, (x) => (x === 0 ? 0 : 1)) : undefined;
    q = quantizeLayer({ ...common, stored, keep });
  }
  notes.push(...q.notes);
  const width = group ?? layer.cols;
  out.set(layer.weight.name, {
    qv: { rows: layer.rows, cols: layer.cols, codes: q.codes, scales: q.scales, groupsPerRow: Math.ceil(layer.cols / width), width },
    method: q.method, relError: q.relError, ...(q.notes.length ? { notes: q.notes } : {}),
  });
  return { data: q.data, method, notes, relError: q.relError };
}

/** Prunes `model` in place with calibration (see CalibrateOptions); the report counts what will be written. */
export async function calibratePrune(model: OnnxModel, opts: CalibrateOptions): Promise<CalibReport> {
  const { target, plan, blockSize, percDamp, refit, quantOnly, gridOnly } = validate(model, opts);
  const grids = opts.quantize?.grids;
  const quantized = grids ? new Map<string, CalibratedCodes>() : undefined;
  const { calibration, sequential = CALIB_DEFAULTS.sequential, minVectors = CALIB_DEFAULTS.minVectors, signal, onProgress = () => {} } = opts;
  const runner = toRunner(opts.ort, opts.sessionOptions);
  const t0 = now();
  const planned = findLayers(model).map((l) => ({ l, c: plan(l) })).filter((x): x is { l: CalibLayer; c: Criterion } => x.c !== null);
  const targetOf = new Map(planned.map(({ l }) => [l, targetFor(opts, target, l, quantOnly || gridOnly.has(l))]));
  const nmOf = (l: CalibLayer) => targetOf.get(l)?.nm;
  if (planned.length && planned.every(({ l }) => nmOf(l) && !allowsNm(l, nmOf(l)![1]))) {
    throw new OnnxError('unsupported', `nm ${nmOf(planned[0].l)!.join(':')} fits no layer of this model: no reduction axis is a multiple of ${nmOf(planned[0].l)![1]}`, 'invalid_nm_shape');
  }
  const criterionOf = new Map(planned.map(({ l, c }) => [l, c]));
  const layers = planned.map((x) => x.l);
  const total = layers.length;
  const before = model.weights.reduce((a, w) => a + w.numel, 0);
  // The pruning's figures count the layers it prunes; a dense layer quantized alongside is in the quantization's report.
  const prunableBefore = layers.reduce((a, l) => a + (gridOnly.has(l) ? 0 : l.weight.numel), 0);
  const reports: CalibLayerReport[] = [];
  const time = { capture: 0, statistics: 0, solve: 0, write: 0, report: 0 };
  const sharing: SharingStats = { consumers: 0, accumulated: 0, flops: 0, flopsUnshared: 0 };
  let done = 0;
  const check = () => { if (signal?.aborted) throw new CancelledError(); };
  const sweep = new Sweep(model, runner, calibration, { cacheBudget: opts.cacheBudget ?? CALIB_DEFAULTS.cacheBudget, cutStore: opts.cutStore === 'file' ? await fileCutStore() : opts.cutStore, reuse: true });
  const timeNow = (): CalibTime => timeOf(now() - t0, sweep.stats, time);
  // The weights still to be pruned: the sweep caches nothing computed from them.
  const changing = new Set(layers.map((l) => l.weight.name));
  const groups = captureGroups(layers, sequential);
  await withRollback(model, async (rollback) => {
    // onnxruntime-web's wasm backend can settle its promises without ever leaving the microtask queue:
    // a macrotask turn per group lets a worker receive its 'cancel' message (and a page repaint).
    for (const [gi, group] of groups.entries()) {
      await turn();
      check();
      const needs = group.filter((l) => (criterionOf.get(l) !== 'magnitude' || grids?.has(l.weight.name)) && l.stats && !(nmOf(l) && !allowsNm(l, nmOf(l)![1]) && !grids?.has(l.weight.name)));
      // Wanda reads only its inputs' norms, unless GPTQ then quantizes the layer through its Hessian
      const stats = new SharedStats(needs, opts.shareStatistics ?? true, (l) => criterionOf.get(l) === 'wanda' && !grids?.has(l.weight.name));
      try {
        if (needs.length) {
          const t1 = now(), ort1 = sweep.stats.ortMs, cut1 = sweep.stats.cutMs, st1 = time.statistics;
          await sweep.capture(stats.inputs(), (name, t) => {
            const t2 = now();
            stats.add(name, asF32(t), t.dims);
            time.statistics += now() - t2;
          }, {
            changing, hold: gi < groups.length - 1,
            onSample: (k) => { check(); onProgress({ done: done + (k / calibration.length) * group.length * 0.5, total, phase: 'capture', layer: group[0].name, time: timeNow() }); },
          });
          time.capture += now() - t1 - (sweep.stats.ortMs - ort1) - (sweep.stats.cutMs - cut1) - (time.statistics - st1);
          for (const k of ['consumers', 'accumulated', 'flops', 'flopsUnshared'] as const) sharing[k] += stats.sharing[k];
        }
        for (const l of group) {
          check();
          onProgress({ done, total, phase: 'prune', layer: l.name, time: timeNow() });
          const t1 = now();
          const shapeBefore = l.weight.dims.slice();
          const requested = criterionOf.get(l)!;
          const stored = model.readFloat(l.weight);
          const t2 = now();
          const grid = grids?.get(l.weight.name);
          const res = grid
            ? solveQuantized({ layer: l, stored, stats: stats.get(l), criterion: requested, target: targetOf.get(l), blockSize, percDamp, minVectors, grid, method: opts.quantize!.method ?? 'gptq', actOrder: opts.quantize!.actOrder ?? CALIB_DEFAULTS.actOrder, scaleSearch: opts.quantize!.scaleSearch ?? (targetOf.get(l) ? false : CALIB_DEFAULTS.scaleSearch) }, quantized!)
            : pruneLayer({ layer: l, stored, stats: stats.get(l), criterion: requested, target: targetOf.get(l)!, blockSize, percDamp, minVectors, refit });
          const t3 = now();
          if (res.method !== 'dense' || grid) rollback.write(l.weight, res.data, stored);
          changing.delete(l.weight.name);
          const t4 = now();
          if (!gridOnly.has(l)) reports.push({
            ...layerReport(model, l.weight, shapeBefore, res.notes.length ? res.notes.join('; ') : undefined),
            node: l.node, view: { rows: l.rows, cols: l.cols, transposed: l.transposed, group: l.group },
            requested, method: res.method, relError: res.relError, notes: res.notes, ms: Math.round(now() - t1),
          });
          const t5 = now();
          time.solve += t3 - t2;
          time.write += (t2 - t1) + (t4 - t3);
          time.report += t5 - t4;
          done++;
        }
      } finally {
        stats.free();
      }
    }
  });
  onProgress({ done: total, total, phase: 'done', layer: '', time: timeNow() });
  const after = model.weights.reduce((a, w) => a + w.numel, 0);
  const prunableAfter = reports.reduce((a, l) => a + l.params, 0);
  const zeros = reports.reduce((a, l) => a + l.zeros, 0);
  const ms = now() - t0;
  const s = sweep.stats;
  return {
    mode: target ? (target.nm ? 'nm' : 'sparsity') : planned.some(({ l }) => nmOf(l)) ? 'nm' : 'sparsity',
    options: { ...(!target || opts.layerTarget ? { target: 'per layer' } : target.nm ? { nm: target.nm.join(':') } : { sparsity: target.sparsity }), criterion: typeof opts.criterion === 'function' ? 'per layer' : opts.criterion ?? CALIB_DEFAULTS.criterion, sequential, blockSize, percDamp, refit, minVectors },
    params: { before, after, prunableBefore, prunableAfter }, zeros, sparsity: prunableAfter ? zeros / prunableAfter : 0,
    layers: reports, sequential, calibration: calibration.length, passes: s.sessions, sweep: { ...s }, hessians: sharing,
    ...(quantized ? { quantized } : {}), time: timeOf(ms, s, time), ms: Math.round(ms),
  };
}
