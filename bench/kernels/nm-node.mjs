// The 2:4 mask of a 4096×11008 weight in Node, single-threaded SIMD128 bench wasm, repeated
// (>= 15) so that the median and the spread are figures, not one lucky run: on a shared
// machine a single time says little. Prints one JSON record per variant with median, p90, best
// and the load average before and after. Several module directories (e.g. a baseline build)
// are timed interleaved, one repetition of each in turn.
// Usage: node bench/kernels/nm-node.mjs [--reps N] [dir ...]   (default dir: bench/out/wasm/simd)
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { sorted, quantile } from '../lib/stats.mjs';

const args = process.argv.slice(2);
const ri = args.indexOf('--reps');
const reps = ri >= 0 ? Number(args.splice(ri, 2)[1]) : 21;
const dirs = args.length ? args : [new URL('../out/wasm/simd/', import.meta.url).pathname];
const [rows, cols] = [4096, 11008];

const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

const mods = [];
for (const dir of dirs) {
  const base = pathToFileURL(resolve(dir) + '/');
  const glue = await import(new URL('bench.js', base));
  glue.initSync({ module: readFileSync(new URL('bench_bg.wasm', base)) });
  glue.bench_prepare(rows, cols);
  glue.bench_run('nm24', '-'); // warm-up and tier-up
  mods.push({ dir, glue, ts: [] });
}
// Every variant must produce the same mask bits.
const digests = new Set(mods.map((m) => m.glue.bench_digest('nm24', '-')));
if (digests.size !== 1) throw new Error(`2:4 masks differ between ${dirs.join(', ')}`);

const loadBefore = load();
for (let i = 0; i < reps; i++) {
  for (const m of mods) {
    const t = performance.now();
    m.glue.bench_run('nm24', '-');
    m.ts.push(performance.now() - t);
  }
}
const loadAfter = load();
for (const m of mods) {
  const s = sorted(m.ts);
  console.log(JSON.stringify({
    kind: 'nm24', env: 'node', variant: m.dir, rows, cols, reps,
    median_ms: quantile(s, 0.5), p90_ms: quantile(s, 0.9), best_ms: s[0], worst_ms: s[s.length - 1],
    load_before: loadBefore, load_after: loadAfter,
  }));
  m.glue.bench_free();
}
