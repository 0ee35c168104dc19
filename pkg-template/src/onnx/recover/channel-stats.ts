// Per-channel statistics of captured tensors (channels on axis 1: NCHW activations, (N, C) Gemm
// outputs): mean and variance over the samples and positions, and a fixed subsample of positions
// per channel, the same positions in teacher and student, from which the channels are matched.
import { asF32 } from '../calib/tensor.js';
import type { RunOutput } from '../calib/ort-runner.js';
import { OnnxError } from '../errors.js';

/** Positions kept per sample for matching channels. */
const PICKS_PER_SAMPLE = 16;

export class ChannelStats {
  readonly sum: Float64Array;
  readonly sumSq: Float64Array;
  count = 0;
  /** Per channel, the values at the picked positions, sample after sample (when `pick`). */
  readonly picks: number[][];

  constructor(readonly channels: number, private readonly pick: boolean) {
    this.sum = new Float64Array(channels);
    this.sumSq = new Float64Array(channels);
    this.picks = pick ? Array.from({ length: channels }, () => []) : [];
  }

  add(t: RunOutput): void {
    const d = t.dims;
    if (d.length < 2 || d[1] !== this.channels) {
      throw new OnnxError('bad_calibration', `a captured tensor of dims [${d.join(',')}] has not ${this.channels} channels on axis 1`, 'shape_mismatch');
    }
    const x = asF32(t);
    const C = this.channels, N = d[0], inner = d.slice(2).reduce((a, b) => a * b, 1);
    const step = Math.max(1, Math.floor(inner / PICKS_PER_SAMPLE));
    for (let n = 0; n < N; n++) {
      for (let c = 0; c < C; c++) {
        const o = (n * C + c) * inner;
        let s = 0, q = 0;
        for (let i = 0; i < inner; i++) { const v = x[o + i]; s += v; q += v * v; }
        this.sum[c] += s; this.sumSq[c] += q;
        if (this.pick) for (let i = 0, k = 0; i < inner && k < PICKS_PER_SAMPLE; i += step, k++) this.picks[c].push(x[o + i]);
      }
    }
    this.count += N * inner;
  }

  mean(c: number): number { return this.count ? this.sum[c] / this.count : 0; }
  std(c: number): number {
    if (!this.count) return 0;
    const m = this.mean(c);
    return Math.sqrt(Math.max(0, this.sumSq[c] / this.count - m * m));
  }
}

function corr(a: number[], b: number[]): number {
  const n = Math.min(a.length, b.length);
  let ma = 0, mb = 0;
  for (let i = 0; i < n; i++) { ma += a[i]; mb += b[i]; }
  ma /= n || 1; mb /= n || 1;
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < n; i++) { const x = a[i] - ma, y = b[i] - mb; ab += x * y; aa += x * x; bb += y * y; }
  return aa > 0 && bb > 0 ? ab / Math.sqrt(aa * bb) : aa === 0 && bb === 0 ? 1 : 0;
}

/**
 * Which teacher channel each student channel is. Equal counts: the same index. Fewer in the
 * student (channels removed): channel removal keeps the order of the kept channels, so the map is
 * increasing; of the increasing maps, the one with the largest summed correlation of the picked
 * values (dynamic programming over student × teacher channels).
 */
export function matchChannels(student: ChannelStats, teacher: ChannelStats): Int32Array {
  const S = student.channels, T = teacher.channels;
  if (S === T) return Int32Array.from({ length: S }, (_, i) => i);
  if (S > T) throw new OnnxError('bad_calibration', `the student has more channels (${S}) than the teacher (${T}) in a matched tensor`, 'shape_mismatch');
  // best[i][j]: best sum matching student 0..i-1 within teacher 0..j-1.
  const W = T + 1;
  const best = new Float64Array((S + 1) * W).fill(-Infinity);
  const took = new Uint8Array((S + 1) * W);
  for (let j = 0; j <= T; j++) best[j] = 0;
  for (let i = 1; i <= S; i++) {
    for (let j = i; j <= T - (S - i); j++) {
      const skip = best[i * W + j - 1];
      const take = best[(i - 1) * W + j - 1] + corr(student.picks[i - 1], teacher.picks[j - 1]);
      if (take >= skip) { best[i * W + j] = take; took[i * W + j] = 1; } else best[i * W + j] = skip;
    }
  }
  const map = new Int32Array(S);
  for (let i = S, j = T; i > 0; j--) if (took[i * W + j]) { map[i - 1] = j - 1; i--; }
  return map;
}
