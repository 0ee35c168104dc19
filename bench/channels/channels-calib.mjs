// Channel removal with and without calibration on the PaddleOCR models: output cosine on held-out
// generated inputs (not the calibration set) at `--channels F`, per scope, for plain removal
// (magnitude scores, constants folded), wanda (activation-aware scores, measured means folded) and
// sparsegpt (the same, consumers reconstructed: on the centred statistics of each consumer whose bias
// takes the mean shift, with the refit, the defaults), plus parameters after. `sparsegpt-uncentred`
// (centre false, refit 0: the compensation before centring) and `sparsegpt-norefit` (centred, refit 0)
// and `sparsegpt-uncentred-refit` (centre false, the refit on) are the same runs' comparisons.
//   node bench/channels/channels-calib.mjs [--models det,rec,cls] [--channels 0.3] [--scopes layer,global]
//        [--calib 16] [--heldout 8] [--damp 0.1] [--methods magnitude,wanda,sparsegpt[,sparsegpt-uncentred,sparsegpt-norefit,sparsegpt-uncentred-refit]] [--score activations|weights]
// Writes bench/out/onnx/channels-calib.json and prints a markdown table.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import ort from 'onnxruntime-node';
import { COMPENSATIONS } from '../lib/compensation-variants.mjs';
import { OnnxModel, makeInputSet, makeOrtRunner, runSet, compareSets, removeChannels, removeChannelsCalibrated } from 'sparsekit-wasm/onnx';
import { ROOT, OCR_MODELS } from '../../kit/ocr-models.mjs';

const { values: opt } = parseArgs({
  options: {
    models: { type: 'string', default: 'det,rec,cls' }, channels: { type: 'string', default: '0.3' }, scopes: { type: 'string', default: 'layer,global' },
    calib: { type: 'string', default: '16' }, heldout: { type: 'string', default: '8' }, damp: { type: 'string', default: '0.1' },
    methods: { type: 'string', default: 'magnitude,wanda,sparsegpt' }, score: { type: 'string', default: 'activations' }, out: { type: 'string' },
  },
});
const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 });
const fraction = Number(opt.channels);
// sparsegpt-<compensation> for every compensation but the default, which is plain `sparsegpt`
const VARIANTS = {
  wanda: { method: 'wanda' },
  ...Object.fromEntries(Object.entries(COMPENSATIONS).map(([k, v]) => [k === 'centred' ? 'sparsegpt' : `sparsegpt-${k.replace(/^centred-/, '')}`, { method: 'sparsegpt', ...v }])),
};
const results = [];
for (const key of opt.models.split(',')) {
  const bytes = fs.readFileSync(OCR_MODELS[key]);
  const base = OnnxModel.parse(bytes);
  const calibration = makeInputSet(base, { count: Number(opt.calib) });
  const heldOut = makeInputSet(base, { count: Number(opt.heldout), set: 'heldOut' });
  const reference = await runSet(runner, bytes, heldOut);
  for (const scope of opt.scopes.split(',')) for (const method of opt.methods.split(',')) {
    const model = OnnxModel.parse(bytes);
    const t0 = Date.now();
    const rep = method === 'magnitude'
      ? removeChannels(model, { fraction, scope })
      : await removeChannelsCalibrated(model, { ort: runner, calibration, fraction, scope, ...VARIANTS[method], score: opt.score, percDamp: Number(opt.damp) });
    const cmp = compareSets(reference, await runSet(runner, model.encode(), heldOut));
    const row = { model: key, scope, method, score: method === 'magnitude' ? 'weights' : opt.score, cosine: cmp.cosine, minCosine: cmp.min,
      params: rep.params, seconds: (Date.now() - t0) / 1000, options: rep.options,
      consumers: rep.compensation ? Object.entries(rep.compensation.reduce((a, c) => ({ ...a, [c.method]: (a[c.method] ?? 0) + 1 }), {})).map(([k, v]) => `${v} ${k}`).join(', ') : '' };
    results.push(row);
    console.error(`[${key} ${scope} ${method}] cosine ${cmp.cosine.toFixed(4)} (min ${cmp.min.toFixed(4)}), params ${rep.params.before} -> ${rep.params.after}, ${row.seconds.toFixed(1)} s ${row.consumers}`);
  }
}
const out = path.resolve(opt.out ?? path.join(ROOT, 'bench/out/onnx/channels-calib.json'));
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), fraction, calib: Number(opt.calib), heldOut: Number(opt.heldout), percDamp: Number(opt.damp), results }, null, 2));
const methods = opt.methods.split(',');
console.log(`| model | scope | ${methods.join(' | ')} |\n|---|---|${methods.map(() => '---:').join('|')}|`);
for (const key of opt.models.split(',')) for (const scope of opt.scopes.split(',')) {
  const c = (m) => { const r = results.find((x) => x.model === key && x.scope === scope && x.method === m); return r ? `${r.cosine.toFixed(3)} (min ${r.minCosine.toFixed(3)})` : '–'; };
  console.log(`| ${key} | ${scope} | ${methods.map(c).join(' | ')} |`);
}
