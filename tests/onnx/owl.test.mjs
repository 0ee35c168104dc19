// OWL allocation: per-layer sparsities from each layer's share of outlier weights (|W|·‖x‖ above M
// times the layer's mean), spread over 2λ and centred so the model keeps its overall sparsity; the
// job prunes each layer to its own ratio.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import ort from 'onnxruntime-node';
import { build } from './build.mjs';

build();
const O = await import('#onnx-internal');
const G = await import('./graphs.mjs');

const zeros = (m, w) => m.readFloat(w).filter((x) => x === 0).length;

test('owl: more outliers, less sparsity; the weighted mean is the target; the job prunes each layer to its ratio', async () => {
  const bytes = G.mlp();
  const base = O.OnnxModel.parse(bytes);
  // make W2's inputs carry outliers: a few of its weights 20x the rest
  const w2 = base.weight('W2'), v = base.readFloat(w2);
  for (let i = 0; i < v.length; i += 17) v[i] *= 20;
  base.writeFloat(w2, v);
  const model = base.encode();
  const calibration = O.makeInputSet(O.OnnxModel.parse(model), { count: 8 });
  const runner = O.makeOrtRunner(ort);
  const owl = await O.owlSparsities(O.OnnxModel.parse(model), { runner, calibration, sparsity: 0.5 });
  const [a, b] = ['W1', 'W2'].map((n) => owl.find((o) => o.name === n));
  assert.ok(b.outlierRatio > a.outlierRatio, `W2 holds more outliers (${b.outlierRatio} > ${a.outlierRatio})`);
  assert.ok(b.sparsity < a.sparsity, 'and gets less sparsity');
  assert.ok(Math.abs(a.sparsity - b.sparsity - 2 * O.OWL_DEFAULTS.lambda) < 1e-12, 'the ratios span 2λ');
  const n1 = base.weight('W1').numel, n2 = w2.numel;
  assert.ok(Math.abs((a.sparsity * n1 + b.sparsity * n2) / (n1 + n2) - 0.5) < 1e-12, 'the weighted mean is the target');

  const m = O.OnnxModel.parse(model);
  const { report } = await O.runJob(m, { mode: { kind: 'sparsity', sparsity: 0.5, allocation: 'owl' }, method: 'wanda', calibration: { samples: calibration } }, { ort: runner });
  assert.deepEqual(report.allocation.map((x) => x.sparsity), owl.map((x) => x.sparsity));
  for (const o of owl) {
    const w = m.weight(o.name);
    // Wanda keeps floor((1 - s) * cols + 0.5) per output row
    const cols = w.view.cols, rows = w.view.rows;
    assert.equal(zeros(m, w), rows * (cols - Math.floor((1 - o.sparsity) * cols + 0.5)), o.name);
  }
  // owl reads calibration samples, whatever the method; it sets per-layer sparsities (scope layer, 1x1)
  await assert.rejects(O.runJob(O.OnnxModel.parse(model), { mode: { kind: 'sparsity', sparsity: 0.5, allocation: 'owl' } }, { ort: runner }), (e) => e instanceof O.JobError && e.option === 'calibration.samples');
  await assert.rejects(O.runJob(O.OnnxModel.parse(model), { mode: { kind: 'sparsity', sparsity: 0.5, allocation: 'owl', scope: 'global' }, calibration: { samples: calibration } }, { ort: runner }), (e) => e instanceof O.JobError && e.option === 'mode.allocation');
});

test('the CLI: --scope owl with --sparsity allocates per layer (generated calibration by default)', async () => {
  const { spawnSync } = await import('node:child_process');
  const fs = await import('node:fs');
  const path = await import('node:path');
  const { CLI } = await import('./build.mjs');
  const dir = G.tmpDir('sk-owl-');
  const file = path.join(dir, 'mlp.onnx'), out = path.join(dir, 'out.onnx');
  fs.writeFileSync(file, G.mlp());
  const r = spawnSync(process.execPath, [CLI, 'prune', file, '-o', out, '--sparsity', '0.5', '--scope', 'owl', '--method', 'wanda', '--calib-count', '8', '--report', `${out}.json`, '-q'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const rep = JSON.parse(fs.readFileSync(`${out}.json`, 'utf8'));
  assert.deepEqual(rep.allocation.map((a) => a.name).sort(), ['W1', 'W2']);
  assert.ok(rep.allocation.every((a) => a.sparsity >= 0.5 - 0.16 && a.sparsity <= 0.5 + 0.16));
  const bad = spawnSync(process.execPath, [CLI, 'prune', file, '-o', out, '--channels', '0.5', '--scope', 'owl'], { encoding: 'utf8' });
  assert.equal(bad.status, 2, bad.stderr);
  assert.match(bad.stderr, /--scope/);
});
