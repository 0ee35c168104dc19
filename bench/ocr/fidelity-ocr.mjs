// Does the label-free fidelity (sparsekit-wasm/onnx fidelity()) agree with the task metric? PaddleOCR
// det, rec and cls pruned at a few settings; on the same held-out rendered text (bench/ocr-text.mjs)
// each pruned model's outputs give both the fidelity against the original's outputs (no labels) and
// the task metric against the truth (bench/ocr-metrics.mjs: det F1, rec CER, cls accuracy).
// The question: where fidelity >= 0.99, is the task metric within 1 point of the original's?
//   node bench/ocr/fidelity-ocr.mjs [--models det,rec,cls] [--calib 8] [--lines 24] [--pages 6] [--out FILE.json] [--write]
//        [--settings magnitude:0.3,sparsegpt:0.25,sparsegpt:0.5,sparsegpt:2:4,channels:0.1,channels:0.3]
// --write puts the table in bench/RESULTS.md between <!-- fidelity:begin --> and <!-- fidelity:end -->.
// Needs the built package and Chromium for the first rendering (cached under bench/out/text/).
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import ort from 'onnxruntime-node';
import { OnnxModel, makeOrtRunner, readCalibrationDir, pruneSparsity, calibratePrune, removeChannelsCalibrated, runSet, compareSets } from 'sparsekit-wasm/onnx';
import { renderSets, ocrSetKinds, EVAL_SEED, CALIB_SEED } from '../../kit/ocr-text.mjs';
import { ROOT, OCR_MODELS } from '../../kit/ocr-models.mjs';
import { readTextSet, textSamples, taskMetrics } from '../../kit/ocr-metrics.mjs';

const { values: opt } = parseArgs({
  options: {
    models: { type: 'string', default: 'det,rec,cls' }, calib: { type: 'string', default: '8' },
    lines: { type: 'string', default: '24' }, pages: { type: 'string', default: '6' },
    out: { type: 'string' }, write: { type: 'boolean', default: false },
    settings: { type: 'string', default: 'magnitude:0.3,sparsegpt:0.25,sparsegpt:0.5,sparsegpt:2:4,channels:0.1,channels:0.3' },
  },
});
const CALIB = Number(opt.calib), LINES = Number(opt.lines), PAGES = Number(opt.pages);
const DAMP = 0.1;
const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 });

/**
 * One setting from its name: magnitude:S, sparsegpt:S, sparsegpt:N:M, channels:F (SparseGPT-compensated
 * channel removal, layer scope) -> [label, (model, calibration) => Promise].
 */
function setting(spec) {
  const [method, ...rest] = spec.split(':');
  const v = rest.join(':');
  if (method === 'magnitude') return [`magnitude ${Math.round(100 * Number(v))}%`, async (m) => pruneSparsity(m, { sparsity: Number(v) })];
  if (method === 'sparsegpt' && v.includes(':')) return [`sparsegpt ${v}`, (m, c) => calibratePrune(m, { ort: runner, calibration: c, criterion: 'sparsegpt', nm: v.split(':').map(Number), percDamp: DAMP })];
  if (method === 'sparsegpt') return [`sparsegpt ${Math.round(100 * Number(v))}%`, (m, c) => calibratePrune(m, { ort: runner, calibration: c, criterion: 'sparsegpt', sparsity: Number(v), percDamp: DAMP })];
  if (method === 'channels') return [`channels ${v} sparsegpt`, (m, c) => removeChannelsCalibrated(m, { ort: runner, calibration: c, fraction: Number(v), method: 'sparsegpt', percDamp: DAMP })];
  throw new Error(`unknown setting "${spec}" (magnitude:S, sparsegpt:S, sparsegpt:N:M, channels:F)`);
}
// mild to harsh, so that some land near a 0.99 floor
const SETTINGS = opt.settings.split(',').map(setting);

/** The task metric as one number in points (higher = better) and as text. */
const task = (key, m) => (key === 'rec' ? { points: -100 * m.cer, text: `CER ${(100 * m.cer).toFixed(1)}%` }
  : key === 'cls' ? { points: 100 * m.acc, text: `acc ${(100 * m.acc).toFixed(1)}%` } : { points: 100 * m.f1, text: `F1 ${(100 * m.f1).toFixed(1)}` });

/** The fidelity output's headline metric. */
function kindText(o) {
  const m = o.metrics;
  if (o.kind === 'sequence') return `CER vs orig. ${(100 * m.cerVsOriginal).toFixed(1)}%, exact ${(100 * m.exactMatch).toFixed(0)}%`;
  if (o.kind === 'classification') return `top-1 ${(100 * m.top1Agreement).toFixed(1)}%, KL ${m.meanKL.toFixed(3)}`;
  if (o.kind === 'dense-map') return `region F1 ${m.componentF1.toFixed(3)}, IoU ${m.iou.toFixed(3)}`;
  return `cosine ${m.cosine.toFixed(4)}, worst ch. ${(100 * m.worstChannelRelError).toFixed(1)}%`;
}

const t00 = Date.now();
const sets = await renderSets(opt.models.split(','), ocrSetKinds({ lines: LINES, pages: PAGES }), CALIB);

const results = [];
for (const key of opt.models.split(',')) {
  const bytes = fs.readFileSync(OCR_MODELS[key]);
  const set = readTextSet(sets[key].evalDir);
  const samples = textSamples(set, key);
  const calibration = await readCalibrationDir(sets[key].calibDir, OnnxModel.parse(bytes), { limit: CALIB });
  const reference = await runSet(runner, bytes, samples);
  const base = task(key, taskMetrics(key, set, reference, samples));
  results.push({ model: key, setting: 'original', task: base.text, taskPoints: base.points, delta: 0, fidelity: 1, kind: '', cosine: 1 });
  for (const [label, apply] of SETTINGS) {
    const model = OnnxModel.parse(bytes);
    const t0 = Date.now();
    await apply(model, calibration);
    const pruneSeconds = (Date.now() - t0) / 1000;
    const outputs = await runSet(runner, model.encode(), samples);
    const cmp = compareSets(reference, outputs);
    const t = task(key, taskMetrics(key, set, outputs, samples));
    const o = cmp.fidelity.outputs[0];
    const row = { model: key, setting: label, task: t.text, taskPoints: t.points, delta: t.points - base.points, fidelity: cmp.fidelity.score,
      kind: o.kind, kindText: kindText(o), metrics: o.metrics, cosine: cmp.cosine, pruneSeconds };
    results.push(row);
    console.error(`[${key}] ${label}: ${t.text} (${row.delta >= 0 ? '+' : ''}${row.delta.toFixed(1)} pt), fidelity ${row.fidelity.toFixed(4)} [${o.kind}: ${row.kindText}], cosine ${cmp.cosine.toFixed(4)}, ${pruneSeconds.toFixed(1)} s`);
  }
}

const info = { date: new Date().toISOString(), calib: CALIB, lines: LINES, pages: PAGES, evalSeed: EVAL_SEED, calibSeed: CALIB_SEED, percDamp: DAMP, minutes: (Date.now() - t00) / 60000 };
fs.mkdirSync(path.join(ROOT, 'bench/out'), { recursive: true });
fs.writeFileSync(path.resolve(opt.out ?? path.join(ROOT, 'bench/out/fidelity-ocr.json')), JSON.stringify({ ...info, results }, null, 2));

const rows = ['| model | pruning | task metric | Δ task (points) | fidelity | what fidelity measured | cosine |', '|---|---|---|---:|---:|---|---:|'];
for (const r of results) rows.push(`| ${r.model} | ${r.setting} | ${r.task} | ${r.setting === 'original' ? '–' : (r.delta >= 0 ? '+' : '') + r.delta.toFixed(1)} | ${r.fidelity.toFixed(4)} | ${r.kind ? `${r.kind}: ${r.kindText}` : '–'} | ${r.cosine.toFixed(4)} |`);
const pruned = results.filter((r) => r.setting !== 'original');
const high = pruned.filter((r) => r.fidelity >= 0.99), within = high.filter((r) => Math.abs(r.delta) <= 1);
const verdict = `Fidelity ≥ 0.99 in ${high.length} of ${pruned.length} pruned models; the task metric within 1 point of the original's in ${within.length} of those${high.length > within.length ? ` (not in: ${high.filter((r) => Math.abs(r.delta) > 1).map((r) => `${r.model} ${r.setting} ${r.delta.toFixed(1)} pt`).join(', ')})` : ''}.`;
const md = `${rows.join('\n')}\n\n${verdict} Held-out rendered text (seed ${EVAL_SEED}): ${LINES} lines (rec), ${LINES} crops (cls), ${PAGES} pages (det); calibration ${CALIB} rendered samples (seed ${CALIB_SEED}), percDamp ${DAMP}. Fidelity = fidelity() of the pruned model's outputs against the original's on the same inputs (kind detected: det dense-map, rec sequence, cls classification); task metrics as bench/ocr-metrics.mjs (rec: points = −CER). ${info.minutes.toFixed(1)} min (\`node bench/ocr/fidelity-ocr.mjs${process.argv.slice(2).length ? ' ' + process.argv.slice(2).join(' ') : ''}\`, ${info.date.slice(0, 10)}).`;
console.log(md);
if (opt.write) {
  const file = path.join(ROOT, 'bench/RESULTS.md');
  const prev = fs.readFileSync(file, 'utf8');
  const section = `<!-- fidelity:begin -->\n## Label-free fidelity against the task metric (PaddleOCR, rendered text)\n\n${md}\n<!-- fidelity:end -->`;
  const at = prev.indexOf('<!-- fidelity:begin -->'), end = prev.indexOf('<!-- fidelity:end -->');
  fs.writeFileSync(file, at >= 0 && end > at ? `${prev.slice(0, at)}${section}${prev.slice(end + '<!-- fidelity:end -->'.length)}` : `${prev.trimEnd()}\n\n${section}\n`);
}
