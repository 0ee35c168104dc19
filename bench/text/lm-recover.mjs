// Bench: a pruned decoder recovered by distillation (issue 37): SparseGPT (or Wanda / magnitude)
// prunes SmolLM2-135M as lm-table.mjs does (one job, calibration windows of --seq-len), then
// `recover` distils it towards the original (KL of the next-token distributions over the vocabulary)
// for a time budget on training windows of --train-seq-len tokens cut from the same calibration text,
// the best epoch kept by held-out fidelity. Why shorter training windows: the training core runs in
// wasm32's 4 GiB, and a 135 M model's weights with Adam's moments (1.6 GiB) plus every activation
// of a 256-token window do not fit (out_of_memory); 128 tokens do. Perplexity on the held-out
// windows (--seq-len) before and after; one JSON line per run appended to --out.
//   node bench/text/lm-recover.mjs [--model bench/out/smollm2] [--run sparsegpt:2:4] [--minutes 30]
//        [--calib-count 32] [--eval-count 16] [--seq-len 256] [--train-seq-len 128] [--train-count 128]
//        [--lr 1e-4] [--batch 1] [--loss kl|logits] [--threads 2] [--out bench/out/lm-recover.jsonl]
//        [--pruned FILE.onnx]
// --pruned: recover a model pruned earlier (e.g. bench/channels/gqa-prune.mjs's --out) instead of
// pruning with --run (which then only names the row).
// Text as lm-table.mjs: calibration and training = the licence texts other than the GPL family,
// held-out = the GNU GPL v3.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { loadOnnx, resolveTextModel, textSamples, makeOrtRunner, runJob, recover } from '#onnx-internal';

const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const LIC = '/usr/share/common-licenses';
const folder = opt('--model', 'bench/out/smollm2');
const seqLen = Number(opt('--seq-len', 256)), calibCount = Number(opt('--calib-count', 32)), evalCount = Number(opt('--eval-count', 16));
const minutes = Number(opt('--minutes', 30)), lr = Number(opt('--lr', 1e-4)), batchSize = Number(opt('--batch', 1));
const trainSeqLen = Number(opt('--train-seq-len', 128)), trainCount = Number(opt('--train-count', 128));
const loss = opt('--loss', 'kl');
const threads = Number(opt('--threads', 2));
const out = opt('--out', 'bench/out/lm-recover.jsonl');
const run = opt('--run', 'sparsegpt:2:4');
const calibText = ['Apache-2.0', 'Artistic', 'LGPL-2.1', 'MPL-1.1', 'MPL-2.0', 'GFDL-1.3', 'CC0-1.0'].map((f) => fs.readFileSync(path.join(LIC, f), 'utf8')).join('\n\n');
const evalText = fs.readFileSync(path.join(LIC, 'GPL-3'), 'utf8');

const files = await resolveTextModel(folder);
// read from its file, the model keeps its weights there: the pruned model and the teacher are copies
// that read them where it does (OnnxModel.copy), not three copies of its bytes (issue 37 item 5)
const base = await loadOnnx(files.model);
const tokenizer = JSON.parse(fs.readFileSync(files.tokenizer, 'utf8'));
const set = (text, limit, len = seqLen) => textSamples({ text, tokenizer, seqLen: len, inputs: base.inputs, outputs: base.outputs, limit });
const calib = set(calibText, calibCount), held = set(evalText, evalCount), train = set(calibText, trainCount, trainSeqLen);
console.log(`${path.basename(folder)}: ${calib.samples.length} calibration and ${held.samples.length} held-out windows of ${seqLen} tokens, ${train.samples.length} training windows of ${trainSeqLen}; recover ${minutes} min, lr ${lr}, batch ${batchSize}, loss ${loss}`);

const [method, ...rest] = run.split(':');
const mode = rest.length === 2 ? { kind: 'nm', nm: rest.map(Number) } : { kind: 'sparsity', sparsity: Number(rest[0]) };
const runner = makeOrtRunner(ort, { intraOpNumThreads: threads, interOpNumThreads: 1, logSeverityLevel: 3 });
const t0 = performance.now(), cpu0 = process.cpuUsage();
let last = '';
const progress = (p) => {
  const line = `${p.phase} ${p.epoch ? `epoch ${p.epoch} ` : ''}${p.done ?? p.step}/${p.total ?? p.steps}${p.loss !== undefined ? ` loss ${p.loss.toFixed(4)}` : ''}${p.fidelity !== undefined ? ` fidelity ${p.fidelity.toFixed(4)}` : ''}`;
  const done = p.done ?? p.step, total = p.total ?? p.steps;
  // a phase's start and end, and every 8th training step
  const show = p.phase === 'distill' ? done === total || done % 8 === 0 : done === 0 || done === total;
  if (show && line !== last) { console.log(`[${((performance.now() - t0) / 1000).toFixed(0)} s] ${line}`); last = line; }
};
const kinds = { [base.outputs[0].name]: 'language-model' };
const prunedFile = opt('--pruned');
const pruned = prunedFile ? await loadOnnx(prunedFile) : base.copy();
const { report } = prunedFile ? { report: null } : await runJob(pruned, {
  mode, method, ...(method === 'magnitude' ? {} : { calibration: { samples: calib.samples } }),
  eval: { samples: held.samples, kinds },
}, { ort: runner, onProgress: progress, cutStore: 'file' });
const pruneS = (performance.now() - t0) / 1000;
const r = await recover(pruned, base.copy(), train.samples, {
  ort: runner, cutStore: 'file', evalSamples: held.samples, kinds, minutes, lr, batchSize, softmaxLoss: loss, steps: ['distill'], onProgress: progress,
});
const cpu = process.cpuUsage(cpu0);
const lm = (f) => f.outputs[0].metrics;
const row = {
  run, method, pattern: rest.join(':'), pruned: prunedFile ?? null, seqLen, trainSeqLen, windows: calib.samples.length, trainWindows: train.samples.length, heldOut: held.samples.length, minutes, lr, batchSize, loss,
  perplexityDense: lm(r.before).perplexityOriginal, oneShot: { perplexity: lm(r.before).perplexityPruned, ratio: lm(r.before).perplexityRatio, top1: lm(r.before).top1Agreement, kl: lm(r.before).meanKL },
  recovered: { perplexity: lm(r.after).perplexityPruned, ratio: lm(r.after).perplexityRatio, top1: lm(r.after).top1Agreement, kl: lm(r.after).meanKL },
  distill: { epochs: r.distill?.epochs, steps: r.distill?.steps, bestEpoch: r.distill?.bestEpoch, history: r.distill?.history, params: r.distill?.params, stateBytes: r.distill?.stateBytes, s: (r.distill?.ms ?? 0) / 1000, losses: r.distill?.losses },
  pruneS, oneShotJob: report?.fidelity?.outputs[0].metrics.perplexityPruned, wallS: (performance.now() - t0) / 1000, cpuS: (cpu.user + cpu.system) / 1e6,
  peakRssGB: process.resourceUsage().maxRSS / 2 ** 20, loadavg: os.loadavg()[0],
};
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.appendFileSync(out, JSON.stringify(row) + '\n');
console.log(`${run}: perplexity ${row.perplexityDense.toFixed(2)} -> one-shot ${row.oneShot.perplexity.toFixed(2)} (x${row.oneShot.ratio.toFixed(3)}) -> recovered ${row.recovered.perplexity.toFixed(2)} (x${row.recovered.ratio.toFixed(3)}); ${row.distill.steps} steps, ${row.distill.epochs} epochs (best ${row.distill.bestEpoch}), ${row.wallS.toFixed(0)} s wall, peak RSS ${row.peakRssGB.toFixed(2)} GB, load ${row.loadavg.toFixed(1)}`);
