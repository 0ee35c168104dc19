// recover() on today's exports (issue 38): each model pruned (magnitude by pruneSparsity, or
// SparseGPT), then distilled towards its original with the training core, the held-out fidelity
// before and after.
//   node bench/recover/recover-exports.mjs [--models byte-attention,bert-torch] [--sparsity 0.5] [--train 64]
//        [--held-out 32] [--epochs 8] [--minutes 10] [--lr 3e-3] [--batch 8] [--method magnitude|sparsegpt]
//        [--kind generic|classification] [--test N] [--calib 16]
//        [--model FILE.onnx --samples DIR]
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
// Prints one markdown row per model. Run after scripts/build.sh.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import ort from 'onnxruntime-node';
import { OnnxModel, makeOrtRunner, makeInputSet, pruneSparsity, calibratePrune, recover, evaluate, readCalibrationDir } from 'sparsekit-wasm/onnx';

const DATA = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../tests/data/models');
const { values: opt } = parseArgs({
  options: {
    models: { type: 'string', default: 'byte-attention,bert-torch' }, sparsity: { type: 'string', default: '0.5' },
    train: { type: 'string', default: '64' }, 'held-out': { type: 'string', default: '32' }, epochs: { type: 'string', default: '8' },
    minutes: { type: 'string', default: '10' }, method: { type: 'string', default: 'magnitude' }, test: { type: 'string', default: '0' }, kind: { type: 'string', default: 'generic' }, lr: { type: 'string', default: '3e-3' }, batch: { type: 'string', default: '8' },
    calib: { type: 'string', default: '16' }, model: { type: 'string' }, samples: { type: 'string' },
  },
});
if (Boolean(opt.model) !== Boolean(opt.samples)) throw new Error('--model and --samples go together');
const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });
const count = (k) => Number(opt[k]);

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

console.log('| model | sparsity | train / held-out samples | fidelity before | after | epochs (best) | seconds | zeros kept |');
console.log('|---|---:|---:|---:|---:|---:|---:|---|');
for (const name of opt.model ? [opt.model] : opt.models.split(',')) {
  const bytes = new Uint8Array(fs.readFileSync(opt.model ?? path.join(DATA, `${name}.onnx`)));
  const teacher = OnnxModel.parse(bytes), pruned = OnnxModel.parse(bytes);
  const { calib, train, held, test, testLabels } = await sets(teacher);
  console.error(`${name}: ${calib.length} calibration, ${train.length} training, ${held.length} held-out, ${test.length} unseen samples`);
  const tp = performance.now();
  if (opt.method === 'sparsegpt') {
    await calibratePrune(pruned, { ort: runner, calibration: calib, criterion: 'sparsegpt', sparsity: Number(opt.sparsity) });
  } else pruneSparsity(pruned, { sparsity: Number(opt.sparsity) });
  console.error(`${name}: pruned in ${((performance.now() - tp) / 1000).toFixed(0)} s`);
  const zeros = pruned.prunable().map((w) => [w, Array.from(pruned.readFloat(w)).flatMap((v, i) => (v === 0 ? [i] : []))]);
  const kinds = Object.fromEntries(teacher.outputs.map((o) => [o.name, opt.kind]));
  const prunedBytes = pruned.encode();
  const testBefore = test.length ? (await evaluate(teacher, prunedBytes, test, { ort: runner, kinds })).score : NaN;
  const t0 = performance.now(), c0 = process.cpuUsage();
  const rep = await recover(pruned, teacher, train, {
    ort: runner, evalSamples: held, kinds, steps: ['distill'],
    epochs: count('epochs'), minutes: count('minutes'), lr: Number(opt.lr), batchSize: count('batch'),
  });
  const secs = (performance.now() - t0) / 1000, cpu = process.cpuUsage(c0);
  console.error(`${name}: wall ${secs.toFixed(0)} s, CPU ${((cpu.user + cpu.system) / 1e6).toFixed(0)} s, load ${os.loadavg()[0].toFixed(1)}; best held-out ${Math.max(...(rep.distill?.history ?? []).map((h) => h.fidelity)).toFixed(4)}`);
  if (rep.distill?.history) console.error(`${name}: held-out per epoch ${rep.distill.history.map((h) => h.fidelity.toFixed(3)).join(' ')}`);
  const testAfter = test.length ? (await evaluate(teacher, pruned.encode(), test, { ort: runner, kinds })).score : NaN;
  if (test.length) console.error(`${name}: ${test.length} unseen samples: ${testBefore.toFixed(4)} -> ${testAfter.toFixed(4)}`);
  if (testLabels) {
    const [a0, a1, a2] = [await accuracy(bytes, test, testLabels), await accuracy(prunedBytes, test, testLabels), await accuracy(pruned.encode(), test, testLabels)];
    console.error(`${name}: label accuracy on the ${test.length} unseen samples: original ${a0.toFixed(4)}, pruned ${a1.toFixed(4)}, recovered ${a2.toFixed(4)}`);
  }
  const kept = zeros.every(([w, z]) => { const v = pruned.readFloat(w); return z.every((i) => v[i] === 0); });
  console.log(`| ${name} | ${opt.sparsity} | ${train.length} / ${held.length} | ${rep.before.score.toFixed(4)} | ${rep.after.score.toFixed(4)} | ${rep.distill?.epochs ?? 0} (${rep.distill?.bestEpoch ?? 0}) | ${secs.toFixed(0)} | ${kept ? 'yes' : 'NO'} |`);
}
