// Latency of onnxruntime sessions measured against each other, as the benches compare files: one
// thread (the figure a browser app's WASM backend gives without cross-origin isolation), every
// session warmed up, then repetitions interleaved in a rotating order so that drift on a shared
// machine (load, frequency, where the heap lands) hits every session alike.

/**
 * The files a latency bench compares, from its arguments: `NAME=FILE.onnx`, or a bare `FILE.onnx`
 * named by its file name without `.onnx`; in the given order (the first is the baseline).
 */
export function namedFiles(args) {
  return args.map((p) => {
    const i = p.indexOf('=');
    const file = i > 0 ? p.slice(i + 1) : p;
    return { name: i > 0 ? p.slice(0, i) : file.replace(/^.*[\\/]/, '').replace(/\.onnx$/, ''), file };
  });
}

/** onnxruntime's session options for one thread, per runtime ('node': onnxruntime-node; 'web': onnxruntime-web WASM). */
export function oneThreadOptions(rt) {
  return rt === 'node' ? { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 } : { executionProviders: ['wasm'], logSeverityLevel: 3 };
}

/** onnxruntime-web set to one WASM thread, quiet (call before its first session). */
export function oneThreadWeb(ortWeb) {
  ortWeb.env.wasm.numThreads = 1;
  ortWeb.env.logLevel = 'error';
}

/**
 * Encoder samples (feeds of padded token tensors and their attention_mask) cut to their own length:
 * plain typed arrays, one per input, batch 1 (what an app runs sentence by sentence).
 */
export function unpaddedFeeds(samples) {
  return samples.map((s) => {
    const n = Array.from(s.feeds.attention_mask.data, Number).reduce((a, b) => a + b, 0);
    return Object.fromEntries(Object.entries(s.feeds).map(([k, t]) => [k, t.data.slice(0, n)]));
  });
}

/** `unpaddedFeeds`' arrays as int64 tensors of `ort` ([1, length]). */
export function int64Feeds(ort, feeds) {
  return feeds.map((f) => Object.fromEntries(Object.entries(f).map(([k, d]) => [k, new ort.Tensor('int64', d, [1, d.length])])));
}

/**
 * Milliseconds per feed set of each session: `warmup` rounds, then `reps` rounds in which every
 * session runs all of `feeds` once, the session order rotating by one each round. Returns one array
 * of `reps` timings per session.
 */
export async function interleavedLatency(sessions, feeds, { reps, warmup = 1 }) {
  for (let r = 0; r < warmup; r++) for (const s of sessions) for (const f of feeds) await s.run(f);
  const times = sessions.map(() => []);
  for (let r = 0; r < reps; r++) {
    for (let j = 0; j < sessions.length; j++) {
      const k = (r + j) % sessions.length;
      const t = performance.now();
      for (const f of feeds) await sessions[k].run(f);
      times[k].push((performance.now() - t) / feeds.length);
    }
  }
  return times;
}
