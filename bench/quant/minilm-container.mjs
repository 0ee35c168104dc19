// MiniLM-L6 (all-MiniLM-L6-v2), round-to-nearest through quantizeModel (no calibration): the MatMul
// weights in the int8 MatMulInteger form (onnxruntime's dynamic-quantization graph, the form that runs
// as fast as onnxruntime's q8 in -web) but with per-row codes on fewer levels (±L, L = 7, 15, 31; the
// default int8 is ±63), the tables 4-bit per row: the container stays int8, brotli sees 2L+1 symbols.
// Brotli-9 size, embedding cosine / 10-NN kept, the labelled task (bench/lib/debian-sections.mjs),
// latency per description (first 4 held-out, unpadded, one thread, median of 5 interleaved
// repetitions) in onnxruntime-node and -web (WASM) beside onnxruntime's q8.
// Usage: node bench/quant/minilm-container.mjs   (the model folder of bench/quant/minilm.mjs)
import fs from 'node:fs';
import ortNode from 'onnxruntime-node';
import * as ortWeb from 'onnxruntime-web';
import { runSet, makeOrtRunner, fidelity, quantizeModel, rtnQuantize, OnnxModel } from '#onnx-internal';
import { knnAccuracy } from '../lib/debian-sections.mjs';
import { minilmProbe, brotli9 } from '../lib/encoder-samples.mjs';
import { median } from '../lib/stats.mjs';
import { oneThreadOptions, oneThreadWeb, unpaddedFeeds, int64Feeds, interleavedLatency } from '../lib/ort-latency.mjs';
const runner = makeOrtRunner(ortNode, { intraOpNumThreads: 1 });
const { ref, held, denseBytes, refSet, heldSet, dH, dAcc } = await minilmProbe(runner);
const brotli = brotli9;
// per-row codes in +-L inside the int8 (7-bit) container: the MatMulInteger form's speed, entropy of L levels
const perRow = (L) => (values, rows, cols, grid) => {
  if (grid.bits === 4) return rtnQuantize(values, rows, cols, grid);
  const codes = new Int8Array(rows * cols), scales = new Float32Array(rows);
  for (let r = 0; r < rows; r++) { let a = 0; for (let c = 0; c < cols; c++) a = Math.max(a, Math.abs(values[r * cols + c]));
    const s = a > 0 ? a / L : 1; scales[r] = s; for (let c = 0; c < cols; c++) { const v = Math.round(values[r * cols + c] / s); codes[r * cols + c] = Math.max(-L, Math.min(L, v)); } }
  return { rows, cols, codes, scales, groupsPerRow: 1, width: cols };
};
const V = { 'int8 L7': { scheme: 'int8', embeddings: 'int4', quantizer: perRow(7) }, 'int8 L15': { scheme: 'int8', embeddings: 'int4', quantizer: perRow(15) },
  'int8 L31': { scheme: 'int8', embeddings: 'int4', quantizer: perRow(31) }, 'int8 L63 (int8 default, tables 4)': { scheme: 'int8', embeddings: 'int4' } };
const bytes = { 'ort q8': new Uint8Array(fs.readFileSync('bench/out/models/all-MiniLM-L6-v2/onnx/model_ort_q8.onnx')) };
for (const [k, o] of Object.entries(V)) {
  const m = OnnxModel.parse(denseBytes);
  let r; try { r = quantizeModel(m, o); } catch (e) { console.log(k, 'FAIL', e.message); continue; }
  const forms = {}; for (const l of r.layers) forms[l.form] = (forms[l.form] ?? 0) + 1;
  const b = m.encode(); bytes[k] = b;
  const out = await runSet(runner, b, heldSet.samples);
  const f = fidelity(dH, out, { inputs: heldSet.samples }).outputs.find((x) => x.name === 'sentence_embedding');
  const acc = knnAccuracy(await runSet(runner, b, refSet.samples), out, ref, held);
  console.log(`| ${k} ${JSON.stringify(forms)} | ${(b.length / 2 ** 20).toFixed(2)} | ${(brotli(b) / 2 ** 20).toFixed(2)} | ${f.metrics.cosine.toFixed(4)} / ${f.metrics.minCosine.toFixed(4)} | ${(100 * f.metrics.neighboursKept).toFixed(1)} | ${(100 * acc).toFixed(2)} (${(100 * (acc - dAcc)).toFixed(2)}) |`);
}
oneThreadWeb(ortWeb);
const lat = unpaddedFeeds(heldSet.samples.slice(0, 4));
for (const [rt, ort] of [['node', ortNode], ['web', ortWeb]]) {
  const names = Object.keys(bytes); const sess = [];
  for (const n of names) sess.push(await ort.InferenceSession.create(bytes[n], oneThreadOptions(rt)));
  const times = await interleavedLatency(sess, int64Feeds(ort, lat), { reps: 5 });
  console.log(rt, names.map((n, i) => `${n}: ${median(times[i]).toFixed(2)}`).join(', '));
}
