// GPTQ (4 bits, groups of 128, block 128) on the calibration bench's weights, in every bench wasm
// variant built (bench/build-wasm.sh: simd, scalar, mt): time per call and whether every variant
// gives the same bits (bench_calib_digest covers the Hessian, SparseGPT and GPTQ results).
//   BENCH_VARIANTS="simd scalar" bash bench/build-wasm.sh && node bench/quant/gptq-variants.mjs [--shapes 768x768,3072x768] [--nvec 4096] [--reps 3]
// Prints one JSON record per line.
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { median } from '../lib/stats.mjs';

const { values: opt } = parseArgs({ options: { shapes: { type: 'string', default: '768x768,3072x768' }, nvec: { type: 'string', default: '4096' }, reps: { type: 'string', default: '3' } } });
const variants = [];
for (const name of ['simd', 'scalar']) {
  const dir = new URL(`../out/wasm/${name}/`, import.meta.url);
  if (!existsSync(new URL('bench_bg.wasm', dir))) continue;
  const glue = await import(new URL('bench.js', dir));
  glue.initSync({ module: readFileSync(new URL('bench_bg.wasm', dir)) });
  variants.push({ name, mod: glue });
}
if (!variants.length) throw new Error('no bench wasm built: BENCH_VARIANTS="simd scalar" bash bench/build-wasm.sh');
for (const shape of opt.shapes.split(',')) {
  const [rows, cols] = shape.split('x').map(Number);
  for (const v of variants) v.mod.bench_calib_prepare(rows, cols, Number(opt.nvec));
  const digests = variants.map((v) => v.mod.bench_calib_digest());
  console.log(JSON.stringify({ kind: 'gptq-check', rows, cols, variants: variants.map((v) => v.name), digests, identical: digests.every((d) => d === digests[0]) }));
  for (const op of ['sparsegpt', 'gptq']) {
    const ts = new Map(variants.map((v) => [v.name, []]));
    for (const v of variants) { v.mod.bench_calib_run(op); v.mod.bench_calib_restore(); } // warm-up
    for (let i = 0; i < Number(opt.reps); i++) for (const v of variants) {
      const t = performance.now();
      v.mod.bench_calib_run(op);
      ts.get(v.name).push(performance.now() - t);
      v.mod.bench_calib_restore();
    }
    for (const v of variants) console.log(JSON.stringify({ kind: 'gptq-time', variant: v.name, op, rows, cols, seconds: Math.min(...ts.get(v.name)) / 1e3, median_seconds: median(ts.get(v.name)) / 1e3 }));
  }
  for (const v of variants) v.mod.bench_calib_free();
}
