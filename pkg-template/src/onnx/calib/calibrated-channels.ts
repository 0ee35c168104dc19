// Channel removal that keeps the outputs, with calibration inputs: the removed channels are chosen
// with activation-aware scores (a consumer's input slice weighted by how much signal that input
// carries, as Wanda weighs weights), and each consumer of removed channels is compensated before the
// removal, sequentially in graph order: its removed input columns are zeroed and (sparsegpt) its
// kept columns reconstructed with SparseGPT on the captured inputs (`keep` = the kept columns), and
// the measured mean of what it lost, (W - W')·mean(x), goes into its bias.
//
// A consumer whose bias takes that shift loses only (W - W')(x - μ): the least-squares problem over
// its kept weights and its bias together is min E‖(W - W')(x - μ)‖², whose statistics are the centred
// C = H - n μ μᵀ, not the uncentred H = Σ x xᵀ. On H the kept weights would spend themselves imitating
// a removed channel's mean through the other channels' means, which the bias corrects anyway (and
// then twice: a constant channel removed from two consumers stops being exact). So SparseGPT's update
// and its refit run on C there, μ being each Hessian column's own mean (a Conv's im2col column,
// padding included, from the same vectors: Hessian.centered); a consumer without a bias path keeps H.
import * as sk from 'sparsekit-wasm';
import type { OnnxModel } from '../model.js';
import { transpose, DT } from '../model.js';
import { OnnxError } from '../errors.js';
import { ChannelPlan, removeChannels, resolveChannelOptions, type ChannelOptions } from '../channels/index.js';
import { unitStep } from '../channels/score.js';
import { findLayers, captureGroups, type CalibLayer } from './layers.js';
import { pruneLayer, viewValues, MIN_VECTORS_PER_INPUT } from './layer-prune.js';
import { toRunner, type ModelRunner, type OrtLike } from './ort-runner.js';
import type { InputSample } from './inputs.js';
import { CancelledError } from './cancel.js';
import type { CalibProgress } from './calibrate.js';
import { asF32 } from './tensor.js';
import { capture, Sweep } from './sweep.js';
import { WeightRollback } from './rollback.js';
import { CALIB_DEFAULTS, CHANNEL_SCORES, channelScoresText, type ChannelScore } from './defaults.js';
import { ShiftNodes } from './shift-nodes.js';
import { headInfluence, influenceSamples, type HeadUnit } from './head-influence.js';

export interface CalibratedChannelOptions extends Omit<ChannelOptions, 'keep' | 'inputScale' | 'biasShift' | 'apply'> {
  ort: OrtLike | ModelRunner;
  sessionOptions?: object;
  calibration: InputSample[];
  /**
   * 'wanda' (default): activation-aware scores and the measured means into the biases;
   * 'sparsegpt': the same, and each consumer's kept columns reconstructed with SparseGPT.
   */
  method?: 'wanda' | 'sparsegpt';
  /**
   * Channel scores: 'activations' (as above), 'weights' (the norms removeChannels uses), or
   * 'fluctuation': only what the consumers lose, each input's standard deviation times its weight
   * slice, relative to the consumer's whole output fluctuation (see `fluctuationScale`). Default:
   * 'influence': attention heads by their measured effect on the outputs, ranked over the model
   * (head-influence.ts, rankHeadsByInfluence; one onnxruntime run per head and sample, on at most
   * `CALIB_DEFAULTS.influenceSamples` samples and `influenceTokens` token positions), the other
   * groups by fluctuation. Default: 'influence'
   * where the groups hold attention heads, else 'activations' (CALIB_DEFAULTS; a language model's
   * job passes 'fluctuation').
   */
  score?: ChannelScore;
  /** 'remove' (default) or 'mask' (same function, shapes kept: what the tests compare against). */
  apply?: 'remove' | 'mask';
  percDamp?: number;
  blockSize?: number;
  minVectors?: number;
  /**
   * SparseGPT's refit steps after each consumer's compensation (default CALIB_DEFAULTS.refit; 0:
   * SparseGPT's own weights). On the centred statistics (see `centre`) the refit reaches the
   * least-squares optimum of the kept weights and the bias together.
   */
  refit?: number;
  /**
   * sparsegpt: compensate each consumer whose bias takes the mean shift on its inputs' centred
   * statistics (default true, the file comment says why); false: on the uncentred ones, with each
   * input channel's mean in the shift (the behaviour before centring, kept to compare against).
   */
  centre?: boolean;
  signal?: AbortSignal;
  onCalibProgress?: (p: CalibProgress) => void;
}

/** One head group under the 'influence' score: its heads, how many stay, each head's measured influence (1 − cos at the outputs). */
export interface HeadGroupReport { group: number; channels: number; kept: number; influence: number[] }

/** What calibration did to one consumer of removed channels. */
export interface ConsumerReport {
  name: string;
  op: string;
  /** Input columns zeroed before the removal (of the view's cols). */
  removedColumns: number;
  cols: number;
  method: 'sparsegpt' | 'mean' | 'none';
  /** The statistics SparseGPT ran on: 'centred' where the consumer's bias takes the mean shift. */
  statistics: 'centred' | 'uncentred' | null;
  /**
   * Relative reconstruction error of the consumer on the calibration inputs (API.md step 5), on the
   * statistics it ran on: centred, that is the error left after the bias shift relative to the
   * output's fluctuation.
   */
  relError: number | null;
  notes: string[];
}

/** Per-column sums of x and x² of a layer's input: a channel of a Conv input, a column of a MatMul / Gemm input. */
class ColumnMoments {
  readonly sum: Float64Array;
  readonly sq: Float64Array;
  count = 0;
  constructor(readonly n: number) { this.sum = new Float64Array(n); this.sq = new Float64Array(n); }
  add(x: Float32Array, dims: number[], conv: boolean) {
    if (conv) {
      const [N, C, H, W] = dims, plane = H * W;
      for (let b = 0; b < N; b++) for (let c = 0; c < C; c++) {
        const o = (b * C + c) * plane;
        let s = 0, q = 0;
        for (let i = 0; i < plane; i++) { const v = x[o + i]; s += v; q += v * v; }
        this.sum[c] += s; this.sq[c] += q;
      }
      this.count += N * plane;
    } else {
      const rows = x.length / this.n;
      for (let r = 0; r < rows; r++) for (let j = 0; j < this.n; j++) { const v = x[r * this.n + j]; this.sum[j] += v; this.sq[j] += v * v; }
      this.count += rows;
    }
  }
  mean(): Float64Array { return this.sum.map((s) => s / Math.max(1, this.count)); }
  rms(): Float64Array { return this.sq.map((q) => Math.sqrt(q / Math.max(1, this.count))); }
  variance(): Float64Array {
    const n = Math.max(1, this.count);
    return this.sq.map((q, j) => Math.max(0, q / n - (this.sum[j] / n) ** 2));
  }
}

/**
 * The 'fluctuation' scale of a consumer's inputs: sqrt(var_j / F), F = sum_j var_j * ||W_j||^2 over
 * its inputs j (W_j the weights reading input j). A removed input whose mean goes into the bias
 * costs the consumer's output var_j * ||W_j||^2 of variance (cross terms aside), so a channel's
 * squared score (its slices scaled by this) is its share of the consumer's output fluctuation: the
 * fluctuation metric of FLAP (An et al., "Fluctuation-based Adaptive Structured Pruning for Large
 * Language Models", AAAI 2024), made a share so that consumers of different scales (layers deep in
 * a residual stream that grows) compete in global scope.
 */
function fluctuationScale(m: ColumnMoments, view: Float32Array, rows: number, cols: number): Float64Array {
  const v = m.variance();
  const per = cols / v.length;
  const norm2 = new Float64Array(v.length);
  if (Number.isInteger(per) && per >= 1) {
    for (let o = 0; o < rows; o++) for (let j = 0; j < cols; j++) norm2[Math.floor(j / per)] += view[o * cols + j] ** 2;
  } else {
    norm2.fill(1); // a grouped conv's view does not split by input channel: the variance alone
  }
  const total = v.reduce((a, x, j) => a + x * norm2[j], 0);
  return v.map((x) => (total > 0 ? Math.sqrt(x / total) : 0));
}

/**
 * The kept heads re-chosen by measured influence (head-influence.ts). The measure is the model's
 * outputs', so it compares heads of different layers: the head groups share one budget, the heads the
 * score's per-group decision keeps in all of them, and the least influential heads of the model go,
 * each group keeping at least one (non-uniform per-layer counts, as OWL argues for sparsity ratios
 * and ShortGPT for whole layers; on all-MiniLM-L6-v2 `--channels 0.5` the measured allocation keeps
 * 7, 3, 3, 4, 7 and 12 of 12 heads in its six layers). Groups share a budget only with groups whose
 * heads are as wide and that may keep any count (roundTo); a group with a head no calibrated consumer
 * reads keeps the score's decision. Returns each re-chosen group's influence per head.
 */
async function rankHeadsByInfluence(model: OnnxModel, plan: ChannelPlan, base: ReturnType<typeof resolveChannelOptions>, keep: Map<number, Uint8Array>,
  consumers: Map<string, CalibLayer>, moments: Map<string, ColumnMoments>, runner: ModelRunner, calibration: InputSample[], check: () => void,
  progress: (p: CalibProgress) => void): Promise<Map<number, number[]>> {
  const units: HeadUnit[] = [];
  const measured: { id: number; first: number; width: number }[] = [];
  const means = new Map<string, Float64Array>();
  const meanOf = (l: CalibLayer) => means.get(l.name) ?? means.set(l.name, moments.get(l.name)!.mean()).get(l.name)!;
  for (const g of plan.headGroups(base)) {
    const chans = plan.channelsOf.get(g.id)!;
    if (!keep.has(g.id)) continue;
    const of = chans.map((ch) => {
      const byNode = new Map<string, HeadUnit['consumers'][number]>();
      for (const sl of ch.slices) {
        const l = sl.fold && consumers.get(sl.fold.weight);
        // a float32 projection's input rows only (the gate and offset are float32)
        if (!l || l.stats !== 'rows' || l.weight.dtype !== DT.FLOAT || sl.axis !== (l.transposed ? 0 : 1)) continue;
        const u = byNode.get(l.node) ?? byNode.set(l.node, { node: l.node, input: l.input, width: l.cols, positions: [], mean: meanOf(l) }).get(l.node)!;
        for (let p = sl.pos; p < sl.pos + sl.rep; p++) u.positions.push(p);
      }
      return byNode.size ? { consumers: [...byNode.values()] } : undefined;
    });
    if (of.some((u) => !u)) continue; // a head no calibrated consumer reads: the score's decision stands
    const width = unitStep(base.roundTo, chans) === 1 ? of[0]!.consumers.reduce((a, c) => a + c.positions.length, 0) : -g.id;
    measured.push({ id: g.id, first: units.length, width });
    units.push(...(of as HeadUnit[]));
  }
  const out = new Map<number, number[]>();
  if (!units.length) return out;
  const influence = await headInfluence(model, runner, influenceSamples(calibration, CALIB_DEFAULTS.influenceSamples, CALIB_DEFAULTS.influenceTokens), units, {
    check, onSample: (done, total) => progress({ done, total, phase: 'capture', layer: `influence of ${units.length} heads` }),
  });
  for (const width of new Set(measured.map((m) => m.width))) {
    const groups = measured.filter((m) => m.width === width);
    let budget = 0;
    const heads: { k: Uint8Array; c: number; v: number }[] = [];
    for (const m of groups) {
      const k = keep.get(m.id)!;
      budget += k.reduce((a, v) => a + v, 0);
      const v = Array.from(influence.subarray(m.first, m.first + k.length));
      out.set(m.id, v);
      k.fill(0);
      // each group's most influential head first: a group is never emptied
      const best = v.reduce((b, x, c) => (x > v[b] ? c : b), 0);
      k[best] = 1;
      budget--;
      v.forEach((x, c) => { if (c !== best) heads.push({ k, c, v: x }); });
    }
    // most influential first; ties in model order
    heads.sort((a, b) => b.v - a.v);
    for (const h of heads.slice(0, Math.max(0, budget))) h.k[h.c] = 1;
  }
  return out;
}

/**
 * removeChannels with calibration (see the file comment): same options and report, plus
 * `compensation` per consumer. In place; a refused option changes nothing.
 */
export async function removeChannelsCalibrated(model: OnnxModel, opts: CalibratedChannelOptions) {
  const method = opts.method ?? 'wanda';
  const given = opts.score;
  if (given !== undefined && !(CHANNEL_SCORES as readonly string[]).includes(given)) throw new OnnxError('unsupported', `score must be ${channelScoresText} (got "${String(given)}")`, 'invalid_arguments');
  if (method !== 'wanda' && method !== 'sparsegpt') throw new OnnxError('unsupported', `method must be wanda or sparsegpt (got "${String(method)}")`, 'invalid_arguments');
  if (opts.apply !== undefined && opts.apply !== 'remove' && opts.apply !== 'mask') throw new OnnxError('unsupported', `apply must be remove or mask (got "${String(opts.apply)}")`, 'invalid_arguments');
  const base = resolveChannelOptions({ fraction: opts.fraction, scope: opts.scope, roundTo: opts.roundTo, heads: opts.heads, filter: opts.filter, fold: opts.fold, onProgress: opts.onProgress });
  if (!Array.isArray(opts.calibration) || !opts.calibration.length) throw new OnnxError('unsupported', 'calibration needs at least one sample', 'invalid_arguments');
  if (model.externalTensors().length) {
    throw new OnnxError('unsupported', 'calibration runs the model from memory in onnxruntime: models with external data are not supported yet', 'unsupported_environment');
  }
  const { calibration, signal, percDamp = CALIB_DEFAULTS.percDamp, blockSize = CALIB_DEFAULTS.blockSize, minVectors = MIN_VECTORS_PER_INPUT, onCalibProgress = () => {} } = opts;
  const refit = opts.refit ?? CALIB_DEFAULTS.refit;
  if (!(Number.isInteger(refit) && refit >= 0 && refit <= 10000)) throw new OnnxError('unsupported', `refit must be an integer from 0 to 10000 (got ${String(refit)})`, 'invalid_arguments');
  if (opts.centre !== undefined && typeof opts.centre !== 'boolean') throw new OnnxError('unsupported', `centre must be a boolean (got ${String(opts.centre)})`, 'invalid_arguments');
  const centre = opts.centre ?? true;
  const runner = toRunner(opts.ort, opts.sessionOptions);
  const check = () => { if (signal?.aborted) throw new CancelledError(); };
  // One plan from the analysis through the scores, the compensation and the removal.
  const plan = ChannelPlan.analyze(model, base.heads);
  // Influence moves heads between layers; query heads in KV groups must leave every group alike.
  const queryHeads = plan.live(base).some((g) => g.runs);
  const score = given ?? (queryHeads ? CALIB_DEFAULTS.transformerChannelScore : plan.hasHeads(base) ? CALIB_DEFAULTS.headChannelScore : CALIB_DEFAULTS.channelScore);
  if (score === 'influence' && queryHeads) {
    throw new OnnxError('unsupported', 'score "influence" ranks heads across layers, which query heads within KV groups (heads "query") cannot follow: use "fluctuation"', 'invalid_arguments');
  }
  // The consumers of the accepted groups' channels (where removed channels fold) that calibration sees.
  const layerOf = new Map(findLayers(model).map((l) => [l.name, l]));
  const consumers = new Map<string, CalibLayer>();
  for (const w of plan.consumers(base)) {
    const l = layerOf.get(w);
    if (l && (l.stats === 'conv' || l.stats === 'rows')) consumers.set(l.name, l);
  }
  const ordered = [...consumers.values()].sort((a, b) => a.index - b.index);
  const total = ordered.length;

  // 1. Scores: each consumer's input slice weighted by its input's RMS relative to the layer's mean RMS.
  let inputScale: Map<string, Float64Array> | undefined;
  let moments: Map<string, ColumnMoments> | undefined;
  if (score !== 'weights' && ordered.length) {
    moments = new Map(ordered.map((l) => [l.name, new ColumnMoments(l.stats === 'conv' ? l.weight.dims[1] : l.cols)]));
    const byInput = new Map<string, CalibLayer[]>();
    for (const l of ordered) (byInput.get(l.input) ?? byInput.set(l.input, []).get(l.input)!).push(l);
    onCalibProgress({ done: 0, total, phase: 'capture', layer: 'scores' });
    await capture(runner, model, [...byInput.keys()], calibration, (name, t) => {
      const x = asF32(t);
      for (const l of byInput.get(name)!) moments!.get(l.name)!.add(x, t.dims, l.stats === 'conv');
    }, check);
    inputScale = new Map();
    for (const l of ordered) {
      if (score === 'fluctuation' || score === 'influence') {
        inputScale.set(l.name, fluctuationScale(moments.get(l.name)!, viewValues(model.readFloat(l.weight), l), l.rows, l.cols));
        continue;
      }
      const rms = moments.get(l.name)!.rms();
      const mean = rms.reduce((a, b) => a + b, 0) / Math.max(1, rms.length);
      inputScale.set(l.name, rms.map((v) => (mean > 0 ? v / mean : 1)));
    }
  }
  const keep = plan.decide({ ...base, inputScale, scoreSlices: score === 'fluctuation' || score === 'influence' ? 'consumers' : 'all' });
  const headInfluences = score === 'influence' && moments ? await rankHeadsByInfluence(model, plan, base, keep, consumers, moments, runner, calibration, check, onCalibProgress) : undefined;

  // 2. What each consumer loses: positions along its slice axis.
  const cuts = plan.cuts(keep, new Set(consumers.keys()));

  // 3. Compensate the consumers, sequentially: each is captured on the model with the earlier ones
  // compensated, their weights and (through ShiftNodes) the means of what they lost.
  const biasShift = new Map<string, Float64Array>();
  const reports: ConsumerReport[] = [];
  const todo = ordered.filter((l) => cuts.has(l.name));
  let done = 0;
  // A failed or cancelled run puts back every weight it changed.
  const rollback = new WeightRollback(model);
  // One sweep for all the captures: each runs only the segment from the previous cut to its inputs,
  // so the sequential compensation costs about one run of the model instead of one per consumer
  // group (on a 30-layer decoder, 60 runs of ever longer prefixes). What is computed from a consumer
  // not yet compensated is not cached.
  const scaleOf = new Map<string, number>();
  for (const chans of plan.channelsOf.values()) for (const ch of chans) for (const sl of ch.slices) if (sl.fold) scaleOf.set(sl.fold.weight, sl.fold.scale);
  // Whose bias takes the shift: a consumer with a fold (the removal adds its biasShift there), when
  // folding is on. The others get no shift, and their compensation keeps the uncentred statistics.
  const takesShift = (l: CalibLayer) => base.fold && scaleOf.has(l.weight.name);
  const shifts = new ShiftNodes(model, todo.filter(takesShift), (w) => scaleOf.get(w));
  const changing = new Set([...todo.map((l) => l.weight.name), ...shifts.names()]);
  const groups = captureGroups(todo, true);
  try {
    const sweep = new Sweep(model, runner, calibration);
    for (const [gi, group] of groups.entries()) {
      check();
      // The shift's means: each Hessian column's where there is a Hessian and the statistics are
      // centred (the same vectors as C), else each input channel's (Wanda, and centre: false).
      const stats = new Map(group.map((l) => [l.name, {
        moments: method === 'wanda' || !centre ? new ColumnMoments(l.stats === 'conv' ? l.weight.dims[1] : l.cols) : undefined,
        h: method === 'sparsegpt' ? new sk.Hessian(l.cols) : undefined,
      }]));
      try {
        onCalibProgress({ done, total: todo.length, phase: 'capture', layer: group[0].name });
        const byInput = new Map<string, CalibLayer[]>();
        for (const l of group) (byInput.get(l.input) ?? byInput.set(l.input, []).get(l.input)!).push(l);
        await sweep.capture([...byInput.keys()], (name, t) => {
          const x = asF32(t);
          for (const l of byInput.get(name)!) {
            const s = stats.get(l.name)!;
            s.moments?.add(x, t.dims, l.stats === 'conv');
            if (s.h) { if (l.stats === 'conv') s.h.addConv(x, t.dims, l.conv!); else s.h.addRows(x, x.length / l.cols); }
          }
        }, { changing, hold: gi < groups.length - 1, onSample: check });
        for (const l of group) {
          check();
          onCalibProgress({ done, total: todo.length, phase: 'prune', layer: l.name });
          const s = stats.get(l.name)!;
          const cut = cuts.get(l.name)!;
          const dims = l.weight.dims;
          // Keep-mask in the stored layout (the cut positions of the slice axis), then in the view's.
          const stored = new Uint8Array(l.weight.numel).fill(1);
          const inner = dims.slice(cut.axis + 1).reduce((a, b) => a * b, 1), outer = dims.slice(0, cut.axis).reduce((a, b) => a * b, 1);
          for (let o = 0; o < outer; o++) for (const p of cut.positions) stored.fill(0, (o * dims[cut.axis] + p) * inner, (o * dims[cut.axis] + p + 1) * inner);
          const keepView = l.transposed ? transpose(stored, l.cols, l.rows) : stored;
          const w0 = model.readFloat(l.weight);
          const useGpt = !!s.h && s.h.count >= minVectors * l.cols;
          const notes: string[] = [];
          if (s.h && !useGpt) notes.push(`${s.h.count} calibration vectors for ${l.cols} inputs: too few for SparseGPT's update; means only`);
          const shifted = takesShift(l);
          const centred = useGpt && centre && shifted ? s.h!.centered() : undefined;
          let res;
          try {
            res = pruneLayer({ layer: l, stored: w0, stats: useGpt ? { h: centred ?? s.h } : {}, criterion: useGpt ? 'sparsegpt' : 'magnitude', target: { sparsity: 0 }, keep: keepView, blockSize, percDamp, refit });
          } finally {
            centred?.free();
          }
          rollback.write(l.weight, res.data, w0);
          changing.delete(l.weight.name);
          if (shifted) {
            // (W - W')·mean(x) per output, in the view layout: with a Hessian and centre, each
            // column's own mean; else a Conv column (c, i, j) sees channel c's mean.
            const mu = s.moments ? s.moments.mean() : s.h!.inputMeans();
            const v0 = viewValues(w0, l), v1 = viewValues(res.data, l);
            const per = l.cols / mu.length;
            const shift = new Float64Array(l.rows);
            for (let o = 0; o < l.rows; o++) {
              let acc = 0;
              for (let j = 0; j < l.cols; j++) acc += (v0[o * l.cols + j] - v1[o * l.cols + j]) * mu[Math.floor(j / per)];
              shift[o] = acc;
            }
            shifts.set(l.name, shift);
            changing.delete(shifts.nameOf(l.name) ?? '');
            biasShift.set(l.name, shift);
          } else {
            notes.push(`no bias to take the mean of what it loses (no fold): no shift${useGpt ? ', uncentred statistics' : ''}`);
          }
          reports.push({ name: l.name, op: l.op, removedColumns: keepView.reduce((a, k) => a + (k ? 0 : 1), 0) / l.rows, cols: l.cols,
            method: useGpt ? 'sparsegpt' : 'mean', statistics: useGpt ? (centred ? 'centred' : 'uncentred') : null, relError: res.relError, notes: [...notes, ...res.notes] });
          done++;
        }
      } finally {
        for (const s of stats.values()) s.h?.free();
      }
    }
  } catch (e) {
    rollback.restore();
    throw e;
  } finally {
    shifts.restore();
  }
  onCalibProgress({ done: todo.length, total: todo.length, phase: 'done', layer: '' });
  // 4. The removal itself, with the decision above and the measured means in the biases.
  const report = removeChannels(model, { ...base, keep, biasShift, apply: opts.apply ?? 'remove' }, plan);
  const heads: HeadGroupReport[] | undefined = headInfluences && [...headInfluences].map(([id, influence]) => ({ group: id, channels: influence.length, kept: keep.get(id)!.reduce((a, v) => a + v, 0), influence }));
  return { ...report, options: { ...report.options, method, score, calibration: calibration.length, percDamp, refit, centre: method === 'sparsegpt' && centre }, compensation: reports, ...(heads ? { heads } : {}) };
}
