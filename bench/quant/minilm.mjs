// MiniLM-L6 (all-MiniLM-L6-v2, built by bench/models/minilm.py) quantized, side by side in one run
// with onnxruntime's own dynamic int8: brotli-9 size, embedding cosine to the float model on held-out
// sentences, one-thread latency in onnxruntime-node and onnxruntime-web (WASM), interleaved runs.
// Needs the Python steps first (bench only):
//   /work/venv/bin/python bench/models/minilm.py && /work/venv/bin/python bench/quant/prepare.py
// Usage: node bench/quant/minilm.mjs [--model bench/out/models/all-MiniLM-L6-v2] [--reps 15] [--lat-sentences 8] [--skip-wanda]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseArgs } from 'node:util';
import ortNode from 'onnxruntime-node';
import * as ortWeb from 'onnxruntime-web';
import { OnnxModel, quantizeModel, pruneSparsity, calibratePrune } from 'sparsekit-wasm/onnx';
import { median, quantile, sorted } from '../lib/stats.mjs';

const { values } = parseArgs({ options: {
  model: { type: 'string', default: 'bench/out/models/all-MiniLM-L6-v2' },
  reps: { type: 'string', default: '15' }, 'lat-sentences': { type: 'string', default: '8' },
  out: { type: 'string', default: 'bench/out/quant/minilm.json' },
  // Wanda needs a calibration pass through onnxruntime per layer: minutes on a loaded machine.
  'skip-wanda': { type: 'boolean', default: false },
} });
const dir = values.model;
const read = (f) => new Uint8Array(fs.readFileSync(path.join(dir, 'onnx', f)));
const { heldOut, calibration } = JSON.parse(fs.readFileSync(path.join(dir, 'bench-sentences.json'), 'utf8'));
const floatBytes = read('model.onnx');

const t0 = Date.now();
const log = (m) => console.error(`[${((Date.now() - t0) / 1000).toFixed(0)} s] ${m}`);
const variants = { float32: floatBytes, 'ort q8 (quantize_dynamic)': read('model_ort_q8.onnx'), 'ort q8 per channel': read('model_ort_q8_pc.onnx') };
const ours = (label, fn) => { const m = OnnxModel.parse(floatBytes); const r = fn(m); variants[label] = m.encode(); return r; };
const reports = {};
reports['ours int8'] = ours('ours int8', (m) => quantizeModel(m, { scheme: 'int8' }));
reports['ours int8 (DQ form)'] = ours('ours int8 (DQ form)', (m) => quantizeModel(m, { scheme: 'int8', int8MatMul: 'dq' }));
reports['ours int4 g32'] = ours('ours int4 g32', (m) => quantizeModel(m, { scheme: 'int4', group: 32 }));
reports['ours 50% magnitude + int8'] = ours('ours 50% magnitude + int8', (m) => { pruneSparsity(m, { sparsity: 0.5 }); return quantizeModel(m, { scheme: 'int8' }); });
if (!values['skip-wanda']) {
  const feed = (s) => {
    const n = s.ids.length;
    const t = (a) => ({ type: 'int64', data: BigInt64Array.from(a.map(BigInt)), dims: [1, n] });
    return { feeds: { input_ids: t(s.ids), attention_mask: t(s.mask), token_type_ids: t(s.type_ids) }, source: s.text.slice(0, 30) };
  };
  const m = OnnxModel.parse(floatBytes);
  await calibratePrune(m, { ort: ortNode, sessionOptions: { intraOpNumThreads: 1 }, calibration: calibration.map(feed), criterion: 'wanda', sparsity: 0.5 });
  reports['ours 50% wanda + int8'] = quantizeModel(m, { scheme: 'int8' });
  variants['ours 50% wanda + int8'] = m.encode();
}
const buildSeconds = (Date.now() - t0) / 1000;
log('variants built');

const feedsOf = (ort, s) => {
  const n = s.ids.length;
  const t = (a) => new ort.Tensor('int64', BigInt64Array.from(a.map(BigInt)), [1, n]);
  return { input_ids: t(s.ids), attention_mask: t(s.mask), token_type_ids: t(s.type_ids) };
};
ortWeb.env.wasm.numThreads = 1;
ortWeb.env.logLevel = 'error';
const sessions = { node: {}, web: {} };
for (const [k, b] of Object.entries(variants)) {
  sessions.node[k] = await ortNode.InferenceSession.create(b, { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 });
  sessions.web[k] = await ortWeb.InferenceSession.create(b, { executionProviders: ['wasm'], logSeverityLevel: 3 });
}

log('sessions created');
// Fidelity: cosine of each held-out sentence's embedding to the float model's (onnxruntime-node).
const emb = {};
for (const [k, s] of Object.entries(sessions.node)) {
  emb[k] = [];
  for (const x of heldOut) emb[k].push((await s.run(feedsOf(ortNode, x))).sentence_embedding.data);
}
const cos = (a, b) => { let ab = 0, aa = 0, bb = 0; for (let i = 0; i < a.length; i++) { ab += a[i] * b[i]; aa += a[i] * a[i]; bb += b[i] * b[i]; } return ab / Math.sqrt(aa * bb); };
// Task proxy without labels: for each sentence, is its nearest neighbour among the others the same as the float model's?
const nn = (E) => E.map((e, i) => { let best = -1, bi = -1; E.forEach((f, j) => { if (j !== i) { const c = cos(e, f); if (c > best) { best = c; bi = j; } } }); return bi; });
const nnFloat = nn(emb.float32);

log('embeddings done');
// Latency: the first L held-out sentences one by one, per repetition every variant in rotating order.
const L = Number(values['lat-sentences']);
const reps = Number(values.reps);
const lat = { node: {}, web: {} };
for (const rt of ['node', 'web']) {
  const ort = rt === 'node' ? ortNode : ortWeb;
  const feeds = heldOut.slice(0, L).map((s) => feedsOf(ort, s));
  const keys = Object.keys(variants);
  for (const k of keys) { lat[rt][k] = []; for (const f of feeds) await sessions[rt][k].run(f); } // warm-up
  for (let r = 0; r < reps; r++) {
    for (let j = 0; j < keys.length; j++) {
      const k = keys[(r + j) % keys.length];
      const t = performance.now();
      for (const f of feeds) await sessions[rt][k].run(f);
      lat[rt][k].push((performance.now() - t) / feeds.length);
    }
  }
}

const brotli = (b) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length } }).length;
const MiB = (n) => (n / 2 ** 20).toFixed(2);
const rows = [];
const ref = { raw: 0, brotli: 0, node: 0, web: 0 };
for (const k of Object.keys(variants)) {
  const c = heldOut.map((_, i) => cos(emb.float32[i], emb[k][i]));
  const nnK = nn(emb[k]);
  const row = {
    variant: k, raw: variants[k].length, brotli: brotli(variants[k]),
    cosMean: c.reduce((a, b) => a + b, 0) / c.length, cosMin: Math.min(...c),
    nnAgree: nnK.filter((x, i) => x === nnFloat[i]).length / nnK.length,
    nodeMs: median(lat.node[k]), nodeP90: quantile(sorted(lat.node[k]), 0.9), webMs: median(lat.web[k]), webP90: quantile(sorted(lat.web[k]), 0.9),
  };
  if (k === 'ort q8 (quantize_dynamic)') Object.assign(ref, { brotli: row.brotli, node: row.nodeMs, web: row.webMs });
  rows.push(row);
}
const load = os.loadavg().map((l) => l.toFixed(2)).join(' ');
const tokens = heldOut.slice(0, L).map((s) => s.ids.length);
console.log(`| variant | raw MiB | brotli-9 MiB | ÷ ort q8 brotli | cosine mean / min | NN agree | node ms (p90) | web WASM ms (p90) | web ÷ ort q8 |`);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(`| ${r.variant} | ${MiB(r.raw)} | ${MiB(r.brotli)} | ${(r.brotli / ref.brotli).toFixed(2)} | ${r.cosMean.toFixed(4)} / ${r.cosMin.toFixed(4)} | ${(100 * r.nnAgree).toFixed(1)}% | ${r.nodeMs.toFixed(2)} (${r.nodeP90.toFixed(2)}) | ${r.webMs.toFixed(2)} (${r.webP90.toFixed(2)}) | ${(r.webMs / ref.web).toFixed(2)} |`);
}
console.log(`\n${heldOut.length} held-out sentences; latency per sentence over the first ${L} (${Math.min(...tokens)}–${Math.max(...tokens)} tokens), batch 1, one thread, median of ${reps} interleaved repetitions after a warm-up; load average at the end ${load}; variants built in ${buildSeconds.toFixed(1)} s.`);
for (const [k, r] of Object.entries(reports)) {
  const forms = {};
  for (const l of r.layers) forms[l.form] = (forms[l.form] ?? 0) + 1;
  console.log(`${k}: layers ${JSON.stringify(forms)}; weight bytes ${MiB(r.bytesBefore)} -> ${MiB(r.bytesAfter)} MiB; max abs error ${Math.max(...r.layers.map((l) => l.maxAbsError)).toExponential(2)}`);
}
fs.mkdirSync(path.dirname(values.out), { recursive: true });
fs.writeFileSync(values.out, JSON.stringify({ date: new Date().toISOString(), load, rows, reps, L }, null, 1));
