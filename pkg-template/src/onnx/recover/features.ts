// Matched intermediate tensors for distillation (FitNets' hints; the block outputs that BRECQ-style
// reconstruction fits): besides the outputs, the student is pulled towards the teacher at a few
// points inside the network. When a pruned model's outputs carry no signal yet (a recognizer that
// reads nothing scores fidelity 0 and its logit loss is dominated by symbols no line uses), the
// early blocks still get a gradient that says what they should compute.
//
// Which tensors: cut points of the student's graph — a tensor that is, at that position in the
// node order, the only activation alive (every later node reads only it, constants and its
// descendants), i.e. a block boundary. A channel-pruned tensor is matched on the kept channels:
// the student's channel c is the teacher's channel map[c], found as the closed-form steps find it
// (channel removal keeps the order; the increasing map of highest correlation). Each feature's MSE
// is divided by the teacher tensor's mean square, so a feature's loss reads as a relative error
// whatever the tensor's scale. The teacher's values are computed per batch (feature-teacher.ts:
// onnxruntime on a segment that ends at the features), so memory stays one batch whatever the
// number of samples.
import type { OutputLoss, TrainGraph } from 'sparsekit-wasm';
import type { OnnxModel } from '../model.js';
import { OnnxError } from '../errors.js';
import { capture } from '../calib/sweep.js';
import { indexGraph } from '../calib/graph-cut.js';
import type { ModelRunner } from '../calib/ort-runner.js';
import type { InputSample } from '../calib/inputs.js';
import { ChannelStats, matchChannels } from './channel-stats.js';
import { FeatureTeacher } from './feature-teacher.js';
import type { Feature } from './types.js';

/** Cut points probed for their dims when the features are picked automatically. */
const PROBED = 256;

/** Samples read to match channels and to measure a feature's scale. */
const MATCH_SAMPLES = 16;

const bad = (msg: string) => new OnnxError('bad_calibration', msg, 'invalid_value');

/** Ops whose output is the shape of their input, not its values: no data flows through them. */
const SHAPE_OPS = new Set(['Shape', 'Size']);

/**
 * The cut points of `model`'s main graph, in node order: after node i, a value v still to be read by
 * a later node such that every other value alive then is side information computed from strictly
 * fewer of the graph's data inputs than v (a shape read by Shape/Size carries no data). Alone alive is
 * the simple case (a CNN between two blocks). A transformer's attention mask (from `attention_mask`
 * only) or its rotary tables (from positions) stay alive through every block, so without the side
 * rule a BERT or Llama graph has no cut point at all; inside a block the residual input is alive
 * beside the branch and depends on the same inputs, so no point inside a block qualifies.
 */
export function cutPoints(model: OnnxModel): string[] {
  const ix = indexGraph(model);
  const outputs = new Set<string>(model.graph.output.map((o: { name: string }) => o.name));
  const last = new Map<string, number>();
  for (const [v, readers] of ix.consumers) last.set(v, readers.reduce((a, b) => Math.max(a, b), -1));
  for (const o of outputs) last.set(o, Infinity);
  // Which data inputs each value is computed from, as a bit set over the feeds.
  const deps = new Map<string, bigint>();
  [...ix.feeds.keys()].forEach((v, k) => deps.set(v, 1n << BigInt(k)));
  const depsOf = (v: string) => deps.get(v) ?? 0n;
  const live = new Set<string>();
  for (const v of ix.feeds.keys()) if ((last.get(v) ?? -1) >= 0) live.add(v);
  const out = new Set<string>();
  // w is side information beside v: computed from a strict subset of v's inputs.
  const side = (w: bigint, v: bigint) => w !== v && (w & v) === w;
  ix.nodes.forEach((n, i) => {
    const d = SHAPE_OPS.has(n.op_type) ? 0n : ix.inputs[i].reduce((a, x) => a | depsOf(x), 0n);
    for (const o of n.output) if (o) deps.set(o, d);
    for (const o of n.output) if (o && !ix.constant.has(o) && (last.get(o) ?? -1) > i) live.add(o);
    for (const x of ix.inputs[i]) if (last.get(x) === i) live.delete(x);
    for (const v of live) {
      if (!ix.producer.has(v) || outputs.has(v)) continue;
      const dv = depsOf(v);
      let cut = dv !== 0n, sides = 0n;
      for (const w of live) {
        if (w === v) continue;
        if (!side(depsOf(w), dv)) { cut = false; break; }
        sides |= depsOf(w);
      }
      // And some input reaches the rest of the graph through v alone: in a transformer's first block
      // the token embeddings (input_ids) and the mask (attention_mask) are both alive beside the
      // attention scores, each a strict subset, together all of them: v only mixes them there.
      if (cut && sides !== dv) { out.add(v); break; } // at most one v qualifies: each other is a strict subset of it
    }
  });
  return [...out];
}

/** `count` of `xs`, evenly spaced, the last one included. */
function spread<T>(xs: T[], count: number): T[] {
  if (count >= xs.length) return xs;
  const picked: T[] = [];
  for (let j = 1; j <= count; j++) picked.push(xs[Math.ceil((j * xs.length) / count) - 1]);
  return picked;
}

export interface MatchOptions {
  /** A number of cut points to pick, or the tensors by name. */
  features: number | string[];
  /** The total weight of the feature losses (each feature gets weight / count, over its scale); default 1. */
  weight?: number;
  /** Tensors the training already targets (outputs, logits): never features. */
  exclude: Set<string>;
  check: () => void;
}

/**
 * The features to distill on: `opts.features` named tensors (each must exist in both models with
 * the same dims, up to fewer channels on axis 1 in the student), or that many cut points of the
 * student, evenly spaced, among those that match.
 */
export async function matchFeatures(runner: ModelRunner, student: OnnxModel, teacher: OnnxModel, samples: InputSample[], opts: MatchOptions): Promise<Feature[]> {
  checkFeatureOptions({ features: opts.features, featureWeight: opts.weight });
  const named = Array.isArray(opts.features);
  const weightAll = opts.weight ?? 1;
  const produced = (m: OnnxModel) => new Set<string>((m.graph.node as { output: string[] }[]).flatMap((n) => n.output));
  const inStudent = produced(student), inTeacher = produced(teacher);
  let candidates: string[];
  if (named) {
    candidates = [...new Set(opts.features as string[])];
    for (const n of candidates) {
      if (opts.exclude.has(n)) throw bad(`feature "${n}" is already trained as an output`);
      if (!inStudent.has(n)) throw bad(`feature "${n}" is not computed by the pruned model`);
      if (!inTeacher.has(n)) throw bad(`feature "${n}" is not computed by the teacher`);
    }
  } else {
    if (opts.features === 0) return [];
    // At most PROBED of them (evenly spaced) are probed: the probe returns every candidate at once.
    candidates = spread(cutPoints(student).filter((n) => inTeacher.has(n) && !opts.exclude.has(n)), Math.max(PROBED, 4 * (opts.features as number)));
  }
  if (!candidates.length) return [];

  // Dims on the first sample and on one of other input dims (if any), in both models: an axis 1 that
  // follows the input's size (a sequence) is not a channel axis and cannot be matched on channels.
  const key = (k: number) => Object.values(samples[k].feeds).map((f) => f.dims.join('x')).join('|');
  const other = samples.findIndex((_, k) => key(k) !== key(0));
  const probe = other > 0 ? [samples[0], samples[other]] : samples.slice(0, 1);
  const dimsOf = async (m: OnnxModel) => {
    const d = new Map<string, { dims: number[]; float: boolean; varies: boolean }>();
    await capture(runner, m, candidates, probe, (name, t, k) => {
      const seen = d.get(name);
      if (k === 0 || !seen) d.set(name, { dims: t.dims, float: t.type === 'float32' || t.type === 'float16', varies: false });
      else if (seen.dims.length !== t.dims.length || seen.dims[1] !== t.dims[1]) seen.varies = true;
    }, opts.check);
    return d;
  };
  const [sd, td] = [await dimsOf(student), await dimsOf(teacher)];
  const fits = (n: string): string | null => {
    const s = sd.get(n)!, t = td.get(n)!;
    if (!s.float || !t.float) return 'not a float tensor';
    if (s.dims.length < 2) return 'it has no channel axis';
    if (s.varies || t.varies) return 'its axis 1 changes with the input size (not a channel axis)';
    if (s.dims.length !== t.dims.length) return `rank ${s.dims.length} in the pruned model, ${t.dims.length} in the teacher`;
    if (s.dims[0] !== 1) return 'its first axis is not the batch axis of one sample';
    const differ = s.dims.map((v, i) => (v !== t.dims[i] ? i : -1)).filter((i) => i >= 0);
    if (!differ.length) return null;
    if (differ.length === 1 && differ[0] === 1 && s.dims[1] < t.dims[1]) return null;
    return `dims [${s.dims.join(',')}] in the pruned model, [${t.dims.join(',')}] in the teacher`;
  };
  let chosen: string[];
  if (named) {
    for (const n of candidates) { const why = fits(n); if (why) throw bad(`feature "${n}" cannot be matched: ${why}`); }
    chosen = candidates;
  } else {
    chosen = spread(candidates.filter((n) => !fits(n)), opts.features as number);
  }
  if (!chosen.length) return [];

  // Channel maps (where channels were removed) and each feature's scale, on a few samples.
  const some = samples.slice(0, MATCH_SAMPLES);
  const statsOf = async (m: OnnxModel, dims: Map<string, { dims: number[] }>) => {
    const st = new Map(chosen.map((n) => [n, new ChannelStats(dims.get(n)!.dims[1], sd.get(n)!.dims[1] !== td.get(n)!.dims[1])]));
    await capture(runner, m, chosen, some, (name, t) => st.get(name)!.add(t), opts.check);
    return st;
  };
  const [ss, ts] = [await statsOf(student, sd), await statsOf(teacher, td)];
  const features: Feature[] = [];
  for (const n of chosen) {
    const s = ss.get(n)!, t = ts.get(n)!;
    const map = s.channels !== t.channels ? matchChannels(s, t) : undefined;
    let sq = 0;
    for (let c = 0; c < s.channels; c++) sq += t.sumSq[map ? map[c] : c];
    const meanSq = t.count ? sq / (t.count * s.channels) : 0;
    if (!(meanSq > 0)) continue; // a tensor that is zero on the samples says nothing
    features.push({ name: n, map, teacherChannels: t.channels, weight: weightAll / chosen.length / meanSq, dims: [...sd.get(n)!.dims] });
  }
  return features;
}

/** `features`: a count >= 0 or a non-empty list of names; `featureWeight` > 0 (checked before anything runs). */
export function checkFeatureOptions(opts: { features?: number | string[]; featureWeight?: number }): void {
  const f = opts.features;
  if (f !== undefined && !(Array.isArray(f) ? f.length && f.every((n) => typeof n === 'string' && n) : Number.isInteger(f) && f >= 0)) {
    throw bad(`features must be a count >= 0 or a non-empty list of tensor names (got ${JSON.stringify(f)})`);
  }
  if (opts.featureWeight !== undefined && !(Number.isFinite(opts.featureWeight) && opts.featureWeight > 0)) throw bad(`featureWeight must be > 0 (got ${opts.featureWeight})`);
}

/**
 * The features `opts` asks for, matched between `student` and `teacher`, with the session that
 * computes the teacher's values; undefined when none is asked for or none matches.
 */
export async function openFeatures(runner: ModelRunner, student: OnnxModel, teacher: OnnxModel, samples: InputSample[],
  opts: { features?: number | string[]; featureWeight?: number }, exclude: Set<string>, check: () => void): Promise<FeatureTeacher | undefined> {
  if (!opts.features) return undefined;
  const features = await matchFeatures(runner, student, teacher, samples, { features: opts.features, weight: opts.featureWeight, exclude, check });
  return features.length ? FeatureTeacher.open(runner, teacher, features) : undefined;
}

/** The trainer's graph and losses with the features after the outputs (MSE, each with its weight). */
export function withFeatures(graph: TrainGraph, losses: OutputLoss[], features: Feature[]): { graph: TrainGraph; losses: OutputLoss[] } {
  if (!features.length) return { graph, losses };
  return {
    graph: { ...graph, outputs: [...graph.outputs, ...features.map((f) => f.name)] },
    losses: [...losses, ...features.map((f): OutputLoss => ({ kind: 'mse', weight: f.weight }))],
  };
}

/** What a report says of the features. */
export const describeFeatures = (features: Feature[]) =>
  features.map((f) => ({ name: f.name, channels: f.map ? f.map.length : f.teacherChannels, teacherChannels: f.teacherChannels, weight: f.weight }));
