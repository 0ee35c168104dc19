// Node part of the bench: SIMD128 and scalar bench wasm, the plain-JS baseline and the wasm
// memory-read bandwidth. Prints one JSON record per line. Usage: node bench/kernels/node.mjs [--quick]
import { readFileSync } from 'node:fs';
import { runInterleaved, wasmMembw, SIZES } from './suite.mjs';

const quick = process.argv.includes('--quick');
const sizes = quick ? SIZES.slice(0, 2) : SIZES;
const print = (r) => console.log(JSON.stringify(r));

const variants = [];
for (const variant of ['simd', 'scalar']) {
  const url = new URL(`../out/wasm/${variant}/bench.js`, import.meta.url);
  const glue = await import(url);
  glue.initSync({ module: readFileSync(new URL(`../out/wasm/${variant}/bench_bg.wasm`, import.meta.url)) });
  print({ kind: 'info', env: 'node', variant, ...JSON.parse(glue.bench_info()) });
  print(wasmMembw(glue, 'node', variant));
  variants.push({ name: variant, mod: glue });
}
runInterleaved('node', [...variants, { name: 'js' }], { sizes, quick, log: print });
