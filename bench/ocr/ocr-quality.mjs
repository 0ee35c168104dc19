// Does the pruned PaddleOCR model still work? Task metrics (bench/ocr-metrics.mjs) and output cosine on
// held-out rendered text (bench/ocr-text.mjs: lines for rec, 0/180 crops for cls, pages for det), for
// the original model, magnitude 50% / 2:4, Wanda and SparseGPT 50% / 2:4 (calibratePrune), and channel
// removal (plain, and removeChannelsCalibrated), each calibrated on (i) the generated inputs
// (makeInputSet, what `--calib synthetic` uses) and (ii) rendered text read with readCalibrationDir
// (what `--calib DIR` uses), from seeds disjoint from the evaluation set.
//   node bench/ocr/ocr-quality.mjs [--quick] [--models det,rec,cls] [--calib 16] [--lines 64] [--pages 16]
//        [--sparsity 0.5] [--channels 0.3] [--channel-method sparsegpt] [--out FILE.json] [--write]
// --write puts the table in bench/RESULTS.md between <!-- ocr:begin --> and <!-- ocr:end -->.
// Writes bench/out/ocr-quality.json. Needs the built package (node_modules/sparsekit-wasm) and Chromium
// for the first rendering (cached under bench/out/text/).
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import ort from 'onnxruntime-node';
import {
  OnnxModel, makeInputSet, makeOrtRunner, readCalibrationDir, pruneSparsity, pruneNm, calibratePrune, removeChannels, removeChannelsCalibrated,
} from 'sparsekit-wasm/onnx';
import { renderSets, ocrSetKinds, EVAL_SEED, CALIB_SEED } from '../../kit/ocr-text.mjs';
import { ROOT, OCR_MODELS } from '../../kit/ocr-models.mjs';
import { readTextSet, textSamples, evaluateOcr } from '../../kit/ocr-metrics.mjs';

const { values: opt } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false }, models: { type: 'string', default: 'det,rec,cls' }, calib: { type: 'string' },
    lines: { type: 'string' }, pages: { type: 'string' }, channels: { type: 'string', default: '0.3' }, sparsity: { type: 'string', default: '0.5' },
    out: { type: 'string' },
    'channel-method': { type: 'string', default: 'sparsegpt' }, damp: { type: 'string', default: '0.1' }, write: { type: 'boolean', default: false },
  },
});
const CALIB = Number(opt.calib ?? (opt.quick ? 8 : 16));
const LINES = Number(opt.lines ?? (opt.quick ? 24 : 64));
const PAGES = Number(opt.pages ?? (opt.quick ? 6 : 16));
const DAMP = Number(opt.damp), FRACTION = Number(opt.channels), CH_METHOD = opt['channel-method'], SPARSITY = Number(opt.sparsity);
const PCT = `${Math.round(100 * SPARSITY)}%`;
const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 });

/** The pruning variants: [label, calibration source or '', async (model, calibration) => report]. */
function variants() {
  const v = [['original', '', async () => null],
    [`magnitude ${PCT}`, '', async (m) => pruneSparsity(m, { sparsity: SPARSITY })],
    ['magnitude 2:4', '', async (m) => pruneNm(m, { nm: [2, 4] })]];
  for (const src of ['generated', 'text']) {
    for (const criterion of ['wanda', 'sparsegpt']) {
      for (const [t, target] of [[PCT, { sparsity: SPARSITY }], ['2:4', { nm: [2, 4] }]]) {
        v.push([`${criterion} ${t}`, src, (m, calibration) => calibratePrune(m, { ort: runner, calibration, criterion, ...target, percDamp: DAMP })]);
      }
    }
  }
  for (const scope of ['layer', 'global']) v.push([`channels ${FRACTION} ${scope}`, '', async (m) => removeChannels(m, { fraction: FRACTION, scope })]);
  for (const src of ['generated', 'text']) {
    for (const scope of ['layer', 'global']) {
      v.push([`channels ${FRACTION} ${scope} ${CH_METHOD}`, src, (m, calibration) => removeChannelsCalibrated(m, { ort: runner, calibration, fraction: FRACTION, scope, method: CH_METHOD, percDamp: DAMP })]);
    }
  }
  return v;
}

const fmtMetric = (key, m) => (key === 'rec' ? `CER ${(100 * m.cer).toFixed(1)}%, lines ${(100 * m.lineAcc).toFixed(0)}%`
  : key === 'cls' ? `acc ${(100 * m.acc).toFixed(1)}%` : `F1 ${m.f1.toFixed(3)} (P ${m.precision.toFixed(2)} R ${m.recall.toFixed(2)})`);

const results = [];
const t00 = Date.now();
const sets = await renderSets(opt.models.split(','), ocrSetKinds({ lines: LINES, pages: PAGES }), CALIB);

for (const key of opt.models.split(',')) {
  const bytes = fs.readFileSync(OCR_MODELS[key]);
  const base = OnnxModel.parse(bytes);
  const set = readTextSet(sets[key].evalDir);
  const samples = textSamples(set, key);
  const calibration = { generated: makeInputSet(base, { count: CALIB }), text: await readCalibrationDir(sets[key].calibDir, base, { limit: CALIB }) };
  const original = await evaluateOcr(runner, bytes, key, set, samples);
  for (const [label, src, apply] of variants()) {
    const model = OnnxModel.parse(bytes);
    const t0 = Date.now();
    let rep, row;
    try {
      rep = await apply(model, calibration[src]);
      const seconds = (Date.now() - t0) / 1000;
      const out = model.encode();
      const r = label === 'original' ? original : await evaluateOcr(runner, out, key, set, samples, original.outputs);
      const { read, ...metrics } = r.metrics;
      row = { model: key, variant: label, calib: src, metrics, cosine: r.cosine, zeros: rep?.sparsity ?? null,
        params: rep?.params ?? null, bytes: out.length, seconds };
    } catch (e) {
      row = { model: key, variant: label, calib: src, error: `${e.code ?? ''} ${e.message}`.trim() };
    }
    results.push(row);
    console.error(`[${key}] ${label}${src ? ` (${src})` : ''}: ${row.error ?? `${fmtMetric(key, row.metrics)}, cosine ${row.cosine.toFixed(4)}, ${row.seconds.toFixed(1)} s`}`);
  }
}

const info = { date: new Date().toISOString(), sparsity: SPARSITY, calib: CALIB, lines: LINES, pages: PAGES, channels: FRACTION, channelMethod: CH_METHOD, percDamp: DAMP,
  evalSeed: EVAL_SEED, calibSeed: CALIB_SEED, minutes: (Date.now() - t00) / 60000 };
fs.mkdirSync(path.join(ROOT, 'bench/out'), { recursive: true });
fs.writeFileSync(path.resolve(opt.out ?? path.join(ROOT, 'bench/out/ocr-quality.json')), JSON.stringify({ ...info, results }, null, 2));

const pct = (x) => (x == null ? '–' : `${(100 * x).toFixed(0)}%`);
const table = ['| model | pruning | calibrated on | task metric | cosine | zeros | parameters | file |', '|---|---|---|---|---:|---:|---:|---:|'];
for (const r of results) {
  if (r.error) { table.push(`| ${r.model} | ${r.variant} | ${r.calib || '–'} | error: ${r.error} | | | | |`); continue; }
  const params = r.params ? (r.params.after !== r.params.before ? `${r.params.after} (−${pct(1 - r.params.after / r.params.before)})` : `${r.params.after}`) : '';
  table.push(`| ${r.model} | ${r.variant} | ${r.calib || '–'} | ${fmtMetric(r.model, r.metrics)} | ${r.cosine.toFixed(3)} | ${pct(r.zeros)} | ${params} | ${(r.bytes / 1e6).toFixed(2)} MB |`);
}
const md = `${table.join('\n')}\n\nHeld-out rendered text (seed ${EVAL_SEED}): ${LINES} lines (rec), ${LINES} crops at 0/180° (cls), ${PAGES} pages of 640×640 (det); calibration ${CALIB} samples, generated or rendered text (seed ${CALIB_SEED}), percDamp ${DAMP}; cosine = mean over held-out inputs of the output cosine with the original; ${info.minutes.toFixed(1)} min (\`node bench/ocr/ocr-quality.mjs${opt.quick ? ' --quick' : ''}\`, ${info.date.slice(0, 10)}). Task metrics defined in kit/ocr-metrics.mjs; conclusions, milder settings and 32 samples in docs/guides/calibration.md ("Does it still read?").`;
console.log(md);
if (opt.write) {
  const file = path.join(ROOT, 'bench/RESULTS.md');
  const prev = fs.readFileSync(file, 'utf8');
  const section = `<!-- ocr:begin -->\n## OCR task quality after pruning (rendered text)\n\n${md}\n<!-- ocr:end -->`;
  const at = prev.indexOf('<!-- ocr:begin -->'), end = prev.indexOf('<!-- ocr:end -->');
  fs.writeFileSync(file, at >= 0 && end > at ? `${prev.slice(0, at)}${section}${prev.slice(end + '<!-- ocr:end -->'.length)}` : `${prev.trimEnd()}\n\n${section}\n`);
}
