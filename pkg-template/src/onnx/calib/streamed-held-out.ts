// The held-out evaluation of a language model with its outputs in a cut store (issue 37: a
// recovery's judge held the original's logits and the candidate's for every held-out window,
// samples × tokens × vocabulary floats each, 2 × 0.8 GB for 32 windows of 128 tokens of SmolLM2).
// The original's outputs wait in the store; a candidate is run sample by sample and each sample's
// outputs are added to the language-model sums (fidelity/language-model.ts) beside the original's
// read back, then let go. The same sums in the same order as fidelity() over the whole set, so the
// same report. Only when every output is a language model's: other kinds compare whole sets (an
// embedding's neighbours), and heldOut holds them.
import type { OnnxModel } from '../model.js';
import { OnnxError } from '../errors.js';
import type { InputSample } from './inputs.js';
import type { ModelRunner } from './ort-runner.js';
import type { CutStore } from './cut-store.js';
import type { EvaluateReport, HeldOut, Outputs } from './evaluate.js';
import { cosine, eachOutput } from './set-outputs.js';
import { dimsOf, fidelity, LanguageModelTally, tokenRows, type FidelityOptions, type OutputFidelity, type OutputKind } from '../fidelity/index.js';

const bad = (msg: string) => new OnnxError('bad_calibration', msg, 'shape_mismatch');

interface Stored { ref: number; length: number; dims: number[] }

/**
 * heldOut with `store` (see the file comment), or undefined when some output of `original` is not a
 * language model's (then nothing is left in the store).
 */
export async function streamedHeldOut(runner: ModelRunner, original: OnnxModel | Uint8Array, samples: InputSample[], opts: FidelityOptions & { signal?: AbortSignal }, store: CutStore): Promise<HeldOut | undefined> {
  const stored: Record<string, Stored>[] = [];
  let kinds: Record<string, OutputKind> | undefined;
  let names: string[] = [];
  const release = () => { for (const s of stored) for (const v of Object.values(s)) store.free(v.ref, v.length); stored.length = 0; };
  try {
    await eachOutput(runner, original, samples, (o, k) => {
      if (k === 0) {
        // the kinds from the first sample, as fidelity() detects them over the whole set
        kinds = { ...Object.fromEntries(fidelity([o], [o], { ...opts, inputs: [samples[0]] }).outputs.map((f) => [f.name, f.kind])), ...(opts.kinds ?? {}) };
        names = Object.keys(o);
        if (!names.every((n) => kinds![n] === 'language-model')) throw new NotStreamed();
      }
      stored.push(Object.fromEntries(names.map((n) => {
        const v = o[n];
        if (!v) throw bad(`output "${n}" is missing from sample ${k} of the reference set`);
        return [n, { ref: store.put(new Uint8Array(v.buffer, v.byteOffset, v.byteLength)), length: v.byteLength, dims: dimsOf(v, n, opts.shapes) }];
      })));
    }, opts.signal);
  } catch (e) {
    release();
    if (e instanceof NotStreamed) return undefined;
    throw e;
  }
  const read = (s: Stored): Float32Array => {
    const out = Object.assign(new Float32Array(s.length / 4), { dims: s.dims });
    store.read(s.ref, new Uint8Array(out.buffer));
    return out;
  };
  const referenceOf = (k: number): Outputs => Object.fromEntries(names.map((n) => [n, read(stored[k][n])]));
  const pinned = kinds!;
  return {
    kinds: pinned,
    get reference() { return stored.map((_, k) => referenceOf(k)); },
    async judge(candidate, signal = opts.signal): Promise<EvaluateReport> {
      if (!stored.length) throw new OnnxError('bad_calibration', 'this held-out set was released', 'invalid_arguments');
      const tallies = names.map(() => new LanguageModelTally());
      let cosines = 0;
      await eachOutput(runner, candidate, samples, (out, k) => {
        const ref = referenceOf(k);
        names.forEach((n, j) => {
          const a = ref[n], b = out[n];
          if (!b) throw bad(`output "${n}" is missing from sample ${k} of the pruned set`);
          if (a.length !== b.length) throw bad(`output "${n}", sample ${k}: ${a.length} values in the reference, ${b.length} in the pruned model's`);
          tallies[j].add({ ref: a, out: b, dims: stored[k][n].dims }, tokenRows(samples[k]));
        });
        cosines += cosine(ref, out);
      }, signal);
      // as fidelity() reports a kind set by the caller (heldOut pins every kind)
      const outputs: OutputFidelity[] = names.map((name, j) => {
        const r = tallies[j].result();
        return { name, kind: pinned[name], score: r.score, metrics: r.metrics, detail: `set by the caller; ${r.detail ?? ''}`.replace(/; $/, ''), ...(r.decisions !== undefined ? { decisions: r.decisions } : {}) };
      });
      let worst = outputs[0];
      for (const o of outputs) if (!(o.score >= worst.score)) worst = o;
      return { score: worst.score, worst: worst.name, outputs, samples: samples.length, cosine: cosines / Math.max(1, samples.length) };
    },
    release,
  };
}

/** The first sample showed an output that is not a language model's: heldOut holds the set instead. */
class NotStreamed extends Error {}
