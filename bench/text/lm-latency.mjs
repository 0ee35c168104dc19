// Bench: a decoder's latency, two models interleaved in onnxruntime-node on one thread (one window of
// 256 token ids, two warm-up runs each, then N runs alternating which model goes first; medians).
// Used for the SmolLM2 channel / layer removal figures in bench/RESULTS.md.
//   node bench/text/lm-latency.mjs DENSE.onnx PRUNED.onnx [runs=9]
import ort from 'onnxruntime-node';
const [a, b, runs] = [process.argv[2], process.argv[3], Number(process.argv[4] ?? 11)];
const opts = { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 };
const s = [await ort.InferenceSession.create(a, opts), await ort.InferenceSession.create(b, opts)];
const S = 256, ids = BigInt64Array.from({ length: S }, (_, i) => BigInt(100 + (i * 37) % 5000));
const feeds = { input_ids: new ort.Tensor('int64', ids, [1, S]), attention_mask: new ort.Tensor('int64', BigInt64Array.from({ length: S }, () => 1n), [1, S]), position_ids: new ort.Tensor('int64', BigInt64Array.from({ length: S }, (_, i) => BigInt(i)), [1, S]) };
for (const x of s) { await x.run(feeds); await x.run(feeds); }
const t = [[], []];
for (let k = 0; k < runs; k++) for (const i of k % 2 ? [1, 0] : [0, 1]) { const t0 = performance.now(); await s[i].run(feeds); t[i].push(performance.now() - t0); }
const med = (v) => v.slice().sort((x, y) => x - y)[v.length >> 1];
console.log(t.map((v) => v.map((x) => x.toFixed(0)).join(' ')).join('\n'));
console.log(`median ${med(t[0]).toFixed(0)} vs ${med(t[1]).toFixed(0)} ms, x${(med(t[0]) / med(t[1])).toFixed(2)}`);
