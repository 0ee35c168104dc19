// recover() on today's exports (issue 38): each model pruned (magnitude by pruneSparsity, or
// SparseGPT), then distilled towards its original with the training core, the held-out fidelity
// before and after.
//   node bench/recover/recover-exports.mjs [--models byte-attention,bert-torch] [--sparsity 0.5] [--train 64]
//        [--held-out 32] [--epochs 8] [--minutes 10] [--lr 3e-3] [--batch 8] [--method magnitude|sparsegpt]
//        [--kind generic|classification] [--test N] [--calib 16]
//        [--model FILE.onnx --samples DIR] [--nm 2:4] [--features K] [--steps stats,lsq,distill]
//        [--f1 yolov8] [--save DIR] [--dense W1,W2]
// Models by name are the committed test models, fed generated inputs (ids within the embedding
// tables, masks 0/1: makeInputSet; disjoint seeds per set). --model FILE with --samples DIR is a
// model of one's own fed real samples instead: DIR/calib, DIR/recover, DIR/held-out, DIR/test, each
// in the layout `prune --calib DIR` reads (bench/models/byte_classifier.py writes them); when a set
// has a labels.json ({"<sample>": class}), the task accuracy (argmax of the first output) of the
// original, the pruned and the recovered model is printed too.
// --method sparsegpt: calibratePrune on --calib samples (the first training samples, or DIR/calib);
// --kind classification: the outputs judged (and the kept weights chosen) by top-1 agreement.
// --test N: N more held-out samples (after the --held-out ones, which pick the kept epoch; or DIR/test),
// never seen by the recovery: the before / after scores on them are the unbiased figures.
// --nm N:M: N of every M weights kept (magnitude: pruneNm; sparsegpt: calibratePrune's nm) instead
// of --sparsity. --features K: recover's matched block outputs. --steps: recover's steps (default distill).
// --f1 yolov8: the first output read as a YOLOv8 head (bench/lib/yolo-detections.mjs: ultralytics'
// predict, conf 0.25, NMS IoU 0.7): F1 of the pruned and the recovered model's detections against the
// original's on the test set, and of the original's against the labels when DIR/labels/test.json
// ({"<sample>": [[class, x1, y1, x2, y2], ...]}, bench/models/yolov8_shapes.py) exists.
// --dense W1,W2: these weights left dense (SparseGPT: its 'dense' criterion; magnitude: restored
// after pruning), e.g. YOLOv8's DFL projection model.22.dfl.conv.weight (a fixed 0..15, not learned).
// --save DIR: the pruned and the recovered model written to DIR/pruned.onnx, DIR/recovered.onnx.
// Prints one markdown row per model. Run after scripts/build.sh.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import ort from 'onnxruntime-node';
import { OnnxModel, makeOrtRunner, makeInputSet, pruneSparsity, pruneNm, calibratePrune, recover, evaluate, readCalibrationDir } from 'sparsekit-wasm/onnx';
import { detectAll, detectionF1 } from '../lib/yolo-detections.mjs';

const DATA = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../tests/data/models');
const { values: opt } = parseArgs({
  options: {
    models: { type: 'string', default: 'byte-attention,bert-torch' }, sparsity: { type: 'string', default: '0.5' },
    train: { type: 'string', default: '64' }, 'held-out': { type: 'string', default: '32' }, epochs: { type: 'string', default: '8' },
    minutes: { type: 'string', default: '10' }, method: { type: 'string', default: 'magnitude' }, test: { type: 'string', default: '0' }, kind: { type: 'string', default: 'generic' }, lr: { type: 'string', default: '3e-3' }, batch: { type: 'string', default: '8' },
    calib: { type: 'string', default: '16' }, model: { type: 'string' }, samples: { type: 'string' },
    nm: { type: 'string' }, features: { type: 'string', default: '0' }, steps: { type: 'string', default: 'distill' }, f1: { type: 'string' }, save: { type: 'string' }, dense: { type: 'string', default: '' },
  },
});
if (Boolean(opt.model) !== Boolean(opt.samples)) throw new Error('--model and --samples go together');
const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });
const count = (k) => Number(opt[k]);
const nm = opt.nm ? opt.nm.split(':').map(Number) : undefined;
if (opt.f1 && opt.f1 !== 'yolov8') throw new Error(`--f1 reads yolov8 heads only (got ${opt.f1})`);

/** Detections of the model `bytes` on `samples` (a YOLOv8 head, 320 x 320 input unless the first input says otherwise). */
async function detections(bytes, samples) {
  const session = await runner.createSession(bytes);
  const dims = samples[0].feeds[Object.keys(samples[0].feeds)[0]].dims;
  try { return await detectAll(session, samples, { clip: [dims[3], dims[2]] }); } finally { await session.release(); }
}

/** The labels of a set as detections (bench/models/yolov8_shapes.py's labels/<set>.json), or null. */
function labelDetections(samples, set) {
  const file = path.join(opt.samples ?? '', 'labels', `${set}.json`);
  if (!opt.samples || !fs.existsSync(file)) return null;
  const labels = JSON.parse(fs.readFileSync(file, 'utf8'));
  return samples.map((s) => labels[s.source.replace(/\.npy$/, '')].map(([cls, ...box]) => ({ box, cls, conf: 1 })));
}

const f1Text = (r) => `F1 ${r.f1.toFixed(4)} (P ${r.precision.toFixed(3)}, R ${r.recall.toFixed(3)}; ${r.out} vs ${r.ref} detections)`;

/** A set of real samples (DIR/name, the first `limit` by name) and its labels, when it has them. */
async function realSet(model, name, limit) {
  const dir = path.join(opt.samples, name);
  const samples = await readCalibrationDir(dir, model, { limit: limit > 0 ? limit : undefined });
  const file = path.join(dir, 'labels.json');
  const labels = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : null;
  return { samples, labels: labels && samples.map((s) => labels[s.source]) };
}

/** The model's sets: calibration, training, held-out (picks the kept epoch), unseen test. */
async function sets(teacher) {
  if (opt.samples) {
    const [calib, train, held, test] = await Promise.all([['calib', 'calib'], ['recover', 'train'], ['held-out', 'held-out'], ['test', 'test']].map(([d, k]) => realSet(teacher, d, count(k))));
    return { calib: calib.samples, train: train.samples, held: held.samples, test: test.samples, testLabels: test.labels };
  }
  const train = makeInputSet(teacher, { count: count('train') });
  const held = makeInputSet(teacher, { count: count('held-out') + count('test'), set: 'heldOut' });
  return { calib: train.slice(0, count('calib')), train, held: held.slice(0, count('held-out')), test: held.slice(count('held-out')), testLabels: null };
}

/** Share of samples whose argmax of the first output is the label. */
async function accuracy(bytes, samples, labels) {
  const session = await runner.createSession(bytes);
  let right = 0;
  for (const [i, s] of samples.entries()) {
    const out = Object.values(await session.run(s.feeds))[0].data;
    let best = 0;
    for (let j = 1; j < out.length; j++) if (out[j] > out[best]) best = j;
    if (best === labels[i]) right++;
  }
  await session.release();
  return right / samples.length;
}

console.log('| model | sparsity or N:M | train / held-out samples | fidelity before | after | epochs (best) | seconds | zeros kept |');
console.log('|---|---:|---:|---:|---:|---:|---:|---|');
for (const name of opt.model ? [opt.model] : opt.models.split(',')) {
  const bytes = new Uint8Array(fs.readFileSync(opt.model ?? path.join(DATA, `${name}.onnx`)));
  const teacher = OnnxModel.parse(bytes), pruned = OnnxModel.parse(bytes);
  const { calib, train, held, test, testLabels } = await sets(teacher);
  console.error(`${name}: ${calib.length} calibration, ${train.length} training, ${held.length} held-out, ${test.length} unseen samples`);
  const tp = performance.now();
  const target = nm ? { nm } : { sparsity: Number(opt.sparsity) };
  const dense = new Set(opt.dense.split(',').filter(Boolean));
  for (const w of dense) teacher.weight(w); // a name that is no weight is refused, typed
  if (opt.method === 'sparsegpt') {
    await calibratePrune(pruned, { ort: runner, calibration: calib, criterion: (l) => (dense.has(l.name) ? 'dense' : 'sparsegpt'), ...target });
  } else {
    if (nm) pruneNm(pruned, { nm });
    else pruneSparsity(pruned, target);
    for (const w of dense) pruned.writeFloat(pruned.weight(w).tensor, teacher.readFloat(teacher.weight(w)));
  }
  console.error(`${name}: pruned in ${((performance.now() - tp) / 1000).toFixed(0)} s`);
  const zeros = pruned.prunable().map((w) => [w, Array.from(pruned.readFloat(w)).flatMap((v, i) => (v === 0 ? [i] : []))]);
  const kinds = Object.fromEntries(teacher.outputs.map((o) => [o.name, opt.kind]));
  const prunedBytes = pruned.encode();
  const testBefore = test.length ? (await evaluate(teacher, prunedBytes, test, { ort: runner, kinds })).score : NaN;
  const ref = opt.f1 && test.length ? await detections(bytes, test) : null;
  if (ref) {
    const truth = labelDetections(test, 'test');
    if (truth) console.error(`${name}: original vs the ${test.length} test images' labels: ${f1Text(detectionF1(truth, ref))}`);
    console.error(`${name}: pruned vs original on ${test.length} test images: ${f1Text(detectionF1(ref, await detections(prunedBytes, test)))}`);
  }
  if (opt.save) { fs.mkdirSync(opt.save, { recursive: true }); fs.writeFileSync(path.join(opt.save, 'pruned.onnx'), prunedBytes); }
  const t0 = performance.now(), c0 = process.cpuUsage();
  const rep = await recover(pruned, teacher, train, {
    ort: runner, evalSamples: held, kinds, steps: opt.steps.split(','), features: count('features'),
    epochs: count('epochs'), minutes: count('minutes'), lr: Number(opt.lr), batchSize: count('batch'),
  });
  const secs = (performance.now() - t0) / 1000, cpu = process.cpuUsage(c0);
  console.error(`${name}: wall ${secs.toFixed(0)} s, CPU ${((cpu.user + cpu.system) / 1e6).toFixed(0)} s, load ${os.loadavg()[0].toFixed(1)}; best held-out ${Math.max(...(rep.distill?.history ?? []).map((h) => h.fidelity)).toFixed(4)}`);
  if (rep.distill?.history) console.error(`${name}: held-out per epoch ${rep.distill.history.map((h) => h.fidelity.toFixed(3)).join(' ')}`);
  const testAfter = test.length ? (await evaluate(teacher, pruned.encode(), test, { ort: runner, kinds })).score : NaN;
  if (test.length) console.error(`${name}: ${test.length} unseen samples: ${testBefore.toFixed(4)} -> ${testAfter.toFixed(4)}`);
  if (ref) console.error(`${name}: recovered vs original on ${test.length} test images: ${f1Text(detectionF1(ref, await detections(pruned.encode(), test)))}`);
  if (opt.save) fs.writeFileSync(path.join(opt.save, 'recovered.onnx'), pruned.encode());
  if (testLabels) {
    const [a0, a1, a2] = [await accuracy(bytes, test, testLabels), await accuracy(prunedBytes, test, testLabels), await accuracy(pruned.encode(), test, testLabels)];
    console.error(`${name}: label accuracy on the ${test.length} unseen samples: original ${a0.toFixed(4)}, pruned ${a1.toFixed(4)}, recovered ${a2.toFixed(4)}`);
  }
  const kept = zeros.every(([w, z]) => { const v = pruned.readFloat(w); return z.every((i) => v[i] === 0); });
  console.log(`| ${name} | ${opt.nm ?? opt.sparsity} | ${train.length} / ${held.length} | ${rep.before.score.toFixed(4)} | ${rep.after.score.toFixed(4)} | ${rep.distill?.epochs ?? 0} (${rep.distill?.bestEpoch ?? 0}) | ${secs.toFixed(0)} | ${kept ? 'yes' : 'NO'} |`);
}
