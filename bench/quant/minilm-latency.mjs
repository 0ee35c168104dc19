// Bench: MiniLM-L6 files' latency against each other with each file in several sessions
// (copies), interleaved: identical sessions of one file differ by a few percent in onnxruntime-web
// WASM (where a session's buffers land, the machine's moment), so a ratio between two files means
// something only beside the spread of their own copies.
//   node bench/quant/minilm-latency.mjs NAME=FILE.onnx [NAME=FILE.onnx | FILE.onnx ...] [--copies 2] [--reps 50]
//        [--model bench/out/models/all-MiniLM-L6-v2] [--runtimes web,node] [--processes P]
// --processes P: the whole comparison (copies, interleaved) in P processes one after another, the
// files' order rotating, and each file's ratio to the baseline taken within each process, then the
// median over processes: on this machine one file's latency differs by up to 2x between processes
// (10 to 18 ms for the same session, nothing else running), far more than between files within one.
// The first file is the baseline. Inputs: the first 8 held-out Debian descriptions of the MiniLM
// benches (bench/quant/minilm.mjs), each at its own length (7–19 tokens), batch 1, one thread.
// Prints, per runtime, each session's ms per description (--stat: p10 of the rounds by default, or
// median) and its ratio to the baseline's first session, then each file's median over its copies
// against the baseline's.
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { parseArgs } from 'node:util';
import * as ortWeb from 'onnxruntime-web';
import ortNode from 'onnxruntime-node';
import { median, quantile, sorted } from '../lib/stats.mjs';
import { debianSections } from '../lib/debian-sections.mjs';
import { encoderSamples } from '../lib/encoder-samples.mjs';
import { oneThreadOptions, oneThreadWeb, unpaddedFeeds, int64Feeds, interleavedLatency, namedFiles } from '../lib/ort-latency.mjs';

const { values, positionals } = parseArgs({ allowPositionals: true, options: {
  model: { type: 'string', default: 'bench/out/models/all-MiniLM-L6-v2' },
  copies: { type: 'string', default: '2' }, reps: { type: 'string', default: '50' }, runtimes: { type: 'string', default: 'web,node' },
  processes: { type: 'string' }, stat: { type: 'string', default: 'p10' }, rotate: { type: 'string', default: '0' }, json: { type: 'boolean' },
} });
// NAME=FILE arguments, read once: the names label every run, in this process or in the --processes children
const named = namedFiles(positionals);
if (named.length < 2) throw new Error('give at least two NAME=FILE.onnx (or FILE.onnx): the baseline first');
if (values.processes) await isolated(Number(values.processes));
const files = named.map(({ name, file }) => [name, fs.readFileSync(file)]);
const copies = Number(values.copies), reps = Number(values.reps);
const { held } = debianSections({ nCal: 16 });
const { samplesOf } = await encoderSamples(values.model, 32);
const lat = unpaddedFeeds(samplesOf(held.slice(0, 8).map(([d]) => d)).samples);
// sessions in the order file 1 copy 1, file 2 copy 1, ..., file 1 copy 2, ... (--rotate r: starting at file r + 1)
const order = [];
const rot = Number(values.rotate);
for (let c = 0; c < copies; c++) for (let j = 0; j < files.length; j++) { const [name, bytes] = files[(j + rot) % files.length]; order.push({ name, copy: c + 1, bytes }); }
const perFile = {};
oneThreadWeb(ortWeb);
const RT = { web: ortWeb, node: ortNode };
for (const rt of values.runtimes.split(',')) {
  const ort = RT[rt];
  const sess = [];
  for (const o of order) sess.push(await ort.InferenceSession.create(o.bytes, oneThreadOptions(rt)));
  const times = await interleavedLatency(sess, int64Feeds(ort, lat), { reps, warmup: 3 });
  // a low quantile of the rounds by default: the machine's interruptions only ever add time
  const med = times.map((t) => (values.stat === 'median' ? median(t) : quantile(sorted(t), Number(values.stat.slice(1)) / 100)));
  const first = med[order.findIndex((o) => o.name === files[0][0])]; // the baseline's first session (--rotate moves it)
  if (!values.json) console.log(`${rt}: ${order.map((o, i) => `${o.name}#${o.copy} ${med[i].toFixed(2)} ms (${(med[i] / first).toFixed(3)})`).join(' | ')}`);
  const byFile = (name) => median(order.flatMap((o, i) => (o.name === name ? [med[i]] : [])));
  const base = byFile(files[0][0]);
  perFile[rt] = Object.fromEntries(files.map(([name]) => [name, byFile(name)]));
  if (values.json) continue;
  console.log(`${rt}, median over copies: ${files.map(([name]) => `${name} ${byFile(name).toFixed(2)} ms (${(byFile(name) / base).toFixed(3)})`).join(' | ')}; spread of ${files[0][0]}'s copies ${(Math.max(...order.flatMap((o, i) => (o.name === files[0][0] ? [med[i]] : []))) / Math.min(...order.flatMap((o, i) => (o.name === files[0][0] ? [med[i]] : []))) - 1).toFixed(3)}`);
}
if (values.json) { console.log(JSON.stringify(perFile)); process.exit(0); }
console.log(`${copies} sessions per file, ${reps} interleaved repetitions over ${lat.length} descriptions; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);

/** --processes: the in-process comparison in P processes; ratios to the baseline within each, then their median. */
async function isolated(rounds) {
  const names = named.map((n) => n.name);
  const self = new URL(import.meta.url).pathname;
  const runs = [];
  for (let r = 0; r < rounds; r++) {
    const out = execFileSync(process.execPath, [self, ...positionals, '--json', '--rotate', String(r), '--copies', values.copies, '--reps', values.reps, '--stat', values.stat, '--runtimes', values.runtimes, '--model', values.model], { encoding: 'utf8' });
    runs.push(JSON.parse(out.trim().split('\n').pop()));
  }
  for (const rt of values.runtimes.split(',')) {
    const ratio = (name) => runs.map((m) => m[rt][name] / m[rt][names[0]]).sort((a, b) => a - b);
    const cell = (name) => { const x = ratio(name); return `${name} ${median(runs.map((m) => m[rt][name])).toFixed(2)} ms, ratio ${median(x).toFixed(3)} [${x[0].toFixed(3)}–${x[x.length - 1].toFixed(3)}]`; };
    console.log(`${rt}, ${rounds} processes (median over processes, [range of the per-process ratio]): ${names.map(cell).join(' | ')}`);
  }
  console.log(`${values.copies} sessions per file per process, ${values.reps} interleaved repetitions over 8 descriptions; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  process.exit(0);
}
