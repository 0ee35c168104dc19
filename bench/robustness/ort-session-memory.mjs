// One onnxruntime-node session of a model and what the process holds (RSS, its anonymous and
// file-backed parts, JS array buffers) after the session is created, after two runs of one
// 128-token window, after its release; one variant per process (what a release leaves depends on
// what came before). Issue 37 item 5: which way of giving onnxruntime a 0.65 GB language model
// costs least. Bench only (bench/RESULTS.md, "Recovery memory"):
//   node bench/robustness/ort-session-memory.mjs VARIANT MODEL
// VARIANT: `bytes` (the file read into JS and handed over, as a session from encoded bytes) or
// `path` (the path: onnxruntime reads the file), optionally followed by `-noprepack`
// (session.disable_prepacking) and `-noarena` (enableCpuMemArena / enableMemPattern off). For
// external data, give `path` a model saved with onnx.save(..., save_as_external_data=True).
// The model's inputs are a decoder's (input_ids, attention_mask, position_ids), as SmolLM2's export.
import fs from 'node:fs';
import ort from 'onnxruntime-node';
const [variant, model] = process.argv.slice(2);
const st = () => { const o = {}; for (const l of fs.readFileSync('/proc/self/status', 'utf8').split('\n')) { const m = /^(VmRSS|RssAnon|RssFile):\s+(\d+)/.exec(l); if (m) o[m[1]] = +(m[2] / 2 ** 20).toFixed(2); } return o; };
const log = (what) => console.log(variant, what, JSON.stringify(st()), 'ab', (process.memoryUsage().arrayBuffers / 2 ** 30).toFixed(2));
const opts = { logSeverityLevel: 3 };
if (variant.includes('noarena')) Object.assign(opts, { enableCpuMemArena: false, enableMemPattern: false });
if (variant.includes('noprepack')) opts.extra = { session: { disable_prepacking: '1' } };
log('start');
const src = variant.startsWith('bytes') ? new Uint8Array(fs.readFileSync(model)) : model;
const s = await ort.InferenceSession.create(src, opts);
log('created');
const n = 128;
const ids = BigInt64Array.from({ length: n }, (_, i) => BigInt(100 + i));
const feeds = { input_ids: new ort.Tensor('int64', ids, [1, n]), attention_mask: new ort.Tensor('int64', new BigInt64Array(n).fill(1n), [1, n]), position_ids: new ort.Tensor('int64', BigInt64Array.from({ length: n }, (_, i) => BigInt(i)), [1, n]) };
let t = Date.now();
let out = await s.run(feeds);
console.log(variant, 'run ms', Date.now() - t, out.logits.data[5]);
t = Date.now(); out = await s.run(feeds); console.log(variant, 'run2 ms', Date.now() - t);
out = null;
log('ran');
await s.release();
log('released');
