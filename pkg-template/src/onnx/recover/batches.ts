// Training batches: samples whose inputs have the same shapes, stacked along the batch axis (each
// sample's first dimension is 1), with the teacher's targets stacked the same way; the order is
// shuffled per epoch from a seed, so that a resumed run sees the same order as an uninterrupted one.
import type { Batch } from 'sparsekit-wasm';
import type { InputSample } from '../calib/inputs.js';
import { prng } from '../calib/prng.js';
import { OnnxError } from '../errors.js';
import type { HeldArrays } from './held-arrays.js';

export interface TrainBatch { inputs: Batch[]; targets: Float32Array[]; size: number }

/** Batches' worth of samples sorted by length together when grouping (Hugging Face's LengthGroupedSampler: 50). */
const GROUP_BATCHES = 50;

/**
 * Sample indices in batches for `epoch`: shuffled, grouped by input shapes, at most `size` per batch.
 * With `lengths` (each sample's real tokens, trim-padding.ts), samples of similar length share a
 * batch, as `group_by_length` does: the shuffled order is cut into runs of GROUP_BATCHES batches,
 * each run sorted by length, and the batches made from them are shuffled again, so that a batch
 * trimmed to its longest sample carries little padding while the epoch's order stays random.
 */
export function epochBatches(samples: InputSample[], inputs: string[], size: number, seed: number, epoch: number, lengths?: Int32Array): number[][] {
  const rand = prng(seed * 7919 + epoch);
  const shuffle = <T>(xs: T[]) => { for (let i = xs.length - 1; i > 0; i--) { const j = Math.floor(rand() * (i + 1)); [xs[i], xs[j]] = [xs[j], xs[i]]; } };
  let order = samples.map((_, i) => i);
  shuffle(order);
  if (lengths) {
    const run = GROUP_BATCHES * size, sortedOrder: number[] = [];
    for (let i = 0; i < order.length; i += run) sortedOrder.push(...order.slice(i, i + run).sort((a, b) => lengths[b] - lengths[a]));
    order = sortedOrder;
  }
  const key = (k: number) => inputs.map((n) => samples[k].feeds[n].dims.join('x')).join('|');
  const stackable = (k: number) => inputs.every((n) => samples[k].feeds[n].dims[0] === 1);
  const open = new Map<string, number[]>();
  const out: number[][] = [];
  for (const k of order) {
    const kk = stackable(k) ? key(k) : `#${k}`;
    const b = open.get(kk) ?? [];
    b.push(k);
    if (b.length >= size || !stackable(k)) { out.push(b); open.delete(kk); } else open.set(kk, b);
  }
  for (const b of open.values()) out.push(b);
  if (lengths) shuffle(out);
  return out;
}

/**
 * A failed training step of a stacked batch, made clearer when the cause is likely the model's fixed
 * batch: the graph's inputs all declare a first dimension of 1, and a static export may hold that
 * batch in constant shapes (ultralytics' YOLOv8 head reshapes to [1, 4, 16, anchors]), which a stack
 * of samples along that axis cannot take. The error keeps its reason and code; the hint names the way out.
 */
export function staticBatchHint(e: unknown, declared: readonly { dims: readonly (number | string)[] }[], size: number): unknown {
  if (!(e instanceof OnnxError) || size <= 1 || e.code !== 'shape_mismatch') return e;
  if (!declared.length || !declared.every((d) => d.dims[0] === 1)) return e;
  return new OnnxError(e.reason, `${e.message} (a batch of ${size} samples stacked on the first axis; the model's inputs declare a fixed batch of 1, which its graph may hold in constant shapes: train with batch size 1, \`--batch 1\`, or export with a dynamic batch)`, e.code);
}

/** Integers above this are not exact in float32. */
const EXACT_F32 = 2 ** 24;

/**
 * A sample's input as the trainer takes it (float32): integer inputs (token ids, masks) as their
 * values, exact below 2^24, which every id and mask of today's models is; float16 / float64 inputs
 * are refused (the trainer runs float32 models).
 */
function asFloatInput(name: string, data: ArrayLike<number | bigint>, type: string): Float32Array {
  if (data instanceof Float32Array) return data;
  if (type.startsWith('float')) throw new OnnxError('unsupported', `the trainer takes float32 inputs; "${name}" is ${type}`, 'unsupported_op');
  const out = new Float32Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const v = Number(data[i]);
    if (Math.abs(v) > EXACT_F32) throw new OnnxError('unsupported', `input "${name}" holds ${v}, beyond the integers float32 holds exactly (2^24): the trainer takes float32 inputs`, 'unsupported_op');
    out[i] = v;
  }
  return out;
}

function stack(parts: Float32Array[]): Float32Array {
  if (parts.length === 1) return parts[0];
  const n = parts.reduce((a, p) => a + p.length, 0);
  const out = new Float32Array(n);
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
}

/** The batch of samples `idx`: inputs in `inputs` order, targets[o] the teacher's values of trained output o. */
export function makeBatch(samples: InputSample[], inputs: string[], idx: number[], targets: HeldArrays): TrainBatch {
  const batch: Batch[] = inputs.map((name) => {
    const parts = idx.map((k) => {
      const t = samples[k].feeds[name];
      if (!t) throw new OnnxError('bad_calibration', `sample ${k} does not feed "${name}"`, 'invalid_value');
      return asFloatInput(name, t.data, t.type);
    });
    const dims = [...samples[idx[0]].feeds[name].dims];
    dims[0] = dims[0] * idx.length;
    return { values: stack(parts), shape: dims };
  });
  const stacked = Array.from({ length: targets.outputs }, (_, o) => stack(idx.map((k) => targets.get(o, k))));
  return { inputs: batch, targets: stacked, size: idx.length };
}
