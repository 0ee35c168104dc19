// The learning rate over a distillation run (distill.ts). 'constant': the given lr throughout (after
// an optional linear warm-up). 'cosine': a linear warm-up from the floor to the lr over the first
// `warmup` share of the run, then a half cosine from the lr down to the floor at the run's end (SGDR /
// the usual transformer fine-tuning schedule): the early steps, whose Adam moments are estimates of a
// few batches, move the weights less, and the last ones settle instead of jumping around the
// minimum at full size. The run's share done is its steps over the steps planned with `epochs`, its
// elapsed time over the budget with `minutes` (the length of a timed run is unknown in steps), the
// larger of the two with both (the first reached stops the run).
import { OnnxError } from '../errors.js';
import { TRAINING_DEFAULTS } from './defaults.js';

export type LrScheduleKind = 'constant' | 'cosine';

/** A resolved schedule: its kind, the peak lr, the warm-up share, the floor as a fraction of the lr. */
export interface LrSchedule { kind: LrScheduleKind; lr: number; warmup: number; floor: number }

const bad = (msg: string) => new OnnxError('bad_calibration', msg, 'invalid_value');

/**
 * The schedule of `opts` (defaults from TRAINING_DEFAULTS: the kind, the lr; a cosine warms up over
 * `cosineWarmup` of the run, a constant one not at all unless asked). Bad values are refused
 * (OnnxError, code invalid_value) before anything runs.
 */
export function lrSchedule(opts: { schedule?: unknown; warmup?: unknown; lr?: number }): LrSchedule {
  const kind = opts.schedule ?? TRAINING_DEFAULTS.schedule;
  if (kind !== 'constant' && kind !== 'cosine') throw bad(`schedule must be constant or cosine (got ${JSON.stringify(kind)})`);
  const w = opts.warmup;
  if (w !== undefined && !(typeof w === 'number' && w >= 0 && w < 1)) throw bad(`warmup must be a share of the run in [0, 1) (got ${JSON.stringify(w)})`);
  const lr = opts.lr ?? TRAINING_DEFAULTS.lr;
  if (!(Number.isFinite(lr) && lr > 0)) throw bad(`lr must be a positive number (got ${lr})`);
  const warmup = w ?? (kind === 'cosine' ? TRAINING_DEFAULTS.cosineWarmup : 0);
  return { kind, lr, warmup, floor: TRAINING_DEFAULTS.lrFloor };
}

/** The lr at `done`, the share of the run done before this step (clamped to [0, 1]). */
export function lrAt(s: LrSchedule, done: number): number {
  const p = Math.min(1, Math.max(0, Number.isFinite(done) ? done : 0));
  const low = s.floor * s.lr;
  if (p < s.warmup) return low + (s.lr - low) * (p / s.warmup);
  if (s.kind === 'constant') return s.lr;
  const q = s.warmup < 1 ? (p - s.warmup) / (1 - s.warmup) : 1;
  return low + (s.lr - low) * 0.5 * (1 + Math.cos(Math.PI * q));
}

/**
 * The share of a run done: `steps` of `plannedSteps` (Infinity: no step bound) and `elapsed` ms of a
 * `budget` (Infinity: no time bound); the larger, as the first bound reached ends the run.
 */
export function runShare(steps: number, plannedSteps: number, elapsed: number, budget: number): number {
  const byStep = Number.isFinite(plannedSteps) && plannedSteps > 0 ? steps / plannedSteps : 0;
  const byTime = Number.isFinite(budget) && budget > 0 ? elapsed / budget : 0;
  return Math.min(1, Math.max(byStep, byTime));
}
