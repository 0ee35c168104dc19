// Closed-form step (a): per-channel statistics correction. Pruning shifts the mean of each channel a
// layer outputs (and scales its spread); a bias moves the mean back at no cost. Layer by layer in
// graph order (each measured with the layers before it already corrected), the student's output is
// captured over the samples, matched channel by channel with the teacher's tensor of the same name,
// and its bias shifted so that the means agree; with `scale`, the channel's weights and bias are also
// scaled so that the standard deviations agree (a zero weight stays zero).
import { attrInt, type OnnxModel } from '../model.js';
import { Sweep } from '../calib/sweep.js';
import type { InputSample } from '../calib/inputs.js';
import type { ModelRunner } from '../calib/ort-runner.js';
import { independentRuns, type FitLayer } from './layers.js';
import { ChannelStats, matchChannels } from './channel-stats.js';

export interface CorrectionContext {
  runner: ModelRunner;
  samples: InputSample[];
  /** The teacher's statistics per output tensor name (picked positions where the channel counts differ). */
  teacher: Map<string, ChannelStats>;
  /** Student channel → teacher channel per output name, filled as layers are measured. */
  maps: Map<string, Int32Array>;
  check: () => void;
  onLayer?: (done: number, total: number) => void;
}

/** Scale factors are kept within this range: a near-dead student channel is not blown up. */
const MAX_SCALE = 4;

/** The student's statistics of `layers`' outputs, captured from `sweep`, and their channel maps. */
export async function studentStats(sweep: Sweep, layers: FitLayer[], ctx: CorrectionContext, changing: Set<string>): Promise<Map<string, ChannelStats>> {
  const stats = new Map<string, ChannelStats>();
  for (const l of layers) stats.set(l.output, new ChannelStats(l.channels, ctx.teacher.get(l.output)!.channels !== l.channels));
  await sweep.capture(layers.map((l) => l.output), (name, t) => stats.get(name)!.add(t), { changing, onSample: () => ctx.check() });
  for (const l of layers) if (!ctx.maps.has(l.output)) ctx.maps.set(l.output, matchChannels(stats.get(l.output)!, ctx.teacher.get(l.output)!));
  return stats;
}

/** Corrects every layer of `layers` that the teacher has a tensor for; returns the tensors written. */
export async function correctStatistics(work: OnnxModel, layers: FitLayer[], ctx: CorrectionContext, scale: boolean): Promise<Set<string>> {
  const todo = layers.filter((l) => ctx.teacher.has(l.output));
  const runs = independentRuns(todo);
  const changed = new Set<string>();
  const sweep = new Sweep(work, ctx.runner, ctx.samples);
  let done = 0;
  for (let r = 0; r < runs.length; r++) {
    const changing = new Set<string>();
    for (const later of runs.slice(r)) for (const l of later) { changing.add(l.bias); if (scale) changing.add(l.weight); }
    const stats = await studentStats(sweep, runs[r], ctx, changing);
    const consts = work.constants();
    for (const l of runs[r]) {
      const s = stats.get(l.output)!, t = ctx.teacher.get(l.output)!, map = ctx.maps.get(l.output)!;
      const bT = consts.get(l.bias)!.tensor, wT = consts.get(l.weight)!.tensor;
      const bias = work.readFloat(bT);
      const w = scale ? work.readFloat(wT) : null;
      const C = l.channels, per = w ? w.length / C : 0;
      // A Gemm weight stored (K, N) (transB = 0) holds output c in column c.
      const colMajor = l.op === 'Gemm' && !attrInt(l.node, 'transB', 0);
      for (let c = 0; c < C; c++) {
        const mt = t.mean(map[c]), ms = s.mean(c);
        let a = 1;
        if (w) {
          const st = t.std(map[c]), ss = s.std(c);
          if (ss > 1e-12 && st > 0) a = Math.min(MAX_SCALE, Math.max(1 / MAX_SCALE, st / ss));
          if (a !== 1) for (let k = 0; k < per; k++) w[colMajor ? k * C + c : c * per + k] *= a;
        }
        // y' = a·(Wx + b) + (mt − a·ms): mean mt, spread scaled by a.
        bias[c] = a * bias[c] + (mt - a * ms);
      }
      work.writeFloat(bT, bias);
      changed.add(l.bias);
      if (w) { work.writeFloat(wT, w); changed.add(l.weight); }
      ctx.onLayer?.(++done, todo.length);
    }
  }
  return changed;
}
