// A model run over a set of samples, output by output (as float32 with their dims), and the cosine of
// all outputs of one sample together: what the held-out judging (evaluate.ts, streamed-held-out.ts),
// recovery and the search share.
import type { OnnxModel } from '../model.js';
import type { InputSample } from './inputs.js';
import type { ModelRunner } from './ort-runner.js';
import { CancelledError, turn } from './cancel.js';
import { openSession } from './model-session.js';
import type { Outputs } from '../fidelity/types.js';
import { asF32 as outputAsFloat } from './tensor.js';

/**
 * Runs the model on every sample of the set, handing each sample's outputs (as float32, with their
 * dims) to `fn` in order. The session reads a large model from files in Node, else its encoded
 * bytes, let go once the session holds it (model-session.ts).
 */
export async function eachOutput(runner: ModelRunner, model: OnnxModel | Uint8Array, set: InputSample[], fn: (outputs: Outputs, k: number) => void, signal?: AbortSignal): Promise<void> {
  const session = await openSession(runner, model);
  try {
    for (const [k, { feeds }] of set.entries()) {
      await turn(); // a turn for a 'cancel' message (calibrate.ts)
      if (signal?.aborted) throw new CancelledError();
      const o = await session.run(feeds);
      const r: Outputs = {};
      for (const [name, v] of Object.entries(o)) r[name] = Object.assign(outputAsFloat(v), { dims: [...v.dims] });
      fn(r, k);
    }
  } finally { await session.release(); }
}

/** Runs the model on every sample of the set; returns each sample's outputs (eachOutput's). */
export async function runSet(runner: ModelRunner, model: OnnxModel | Uint8Array, set: InputSample[], signal?: AbortSignal): Promise<Outputs[]> {
  const outs: Outputs[] = [];
  await eachOutput(runner, model, set, (o) => outs.push(o), signal);
  return outs;
}

/** The cosine of all outputs of one sample together (compareSets' per input). */
export function cosine(a: Outputs, b: Outputs): number {
  let d = 0, na = 0, nb = 0;
  for (const k of Object.keys(a)) {
    const x = a[k], y = b[k];
    for (let i = 0; i < x.length; i++) { d += x[i] * y[i]; na += x[i] * x[i]; nb += y[i] * y[i]; }
  }
  if (na === 0 && nb === 0) return 1;
  if (na === 0 || nb === 0 || !Number.isFinite(d)) return 0;
  return d / Math.sqrt(na * nb);
}
