// The transport-size estimate as shipped (transportSize, RATIO_FIT) against the exact brotli 11 /
// gzip 9 of each file (bench/transport/transport-exact.mjs's cache, computed if absent), with its
// cost: the estimate's time (the second of two calls in this process: the first pays for loading
// and compiling the module, as a CLI run does once) against the exact mode's.
// Usage: node bench/transport/transport-size.mjs FILE...
// The corpus: node bench/transport/transport-size.mjs $(bash bench/transport/transport-corpus.sh)
import fs from 'node:fs';
import path from 'node:path';
import { transportSize } from 'sparsekit-wasm/onnx';
import { exactSizes, readCache } from './transport-exact.mjs';

const cache = readCache();
const pct = (x) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(2)}%`;
console.log('| file | raw | brotli 11 | estimate | error | gzip 9 | estimate | error | stated tolerance (brotli, gzip) | estimate ms (first, second call) | exact s |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|');
for (const f of process.argv.slice(2)) {
  const ex = await exactSizes(f, cache);
  const first = await transportSize([f]), est = await transportSize([f]);
  const eb = est.brotli / ex.q11 - 1, eg = est.gzip / ex.gz9 - 1;
  const tol = est.tolerance ? `${(100 * est.tolerance.brotli).toFixed(1)}%, ${(100 * est.tolerance.gzip).toFixed(1)}%` : 'none (outside the fit)';
  console.log(`| ${path.basename(f)} | ${fs.statSync(f).size} | ${ex.q11} | ${est.brotli} | ${pct(eb)} | ${ex.gz9} | ${est.gzip} | ${pct(eg)} | ${tol} | ${first.ms.toFixed(0)}, ${est.ms.toFixed(0)} | ${ex.seconds.toFixed(1)} |`);
}
