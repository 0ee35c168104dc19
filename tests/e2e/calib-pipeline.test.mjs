// The calibration pipeline (sparsekit-wasm/onnx, as the playground's worker runs it) in Node with onnxruntime-node on the real PaddleOCR
// direction classifier: inputs, layer discovery, one-pass vs sequential capture, SparseGPT against
// Wanda on the same statistics, the exact N:M pattern, and cancellation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import ort from 'onnxruntime-node';
import {
  OnnxModel, renderPage, makeInputSet, SEED_BASE, findLayers, captureGroups, makeOrtRunner, calibratePrune, CancelledError, viewValues,
} from '#onnx-internal';
import { CLS } from './helpers.mjs';

const runner = makeOrtRunner(ort, { intraOpNumThreads: 1 });
const bytes = fs.readFileSync(CLS);

test('generated pages are deterministic by seed and differ across seeds', () => {
  const a = renderPage(64, 96, 7), b = renderPage(64, 96, 7), c = renderPage(64, 96, 8);
  assert.deepEqual(a.gray, b.gray);
  assert.notDeepEqual(a.gray, c.gray);
  let ink = 0;
  for (const v of a.gray) if (v < 0.5) ink++;
  assert.ok(ink > 0.01 * a.gray.length && ink < 0.6 * a.gray.length, `a page has text-like ink (${ink} px)`);
  const m = OnnxModel.parse(bytes);
  const cal = makeInputSet(m, { count: 3, set: 'calibration' }), held = makeInputSet(m, { count: 3, set: 'heldOut' });
  assert.ok(SEED_BASE.heldOut - SEED_BASE.calibration > 100_000);
  for (const x of cal) for (const y of held) assert.notDeepEqual(Object.values(x.feeds)[0].data, Object.values(y.feeds)[0].data);
});

test('cls: layers, views and capture groups', () => {
  const layers = findLayers(OnnxModel.parse(bytes));
  assert.equal(layers.length, 54);
  assert.equal(layers.filter((l) => l.stats === 'grouped').length, 11);
  const fc = layers.find((l) => l.op === 'MatMul');
  assert.deepEqual([fc.rows, fc.cols, fc.transposed], [2, 200, true]);
  assert.equal(captureGroups(layers, false).length, 1);
  assert.equal(captureGroups(layers, true).length, 54);       // a chain: every layer needs its own pass
});

test('one pass, same statistics: SparseGPT reconstructs better than Wanda; exact 2:4', async () => {
  const calibration = makeInputSet(OnnxModel.parse(bytes), { count: 8, set: 'calibration' });
  const runs = {};
  for (const criterion of ['wanda', 'sparsegpt']) {
    const model = OnnxModel.parse(bytes);
    const rep = await calibratePrune(model, { ort: runner, calibration, sequential: false, minVectors: 0,
      criterion: (l) => (l.group === 1 ? criterion : 'dense'), nm: [2, 4] });
    runs[criterion] = { model, rep };
  }
  const w = runs.wanda.rep.layers, s = runs.sparsegpt.rep.layers;
  assert.equal(s.length, w.length);
  let better = 0, compared = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i].method !== 'sparsegpt') continue;
    compared++;
    if (s[i].relError <= w[i].relError + 1e-6) better++;
  }
  assert.ok(compared >= 30 && better >= 0.9 * compared, `SparseGPT's error <= Wanda's on ${better}/${compared} layers`);
  const m = runs.sparsegpt.model;
  for (const l of findLayers(m)) {
    const r = s.find((x) => x.name === l.name);
    if (!r || r.method === 'dense') continue;
    const v = viewValues(m.readFloat(l.weight), l);
    for (let k = 0; k < v.length; k += 4) assert.ok((v[k] !== 0) + (v[k + 1] !== 0) + (v[k + 2] !== 0) + (v[k + 3] !== 0) <= 2, `${l.name} group ${k}`);
  }
});

test('an aborted signal stops the pipeline with CancelledError and no further passes', async () => {
  const calibration = makeInputSet(OnnxModel.parse(bytes), { count: 2, set: 'calibration' });
  const ctl = new AbortController();
  let seen = 0;
  await assert.rejects(calibratePrune(OnnxModel.parse(bytes), { ort: runner, calibration,
    criterion: 'sparsegpt', sparsity: 0.5, signal: ctl.signal,
    onProgress: ({ done }) => { seen++; if (done >= 3) ctl.abort(); } }), (e) => e instanceof CancelledError && e.code === 'cancelled');
  assert.ok(seen > 0);
});
