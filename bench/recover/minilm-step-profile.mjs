// Bench: where one distillation step of MiniLM-L6 after `--channels 0.5` goes (issue 37's recovery,
// bench/text/minilm-recover.mjs), phase by phase, on the real student and teacher and real batches:
// the teacher's block outputs from onnxruntime (the `--features 6` targets), the batch's making, the
// student's forward and loss in the training core (Trainer.loss), its backward and Adam (a step less
// the forward), Adam's update alone (Trainer.update after a backward of zero gradients: the same loop
// over every trained value, whatever the gradient). Each phase for the batches padded to --seq-len, cut
// to their longest real token (trim-padding.ts) and, the same, grouped by length (group_by_length).
//   node bench/recover/minilm-step-profile.mjs --model /work/models/all-MiniLM-L6-v2 --one-shot /work/tmp/minilm-ch50.onnx
//        [--batches 12] [--batch 8] [--train-count 512] [--threads 2] [--seq-len 32] [--pkg DIR]
// --pkg DIR: the package from DIR instead of pkg/; a single-threaded build with the cfg
// sparsekit_train_profile (bench/train/train-profile-wasm.mjs says how to build one) adds the
// grouped run's time per op type (use --threads 1 with it).
// The one-shot model: bench/text/minilm-recover.mjs --one-shot FILE writes it (main's B cut).
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import ortNode from 'onnxruntime-node';
import { makeOrtRunner, heldOut, OnnxModel, trainSetup, teacherTargets, lossesOf, withFeatures, maskPadding, matchFeatures, FeatureTeacher, epochBatches, makeBatch, paddingTrim, trimProbe, batchLength, trimBatch, trimSamples, trimmedLosses } from '#onnx-internal';
import { debianSections } from '../lib/debian-sections.mjs';
import { encoderSamples } from '../lib/encoder-samples.mjs';
import { median } from '../lib/stats.mjs';
import { opProfileDelta } from '../lib/op-profile.mjs';

const { values } = parseArgs({ options: {
  model: { type: 'string', default: 'bench/out/models/all-MiniLM-L6-v2' }, 'one-shot': { type: 'string' },
  batches: { type: 'string', default: '12' }, batch: { type: 'string', default: '8' }, 'train-count': { type: 'string', default: '512' },
  threads: { type: 'string', default: '2' }, 'seq-len': { type: 'string', default: '32' }, features: { type: 'string', default: '6' },
  pkg: { type: 'string' },
} });
const sk = values.pkg ? await import(`${fs.realpathSync(values.pkg)}/src/node.js`) : await import('sparsekit-wasm');
if (!values['one-shot']) throw new Error('--one-shot FILE.onnx: the pruned model (bench/text/minilm-recover.mjs --one-shot writes it)');
const threads = Number(values.threads);
if (threads > 1 && !(await sk.initThreadPool(threads))) throw new Error(`--threads ${threads}: the pool could not start`);
const nBatches = Number(values.batches), size = Number(values.batch);
const now = () => performance.now();

const nTrain = Number(values['train-count']);
const { valLines, trainLines } = debianSections({ nCal: Math.min(512, nTrain), nTrain });
const { denseBytes, samplesOf } = await encoderSamples(values.model, Number(values['seq-len']));
const samples = samplesOf(trainLines).samples;
const runner = makeOrtRunner(ortNode, { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 });
const teacher = OnnxModel.parse(denseBytes);
const student = OnnxModel.parse(new Uint8Array(fs.readFileSync(values['one-shot'])));
const { kinds } = await heldOut(runner, teacher, samplesOf(valLines.slice(0, 16)).samples);
const setup = trainSetup(student, kinds);
const targets = await teacherTargets(runner, teacher, setup, samples, () => {});
const features = await matchFeatures(runner, student, teacher, samples, { features: Number(values.features), exclude: new Set(setup.trained.map((t) => t.tensor)), check: () => {} });
// no matched features (`--features 0`, the command's default): no teacher run per batch
const ft = features.length ? await FeatureTeacher.open(runner, teacher, features) : null;
const withF = withFeatures(setup.graph, lossesOf(setup), features);
const padding = maskPadding(samples, withF.graph, withF.losses, [...targets.dims, ...features.map((f) => f.dims)], targets.values);
const probed = await trimProbe(runner, teacher, setup, samples, targets.values);
const trim = paddingTrim(samples, padding.graph.inputs, padding.mask, targets.dims.length, probed);
if (!trim) throw new Error(`no trimming (probe ${probed})`);
const tr = new sk.Trainer(padding.graph, { lr: 3e-4, masked: true });
tr.setLosses(withF.losses);
const params = tr.paramNames.reduce((a, n) => a + tr.param(n).length, 0);
console.error(`${samples.length} samples at ${trim.tokens} tokens, real tokens median ${median([...trim.lengths])} (${Math.min(...trim.lengths)}–${Math.max(...trim.lengths)}); ${params} trained values in ${tr.paramNames.length} tensors; features ${features.map((f) => f.name).join(', ')}; ${threads} workers`);

// A batch cut to its longest real token (trim-padding.ts), with the samples and indices the
// feature teacher reads for it and the losses set for its length.
function cutBatch(idx0) {
  const L = batchLength(trim, idx0);
  const batch = trimBatch(makeBatch(samples, padding.graph.inputs, idx0, targets.values), L, trim);
  tr.setLosses(trimmedLosses(withF.losses, L, trim));
  const short = L < trim.tokens;
  return { batch, L, from: short ? trimSamples(samples, idx0, L, trim.tokens) : samples, idx: short ? idx0.map((_, j) => j) : idx0 };
}

async function run(label, batches, cut) {
  const t = { teacher: [], batch: [], forward: [], backward: [], adam: [], tokens: [] };
  // a first pass over the same batches, untimed: the core folds its shape arithmetic once per
  // sequence length seen (src/train/fold.rs), which a run of thousands of steps pays once per length
  if (cut) for (const idx0 of batches.slice(0, nBatches + 1)) {
    const { batch, from, idx } = cutBatch(idx0);
    if (ft) batch.targets.push(...padding.features(await ft.batch(from, idx), idx, from));
    tr.loss(batch.inputs, batch.targets);
  }
  for (const idx0 of batches.slice(0, nBatches + 1)) {
    const t0 = now();
    const { batch, from, idx, L } = cut ? cutBatch(idx0) : { batch: makeBatch(samples, padding.graph.inputs, idx0, targets.values), from: samples, idx: idx0, L: trim.tokens };
    const t1 = now();
    if (ft) batch.targets.push(...padding.features(await ft.batch(from, idx), idx, from));
    const t2 = now();
    tr.loss(batch.inputs, batch.targets);
    const t3 = now();
    tr.step(batch.inputs, batch.targets);
    const t4 = now();
    // Adam alone: a forward, zero output gradients back, then the update (every trained value's loop)
    const outs = tr.forward(batch.inputs);
    tr.backward(outs.map((o) => new Float32Array(o.values.length)));
    const t5 = now();
    tr.update();
    const t6 = now();
    t.batch.push(t1 - t0); t.teacher.push(t2 - t1); t.forward.push(t3 - t2); t.backward.push(t4 - t3 - (t3 - t2)); t.adam.push(t6 - t5); t.tokens.push(L);
  }
  // drop the first batch: it warms up (the core's folds for its length, onnxruntime's session)
  for (const k of Object.keys(t)) t[k] = t[k].slice(1);
  const m = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, v.reduce((a, b) => a + b, 0) / v.length]));
  const step = m.teacher + m.batch + m.forward + m.backward; // what distill spends per step (Adam inside backward)
  console.log(`| ${label} | ${m.tokens.toFixed(1)} | ${m.teacher.toFixed(0)} (${(100 * m.teacher / step).toFixed(0)}%) | ${m.forward.toFixed(0)} (${(100 * m.forward / step).toFixed(0)}%) | ${(m.backward - m.adam).toFixed(0)} (${(100 * (m.backward - m.adam) / step).toFixed(0)}%) | ${m.adam.toFixed(0)} (${(100 * m.adam / step).toFixed(0)}%) | ${m.batch.toFixed(1)} | ${step.toFixed(0)} |`);
  return m;
}

console.log(`\n| batches | tokens per sample | teacher features ms | student forward + loss ms | student backward ms | Adam ms | batch making ms | step ms |`);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
const plain = epochBatches(samples, padding.graph.inputs, size, 1, 0);
const grouped = epochBatches(samples, padding.graph.inputs, size, 1, 0, trim.lengths);
await run(`padded to ${trim.tokens}`, plain, false);
await run('trimmed', plain, true);
const profiled = typeof tr._raw?.profile === 'function';
const p0 = profiled ? JSON.parse(tr._raw.profile()) : null;
await run('trimmed, grouped by length', grouped, true);
if (profiled) {
  // seconds per op type over the grouped run's batches (the warm-up one and the Adam-alone pass included)
  const { total: tot, rows } = opProfileDelta(p0, JSON.parse(tr._raw.profile()));
  console.log(`\nper op type, the grouped run (${nBatches + 1} batches, each a loss, a step and a forward + backward): ${tot.toFixed(0)} ms`);
  for (const [op, f, b] of rows) console.log(`| ${op} | ${f.toFixed(0)} | ${b.toFixed(0)} | ${((f + b) / tot * 100).toFixed(1)}% |`);
}
console.log(`\n${nBatches} batches of ${size} (after one warm-up) each way, the same batches padded and trimmed; ${threads} workers; onnxruntime one thread; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}.`);
await ft?.release();
tr.free();
