// Bench: a decoder's latency, two models interleaved on one thread in onnxruntime-node or
// onnxruntime-web's WASM backend (one window of 256 token ids, two warm-up runs each, then N runs
// in a rotating order; medians). Used for the SmolLM2 channel / layer removal figures in
// bench/RESULTS.md.
//   node bench/text/lm-latency.mjs DENSE.onnx PRUNED.onnx [runs=11] [--runtime node|web]
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import ortNode from 'onnxruntime-node';
import * as ortWeb from 'onnxruntime-web';
import { median } from '../lib/stats.mjs';
import { oneThreadOptions, oneThreadWeb, interleavedLatency } from '../lib/ort-latency.mjs';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { runtime: { type: 'string', default: 'node' } } });
const [a, b, runs] = [positionals[0], positionals[1], Number(positionals[2] ?? 11)];
const rt = values.runtime;
if (rt !== 'node' && rt !== 'web') throw new Error(`--runtime must be node or web (got ${rt})`);
const ort = rt === 'web' ? ortWeb : ortNode;
if (rt === 'web') oneThreadWeb(ortWeb);
// onnxruntime-web takes the bytes; node the path
const source = (f) => (rt === 'web' ? fs.readFileSync(f) : f);
const s = [await ort.InferenceSession.create(source(a), oneThreadOptions(rt)), await ort.InferenceSession.create(source(b), oneThreadOptions(rt))];
const S = 256, ids = BigInt64Array.from({ length: S }, (_, i) => BigInt(100 + (i * 37) % 5000));
const feeds = { input_ids: new ort.Tensor('int64', ids, [1, S]), attention_mask: new ort.Tensor('int64', BigInt64Array.from({ length: S }, () => 1n), [1, S]), position_ids: new ort.Tensor('int64', BigInt64Array.from({ length: S }, (_, i) => BigInt(i)), [1, S]) };
const t = await interleavedLatency(s, [feeds], { reps: runs, warmup: 2 });
console.log(t.map((v) => v.map((x) => x.toFixed(0)).join(' ')).join('\n'));
console.log(`${rt}: median ${median(t[0]).toFixed(0)} vs ${median(t[1]).toFixed(0)} ms, x${(median(t[0]) / median(t[1])).toFixed(2)}`);
