// Bench (issue 39): the PaddleOCR recogniser quantized with recovery, through runJob (the CLI's
// `prune --quantize int4 --recover` path). With both in one job the codes are held on their grids
// while recovery trains (quant/held-codes.ts); the old order — recover the pruned float model, then
// quantize it — is run beside it as two jobs. Judged by the bytes a browser downloads (brotli
// quality 9, as bench/quant/ocr.mjs) against onnxruntime's dynamic int8 of the same model, and by CER
// on held-out rendered lines against the truth and against the original's reading.
//   node bench/quant/ocr-recover.mjs [--variants int4,int4-held,sgpt50-int4-held,sgpt50-then-int4,sgpt60-int4,…]
//        [--minutes 10] [--lr 1e-4] [--schedule constant|cosine] [--batch 8] [--train 256] [--out bench/out/quant-ocr-recover]
// Training lines: seed 1 (no labels used); validation for the kept epoch: seed 500; task: seed 900
// (bench/recover/recover-ocr.mjs' sets). onnxruntime's q8 file: bench/quant/ocr.mjs writes it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseArgs } from 'node:util';
import ortNode from 'onnxruntime-node';
import { OnnxModel, runJob, makeOrtRunner } from 'sparsekit-wasm/onnx';
import { renderText } from '../../kit/ocr-text.mjs';
import { readTextSet, textSamples, ctcDecode, editDistance, recMetrics } from '../../kit/ocr-metrics.mjs';
import { REC } from '../../kit/ocr-models.mjs';

const { values: opt } = parseArgs({ options: {
  variants: { type: 'string', default: 'int4,int4-held,sgpt50-int4-held,sgpt50-then-int4' },
  minutes: { type: 'string', default: '10' }, lr: { type: 'string', default: '1e-4' }, batch: { type: 'string', default: '8' },
  schedule: { type: 'string', default: 'constant' },
  train: { type: 'string', default: '256' }, out: { type: 'string', default: 'bench/out/quant-ocr-recover' },
  q8: { type: 'string', default: 'bench/out/quant-ocr/rec_ort_q8.onnx' },
} });
const OUT = path.resolve(opt.out);
fs.mkdirSync(OUT, { recursive: true });
const MINUTES = Number(opt.minutes), LR = Number(opt.lr), BATCH = Number(opt.batch), TRAIN = Number(opt.train);
const t00 = Date.now();
const log = (m) => console.error(`[${((Date.now() - t00) / 1000).toFixed(0)} s] ${m}`);
const brotli = (b) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length } }).length;
const sessionOptions = { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 };

const int4 = { scheme: 'int4', group: 32, method: 'gptq' };
const recoverOpts = { minutes: MINUTES, epochs: 1000, lr: LR, batchSize: BATCH, softmaxLoss: 'kl', schedule: opt.schedule };
const sgpt50 = { mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'sparsegpt' };
const dense = { mode: { kind: 'sparsity', sparsity: 0 } };
/** Each variant: the jobs run one after the other on the same model. */
const VARIANTS = {
  int4: { label: 'int4 GPTQ, one-shot', jobs: [{ ...dense, quantize: int4 }] },
  'int4-held': { label: `int4 GPTQ, recovered ${MINUTES} min on the grids`, jobs: [{ ...dense, quantize: int4, recover: recoverOpts }] },
  'sgpt50-then-int4': { label: `50% SparseGPT recovered ${MINUTES} min in float, then int4 GPTQ (the old order)`, jobs: [{ ...sgpt50, recover: recoverOpts }, { ...dense, quantize: int4 }] },
  // A quantized model as input (the int4 file of the first job), pruned without --quantize, one-shot
  // or recovered: written again in its own forms, quantized as --quantize would (joint SparseGPT +
  // GPTQ, since 3bb4de2) and held on their grids while it trains (since 38c25fb); before, pruned on
  // the float values, recovered in float, and rounded onto the forms afterwards.
  'in-int4-sgpt50': { label: 'the int4 file as input: 50% SparseGPT, one-shot, written in its forms', jobs: [{ ...dense, quantize: int4 }, { ...sgpt50 }] },
  'in-int4-sgpt50-rec': { label: `the int4 file as input: 50% SparseGPT, recovered ${MINUTES} min, written in its forms`, jobs: [{ ...dense, quantize: int4 }, { ...sgpt50, recover: recoverOpts }] },
};
/** `sgpt<P>-int4[-held]`: P% SparseGPT + int4 (joint); `ch<P>-int4[-held]`: P% of each channel group
 *  removed (SparseGPT-compensated) + int4 GPTQ; one-shot, or recovered on the grids. */
function variant(name) {
  if (VARIANTS[name]) return VARIANTS[name];
  const m = /^(sgpt|ch)(\d+)-int4(-held)?$/.exec(name);
  if (!m) throw new Error(`unknown variant ${name}: ${Object.keys(VARIANTS).join(', ')}, sgpt<P>-int4[-held], ch<P>-int4[-held]`);
  const p = Number(m[2]) / 100;
  const [mode, what] = m[1] === 'ch'
    ? [{ kind: 'channels', fraction: p }, `${m[2]}% of the channels removed (SparseGPT) + int4`]
    : [{ kind: 'sparsity', sparsity: p }, `${m[2]}% SparseGPT + int4 (joint)`];
  const job = { mode, method: 'sparsegpt', quantize: int4 };
  return m[3]
    ? { label: `${what}, recovered ${MINUTES} min on the grids`, jobs: [{ ...job, recover: recoverOpts }] }
    : { label: `${what}, one-shot`, jobs: [job] };
}

const dirs = {
  train: await renderText({ kind: 'lines', seed: 1, count: TRAIN }),
  val: await renderText({ kind: 'lines', seed: 500, count: 32 }),
  eval: await renderText({ kind: 'lines', seed: 900, count: 64 }),
};
const train = textSamples(readTextSet(dirs.train), 'rec').slice(0, TRAIN);
const val = textSamples(readTextSet(dirs.val), 'rec');
const evalSet = readTextSet(dirs.eval);
const evalSamples = textSamples(evalSet, 'rec');
const floatBytes = new Uint8Array(fs.readFileSync(REC));

const runner = makeOrtRunner(ortNode, sessionOptions);
async function outputsOf(bytes) {
  const s = await runner.createSession(bytes);
  try {
    const outs = [];
    for (const { feeds } of evalSamples) outs.push(Object.values(await s.run(feeds))[0].data);
    return outs;
  } finally { await s.release?.(); }
}
const ref = await outputsOf(floatBytes);
function task(outs) {
  const truth = recMetrics(evalSet, outs.map((o) => ({ y: o })));
  let dist = 0, len = 0;
  outs.forEach((o, i) => { const a = ctcDecode(ref[i], 6625).trim(), b = ctcDecode(o, 6625).trim(); dist += editDistance(b, a); len += [...a].length; });
  return { cerTruth: truth.cer, lineAcc: truth.lineAcc, cerOrig: dist / len };
}

const q8Bytes = fs.existsSync(opt.q8) ? brotli(fs.readFileSync(opt.q8)) : null;
const rows = [{ name: 'float32', label: 'float32 (original)', brotli: brotli(floatBytes), ...task(ref) }];
log(`float32: brotli ${(rows[0].brotli / 2 ** 20).toFixed(3)} MiB, CER ${(100 * rows[0].cerTruth).toFixed(2)}%; ort q8 brotli ${q8Bytes ? (q8Bytes / 2 ** 20).toFixed(3) : '(no file)'} MiB`);
for (const name of opt.variants.split(',')) {
  const v = variant(name);
  const model = OnnxModel.parse(floatBytes);
  const t0 = Date.now();
  const reports = [];
  for (const job of v.jobs) {
    const { report } = await runJob(model, { ...structuredClone(job), calibration: { samples: train }, eval: { samples: val } }, {
      ort: ortNode, sessionOptions,
      onProgress: (p) => { if (p.phase === 'distill' && p.done === p.total) log(`  ${name} epoch ${p.epoch} loss ${p.loss?.toFixed(4)} best fidelity ${p.fidelity?.toFixed(4)}`); },
    });
    reports.push(report);
  }
  const bytes = model.encode();
  fs.writeFileSync(path.join(OUT, `rec_${name}.onnx`), bytes);
  const last = reports.at(-1);
  const rec = reports.find((r) => r.recover)?.recover;
  const row = {
    name, label: v.label, seconds: (Date.now() - t0) / 1000, raw: bytes.length, brotli: brotli(bytes), ...task(await outputsOf(bytes)),
    fidelity: last.fidelity?.score ?? null, recover: rec ? { before: rec.before.score, after: rec.after.score, epochs: rec.distill?.epochs, steps: rec.distill?.steps, bestEpoch: rec.distill?.bestEpoch } : null,
    held: last.quantize?.heldThroughRecovery ?? false, zeros: last.quantize ? last.quantize.layers.reduce((a, l) => a + l.zeros, 0) / last.quantize.layers.reduce((a, l) => a + l.params, 0) : null,
    load: os.loadavg()[0],
  };
  rows.push(row);
  log(`${name}: brotli ${(row.brotli / 2 ** 20).toFixed(3)} MiB${q8Bytes ? ` (${(row.brotli / q8Bytes).toFixed(3)}x q8)` : ''}, CER ${(100 * row.cerTruth).toFixed(2)}% (vs original ${(100 * row.cerOrig).toFixed(2)}%), lines ${(100 * row.lineAcc).toFixed(0)}%, fidelity ${row.fidelity?.toFixed(4)}${rec ? `, recovery ${rec.before.score.toFixed(4)} -> ${rec.after.score.toFixed(4)}` : ''}, ${row.seconds.toFixed(0)} s`);
  fs.writeFileSync(path.join(OUT, 'results.json'), JSON.stringify({ date: new Date().toISOString(), minutes: MINUTES, lr: LR, schedule: opt.schedule, batch: BATCH, train: TRAIN, q8Brotli: q8Bytes, rows }, null, 2));
}
console.log('| variant | brotli-9 MiB | ÷ ort q8 | CER vs truth | lines exact | CER vs original | fidelity (validation: before → after recovery) | time |');
console.log('|---|---:|---:|---:|---:|---:|---|---:|');
for (const r of rows) {
  console.log(`| ${r.label} | ${(r.brotli / 2 ** 20).toFixed(3)} | ${q8Bytes ? (r.brotli / q8Bytes).toFixed(3) : '–'} | ${(100 * r.cerTruth).toFixed(2)}% | ${(100 * r.lineAcc).toFixed(0)}% | ${(100 * r.cerOrig).toFixed(2)}% | ${r.recover ? `${r.recover.before.toFixed(4)} → ${r.recover.after.toFixed(4)} (${r.recover.epochs} epochs, best ${r.recover.bestEpoch})` : '–'} | ${r.seconds ? `${r.seconds.toFixed(0)} s` : '–'} |`);
}
