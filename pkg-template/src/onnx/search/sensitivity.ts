// Sensitivity analysis: each layer (weights mode) or channel group (channels mode) pruned alone at
// each level, the model's fidelity against the original measured on held-out samples. Weights are
// pruned in the model's memory, fed to one session as a replacement of their initializer (SwapSession)
// and put back: no re-serialisation and no session per cell. A channel cell masks its group (the same
// function as removing it, shapes kept) and feeds the changed tensors the same way (channel-feeds.ts).
import type { OnnxModel, OnnxWeight } from '../model.js';
import { OnnxModel as Model } from '../model.js';
import { OnnxError } from '../errors.js';
import { countZeros, pruneNm, pruneSparsity } from '../prune.js';
import { findChannelGroups, removeChannels, type HeadUnit } from '../channels.js';
import { findLayers } from '../calib/layers.js';
import { pruneLayer } from '../calib/layer-prune.js';
import { CALIB_DEFAULTS } from '../calib/defaults.js';
import { toRunner, type ModelRunner, type OrtLike } from '../calib/ort-runner.js';
import type { InputSample } from '../calib/inputs.js';
import type { Outputs } from '../calib/evaluate.js';
import { CancelledError } from '../calib/cancel.js';
import { fidelity, type FidelityOptions } from './fidelity-link.js';
import { newCounter, runBytes, SwapSession, weightFeed, type RunCounter } from './model-runs.js';
import { captureAllStats } from './layer-stats.js';
import { layerPositions } from './costs.js';
import { LatencyProbe } from './latency.js';
import { maskFeeds } from './channel-feeds.js';
import { floatBytes, servedBytes, type ByteSizer } from '../served-bytes.js';
import type { QuantizeOptions } from '../quant/quantize.js';
import { quantCellPlan, quantCells, type CellRun } from './quant-cells.js';

export type SearchMode = 'sparsity' | 'nm' | 'channels';
export type Method = 'magnitude' | 'wanda' | 'sparsegpt';

export interface SensitivityOptions {
  /** onnxruntime (namespace) or a runner. */
  ort: OrtLike | ModelRunner;
  sessionOptions?: object;
  /** Held-out samples the fidelity is measured on. */
  eval: InputSample[];
  /** Calibration samples for wanda / sparsegpt (weights mode); default: the eval samples are refused, give your own. */
  calibration?: InputSample[];
  mode: SearchMode;
  /** Sparsity levels, or channel fractions (default 0.25 0.5 0.75 for sparsity; 0.125 0.25 0.375 0.5 for channels). */
  levels?: number[];
  /** N:M (mode 'nm'): one level per layer. */
  nm?: [number, number];
  /** Weights mode: magnitude (default), wanda or sparsegpt. Channels: plain removal (see docs/guides/search.md). */
  method?: Method;
  /** Channels: kept count rounded to a multiple of this (default 8). */
  roundTo?: number;
  /** Channels: grouped-query attention's unit (HeadUnit; default 'groups'). */
  heads?: HeadUnit;
  percDamp?: number;
  /** Channels: also time each cell against the unpruned model (interleaved runs of one sample, after warm-up). */
  measureLatency?: boolean;
  /** Also estimate each cell's compressed bytes saved (served-bytes.ts), the `bytes` objective's gain. */
  measureBytes?: ByteSizer;
  /**
   * Weights mode: also the quantized options (the mixed search, quant-cells.ts): each layer dense
   * and at its levels in these options' bits, and each embedding table as a unit of its own.
   */
  quantize?: QuantizeOptions;
  /** Timed runs per model and cell for measureLatency (default 5). */
  latencyRuns?: number;
  /**
   * Once a unit's fidelity falls below this, its higher levels are not run (their fidelity is taken
   * as that level's, an upper bound): a plan that needs a floor above it cannot use them anyway.
   */
  stopBelow?: number;
  /**
   * Channels: measure a cell's fidelity on the masked model fed to one session (default true; see
   * channel-feeds.ts) instead of a session over the removed model. False: a session per cell.
   */
  maskCells?: boolean;
  /** Options for the fidelity measure (output kinds). */
  fidelityOptions?: FidelityOptions;
  signal?: AbortSignal;
  onProgress?: (p: { done: number; total: number; unit: string; level: number | string }) => void;
}

export interface SensitivityCell {
  /** The pruning level ('dense' for a quantized cell that prunes nothing). */
  level: number | string;
  /** The bits of a quantized cell (absent: float). */
  quantize?: 'int8' | 'int4';
  /** The model's fidelity with this unit alone pruned at this level, [0, 1]. */
  fidelity: number;
  worst: string;
  /** Parameters removed (weights mode: zeros added; channels: elements deleted). */
  removed: number;
  /** Multiply-accumulates removed per sample (removed weights times the positions they are applied at). */
  flops: number;
  /**
   * 1 - the smallest per-sample cosine of all outputs together: a continuous companion of the
   * fidelity (which counts decisions, so a small change often scores exactly 1); the allocation's cost
   * of a cell is the larger of the two losses.
   */
  cosineLoss: number;
  /** True when the model was not run for this cell (stopBelow): its fidelity is the previous level's, an upper bound. */
  skipped?: boolean;
  /** Channels with measureLatency: median time saved per run (ms), measured interleaved with the unpruned model (0, not timed, below stopBelow). */
  latencyMs?: number;
  /** With measureBytes: compressed bytes of the download saved (estimated, served-bytes.ts). */
  bytes?: number;
}

export interface SensitivityUnit {
  name: string;
  op: string;
  params: number;
  /** An embedding table: a unit of the mixed search for its bits only. */
  table?: true;
  cells: SensitivityCell[];
  note?: string;
}

export interface SensitivityResult {
  mode: SearchMode;
  method: Method;
  levels: (number | string)[];
  units: SensitivityUnit[];
  /** Fidelity of the unpruned model in the same sessions (1 unless the runtime is not deterministic). */
  baseline: number;
  samples: number;
  /** onnxruntime sessions and model runs, and their time; the rest of `ms.total` is the library's. */
  sessions: number;
  runs: number;
  ms: { total: number; model: number; library: number };
}

export const DEFAULT_LEVELS = { sparsity: [0.25, 0.5, 0.75], channels: [0.125, 0.25, 0.375, 0.5] } as const;

export function checkLevels(levels: number[], mode: SearchMode): number[] {
  if (!Array.isArray(levels) || !levels.length) throw new OnnxError('unsupported', 'levels must be a non-empty list', 'invalid_arguments');
  for (const l of levels) {
    if (typeof l !== 'number' || !(l > 0) || l > 1 || (mode === 'channels' && l >= 1)) {
      throw new OnnxError('unsupported', `a ${mode} level must be in (0, ${mode === 'channels' ? '1)' : '1]'} (got ${l})`, 'invalid_sparsity');
    }
  }
  return [...new Set(levels)].sort((a, b) => a - b);
}

/** The per-unit, per-level fidelity table (see the file comment). The model is left as it was. */
export async function sensitivity(model: OnnxModel, opts: SensitivityOptions): Promise<SensitivityResult> {
  const t0 = performance.now();
  const mode = opts.mode;
  const method = opts.method ?? 'magnitude';
  if (!['sparsity', 'nm', 'channels'].includes(mode)) throw new OnnxError('unsupported', `mode must be sparsity, nm or channels (got ${String(mode)})`, 'invalid_arguments');
  if (!['magnitude', 'wanda', 'sparsegpt'].includes(method)) throw new OnnxError('unsupported', `method must be magnitude, wanda or sparsegpt (got ${String(method)})`, 'invalid_arguments');
  if (!Array.isArray(opts.eval) || !opts.eval.length) throw new OnnxError('unsupported', 'sensitivity needs at least one eval sample', 'invalid_arguments');
  if (mode === 'nm' && !opts.nm) throw new OnnxError('unsupported', 'mode nm needs nm: [n, m]', 'invalid_arguments');
  if (method !== 'magnitude' && mode !== 'channels' && !opts.calibration?.length) throw new OnnxError('unsupported', `method ${method} needs calibration samples`, 'invalid_arguments');
  if (opts.quantize && mode === 'channels') throw new OnnxError('unsupported', 'quantized cells apply to the sparsity and nm modes (channel removal has no per-layer bits)', 'invalid_arguments');
  if (model.externalTensors().length) throw new OnnxError('unsupported', 'the search runs the model from memory in onnxruntime: models with external data are not supported yet', 'unsupported_environment');
  const levels: (number | string)[] = mode === 'nm' ? [opts.nm!.join(':')] : checkLevels(opts.levels ?? [...DEFAULT_LEVELS[mode]], mode);
  const runner = toRunner(opts.ort, opts.sessionOptions);
  const count = newCounter();
  const check = () => { if (opts.signal?.aborted) throw new CancelledError(); };
  // the held-out samples' token ids and masks: perplexity's targets, padding left out (fidelity/language-model.ts)
  const score = (ref: Outputs[], out: Outputs[]) => fidelity(ref, out, { ...opts.fidelityOptions, inputs: opts.eval });
  const positions = await layerPositions(model, runner, opts.eval[0], count);
  const res = mode === 'channels'
    ? await channelCells(model, runner, levels as number[], opts, count, score, positions, check)
    : await weightCells(model, runner, levels, opts, method, count, score, positions, check);
  const total = performance.now() - t0;
  return {
    mode, method: mode === 'channels' ? 'magnitude' : method, levels, units: res.units, baseline: res.baseline, samples: opts.eval.length,
    sessions: count.sessions, runs: count.runs, ms: { total, model: count.ms, library: total - count.ms },
  };
}

type Score = (ref: Outputs[], out: Outputs[]) => { score: number; worst: string };

/** 1 - the smallest over samples of the cosine of all outputs together (see SensitivityCell.cosineLoss). */
export function cosineLoss(ref: Outputs[], out: Outputs[]): number {
  let worst = 0;
  ref.forEach((r, i) => {
    let d = 0, a = 0, b = 0;
    for (const k of Object.keys(r)) {
      const x = r[k], y = out[i][k];
      for (let j = 0; j < x.length; j++) { d += x[j] * y[j]; a += x[j] * x[j]; b += y[j] * y[j]; }
    }
    const c = a === 0 && b === 0 ? 1 : a === 0 || b === 0 || !Number.isFinite(d) ? 0 : d / Math.sqrt(a * b);
    worst = Math.max(worst, 1 - c);
  });
  return Math.max(0, worst);
}

async function weightCells(model: OnnxModel, runner: ModelRunner, levels: (number | string)[], opts: SensitivityOptions, method: Method,
  count: RunCounter, score: Score, positions: Map<string, number>, check: () => void) {
  const ws = model.prunable();
  const layers = new Map(findLayers(model).map((l) => [l.name, l]));
  const qplan = opts.quantize ? quantCellPlan(model, opts.quantize) : null;
  const swap = await SwapSession.open(model, runner, [...ws, ...(qplan?.tables.map((t) => t.w) ?? [])].map((w) => w.name), opts.eval, count);
  const captured = method === 'magnitude' ? null : await captureAllStats(model, [...layers.values()], runner, opts.calibration!, count, opts.signal);
  const units: SensitivityUnit[] = [];
  try {
    const reference = await swap.run({}, opts.signal);
    const baseline = score(reference, reference).score;
    const runWith = async (w: OnnxWeight, values: Float32Array): Promise<Outputs[]> => {
      if (swap.names.has(w.name)) return swap.run({ [w.name]: weightFeed(w.tensor, values) }, opts.signal);
      // A weight stored as a Constant node: one session over the model with the changed value.
      const original = model.readFloat(w);
      model.writeFloat(w, values);
      try { return await runBytes(runner, model.encode(), opts.eval, count, opts.signal); } finally { model.writeFloat(w, original); }
    };
    const cellRun: CellRun = {
      model, runWith, sizer: opts.measureBytes, stopBelow: opts.stopBelow, check,
      score: (out) => { const s = score(reference, out); return { fidelity: s.score, worst: s.worst, cosineLoss: cosineLoss(reference, out) }; },
    };
    const total = ws.length * levels.length;
    let done = 0;
    for (const w of ws) {
      const original = model.readFloat(w);
      const zeros0 = countZeros(original);
      // float32 bytes on both sides: what the zeros save, whatever the stored type
      const denseBytes = opts.measureBytes ? await servedBytes(opts.measureBytes, floatBytes(original)) : 0;
      const cells: SensitivityCell[] = [];
      const prunedAt: Float32Array[] = [];
      let note: string | undefined;
      for (const level of levels) {
        check();
        opts.onProgress?.({ done, total, unit: w.name, level });
        let pruned: Float32Array;
        const l = layers.get(w.name);
        const target = typeof level === 'number' ? { sparsity: level } : { nm: opts.nm! };
        if (method !== 'magnitude' && l) {
          const r = pruneLayer({ layer: l, stored: original, stats: captured!.stats.get(w.name), criterion: method, target, percDamp: opts.percDamp ?? CALIB_DEFAULTS.percDamp });
          pruned = r.data;
          if (r.notes.length) note = r.notes.join('; ');
        } else {
          // The same code path as the whole-model prune, restricted to this layer; then put back.
          const rep = typeof level === 'number'
            ? pruneSparsity(model, { layerTarget: (x) => (x.name === w.name ? level : null) })
            : pruneNm(model, { layerTarget: (x) => (x.name === w.name ? opts.nm! : null) });
          const lr = rep.layers.find((x) => x.name === w.name);
          if (lr?.note && !/per-layer plan/.test(lr.note)) note = lr.note;
          pruned = model.readFloat(w);
          model.writeFloat(w, original);
        }
        if (qplan) prunedAt.push(pruned);
        const removed = countZeros(pruned) - zeros0;
        const byteGain = opts.measureBytes ? { bytes: removed > 0 ? denseBytes - await servedBytes(opts.measureBytes, floatBytes(pruned)) : 0 } : {};
        const prev = cells[cells.length - 1];
        if (prev && opts.stopBelow !== undefined && prev.fidelity < opts.stopBelow && removed > 0) {
          cells.push({ ...prev, level, removed, flops: removed * (positions.get(w.name) ?? 0), skipped: true, ...byteGain });
          done++;
          continue;
        }
        const out = removed === 0 ? reference : await runWith(w, pruned);
        const s = out === reference ? { score: baseline, worst: '' } : score(reference, out);
        cells.push({ level, fidelity: s.score, worst: s.worst, cosineLoss: out === reference ? 0 : cosineLoss(reference, out), removed, flops: removed * (positions.get(w.name) ?? 0), ...byteGain });
        done++;
      }
      if (qplan) cells.push(...await quantCells(cellRun, qplan, w, original, denseBytes, cells.slice(), prunedAt, positions.get(w.name) ?? 0));
      units.push({ name: w.name, op: w.op, params: w.numel, cells, ...(note ? { note } : {}) });
    }
    // the embedding tables: units of their bits only
    for (const t of qplan?.tables ?? []) {
      opts.onProgress?.({ done, total, unit: t.w.name, level: 'dense' });
      const original = model.readFloat(t.w);
      const denseBytes = opts.measureBytes ? await servedBytes(opts.measureBytes, floatBytes(original)) : 0;
      units.push({ name: t.w.name, op: 'Gather', params: t.w.numel, table: true, cells: await quantCells(cellRun, qplan!, t.w, original, denseBytes, [], [], 0) });
    }
    opts.onProgress?.({ done: total, total, unit: '', level: '' });
    return { units, baseline };
  } finally {
    await swap.release();
    captured?.free();
  }
}

async function channelCells(model: OnnxModel, runner: ModelRunner, levels: number[], opts: SensitivityOptions,
  count: RunCounter, score: Score, positions: Map<string, number>, check: () => void) {
  const bytes = model.encode();
  const groups = findChannelGroups(model, opts.heads).groups.filter((g) => g.prunable && g.producers.length);
  const numel = (m: OnnxModel) => new Map(m.weights.map((w) => [w.name, w.numel]));
  const before = numel(model);
  // compressed bytes per element of each tensor, as stored: what deleting an element saves
  const perElement = new Map<string, number>();
  const servedPer = async (name: string): Promise<number> => {
    if (!opts.measureBytes) return 0;
    let v = perElement.get(name);
    if (v === undefined) {
      const w = model.weights.find((x) => x.name === name);
      v = w && w.numel ? (await servedBytes(opts.measureBytes, model.tensorBytes(w.tensor))) / w.numel : 0;
      perElement.set(name, v);
    }
    return v;
  };
  // Every cell's feeds first (see channel-feeds.ts), so that one session takes all the tensors they change.
  const feeds = groups.map((g) => levels.map((level) => (opts.maskCells === false ? null : maskFeeds(model, bytes, g, level, opts.roundTo, opts.heads))));
  const swapped = [...new Set(feeds.flat().flatMap((f) => (f ? Object.keys(f) : [])))];
  let swap: SwapSession | null = null, timer: LatencyProbe | null = null;
  const units: SensitivityUnit[] = [];
  try {
    if (swapped.length) swap = await SwapSession.open(model, runner, swapped, opts.eval, count);
    if (opts.measureLatency) timer = await LatencyProbe.open(runner, bytes, opts.eval[0], count, opts.latencyRuns ?? 5);
    const reference = swap ? await swap.run({}, opts.signal) : await runBytes(runner, bytes, opts.eval, count, opts.signal);
    const baseline = score(reference, reference).score;
    const total = groups.length * levels.length;
    let done = 0;
    for (const [gi, g] of groups.entries()) {
      const cells: SensitivityCell[] = [];
      // The parameters of the tensors the group's channels run through (filters, consumer slices, BN).
      const params = [...new Set(g.members.filter((x) => x.kind !== 'shape').map((x) => x.tensor))].reduce((a, t) => a + (before.get(t) ?? 0), 0);
      for (const [li, level] of levels.entries()) {
        check();
        opts.onProgress?.({ done, total, unit: g.producers[0], level });
        const m = Model.parse(bytes);
        removeChannels(m, { fraction: level, scope: 'layer', roundTo: opts.roundTo, heads: opts.heads, filter: (x) => x.producers[0] === g.producers[0] });
        const after = numel(m);
        let removed = 0, flops = 0, saved = 0;
        for (const [name, n] of before) {
          const d = n - (after.get(name) ?? 0);
          removed += d;
          flops += d * (positions.get(name) ?? 0);
          if (d) saved += d * await servedPer(name);
        }
        const byteGain = opts.measureBytes ? { bytes: saved } : {};
        let latencyMs: number | undefined;
        let out = reference;
        const prev = cells[cells.length - 1];
        if (prev && opts.stopBelow !== undefined && prev.fidelity < opts.stopBelow && removed > 0) {
          cells.push({ ...prev, level, removed, flops, skipped: true, ...(timer ? { latencyMs: prev.latencyMs } : {}), ...byteGain });
          done++;
          continue;
        }
        if (removed > 0) {
          const f = feeds[gi][li];
          out = f && swap ? await swap.run(f, opts.signal) : await runBytes(runner, m.encode(), opts.eval, count, opts.signal);
        } else if (timer) latencyMs = 0;
        const s = out === reference ? { score: baseline, worst: '' } : score(reference, out);
        // A cell below stopBelow is one no plan can use (see stopBelow): it is not timed, and gains nothing.
        if (timer && removed > 0) latencyMs = opts.stopBelow !== undefined && s.score < opts.stopBelow ? 0 : await timer.saved(m.encode());
        cells.push({ level, fidelity: s.score, worst: s.worst, cosineLoss: out === reference ? 0 : cosineLoss(reference, out), removed, flops, ...(latencyMs !== undefined ? { latencyMs } : {}), ...byteGain });
        done++;
      }
      units.push({ name: g.producers[0], op: `group of ${g.channels} channels`, params, cells });
    }
    opts.onProgress?.({ done: total, total, unit: '', level: '' });
    return { units, baseline };
  } finally {
    await swap?.release();
    await timer?.release();
  }
}
