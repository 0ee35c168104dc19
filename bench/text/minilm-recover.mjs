// Bench: MiniLM-L6 (all-MiniLM-L6-v2) after removing half its attention heads and FFN neurons
// (`--channels 0.5`, SparseGPT compensation), one-shot and then recovered by distillation on 1 − cosine
// (issue 37's target), in one run: embedding cosine and 10-nearest neighbours kept (the package's
// 'embedding' fidelity), a labelled task (Debian package descriptions -> their archive Section, kNN
// k=10 by cosine against a labelled reference set), and latency dense vs pruned in onnxruntime-web
// (WASM) and onnxruntime-node, one thread, batch 1, interleaved runs.
//   node bench/text/minilm-recover.mjs [--model bench/out/models/all-MiniLM-L6-v2] [--fractions 0.5[,0.3]]
//        [--minutes 15] [--lr 1e-4] [--batch 8] [--calib-count 512] [--sections 8] [--ref 60] [--eval 40]
//        [--val 128] [--train-count N|all] [--round-to R] [--seq-len 32] [--reps 15] [--lat-sentences 8] [--out bench/out/minilm-recover.json]
//        [--features K] [--feature-weight W] [--one-shot FILE.onnx] [--score activations|fluctuation|weights]
//        [--one-shot-only] [--variants centred,uncentred] [--schedule constant|cosine] [--warmup W] [--threads N]
//        [--padding trim|group|keep] [--scope layer|global]
// The model (a transformers.js folder): /work/venv/bin/python bench/models/minilm.py [--out DIR].
// Listed among the benches that need arguments in scripts/bench.sh: it needs that Python step first
// and runs for about twice the recovery budget.
// Text: /var/lib/apt/lists/*bookworm_main_binary-amd64_Packages.lz4 (needs `lz4`); the short
// descriptions only (the lists hold no long ones). The held-out set (for fidelity and the task),
// the reference set (the task's labelled neighbours), the validation set (recovery's choice of the
// best epoch) and the calibration / training set are disjoint sets of distinct descriptions.
// --latency-only: no fidelity, task or recovery: the dense model against the shapes --channels F
// leaves (magnitude removal: the same kept counts, so the same latency), for each --round-to of a
// list (e.g. 1,8), with more --reps on a loaded machine. --round-to: the job's roundTo (kept channels per group a multiple of it; default 8, which keeps 8 of
// MiniLM's 12 heads per layer at --channels 0.5). --train-count: recovery's training set, the calibration set plus further descriptions (default:
// the calibration set alone; the job and the CLI train on at most 512 samples, recover() takes more;
// `all`: every description outside the held-out, reference and validation sets). --features K: recovery
// also distils K matched block outputs (recover's `features`; the residual stream keeps its 384 width,
// so they match 1:1). --one-shot FILE: the one-shot model is read from FILE if it exists (with its
// FILE.json: seconds and parameters), else pruned and written there, so that several recovery runs of
// one cut prune once (one --fractions value only). --score: the job's mode.score (how channels are
// ranked; an encoder's default is the activation-aware score, a language model's FLAP's fluctuation). --scope: the job's mode.scope (layer, the default: the fraction of every group; global: the fraction of the groups' parameters, ranked over the model). --reps 0: no latency (a recovered model has the
// one-shot model's shapes: its latency is that of any earlier run of the same cut). --one-shot-only: the
// one-shot models judged, no recovery and no latency (--minutes 0 --reps 0). --variants: the one-shot
// compensations judged side by side in one run, each a job: `centred` (the defaults: SparseGPT on each
// consumer's centred statistics, its refit on), `uncentred` (calibration.centre false, refit 0: the
// compensation before centring), `centred-norefit` (refit 0), `uncentred-refit` (centre false, the refit
// on: the combination centring replaces); recovery (if any) starts from the first. --schedule / --warmup:
// recover's lr schedule (the package default when not given; cosine: a linear warm-up over W of the run,
// default 0.05, then a half cosine to a tenth of --lr at the end of --minutes). --threads N: the package's
// rayon pool with N workers (initThreadPool, as the CLI's SPARSEKIT_THREADS), for the pruning and the
// training core; default none (single-threaded). onnxruntime keeps one thread either way. --padding: how
// recovery batches the padded descriptions: `trim` (the package default: each batch cut to its longest
// real token, recover's trimPadding), `group` (trimmed and grouped by length, groupByLength), `keep`
// (every batch at --seq-len, trimPadding false: the sessions before this option).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import ortNode from 'onnxruntime-node';
import * as ortWeb from 'onnxruntime-web';
import { initThreadPool } from 'sparsekit-wasm';
import { runSet, makeOrtRunner, fidelity, runJob, recover, removeChannels, OnnxModel } from '#onnx-internal';
import { median, quantile, sorted } from '../lib/stats.mjs';
import { debianSections, knnAccuracy as knnAccuracyOf } from '../lib/debian-sections.mjs';
import { encoderSamples } from '../lib/encoder-samples.mjs';
import { compensation } from '../lib/compensation-variants.mjs';
import { oneThreadOptions, oneThreadWeb, unpaddedFeeds, int64Feeds, interleavedLatency } from '../lib/ort-latency.mjs';

const { values } = parseArgs({ options: {
  model: { type: 'string', default: 'bench/out/models/all-MiniLM-L6-v2' },
  fractions: { type: 'string', default: '0.5' },
  minutes: { type: 'string', default: '15' }, lr: { type: 'string' }, batch: { type: 'string' },
  'calib-count': { type: 'string', default: '512' }, 'train-count': { type: 'string' }, sections: { type: 'string', default: '8' },
  ref: { type: 'string', default: '60' }, eval: { type: 'string', default: '40' }, val: { type: 'string', default: '128' },
  'seq-len': { type: 'string', default: '32' }, 'round-to': { type: 'string' }, 'latency-only': { type: 'boolean', default: false }, reps: { type: 'string', default: '15' },
  'lat-sentences': { type: 'string', default: '8' }, features: { type: 'string' }, 'feature-weight': { type: 'string' }, 'one-shot': { type: 'string' }, score: { type: 'string' },
  'one-shot-only': { type: 'boolean', default: false }, variants: { type: 'string', default: 'centred' }, out: { type: 'string', default: 'bench/out/minilm-recover.json' },
  scope: { type: 'string' }, schedule: { type: 'string' }, warmup: { type: 'string' }, threads: { type: 'string' }, padding: { type: 'string' },
} });
if (values.padding && !['trim', 'group', 'keep'].includes(values.padding)) throw new Error(`--padding trim|group|keep (got ${values.padding})`);
// the pool starts before the package makes its first object (the threaded build is chosen then)
const threads = Number(values.threads ?? 1);
if (threads > 1 && !(await initThreadPool(threads))) throw new Error(`--threads ${threads}: the pool could not start`);
const t0 = Date.now();
const log = (m) => console.error(`[${((Date.now() - t0) / 1000).toFixed(0)} s, load ${os.loadavg()[0].toFixed(1)}] ${m}`);
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');

// ---- text: distinct short descriptions with one Section each (bench/lib/debian-sections.mjs)
const nSections = Number(values.sections), nRef = Number(values.ref), nEval = Number(values.eval);
const nVal = Number(values.val), nCal = Number(values['calib-count']);
// `all`: every description outside the held-out, reference and validation sets
const nTrain = values['train-count'] === 'all' ? Infinity : Math.max(nCal, Number(values['train-count'] ?? nCal));
const { sections, ref, held, valLines, trainLines, calLines, distinct } = debianSections({ nSections, nRef, nEval, nVal, nCal, nTrain });
log(`${distinct} distinct descriptions; sections ${sections.join(', ')}; reference ${ref.length}, held-out ${held.length}, validation ${valLines.length}, calibration ${calLines.length}, training ${trainLines.length}`);

// ---- model and samples
const seqLen = Number(values['seq-len']);
const { dense, denseBytes, samplesOf } = await encoderSamples(values.model, seqLen);
const refSet = samplesOf(ref.map(([d]) => d)), heldSet = samplesOf(held.map(([d]) => d));
const valSet = samplesOf(valLines), calSet = samplesOf(calLines);
const trainSet = trainLines.length > calLines.length ? samplesOf(trainLines) : calSet;
const tokensPer = heldSet.samples.map((s) => Array.from(s.feeds.attention_mask.data, Number).reduce((a, b) => a + b, 0));
log(`seq-len ${seqLen}: held-out ${median(tokensPer)} tokens median (${Math.min(...tokensPer)}–${Math.max(...tokensPer)}), truncated: held-out ${heldSet.dropped}, reference ${refSet.dropped}, calibration ${calSet.dropped}`);

const runner = makeOrtRunner(ortNode, oneThreadOptions('node'));
const EMB = 'sentence_embedding';
const knnAccuracy = (refOut, heldOut) => knnAccuracyOf(refOut, heldOut, ref, held, EMB);

const latencyOnly = values['latency-only'];
const denseHeld = latencyOnly ? [] : await runSet(runner, denseBytes, heldSet.samples);
const denseRef = latencyOnly ? [] : await runSet(runner, denseBytes, refSet.samples);
const denseAcc = latencyOnly ? NaN : knnAccuracy(denseRef, denseHeld);
if (!latencyOnly) log(`dense: kNN accuracy ${(100 * denseAcc).toFixed(2)}% over ${held.length} held-out descriptions (chance ${(100 / sections.length).toFixed(1)}%)`);

async function judge(label, bytes, extra = {}) {
  const out = await runSet(runner, bytes, heldSet.samples);
  const refOut = await runSet(runner, bytes, refSet.samples);
  const f = fidelity(denseHeld, out, { inputs: heldSet.samples }).outputs.find((o) => o.name === EMB);
  const acc = knnAccuracy(refOut, out);
  const row = { label, kind: f.kind, cosine: f.metrics.cosine, minCosine: f.metrics.minCosine, neighboursKept: f.metrics.neighboursKept, accuracy: acc, accuracyDelta: acc - denseAcc, bytes, ...extra };
  log(`${label}: ${f.kind} cosine ${row.cosine.toFixed(4)} (min ${row.minCosine.toFixed(4)}), neighbours kept ${(100 * row.neighboursKept).toFixed(1)}%, accuracy ${(100 * acc).toFixed(2)}% (${(100 * row.accuracyDelta).toFixed(2)} points)`);
  return row;
}

const rows = latencyOnly ? [{ label: 'dense', bytes: denseBytes }] : [await judge('dense', denseBytes)];
const oneShotOnly = values['one-shot-only'];
const minutes = oneShotOnly ? 0 : Number(values.minutes);
const variants = values.variants.split(',');
variants.forEach((v) => compensation(v));
if (values['one-shot'] && variants.length > 1) throw new Error('--one-shot caches one variant: give one --variants value');
const training = {
  minutes, ...(values.lr ? { lr: Number(values.lr) } : {}), ...(values.batch ? { batchSize: Number(values.batch) } : {}),
  ...(values.features ? { features: Number(values.features) } : {}), ...(values['feature-weight'] ? { featureWeight: Number(values['feature-weight']) } : {}),
  ...(values.schedule ? { schedule: values.schedule } : {}), ...(values.warmup ? { warmup: Number(values.warmup) } : {}),
  ...(values.padding === 'keep' ? { trimPadding: false } : values.padding === 'group' ? { groupByLength: true } : {}),
};
for (const fraction of values.fractions.split(',').map(Number)) {
  if (latencyOnly) {
    for (const r of (values['round-to'] ?? '8').split(',').map(Number)) {
      const m = OnnxModel.parse(denseBytes);
      const rep = removeChannels(m, { fraction, roundTo: r });
      rows.push({ label: `channels ${fraction} (shapes, roundTo ${r})`, bytes: m.encode(), params: rep.params });
    }
    continue;
  }
  // One-shot: the job as `prune --channels F --method sparsegpt --calib` runs it (each variant).
  const cached = values['one-shot'];
  let oneShot, pruneS, params;
  for (const [vi, variant] of variants.entries()) {
    let bytes, seconds, prm, options;
    if (cached && fs.existsSync(cached)) {
      bytes = new Uint8Array(fs.readFileSync(cached));
      ({ pruneSeconds: seconds, params: prm, options } = JSON.parse(fs.readFileSync(`${cached}.json`, 'utf8')));
      log(`one-shot model read from ${cached} (pruned earlier in ${seconds.toFixed(0)} s)`);
    } else {
      const m = OnnxModel.parse(denseBytes);
      const tp = Date.now();
      const roundTo = values['round-to'] ? { roundTo: Number(values['round-to']) } : {};
      const score = values.score ? { score: values.score } : {};
      const scope = values.scope ? { scope: values.scope } : {};
      const job = await runJob(m, { mode: { kind: 'channels', fraction, ...roundTo, ...score, ...scope }, method: 'sparsegpt', calibration: { samples: calSet.samples, ...compensation(variant) } }, { ort: runner });
      seconds = (Date.now() - tp) / 1000;
      prm = job.report.prune?.params;
      options = job.report.prune?.options;
      bytes = m.encode();
      if (cached) {
        fs.mkdirSync(path.dirname(cached), { recursive: true });
        fs.writeFileSync(cached, bytes);
        fs.writeFileSync(`${cached}.json`, JSON.stringify({ fraction, roundTo: values['round-to'] ?? null, score: values.score ?? null, scope: values.scope ?? null, calibration: calSet.samples.length, pruneSeconds: seconds, params: prm, options }));
      }
    }
    const label = `channels ${fraction} sparsegpt${variants.length > 1 || variant !== 'centred' ? ` (${variant})` : ''}`;
    rows.push(await judge(label, bytes, { pruneSeconds: seconds, params: prm, options }));
    if (vi === 0) { oneShot = bytes; pruneS = seconds; params = prm; }
  }
  if (!(minutes > 0)) continue;
  // Recovery: what `--recover` adds to the same job (run.ts calls recover on the pruned model with the
  // dense model as teacher and the calibration samples as training set), here on the one-shot result
  // so the pruning is not run twice. The best epoch is chosen on the validation set, not the held-out one.
  const student = OnnxModel.parse(oneShot);
  const tr = Date.now();
  let last = 0;
  const rep = await recover(student, OnnxModel.parse(denseBytes), trainSet.samples, {
    ort: runner, evalSamples: valSet.samples, ...training,
    // The first progress of an epoch carries the best validation fidelity so far (before any step:
    // the one-shot model's), not the epoch's own; each epoch's is logged from the history at the end.
    onProgress: (p) => { if (p.epoch !== undefined && p.epoch !== last && p.fidelity !== undefined) { last = p.epoch; log(`  epoch ${p.epoch} begins: best validation fidelity so far ${p.fidelity.toFixed(4)}`); } },
  });
  const recS = (Date.now() - tr) / 1000;
  const d = rep.distill;
  for (const h of d?.history ?? []) log(`  epoch ${h.epoch}: training loss ${h.loss.toFixed(5)}, validation fidelity ${h.fidelity.toFixed(4)}`);
  if (d?.features) log(`features: ${d.features.map((x) => x.name).join(', ')}`);
  if (d) log(`timing ${JSON.stringify(Object.fromEntries(Object.entries(d.timing).map(([k, v]) => [k, Math.round(v)])))} (per step: teacher ${(d.timing.teacherMs / Math.max(1, d.steps)).toFixed(0)} ms, step ${(d.timing.stepMs / Math.max(1, d.steps)).toFixed(0)} ms); trimmed ${JSON.stringify(d.trimmed ?? null)}`);
  if (d) log(`schedule ${JSON.stringify(d.schedule)}; ${d.steps} steps in ${(d.ms / 60000).toFixed(2)} min of distillation (${(d.ms / 1000 / Math.max(1, d.steps)).toFixed(3)} s per step, ${threads} worker${threads > 1 ? 's' : ''})`);
  log(`recover: ${recS.toFixed(0)} s; closed form ${rep.closedForm.map((s) => `${s.step}:${s.applied ? `applied (${s.layers} layers)` : `rolled back`}`).join(' ')}; distill ${d ? `${d.epochs} epochs, ${d.steps} steps, best epoch ${d.bestEpoch}, losses ${JSON.stringify(d.losses)}, stopped by ${d.stopped}` : 'none'}`);
  rows.push(await judge(`${rows.find((r) => r.bytes === oneShot).label} + recover`, student.encode(), {
    pruneSeconds: pruneS, params, recoverSeconds: recS,
    distill: d && { epochs: d.epochs, steps: d.steps, ms: d.ms, timing: d.timing, trimmed: d.trimmed, bestEpoch: d.bestEpoch, history: d.history, losses: d.losses, stopped: d.stopped, schedule: d.schedule, features: d.features?.map((x) => x.name) }, threads,
    closedForm: rep.closedForm.map((s) => ({ step: s.step, layers: s.layers, applied: s.applied, before: s.before, after: s.after })), training, trainSamples: trainSet.samples.length,
  }));
}

// ---- latency: the first L held-out sentences at their own length (no padding), batch 1, one thread
const L = Number(values['lat-sentences']), reps = oneShotOnly ? 0 : Number(values.reps);
const lat = unpaddedFeeds(heldSet.samples.slice(0, L));
const latVariants = [rows[0], ...rows.filter((r) => r.label !== 'dense' && !r.label.endsWith('recover'))];
oneThreadWeb(ortWeb);
const latencyRuntimes = reps > 0 ? [['node', ortNode], ['web', ortWeb]] : [];
const times = {};
for (const [rt, ort] of latencyRuntimes) {
  const sess = [];
  for (const r of latVariants) sess.push(await ort.InferenceSession.create(r.bytes, oneThreadOptions(rt)));
  times[rt] = await interleavedLatency(sess, int64Feeds(ort, lat), { reps });
  for (const s of sess) await s.release?.();
  log(`${rt} latency measured`);
}
latVariants.forEach((r, i) => {
  for (const [rt] of latencyRuntimes) {
    r[`${rt}Ms`] = median(times[rt][i]);
    r[`${rt}P90`] = quantile(sorted(times[rt][i]), 0.9);
    r[`${rt}Ratio`] = median(times[rt][0]) / r[`${rt}Ms`];
  }
});
// A recovered model has the one-shot model's shapes: its latency is the one-shot's.
for (const r of rows) {
  if (!r.label.endsWith('recover')) continue;
  const base = rows.find((x) => x.label === r.label.replace(' + recover', ''));
  for (const k of ['nodeMs', 'nodeP90', 'nodeRatio', 'webMs', 'webP90', 'webRatio']) if (k in base) r[k] = base[k];
}

const f = (x, d = 4) => (x === undefined || Number.isNaN(x) ? '–' : x.toFixed(d));
console.log(`\n| model | params | cosine mean / min | 10-NN kept | kNN accuracy (Δ dense) | web WASM ms (×) | node ms (×) | recover min |`);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  const before = rows.find((x) => x.params)?.params.before;
  const p = r.params ? `${(r.params.after / 1e6).toFixed(2)} M` : before ? `${(before / 1e6).toFixed(2)} M` : '–';
  console.log(`| ${r.label} | ${p} | ${f(r.cosine)} / ${f(r.minCosine)} | ${f(100 * r.neighboursKept, 1)}% | ${f(100 * r.accuracy, 2)}% (${r.label === 'dense' ? '–' : f(100 * r.accuracyDelta, 2)}) | ${f(r.webMs, 2)} (×${f(r.webRatio, 2)}) | ${f(r.nodeMs, 2)} (×${f(r.nodeRatio, 2)}) | ${r.recoverSeconds ? f(r.recoverSeconds / 60, 1) : '–'} |`);
}
console.log(`\n${held.length} held-out descriptions (${nEval} per section × ${sections.length}: ${sections.join(', ')}), ${ref.length} reference, ${calSet.samples.length} calibration, ${trainSet.samples.length} training, ${valSet.samples.length} validation; seq-len ${seqLen}; latency per sentence over the first ${L} held-out sentences (${Math.min(...tokensPer.slice(0, L))}–${Math.max(...tokensPer.slice(0, L))} tokens, unpadded), median of ${reps} interleaved repetitions, one thread; training ${JSON.stringify(training)}; load average at the end ${load()}; total ${((Date.now() - t0) / 60000).toFixed(1)} min.`);
fs.mkdirSync(path.dirname(values.out), { recursive: true });
fs.writeFileSync(values.out, JSON.stringify({ sections, seqLen, denseAccuracy: denseAcc, rows: rows.map(({ bytes, ...r }) => r), load: load() }, null, 1));
