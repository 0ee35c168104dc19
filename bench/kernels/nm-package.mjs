// The 2:4 mask as users call it: `m4n2_1d(w, [4096, 11008])` on a JS Float32Array through the
// built package in Node (pkg/, single-threaded SIMD build), repeated, with a new mask array per
// call and with the caller's `out` array; and the wasm memory's size before the first call and
// after the last (the values are copied into wasm memory a chunk at a time, so it must not grow
// by the weight). Prints one JSON record per variant.
// Usage: node bench/kernels/nm-package.mjs [--reps N]
import { loadavg } from 'node:os';
import * as sk from '../../pkg/src/node.js';
import { memoryBuffer } from '../../pkg/src/runtime.js';
import { sorted, quantile } from '../lib/stats.mjs';

const args = process.argv.slice(2);
const ri = args.indexOf('--reps');
const reps = ri >= 0 ? Number(args[ri + 1]) : 15;
const [rows, cols] = [4096, 11008];
const w = new Float32Array(rows * cols);
for (let i = 0, s = 12345; i < w.length; i++) {
  s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
  w[i] = s / 2 ** 32 - 0.5;
}
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
const memBefore = memoryBuffer().byteLength;
const out = new Uint8Array(w.length);
sk.m4n2_1d(w, [rows, cols]); // warm-up
sk.m4n2_1d(w, [rows, cols], out);
// Interleaved: a new mask array per call (the API's default) and the caller's `out` reused.
const ts = { fresh: [], out: [] };
const loadBefore = load();
for (let i = 0; i < reps; i++) {
  let t = performance.now();
  sk.m4n2_1d(w, [rows, cols]);
  ts.fresh.push(performance.now() - t);
  t = performance.now();
  sk.m4n2_1d(w, [rows, cols], out);
  ts.out.push(performance.now() - t);
}
const loadAfter = load();
for (const [variant, v] of Object.entries(ts)) {
  const s = sorted(v);
  console.log(JSON.stringify({
    kind: 'nm24-package', env: 'node', variant, rows, cols, reps, median_ms: quantile(s, 0.5), p90_ms: quantile(s, 0.9), best_ms: s[0],
    wasm_memory_before_mb: memBefore / 2 ** 20, wasm_memory_after_mb: memoryBuffer().byteLength / 2 ** 20,
    load_before: loadBefore, load_after: loadAfter,
  }));
}
