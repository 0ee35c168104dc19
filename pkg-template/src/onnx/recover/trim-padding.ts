// Padded text batches trimmed to their longest real token (dynamic padding). A text encoder's samples
// are padded to one length S so that any of them stack, but a batch only needs the length of its
// longest real sentence: past it every sample of the batch is padding, which the losses already leave
// out (token-mask.ts), and attention and pooling never read. Trimmed, the student's forward and backward
// and the teacher's feature runs work on L ≤ S tokens per sample (short descriptions padded to 32 are
// mostly padding), while the step's loss and gradients stay those of the padded batch:
// - per-token targets ([1, S, C]) lose the same trailing rows as the inputs;
// - a masked per-token MSE is a mean over every element, padded ones included (zeros on both
//   sides), so its weight is scaled by L / S for the step: the same sum over the same denominator;
// - a per-token cosine and a pooled output are unchanged (the first counts the real rows only).
// It applies only when every sample is right-padded (its mask 1s then 0s), every input of the trainer
// is [1, S], every feature is masked per token, and the teacher gives the same values of every trained
// output on a trimmed sample as on the padded one (trimProbe, which recover.ts runs once).
import type { OutputLoss } from 'sparsekit-wasm';
import type { OnnxModel } from '../model.js';
import type { FeedTensor, InputSample } from '../calib/inputs.js';
import type { ModelRunner } from '../calib/ort-runner.js';
import { runSet } from '../calib/set-outputs.js';
import { MASK, type TokenMask } from './token-mask.js';
import type { TrainBatch } from './batches.js';
import type { TrainSetup } from './train-setup.js';
import type { HeldArrays } from './held-arrays.js';

/** What trimming needs: the mask input, the padded length, each sample's real tokens, which trained tensors are per token. */
export interface PaddingTrim {
  input: string;
  tokens: number;
  /** Real tokens of each sample (its mask's leading 1s). */
  lengths: Int32Array;
  /** Per trained tensor (outputs, then features): [1, S, C], trimmed with the inputs. */
  perToken: boolean[];
  /** Per loss: a masked MSE, whose weight follows L / S. */
  scaled: boolean[];
}

/** The real tokens of a mask row that is 1s then 0s; -1 when it is not right-padded. */
function realLength(data: FeedTensor['data']): number {
  let n = 0;
  while (n < data.length && Number(data[n]) === 1) n++;
  for (let i = n; i < data.length; i++) if (Number(data[i]) !== 0) return -1;
  return n;
}

/** Largest difference to the padded run's values, relative to their largest magnitude, that still counts as the same. */
const SAME = 1e-4;

/**
 * Whether the teacher gives, on its shortest padded sample cut to its real tokens, the values it gave
 * padded (`targets`, before any masking): every trained tensor an output of the teacher, a per-token one
 * equal on its real rows, any other one equal whole. One run of the teacher; false where trimming would
 * change what is computed (positions taken from the end, a pooling over every position).
 */
export async function trimProbe(runner: ModelRunner, teacher: OnnxModel, setup: TrainSetup, samples: InputSample[], targets: HeldArrays): Promise<boolean> {
  const S = samples[0]?.feeds[MASK]?.dims[1];
  if (!S) return false;
  let k = -1, n = S;
  samples.forEach((s, i) => { const m = s.feeds[MASK]; if (m?.dims.length === 2) { const r = realLength(m.data); if (r > 0 && r < n) { n = r; k = i; } } });
  if (k < 0) return false;
  const [out] = await runSet(runner, teacher, trimSamples(samples, [k], n, S));
  return setup.trained.every((t, o) => {
    const got = out[t.tensor], want = targets.get(o, k);
    if (!got) return false;
    const rows = got.length === want.length ? want : got.length * S === want.length * n ? want.subarray(0, got.length) : undefined;
    if (!rows) return false;
    let scale = 0, diff = 0;
    for (let i = 0; i < rows.length; i++) { scale = Math.max(scale, Math.abs(rows[i])); diff = Math.max(diff, Math.abs(rows[i] - got[i])); }
    return diff <= SAME * Math.max(scale, 1e-30);
  });
}

/**
 * Trimming for a trainer reading `inputs`, given the padding `mask` of its trained tensors (tokenMask)
 * and `outputs` of them (the rest are features); undefined when it does not apply (no padding, a
 * left-padded sample, an input that is not [1, S], a feature that is not masked per token) or when the
 * teacher's probe (`probed`, trimProbe) did not give the padded values.
 */
export function paddingTrim(samples: InputSample[], inputs: readonly string[], mask: TokenMask | undefined, outputs: number, probed: boolean): PaddingTrim | undefined {
  if (!mask || !probed) return undefined;
  const S = mask.tokens;
  const lengths = new Int32Array(samples.length);
  for (let k = 0; k < samples.length; k++) {
    const s = samples[k];
    if (!inputs.every((n) => s.feeds[n]?.dims.length === 2 && s.feeds[n].dims[0] === 1 && s.feeds[n].dims[1] === S)) return undefined;
    const n = realLength(s.feeds[mask.input].data);
    if (n < 1) return undefined;
    lengths[k] = n;
  }
  if (!mask.masked.every((m, i) => m || i < outputs)) return undefined;
  return { input: mask.input, tokens: S, lengths, perToken: [...mask.masked], scaled: [...mask.inGraph] };
}

/** The tokens a batch of samples `idx` needs: its longest real sample. */
export function batchLength(trim: PaddingTrim, idx: readonly number[]): number {
  let L = 1;
  for (const k of idx) L = Math.max(L, trim.lengths[k]);
  return L;
}

/** `values` of N rows of `S * width` cut to their first `L * width`. */
function cutRows(values: Float32Array, rows: number, S: number, L: number): Float32Array {
  const per = values.length / rows, width = per / S, keep = L * width;
  const out = new Float32Array(rows * keep);
  for (let r = 0; r < rows; r++) out.set(values.subarray(r * per, r * per + keep), r * keep);
  return out;
}

/** A stacked batch of `batch.size` samples padded to `trim.tokens`, trimmed to `L` tokens: its inputs and per-token targets. */
export function trimBatch(batch: TrainBatch, L: number, trim: PaddingTrim): TrainBatch {
  if (L >= trim.tokens) return batch;
  const N = batch.size;
  return {
    size: N,
    inputs: batch.inputs.map((b) => ({ values: cutRows(b.values as Float32Array, N, trim.tokens, L), shape: [b.shape[0], L] })),
    targets: batch.targets.map((t, o) => (trim.perToken[o] ? cutRows(t, N, trim.tokens, L) : t)),
  };
}

/** Samples `idx` with their [1, `tokens`] feeds cut to [1, L] (copies of the first L values, so that nothing reads past them through a shared buffer; for the teacher's feature runs). */
export function trimSamples(samples: InputSample[], idx: readonly number[], L: number, tokens: number): InputSample[] {
  return idx.map((k) => {
    const s = samples[k];
    const feeds: Record<string, FeedTensor> = {};
    for (const [n, f] of Object.entries(s.feeds)) {
      feeds[n] = f.dims.length === 2 && f.dims[0] === 1 && f.dims[1] === tokens ? { type: f.type, data: f.data.slice(0, L) as FeedTensor['data'], dims: [1, L] } : f;
    }
    return { feeds, source: s.source };
  });
}

/** The step's losses at L tokens: each masked MSE's weight times L / S (see the file comment). */
export function trimmedLosses(losses: readonly OutputLoss[], L: number, trim: PaddingTrim): OutputLoss[] {
  return losses.map((l, i) => (trim.scaled[i] && L < trim.tokens ? { ...l, weight: (l.weight ?? 1) * (L / trim.tokens) } : l));
}
