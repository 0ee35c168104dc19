// Latency of PaddleOCR recogniser files against each other (issue 39's "at least onnxruntime q8's speed
// in onnxruntime-web WASM"): one thread, batch 1, the first --lat held-out lines of bench/quant/ocr-recover.mjs'
// task set (seed 900) at their rendered width, every session warmed up, repetitions interleaved in a
// rotating order (bench/lib/ort-latency.mjs), in onnxruntime-node and onnxruntime-web.
//   node bench/quant/rec-latency.mjs [--reps 30] [--lat 4] name=FILE.onnx ...   (or a bare FILE.onnx, named by its file name; the first file is the reference of the ratios)
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import ortNode from 'onnxruntime-node';
import * as ortWeb from 'onnxruntime-web';
import { renderText } from '../../kit/ocr-text.mjs';
import { readTextSet, textSamples } from '../../kit/ocr-metrics.mjs';
import { median, quantile, sorted } from '../lib/stats.mjs';
import { oneThreadOptions, oneThreadWeb, interleavedLatency, namedFiles } from '../lib/ort-latency.mjs';

const { values, positionals } = parseArgs({ allowPositionals: true, options: {
  reps: { type: 'string', default: '30' }, lat: { type: 'string', default: '4' },
} });
const rows = namedFiles(positionals);
if (rows.length < 2) throw new Error('give at least two files: name=FILE.onnx ...');
const samples = textSamples(readTextSet(await renderText({ kind: 'lines', seed: 900, count: 64 })), 'rec').slice(0, Number(values.lat));
oneThreadWeb(ortWeb);
for (const [rt, ort] of [['node', ortNode], ['web', ortWeb]]) {
  const sessions = [];
  for (const { file } of rows) sessions.push(await ort.InferenceSession.create(new Uint8Array(fs.readFileSync(file)), oneThreadOptions(rt)));
  const feeds = samples.map((s) => ({ x: new ort.Tensor('float32', s.feeds.x.data, s.feeds.x.dims) }));
  const times = await interleavedLatency(sessions, feeds, { reps: Number(values.reps) });
  for (const s of sessions) await s.release?.();
  rows.forEach((r, i) => { r[`${rt}Ms`] = median(times[i]); r[`${rt}P90`] = quantile(sorted(times[i]), 0.9); });
}
console.log(`| file | node ms (p90) | node ÷ ${rows[0].name} | web WASM ms (p90) | web ÷ ${rows[0].name} |`);
console.log('|---|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(`| ${r.name} | ${r.nodeMs.toFixed(1)} (${r.nodeP90.toFixed(1)}) | ${(r.nodeMs / rows[0].nodeMs).toFixed(2)} | ${r.webMs.toFixed(1)} (${r.webP90.toFixed(1)}) | ${(r.webMs / rows[0].webMs).toFixed(2)} |`);
}
console.log(`\n${samples.length} lines (${samples.map((s) => s.feeds.x.dims.join('×')).join(', ')}), ${values.reps} interleaved repetitions, one thread; load ${os.loadavg()[0].toFixed(2)}.`);
