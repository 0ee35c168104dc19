// Output agreement of a pruned model with the original on held-out inputs: the cosine similarity of
// all outputs of one input together, averaged over the inputs.
import type { InputSample } from './inputs.js';
import type { ModelRunner } from './ort-runner.js';
import { CancelledError } from './cancel.js';

export type Outputs = Record<string, Float32Array>;

/** Any output as float32 (float16 bits widened, integers converted): the one conversion, tensor.ts. */
export { asF32 as outputAsFloat } from './tensor.js';
import { asF32 as outputAsFloat } from './tensor.js';

/** Runs `bytes` on every sample of the set; returns each sample's outputs. */
export async function runSet(runner: ModelRunner, bytes: Uint8Array, set: InputSample[], signal?: AbortSignal): Promise<Outputs[]> {
  const session = await runner.createSession(bytes);
  try {
    const outs: Outputs[] = [];
    for (const { feeds } of set) {
      await new Promise((resolve) => setTimeout(resolve, 0)); // a turn for a 'cancel' message (calibrate.ts)
      if (signal?.aborted) throw new CancelledError();
      const o = await session.run(feeds);
      const r: Outputs = {};
      for (const [k, v] of Object.entries(o)) r[k] = outputAsFloat(v);
      outs.push(r);
    }
    return outs;
  } finally { await session.release(); }
}

function cosine(a: Outputs, b: Outputs): number {
  let d = 0, na = 0, nb = 0;
  for (const k of Object.keys(a)) {
    const x = a[k], y = b[k];
    for (let i = 0; i < x.length; i++) { d += x[i] * y[i]; na += x[i] * x[i]; nb += y[i] * y[i]; }
  }
  if (na === 0 && nb === 0) return 1;
  if (na === 0 || nb === 0 || !Number.isFinite(d)) return 0;
  return d / Math.sqrt(na * nb);
}

/** Mean cosine over the inputs, its minimum and each input's, of `outputs` against `reference` (same set, same order). */
export function compareSets(reference: Outputs[], outputs: Outputs[]): { cosine: number; min: number; perInput: number[] } {
  const per = reference.map((r, i) => cosine(r, outputs[i]));
  return { cosine: per.reduce((a, b) => a + b, 0) / Math.max(1, per.length), min: Math.min(...per), perInput: per };
}
