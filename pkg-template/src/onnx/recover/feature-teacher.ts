// The teacher's values of the matched features (features.ts), per training batch: one onnxruntime
// session on the segment of the teacher that computes them. A training batch holds samples of one
// input shape, each with a batch axis of 1 (batches.ts), so the segment can run the batch's inputs
// stacked along axis 0 in one call instead of one call per sample. Whether that pays depends on the
// model: onnxruntime's per-call cost against the cache misses of N samples' activations at once
// (PaddleOCR cls gains, rec at batch 8 runs slower stacked; bench/recover/feature-teacher.mjs). So stacking
// is settled once, on the first batches of two or more samples, and only ever changes the speed:
// - an input the teacher declares with a fixed first dim (dim_value, e.g. an export at batch 1)
//   cannot take N: every batch runs one sample at a time;
// - otherwise those batches run both ways; stacking is kept only if every feature comes back with N
//   on axis 0 and exactly the per-sample values (a graph that folds its batch axis into a fixed
//   Reshape fails, or mixes samples, and is caught there), and, by default, only if it was faster
//   (the first batch warms both paths up, the next PROBE_TIMED are timed).
import type { OnnxModel } from '../model.js';
import { OnnxError } from '../errors.js';
import { asF32 } from '../calib/tensor.js';
import { indexGraph, segmentModel, segmentNodes } from '../calib/graph-cut.js';
import { isFixedDim, type FeedTensor, type InputSample } from '../calib/inputs.js';
import type { ModelRunner, RunnerSession, RunOutput } from '../calib/ort-runner.js';
import type { Feature } from './types.js';

/** How a batch runs: not settled yet, stacked in one call, or one call per sample (with why). */
export type TeacherBatching = { mode: 'undecided' } | { mode: 'stacked' } | { mode: 'per-sample'; why: string };

/** Batches timed both ways (after a warm-up batch) before the default policy settles. */
const PROBE_TIMED = 2;

const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());

export interface FeatureTeacherOptions {
  /**
   * 'auto' (default): one call per batch where it gives the per-sample values and was faster on the
   * first batches; 'always': wherever it gives the per-sample values; 'never': one call per sample
   * (the activations of one sample at a time).
   */
  stack?: 'auto' | 'always' | 'never';
}

/** The teacher's values of the features, per batch (see the file comment). */
export class FeatureTeacher {
  private state: TeacherBatching;
  /** While undecided: probe batches run, and the time of the timed ones each way (ms). */
  private readonly probe = { batches: 0, single: 0, stacked: 0 };

  private constructor(private readonly session: RunnerSession, private readonly feeds: string[], readonly features: Feature[],
    private readonly policy: NonNullable<FeatureTeacherOptions['stack']>, state: TeacherBatching) {
    this.state = state;
  }

  static async open(runner: ModelRunner, teacher: OnnxModel, features: Feature[], opts: FeatureTeacherOptions = {}): Promise<FeatureTeacher> {
    const ix = indexGraph(teacher);
    const names = features.map((f) => f.name);
    const nodes = segmentNodes(ix, names, (v) => ix.feeds.has(v));
    const feeds = [...new Set(nodes.flatMap((i) => ix.inputs[i]).filter((x) => ix.feeds.has(x)))];
    const fixed = teacher.inputs.find((i) => feeds.includes(i.name) && (i.rank === 0 || isFixedDim(i.dims[0])));
    const stack = opts.stack ?? 'auto';
    if (!['auto', 'always', 'never'].includes(stack)) throw new OnnxError('bad_calibration', `stack must be auto, always or never (got ${String(stack)})`, 'invalid_value');
    const state: TeacherBatching = stack === 'never' ? { mode: 'per-sample', why: 'asked for' }
      : fixed ? { mode: 'per-sample', why: `input "${fixed.name}" is declared with ${fixed.rank ? `a fixed batch dim ${fixed.dims[0]}` : 'no batch axis'}` }
        : { mode: 'undecided' };
    const session = await runner.createSession(segmentModel(teacher, ix, nodes, [], names));
    return new FeatureTeacher(session, feeds, features, stack, state);
  }

  /** How batches run now (settled on the first batch of two or more samples). */
  get batching(): TeacherBatching { return this.state; }

  /** Per feature, the teacher's values on samples `idx`, stacked along the batch axis, on the student's channels. */
  async batch(samples: InputSample[], idx: number[]): Promise<Float32Array[]> {
    if (idx.length < 2 || this.state.mode === 'per-sample' || !this.stackable(samples, idx)) return this.perSample(samples, idx);
    if (this.state.mode === 'stacked') {
      const got = await this.stacked(samples, idx);
      if (got) return got;
      // A later input shape at which the outputs lose their batch axis: stay per sample from here.
      this.state = { mode: 'per-sample', why: `a batch of ${idx.length} at another input shape did not keep the batch axis` };
      return this.perSample(samples, idx);
    }
    return this.probeBatch(samples, idx);
  }

  /** Undecided: the per-sample values are the result, and the reference the stacked run must give exactly. */
  private async probeBatch(samples: InputSample[], idx: number[]): Promise<Float32Array[]> {
    const t0 = now();
    const want = await this.perSample(samples, idx);
    const t1 = now();
    let got: Float32Array[] | undefined;
    let why = 'the features lose the batch axis';
    try { got = await this.stacked(samples, idx); } catch (e) { why = `onnxruntime refuses a batch of ${idx.length} (${String((e as Error)?.message ?? e).split('\n')[0]})`; }
    const t2 = now();
    const off = got ? this.features.findIndex((_, j) => !same(got![j], want[j])) : -1;
    if (!got || off >= 0) {
      this.state = { mode: 'per-sample', why: got ? `stacked values of "${this.features[off].name}" differ from per-sample ones` : why };
    } else if (this.policy === 'always') {
      this.state = { mode: 'stacked' };
    } else if (this.probe.batches++ > 0) {
      this.probe.single += t1 - t0; this.probe.stacked += t2 - t1;
      if (this.probe.batches > PROBE_TIMED) {
        const { single, stacked } = this.probe;
        this.state = stacked < single ? { mode: 'stacked' }
          : { mode: 'per-sample', why: `one run per batch was slower (${stacked.toFixed(0)} ms against ${single.toFixed(0)} ms over ${PROBE_TIMED} batches)` };
      }
    }
    return want;
  }

  release(): Promise<void> { return this.session.release(); }

  private feedsOf(sample: InputSample): Record<string, FeedTensor> {
    const out: Record<string, FeedTensor> = {};
    for (const n of this.feeds) out[n] = sample.feeds[n];
    return out;
  }

  /** Every sample feeds each input with the same type and dims, a batch axis of 1 first. */
  private stackable(samples: InputSample[], idx: number[]): boolean {
    return this.feeds.every((n) => {
      const t0 = samples[idx[0]].feeds[n];
      return !!t0 && t0.dims[0] === 1 && idx.every((k) => {
        const t = samples[k].feeds[n];
        return !!t && t.type === t0.type && t.dims.length === t0.dims.length && t.dims.every((d, i) => d === t0.dims[i]);
      });
    });
  }

  private async perSample(samples: InputSample[], idx: number[]): Promise<Float32Array[]> {
    const parts: Float32Array[][] = this.features.map(() => []);
    for (const k of idx) {
      const res = await this.session.run(this.feedsOf(samples[k]), this.features.map((f) => f.name));
      this.features.forEach((f, j) => parts[j].push(onStudent(res[f.name], 1, f)));
    }
    return parts.map(concat);
  }

  /** One run on the batch stacked along axis 0; undefined when a feature does not come back with the batch on axis 0. */
  private async stacked(samples: InputSample[], idx: number[]): Promise<Float32Array[] | undefined> {
    const feeds: Record<string, FeedTensor> = {};
    for (const n of this.feeds) feeds[n] = stackFeeds(idx.map((k) => samples[k].feeds[n]));
    const res = await this.session.run(feeds, this.features.map((f) => f.name));
    if (this.features.some((f) => res[f.name].dims[0] !== idx.length)) return undefined;
    return this.features.map((f) => onStudent(res[f.name], idx.length, f));
  }
}

/** Feeds of one input, stacked along axis 0 (same type and dims, checked by the caller). */
function stackFeeds(ts: FeedTensor[]): FeedTensor {
  const first = ts[0];
  const Typed = first.data.constructor as new (n: number) => FeedTensor['data'];
  const data = new Typed(ts.reduce((a, t) => a + t.data.length, 0));
  let o = 0;
  for (const t of ts) { (data as { set(x: ArrayLike<number | bigint>, at: number): void }).set(t.data, o); o += t.data.length; }
  return { type: first.type, data, dims: [ts.length * first.dims[0], ...first.dims.slice(1)] };
}

/**
 * The teacher's tensor of `n` samples (axis 0) on the student's channels: channels map per sample
 * on axis 1, so with n > 1 each sample's slice is gathered in turn.
 */
function onStudent(t: RunOutput, n: number, f: Feature): Float32Array {
  const x = asF32(t);
  if (!f.map) return Float32Array.from(x);
  const inner = t.dims.slice(2).reduce((a, b) => a * b, 1);
  const per = x.length / n, kept = f.map.length * inner;
  const out = new Float32Array(n * kept);
  for (let s = 0; s < n; s++) {
    const src = x.subarray(s * per, (s + 1) * per);
    f.map.forEach((c, j) => out.set(src.subarray(c * inner, (c + 1) * inner), s * kept + j * inner));
  }
  return out;
}

function concat(parts: Float32Array[]): Float32Array {
  if (parts.length === 1) return parts[0];
  const out = new Float32Array(parts.reduce((a, x) => a + x.length, 0));
  let o = 0;
  for (const x of parts) { out.set(x, o); o += x.length; }
  return out;
}

/** Whether `got` holds exactly `want`'s values (NaN matching NaN): which way a batch runs never changes the training. */
function same(got: Float32Array, want: Float32Array): boolean {
  if (got.length !== want.length) return false;
  for (let i = 0; i < want.length; i++) if (got[i] !== want[i] && !(got[i] !== got[i] && want[i] !== want[i])) return false;
  return true;
}
