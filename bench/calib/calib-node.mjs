// Node part of the calibration bench: SIMD128 and scalar bench wasm, interleaved. Prints one
// JSON record per line. Usage: node bench/calib/calib-node.mjs [--quick]
import { existsSync, readFileSync } from 'node:fs';
import { runCalibInterleaved } from './calib-suite.mjs';

const quick = process.argv.includes('--quick');
const print = (r) => console.log(JSON.stringify(r));
const variants = [];
for (const variant of ['simd', 'scalar']) {
  // A variant not built (BENCH_VARIANTS of bench/build-wasm.sh) is left out; simd is required.
  if (variant !== 'simd' && !existsSync(new URL(`../out/wasm/${variant}/bench_bg.wasm`, import.meta.url))) continue;
  const glue = await import(new URL(`../out/wasm/${variant}/bench.js`, import.meta.url));
  glue.initSync({ module: readFileSync(new URL(`../out/wasm/${variant}/bench_bg.wasm`, import.meta.url)) });
  variants.push({ name: variant, mod: glue });
}
runCalibInterleaved('node', variants, { quick, log: print });
