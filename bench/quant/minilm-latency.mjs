// Bench: MiniLM-L6 files' latency against each other with each file in several sessions
// (copies), interleaved: identical sessions of one file differ by a few percent in onnxruntime-web
// WASM (where a session's buffers land, the machine's moment), so a ratio between two files means
// something only beside the spread of their own copies.
//   node bench/quant/minilm-latency.mjs NAME=FILE.onnx [NAME=FILE.onnx ...] [--copies 2] [--reps 50]
//        [--model bench/out/models/all-MiniLM-L6-v2] [--runtimes web,node]
// The first file is the baseline. Inputs: the first 8 held-out Debian descriptions of the MiniLM
// benches (bench/quant/minilm.mjs), each at its own length (7–19 tokens), batch 1, one thread.
// Prints, per runtime, each session's median ms per description and its ratio to the baseline's
// first session, then each file's median over its copies against the baseline's.
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import * as ortWeb from 'onnxruntime-web';
import ortNode from 'onnxruntime-node';
import { median } from '../lib/stats.mjs';
import { debianSections } from '../lib/debian-sections.mjs';
import { encoderSamples } from '../lib/encoder-samples.mjs';
import { oneThreadOptions, oneThreadWeb, unpaddedFeeds, int64Feeds, interleavedLatency } from '../lib/ort-latency.mjs';

const { values, positionals } = parseArgs({ allowPositionals: true, options: {
  model: { type: 'string', default: 'bench/out/models/all-MiniLM-L6-v2' },
  copies: { type: 'string', default: '2' }, reps: { type: 'string', default: '50' }, runtimes: { type: 'string', default: 'web,node' },
} });
const files = positionals.map((p) => { const i = p.indexOf('='); if (i < 1) throw new Error(`give NAME=FILE.onnx (got ${p})`); return [p.slice(0, i), fs.readFileSync(p.slice(i + 1))]; });
if (files.length < 2) throw new Error('give at least two NAME=FILE.onnx: the baseline first');
const copies = Number(values.copies), reps = Number(values.reps);
const { held } = debianSections({ nCal: 16 });
const { samplesOf } = await encoderSamples(values.model, 32);
const lat = unpaddedFeeds(samplesOf(held.slice(0, 8).map(([d]) => d)).samples);
// sessions in the order file 1 copy 1, file 2 copy 1, ..., file 1 copy 2, ...
const order = [];
for (let c = 0; c < copies; c++) for (const [name, bytes] of files) order.push({ name, copy: c + 1, bytes });
oneThreadWeb(ortWeb);
const RT = { web: ortWeb, node: ortNode };
for (const rt of values.runtimes.split(',')) {
  const ort = RT[rt];
  const sess = [];
  for (const o of order) sess.push(await ort.InferenceSession.create(o.bytes, oneThreadOptions(rt)));
  const times = await interleavedLatency(sess, int64Feeds(ort, lat), { reps, warmup: 3 });
  const med = times.map(median);
  console.log(`${rt}: ${order.map((o, i) => `${o.name}#${o.copy} ${med[i].toFixed(2)} ms (${(med[i] / med[0]).toFixed(3)})`).join(' | ')}`);
  const byFile = (name) => median(order.flatMap((o, i) => (o.name === name ? [med[i]] : [])));
  const base = byFile(files[0][0]);
  console.log(`${rt}, median over copies: ${files.map(([name]) => `${name} ${byFile(name).toFixed(2)} ms (${(byFile(name) / base).toFixed(3)})`).join(' | ')}; spread of ${files[0][0]}'s copies ${(Math.max(...order.flatMap((o, i) => (o.name === files[0][0] ? [med[i]] : []))) / Math.min(...order.flatMap((o, i) => (o.name === files[0][0] ? [med[i]] : []))) - 1).toFixed(3)}`);
}
console.log(`${copies} sessions per file, ${reps} interleaved repetitions over ${lat.length} descriptions; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
