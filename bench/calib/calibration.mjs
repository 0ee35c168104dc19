// Quality of calibration-aware pruning on the playground's PaddleOCR models (cls, rec, det):
// output cosine on held-out document inputs after pruning every Conv/Gemm/MatMul layer that allows
// it, by magnitude, Wanda and SparseGPT, at 50% unstructured and 2:4. Same pipeline as the playground
// (sparsekit-wasm/onnx calibratePrune), run with onnxruntime-node.
//   node bench/calib/calibration.mjs [--quick] [--models cls,rec,det] [--calib N] [--heldout N]
//        [--block 128] [--damp 0.01] [--refit K] [--one-pass] [--criteria magnitude,wanda,sparsegpt] [--scopes all,group1]
//        [--out bench/out/calibration.json]
// Scopes: 'all' prunes every Conv/Gemm/MatMul that allows the pattern; 'group1' leaves grouped and
// depthwise Convs dense (a depthwise filter has only kh*kw weights; halving each one is what hurts).
// Writes bench/out/calibration.json and prints a markdown table.
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import ort from 'onnxruntime-node';
import { OnnxModel, makeInputSet, makeOrtRunner, calibratePrune, runSet, compareSets } from 'sparsekit-wasm/onnx';
import { ROOT, MODELS } from '../../kit/ocr-models.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(`--${name}`); return i >= 0 ? args[i + 1] : dflt; };
const quick = args.includes('--quick');
const MODEL_FILES = {
  cls: { file: 'ch_ppocr_mobile_v2.0_cls_infer.onnx', normalization: 'symmetric' },
  rec: { file: 'ch_PP-OCRv4_rec_infer.onnx', normalization: 'symmetric' },
  det: { file: 'ch_PP-OCRv4_det_infer.onnx', normalization: 'imagenet' },
};
const models = opt('models', 'cls,rec,det').split(',');
const criteria = opt('criteria', 'magnitude,wanda,sparsegpt').split(',');
const calibCount = Number(opt('calib', quick ? 8 : 32));
const heldOutCount = Number(opt('heldout', quick ? 4 : 16));
const blockSize = Number(opt('block', 128));
const percDamp = Number(opt('damp', 0.1));
// SparseGPT's refit steps (default: calibratePrune's, CALIB_DEFAULTS.refit; 0: SparseGPT as published)
const refit = opt('refit') === undefined ? undefined : Number(opt('refit'));
const sequential = !args.includes('--one-pass');
const scopes = opt('scopes', 'all').split(',');
const outFile = path.resolve(opt('out', path.join(ROOT, 'bench/out/calibration.json')));
const targets = [{ label: '50% unstructured', sparsity: 0.5 }, { label: '2:4', nm: [2, 4] }];

const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, interOpNumThreads: 1 });
console.error(`[calibration] calibration ${calibCount}, held-out ${heldOutCount}, block ${blockSize}, percDamp ${percDamp}, ${sequential ? 'sequential' : 'one pass'}`);

const results = [];
for (const key of models) {
  const spec = MODEL_FILES[key];
  const bytes = fs.readFileSync(path.join(MODELS, spec.file));
  const base = OnnxModel.parse(bytes);
  const calibration = makeInputSet(base, { count: calibCount, set: 'calibration', normalization: spec.normalization });
  const heldOut = makeInputSet(base, { count: heldOutCount, set: 'heldOut', normalization: spec.normalization });
  const reference = await runSet(runner, bytes, heldOut);
  for (const scope of scopes) for (const t of targets) {
    for (const criterion of criteria) {
      const model = OnnxModel.parse(bytes);
      const t0 = Date.now();
      const rep = await calibratePrune(model, { ort: runner, calibration, sequential, blockSize, percDamp, refit,
        criterion: (l) => (scope === 'group1' && l.group > 1 ? 'dense' : criterion), ...(t.nm ? { nm: t.nm } : { sparsity: t.sparsity }),
        onProgress: ({ done, total }) => { if (process.stderr.isTTY) process.stderr.write(`\r[${key} ${t.label} ${criterion}] ${done.toFixed(1)}/${total}   `); } });
      const pruned = model.encode();
      const cmp = compareSets(reference, await runSet(runner, pruned, heldOut));
      const pruneable = rep.layers.filter((l) => l.method !== 'dense');
      const numel = rep.layers.reduce((a, l) => a + l.params, 0);
      const zeros = rep.layers.reduce((a, l) => a + l.zeros, 0);
      const fallbacks = {};
      for (const l of rep.layers) if (l.method !== criterion) fallbacks[l.method] = (fallbacks[l.method] ?? 0) + 1;
      const relErrs = rep.layers.filter((l) => l.relError != null).map((l) => l.relError);
      const row = {
        model: key, scope, target: t.label, criterion, cosine: cmp.cosine, minCosine: cmp.min,
        layersPruned: pruneable.length, layersTotal: rep.layers.length, fallbacks,
        weightSparsity: zeros / numel, meanRelError: relErrs.length ? relErrs.reduce((a, b) => a + b, 0) / relErrs.length : null,
        seconds: (Date.now() - t0) / 1000, passes: rep.passes,
        layers: rep.layers.map(({ name, op, view, method, sparsity, relError, notes }) => ({ name, op, rows: view.rows, cols: view.cols, used: method, sparsity, relError, notes })),
      };
      results.push(row);
      process.stderr.write(`\r[${key} ${scope} ${t.label} ${criterion}] cosine ${cmp.cosine.toFixed(4)} (min ${cmp.min.toFixed(4)}), ${pruneable.length}/${rep.layers.length} layers, ${(row.weightSparsity * 100).toFixed(1)}% of their weights zero, ${row.seconds.toFixed(1)} s\n`);
    }
  }
}

const out = {
  date: new Date().toISOString(), host: `${os.cpus().length} cores, node ${process.version}`, engine: 'sparsekit-wasm (Node, single-threaded SIMD128)',
  settings: { calibration: calibCount, scopes: { all: 'every Conv, Gemm, MatMul that allows the pattern', group1: 'the same without grouped/depthwise Convs (left dense)' }, heldOut: heldOutCount, blockSize, percDamp, refit: refit ?? 'default', sequential, quick,
    inputs: 'generated document pages (det, 320x320) / text lines (cls, rec, 48x192); held-out seeds disjoint from calibration seeds' },
  results,
};
fs.mkdirSync(path.dirname(outFile), { recursive: true });
fs.writeFileSync(outFile, JSON.stringify(out, null, 1));

const lines = ['| model | layers | target | magnitude | Wanda | SparseGPT | layers pruned | weights zero |', '|---|---|---|---|---|---|---|---|'];
for (const key of models) for (const scope of scopes) for (const t of targets) {
  const rows = results.filter((r) => r.model === key && r.scope === scope && r.target === t.label);
  const c = (name) => { const r = rows.find((x) => x.criterion === name); return r ? r.cosine.toFixed(3) : '–'; };
  const r0 = rows[0];
  lines.push(`| ${key} | ${scope === 'all' ? 'all' : 'group-1 only'} | ${t.label} | ${c('magnitude')} | ${c('wanda')} | ${c('sparsegpt')} | ${r0 ? `${r0.layersPruned}/${r0.layersTotal}` : ''} | ${r0 ? `${(r0.weightSparsity * 100).toFixed(1)}%` : ''} |`);
}
console.log(lines.join('\n'));
