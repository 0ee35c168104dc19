// Bench (probe, issue 37): MiniLM-L6's `--channels 0.5` reached in stages, each cut recovered by
// distillation from the dense model before the next one (gradual pruning, Zhu & Gupta 2017, "To prune,
// or not to prune"), against the single cut of minilm-recover.mjs with the same minutes of distillation.
// It writes the final model and FILE.json, which `minilm-recover.mjs --one-shot FILE --one-shot-only`
// reads to judge it on the same held-out descriptions, neighbours and labelled task.
//   node bench/text/minilm-gradual.mjs --model DIR --out-model FILE.onnx [--stages 0.25,0.5]
//        [--minutes 4,9] [--lr 6e-4] [--train-count 8192] [--threads 2]
// --stages: the share of the dense model's channels removed after each stage (each stage removes the
// part of the remaining channels that reaches it); --minutes: each stage's distillation budget.
// The cut and the recovery are the job's (runJob: channels, SparseGPT compensation on the 512
// calibration descriptions; recover: cosine schedule at --lr, batches grouped by length).
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import ortNode from 'onnxruntime-node';
import { initThreadPool } from 'sparsekit-wasm';
import { makeOrtRunner, runJob, recover, OnnxModel } from '#onnx-internal';
import { debianSections } from '../lib/debian-sections.mjs';
import { encoderSamples } from '../lib/encoder-samples.mjs';
import { oneThreadOptions } from '../lib/ort-latency.mjs';

const { values } = parseArgs({ options: {
  model: { type: 'string', default: 'bench/out/models/all-MiniLM-L6-v2' }, 'out-model': { type: 'string' },
  stages: { type: 'string', default: '0.25,0.5' }, minutes: { type: 'string', default: '4,9' }, lr: { type: 'string', default: '6e-4' },
  'train-count': { type: 'string', default: '8192' }, threads: { type: 'string', default: '1' },
} });
if (!values['out-model']) throw new Error('give --out-model FILE.onnx');
const stages = values.stages.split(',').map(Number), minutes = values.minutes.split(',').map(Number);
if (stages.length !== minutes.length || stages.some((s, i) => !(s > (stages[i - 1] ?? 0) && s < 1))) throw new Error('--stages rising in (0, 1), one --minutes each');
const threads = Number(values.threads);
if (threads > 1 && !(await initThreadPool(threads))) throw new Error(`--threads ${threads}: the pool could not start`);
const t0 = Date.now();
const log = (m) => console.error(`[${((Date.now() - t0) / 1000).toFixed(0)} s, load ${os.loadavg()[0].toFixed(1)}] ${m}`);

// the sets of minilm-recover.mjs with its defaults (8 sections, 60 / 40 / 128 / 512)
const { valLines, trainLines, calLines } = debianSections({ nSections: 8, nRef: 60, nEval: 40, nVal: 128, nCal: 512, nTrain: Number(values['train-count']) });
const { denseBytes, samplesOf } = await encoderSamples(values.model, 32);
const valSet = samplesOf(valLines), calSet = samplesOf(calLines), trainSet = samplesOf(trainLines);
const runner = makeOrtRunner(ortNode, oneThreadOptions('node'));

const student = OnnxModel.parse(denseBytes);
const history = [];
let removed = 0, params;
for (const [k, target] of stages.entries()) {
  // the share of the remaining channels that brings the removed share to `target`
  const fraction = (target - removed) / (1 - removed);
  const tp = Date.now();
  const job = await runJob(student, { mode: { kind: 'channels', fraction }, method: 'sparsegpt', calibration: { samples: calSet.samples } }, { ort: runner });
  params = job.report.prune?.params;
  const pruneS = (Date.now() - tp) / 1000;
  log(`stage ${k + 1}: removed ${fraction.toFixed(3)} of the remaining channels (${target} of the dense model's) in ${pruneS.toFixed(0)} s; ${params?.after} parameters`);
  const tr = Date.now();
  const rep = await recover(student, OnnxModel.parse(denseBytes), trainSet.samples, {
    ort: runner, evalSamples: valSet.samples, minutes: minutes[k], lr: Number(values.lr), schedule: 'cosine', features: 0,
  });
  const d = rep.distill;
  log(`stage ${k + 1}: ${d?.steps} steps in ${((d?.ms ?? 0) / 60000).toFixed(2)} min, validation ${rep.before.score.toFixed(4)} -> ${rep.after.score.toFixed(4)}`);
  history.push({ target, fraction, pruneSeconds: pruneS, recoverSeconds: (Date.now() - tr) / 1000, steps: d?.steps, validation: [rep.before.score, rep.after.score] });
  removed = target;
}
const out = values['out-model'];
fs.writeFileSync(out, student.encode());
const seconds = (Date.now() - t0) / 1000;
fs.writeFileSync(`${out}.json`, JSON.stringify({ fraction: removed, stages: history, pruneSeconds: seconds, params, options: { stages, minutes, lr: Number(values.lr), threads } }));
log(`wrote ${out}: ${history.map((h) => `${h.target}: ${h.steps} steps, validation ${h.validation.map((v) => v.toFixed(4)).join(' -> ')}`).join('; ')}; ${(seconds / 60).toFixed(1)} min in all`);
