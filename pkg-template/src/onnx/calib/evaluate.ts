// Agreement of a pruned model with the original on held-out inputs: runs both models over the same
// samples and measures each output's label-free fidelity (fidelity/), plus the cosine of all outputs
// together (kept for compatibility; it misleads on mixed outputs, see fidelity/generic.ts).
import type { OnnxModel } from '../model.js';
import { OnnxError } from '../errors.js';
import type { InputSample } from './inputs.js';
import { toRunner, type ModelRunner, type OrtLike } from './ort-runner.js';
import { fidelity, type FidelityOptions, type FidelityReport, type OutputKind } from '../fidelity/index.js';
import type { CutStore } from './cut-store.js';
import { streamedHeldOut } from './streamed-held-out.js';
import { cosine, runSet } from './set-outputs.js';
export { runSet } from './set-outputs.js';

// The outputs' types belong to the fidelity module (which compares them); re-exported where runSet makes them.
import type { Outputs } from '../fidelity/types.js';
export type { Outputs, OutputArray } from '../fidelity/types.js';

/** Any output as float32 (float16 bits widened, integers converted): the one conversion, tensor.ts. */
export { asF32 as outputAsFloat } from './tensor.js';

/** What {@link compareSets} returns: the all-outputs cosine (mean, minimum, per input) and the fidelity per output. */
export interface SetComparison { cosine: number; min: number; perInput: number[]; fidelity: FidelityReport }

/**
 * `outputs` against `reference` (same samples, same order): the label-free fidelity of every output
 * (`fidelity`, the figure to read) and, for compatibility, the cosine of all outputs of an input
 * together (mean over inputs, minimum, each input's).
 */
export function compareSets(reference: Outputs[], outputs: Outputs[], opts: FidelityOptions = {}): SetComparison {
  const per = reference.map((r, i) => cosine(r, outputs[i]));
  return {
    cosine: per.reduce((a, b) => a + b, 0) / Math.max(1, per.length), min: Math.min(...per), perInput: per,
    fidelity: fidelity(reference, outputs, opts),
  };
}

/** Options of {@link evaluate}: the caller's onnxruntime and the fidelity options (kinds per output...). */
export interface EvaluateOptions extends FidelityOptions {
  /** An onnxruntime namespace (onnxruntime-node / -web) or a runner. */
  ort: OrtLike | ModelRunner;
  /** InferenceSession options when `ort` is a namespace. */
  sessionOptions?: object;
  signal?: AbortSignal;
}

/** The fidelity report of {@link evaluate}, with the all-outputs cosine for reference. */
export interface EvaluateReport extends FidelityReport { cosine: number }


/**
 * The one held-out evaluation: the original run once on the samples, each output's kind pinned from
 * what the original gives (or `kinds`), then any candidate judged against it. evaluate(), runJob,
 * recovery and sparse training all measure fidelity through it.
 */
export interface HeldOut {
  /** The original's outputs on the samples. */
  reference: Outputs[];
  /** Each output's kind, fixed for every candidate. */
  kinds: Record<string, OutputKind>;
  /** A candidate model's fidelity per output, with the all-outputs cosine. */
  judge(candidate: OnnxModel | Uint8Array, signal?: AbortSignal): Promise<EvaluateReport>;
  /** Gives back the store's space (a streamed held-out set; nothing to do otherwise); judge no more after it. */
  release?(): void;
}

/**
 * The held-out evaluation. With a cut store (`store`), a model whose outputs are all language-model
 * logits keeps the original's outputs there and judges a candidate sample by sample
 * (streamed-held-out.ts: the same report, in the memory of one sample's outputs); other models take
 * the way below, every output held.
 */
export async function heldOut(runner: ModelRunner, original: OnnxModel | Uint8Array, samples: InputSample[], opts: FidelityOptions & { signal?: AbortSignal; store?: CutStore } = {}): Promise<HeldOut> {
  if (!samples.length) throw new OnnxError('bad_calibration', 'a held-out evaluation needs at least one sample', 'invalid_arguments');
  if (opts.store) {
    const streamed = await streamedHeldOut(runner, original, samples, opts, opts.store);
    if (streamed) return streamed;
  }
  const reference = await runSet(runner, original, samples, opts.signal);
  // the samples go to the fidelity too: the language kinds read their ids and attention mask
  const kinds: Record<string, OutputKind> = { ...Object.fromEntries(fidelity(reference, reference, { ...opts, inputs: samples }).outputs.map((o) => [o.name, o.kind])), ...(opts.kinds ?? {}) };
  return {
    reference, kinds,
    async judge(candidate, signal = opts.signal) {
      const outputs = await runSet(runner, candidate, samples, signal);
      const cmp = compareSets(reference, outputs, { ...opts, kinds, inputs: samples });
      return { ...cmp.fidelity, cosine: cmp.cosine };
    },
  };
}

/**
 * Runs the original and the pruned model over `samples` (held-out inputs: not the calibration set)
 * with the caller's onnxruntime, and returns the fidelity of each output of the pruned model against
 * the original's; the score is the worst output's.
 */
export async function evaluate(original: OnnxModel | Uint8Array, pruned: OnnxModel | Uint8Array, samples: InputSample[], opts: EvaluateOptions): Promise<EvaluateReport> {
  if (!samples.length) throw new OnnxError('bad_calibration', 'evaluate needs at least one sample', 'invalid_arguments');
  const h = await heldOut(toRunner(opts.ort, opts.sessionOptions), original, samples, opts);
  return h.judge(pruned);
}
