// One plain magnitude prune as the CLI's `prune --sparsity S` runs it (load, prune, save, the
// transport sizes of input and output), in its own process, with the transport sizes made by the
// onnx module's transportSize: 'estimate' (its default), 'exact' (brotli 11 + gzip 9, what the CLI
// computes today) or 'none'. Prints one JSON line: the time of each phase and the sizes. Meant to be
// timed from outside, against the CLI itself:
//   farm-bench -n 5 -- node bench/transport/prune-job.mjs MODEL.onnx
//   farm-bench -n 3 --timeout 900 -- node pkg/bin/sparsekit-wasm.js prune MODEL.onnx --sparsity 0.5 -o /tmp/x.onnx --quiet
// Usage: node bench/transport/prune-job.mjs MODEL.onnx [--sparsity 0.5] [--transport estimate|exact|none] [-o OUT]
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { loadOnnx, saveOnnx, pruneSparsity, transportSize } from 'sparsekit-wasm/onnx';

const t0 = performance.now();
const { values, positionals } = parseArgs({ allowPositionals: true, options: { sparsity: { type: 'string', default: '0.5' }, transport: { type: 'string', default: 'estimate' }, o: { type: 'string' } } });
const file = path.resolve(positionals[0]);
const out = values.o ?? path.join(os.tmpdir(), `prune-job-${process.pid}.onnx`);
const ms = {};
let t = performance.now();
const lap = (k) => { const n = performance.now(); ms[k] = n - t; t = n; };
const model = await loadOnnx(file); lap('load');
const report = pruneSparsity(model, { sparsity: Number(values.sparsity) }); lap('prune');
const saved = await saveOnnx(model, out); lap('save');
let sizes = null;
if (values.transport !== 'none') {
  const mode = values.transport;
  sizes = { before: await transportSize([file], { mode }), after: await transportSize([saved.model], { mode }) };
  lap('transport');
}
if (!values.o) fs.rmSync(out, { force: true });
console.log(JSON.stringify({ file: path.basename(file), mode: values.transport, sparsity: report.sparsity, ms, wallInScript: performance.now() - t0, sizes: sizes && { before: { brotli: sizes.before.brotli, gzip: sizes.before.gzip, ms: sizes.before.ms }, after: { brotli: sizes.after.brotli, gzip: sizes.after.gzip, ms: sizes.after.ms } } }));
