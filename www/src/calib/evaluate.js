// Output agreement of a pruned model with the original on held-out inputs: cosine similarity of all
// outputs of one input together (as compareOutputs in model-input.js), averaged over the inputs.

/** Runs `bytes` on every input of the set; returns [{name: Float32Array}]. */
export async function runSet(runner, bytes, set, signal) {
  const session = await runner.createSession(bytes);
  try {
    const outs = [];
    for (const { feeds } of set) {
      await new Promise((resolve) => setTimeout(resolve, 0));   // a turn for a 'cancel' message (calibrate.js)
      if (signal?.aborted) throw Object.assign(new Error('cancelled'), { name: 'AbortError', code: 'cancelled' });
      const o = await session.run(feeds);
      const r = {};
      for (const [k, v] of Object.entries(o)) r[k] = v.data instanceof Float32Array ? v.data : Float32Array.from(v.data, Number);
      outs.push(r);
    }
    return outs;
  } finally { await session.release(); }
}

function cosine(a, b) {
  let d = 0, na = 0, nb = 0;
  for (const k of Object.keys(a)) {
    const x = a[k], y = b[k];
    for (let i = 0; i < x.length; i++) { d += x[i] * y[i]; na += x[i] * x[i]; nb += y[i] * y[i]; }
  }
  if (na === 0 && nb === 0) return 1;
  if (na === 0 || nb === 0 || !Number.isFinite(d)) return 0;
  return d / Math.sqrt(na * nb);
}

/** {cosine: mean over inputs, min, perInput} of `outputs` against `reference` (same set, same order). */
export function compareSets(reference, outputs) {
  const per = reference.map((r, i) => cosine(r, outputs[i]));
  return { cosine: per.reduce((a, b) => a + b, 0) / Math.max(1, per.length), min: Math.min(...per), perInput: per };
}
