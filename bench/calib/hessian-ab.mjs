// The Hessian update of two builds of the package in one Node process, single-threaded (each
// build's `st` wasm, as imported), interleaved: per rep and cell, one build then the other (the
// order alternating by rep). Made to compare a change of the kernel with main's build on the
// same machine at the same moment; it also checks that both builds give the same bits (a digest
// of `matrix()`), which the kernel's contract promises across tilings.
//   node bench/calib/hessian-ab.mjs --a /path/to/pkg-A --b /path/to/pkg-B [--reps N]
// (default --b: this tree's pkg/). GFLOP/s count n·cols·(cols+1) flops, the symmetric update's
// useful multiply-adds twice (as the calibration kernels table does). Writes
// bench/out/hessian-ab.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median, sorted } from '../lib/stats.mjs';

const arg = (name, dflt) => { const i = process.argv.indexOf(name); return i < 0 ? dflt : process.argv[i + 1]; };
const dirs = { a: arg('--a'), b: arg('--b', new URL('../../pkg', import.meta.url).pathname) };
if (!dirs.a) throw new Error('usage: node bench/calib/hessian-ab.mjs --a PKG_DIR [--b PKG_DIR] [--reps N]');
const reps = Number(arg('--reps', 5));
const builds = {};
for (const [k, d] of Object.entries(dirs)) builds[k] = await import(pathToFileURL(resolve(d, 'src/node.js')).href);

let s = 12345;
const rand = (n) => {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) { s = (s * 1103515245 + 12345) >>> 0; a[i] = s / 2 ** 32 - 0.5; }
  return a;
};
// The node-threads cells (8192 rows of 576 and 1536, one call), the same rows in calls of 512 (one
// SmolLM2 window of 512 tokens per call, as the CLI's capture adds them), and the calibration
// table's cells (1024 rows of 768 and 3072); then narrow ones as convolutions make them (a 3x3
// depthwise group: 9 inputs, 160 x 160 positions per call; a 3x3 conv of 3 channels: 27; of 8: 72).
const CELLS = [[576, 8192, 8192], [1536, 8192, 8192], [576, 8192, 512], [1536, 8192, 512], [768, 1024, 1024], [3072, 1024, 1024],
  [9, 102400, 25600], [27, 65536, 16384], [72, 16384, 16384]]
  .map(([cols, rows, call]) => ({ cols, rows, call, x: rand(cols * rows) }));

function run(sk, c) {
  const h = new sk.Hessian(c.cols);
  const t = performance.now();
  for (let r = 0; r < c.rows; r += c.call) h.addRows(c.x.subarray(r * c.cols, (r + c.call) * c.cols), c.call);
  const ms = performance.now() - t;
  const digest = createHash('sha256').update(h.matrix()).digest('hex').slice(0, 16);
  h.free();
  return { ms, digest };
}

const load = [loadavg()[0]];
const t = CELLS.map(() => ({ a: [], b: [], digests: { a: new Set(), b: new Set() } }));
for (let r = -1; r < reps; r++) { // r = -1: warm-up
  CELLS.forEach((c, i) => {
    for (const k of r % 2 ? ['a', 'b'] : ['b', 'a']) {
      const { ms, digest } = run(builds[k], c);
      t[i].digests[k].add(digest);
      if (r >= 0) t[i][k].push(ms);
    }
  });
  load.push(loadavg()[0]);
}
const rows = CELLS.map((c, i) => {
  const gf = (ms) => (c.rows * c.cols * (c.cols + 1)) / ms / 1e6;
  const m = t[i];
  const same = m.digests.a.size === 1 && [...m.digests.a][0] === [...m.digests.b][0] && m.digests.b.size === 1;
  return { cols: c.cols, rows: c.rows, rows_per_call: c.call, a_ms: median(m.a), b_ms: median(m.b), a_best_ms: sorted(m.a)[0], b_best_ms: sorted(m.b)[0],
    a_gflops: gf(median(m.a)), b_gflops: gf(median(m.b)), b_over_a: median(m.a) / median(m.b), same_bits: same, a_reps: m.a, b_reps: m.b };
});
const out = { when: new Date().toISOString(), node: process.version, reps, dirs, load_1min: load, rows };
mkdirSync(new URL('../out/', import.meta.url), { recursive: true });
writeFileSync(new URL('../out/hessian-ab.json', import.meta.url), `${JSON.stringify(out, null, 1)}\n`);
console.log(`A = ${dirs.a}, B = ${dirs.b}; medians of ${reps} interleaved reps, 1 thread; load (1 min) ${load.map((v) => v.toFixed(2)).join(' ')}`);
console.log('| cols × rows (rows per call) | A (ms) | A GFLOP/s | B (ms) | B GFLOP/s | B / A speed | same bits |');
console.log('|---|---:|---:|---:|---:|---:|---|');
for (const r of rows) {
  console.log(`| ${r.cols} × ${r.rows} (${r.rows_per_call}) | ${r.a_ms.toFixed(1)} | ${r.a_gflops.toFixed(1)} | ${r.b_ms.toFixed(1)} | ${r.b_gflops.toFixed(1)} | ${r.b_over_a.toFixed(2)}x | ${r.same_bits ? 'yes' : 'NO'} |`);
}
