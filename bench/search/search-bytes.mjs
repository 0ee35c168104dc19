// The search by served bytes against the search by parameters and the best uniform setting, on
// PaddleOCR det / rec, in one run (issue 39 item 4: "the smallest model whose fidelity stays >= F"):
// one sensitivity table per model and mode, measured with the bytes each cell saves
// (sensitivity's measureBytes), drives compress with objective 'params' and 'bytes' at each floor;
// the uniform baseline is the largest level of a grid that meets the floor on the same held-out
// samples. Every chosen model is sized by brotli quality 11 over its whole encoded file (what a
// static host serves), and judged by its fidelity and the task metric on a separate rendered set.
//   node bench/search/search-bytes.mjs [--models det,rec] [--modes sparsity,channels] [--floors 0.99,0.95] [--out FILE]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseArgs } from 'node:util';
import ort from 'onnxruntime-node';
import { OnnxModel, makeOrtRunner, runSet, fidelity, sensitivity, compress, pruneSparsity, removeChannels, byteSizer } from '#onnx-internal';
import { renderText, openBrowser } from '../../kit/ocr-text.mjs';
import { ocrSearchModel } from '../lib/ocr-search-model.mjs';
import { ROOT, OCR_MODELS } from '../../kit/ocr-models.mjs';

const { values: opt } = parseArgs({
  options: {
    models: { type: 'string', default: 'det,rec' }, modes: { type: 'string', default: 'sparsity,channels' },
    floors: { type: 'string', default: '0.99,0.95' }, out: { type: 'string' },
  },
});
const FLOORS = opt.floors.split(',').map(Number);
// the held-out set of bench/search/search-ocr.mjs (seed 700) and its task set (seed 900)
const EVAL_N = { det: 3, rec: 16 }, TASK_N = { det: 8, rec: 24 }, TABLE_N = { det: 1, rec: 16 };
const KIND = { det: 'pages', rec: 'lines' };
const LEVELS = { sparsity: [0.25, 0.5, 0.75, 0.9], channels: [0.125, 0.25, 0.375, 0.5] };
const GRID = { sparsity: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], channels: [0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5] };
const STOP_BELOW = Math.max(0, 2 * Math.min(...FLOORS) - 1 - 0.05);
const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 });
const brotli11 = (b) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length } }).length;
const MiB = (n) => (n / 1048576).toFixed(3);

const sets = {};
const browser = await openBrowser();
try {
  for (const key of opt.models.split(',')) {
    sets[key] = {
      search: await renderText({ kind: KIND[key], seed: 700, count: EVAL_N[key], browser }),
      task: await renderText({ kind: KIND[key], seed: 900, count: TASK_N[key], browser }),
    };
  }
} finally { await browser.close(); }

const fmtTask = (key, m) => (key === 'rec' ? `CER ${(100 * m.cer).toFixed(2)}%` : `F1 ${m.f1.toFixed(3)}`);
const rows = [];
const sizer = await byteSizer();
for (const key of opt.models.split(',')) {
  const bytes = fs.readFileSync(OCR_MODELS[key]);
  const { base, evalSet, reference, task } = await ocrSearchModel(key, bytes, sets[key], runner);
  const original = { brotli: brotli11(bytes), task: await task(bytes) };
  console.error(`[${key}] original: brotli-11 ${MiB(original.brotli)} MiB, ${fmtTask(key, original.task)}; load ${os.loadavg()[0].toFixed(1)}`);
  for (const mode of opt.modes.split(',')) {
    const uniform = [];
    for (const level of GRID[mode]) {
      const m = OnnxModel.parse(bytes);
      if (mode === 'channels') removeChannels(m, { fraction: level, scope: 'layer' }); else pruneSparsity(m, { sparsity: level });
      const b = m.encode();
      uniform.push({ level, fidelity: fidelity(reference, await runSet(runner, b, evalSet)).score, bytes: b });
    }
    const t0 = Date.now();
    const table = await sensitivity(base, { ort: runner, eval: evalSet.slice(0, TABLE_N[key]), mode, levels: LEVELS[mode], measureBytes: sizer, stopBelow: STOP_BELOW });
    const tableSeconds = (Date.now() - t0) / 1000;
    console.error(`[${key}] ${mode}: table ${table.units.length} x ${table.levels.length} with bytes in ${tableSeconds.toFixed(0)} s`);
    for (const F of FLOORS) {
      const best = uniform.filter((u) => u.fidelity >= F).sort((a, b) => b.level - a.level)[0];
      const row = { model: key, mode, floor: F, original, tableSeconds, load: os.loadavg()[0] };
      row.uniform = best ? { level: best.level, fidelity: best.fidelity, brotli: brotli11(best.bytes), task: await task(best.bytes) } : null;
      for (const objective of ['params', 'bytes']) {
        const res = await compress(base, { ort: runner, eval: evalSet, mode, levels: LEVELS[mode], minFidelity: F, table, objective, maxSteps: 8 });
        if (!res.model) { row[objective] = null; continue; }
        const b = res.model.encode();
        row[objective] = { fidelity: res.fidelity.score, brotli: brotli11(b), raw: b.length, task: await task(b), predicted: res.steps.filter((s) => s.pass).map((s) => s.gain).pop() };
      }
      rows.push(row);
      const cell = (x) => (x ? `${MiB(x.brotli)} MiB (fid ${x.fidelity.toFixed(4)}, ${fmtTask(key, x.task)})` : 'none');
      console.error(`[${key}] ${mode} >= ${F}: uniform ${cell(row.uniform)}; params ${cell(row.params)}; bytes ${cell(row.bytes)}`);
    }
  }
}

const out = path.resolve(opt.out ?? path.join(ROOT, 'bench/out/search-bytes.json'));
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), sizer: sizer.name, rows }, null, 2));
const c = (x, o) => (x ? `${MiB(x.brotli)} (${(o.brotli / x.brotli).toFixed(2)}×), ${x.fidelity.toFixed(4)}` : 'none meets it');
console.log('| model | mode | floor | original brotli-11 MiB | best uniform: level, MiB (× smaller), fidelity, task | searched by params: MiB (×), fidelity, task | searched by bytes: MiB (×), fidelity, task | bytes ÷ params |');
console.log('|---|---|---:|---:|---|---|---|---:|');
for (const r of rows) {
  const t = (x) => (x ? `, ${fmtTask(r.model, x.task)}` : '');
  const ratio = r.bytes && r.params ? (r.bytes.brotli / r.params.brotli).toFixed(3) : '–';
  console.log(`| ${r.model} | ${r.mode} | ${r.floor} | ${MiB(r.original.brotli)} | ${r.uniform ? `${r.uniform.level}, ` : ''}${c(r.uniform, r.original)}${t(r.uniform)} | ${c(r.params, r.original)}${t(r.params)} | ${c(r.bytes, r.original)}${t(r.bytes)} | ${ratio} |`);
}
