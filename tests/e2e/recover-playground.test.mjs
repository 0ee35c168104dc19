// End-to-end test of the playground's recovery card in headless Chromium, on the PaddleOCR direction
// classifier: channels removed at 30% per group in the channels card become the student; the card
// runs the package's recover() in a worker with onnxruntime-web, draws the held-out fidelity after
// each step and epoch, never ends below where it started, and downloads a model with the student's
// parameter count whose fidelity onnxruntime-node measures as the page did. Cancel must stop a run
// and leave the card usable.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { OnnxModel, loadOnnx, makeInputSet, makeOrtRunner, runSet, compareSets } from 'sparsekit-wasm/onnx';
import { CLS, tmpDir, startPlayground } from './helpers.mjs';

let playground;
before(async () => { playground = await startPlayground(); });
after(async () => { await playground?.stop(); });

const params = (m) => m.weights.reduce((a, w) => a + w.numel, 0);
const finished = (page) => page.waitForFunction(() => {
  const s = document.getElementById('recover-status').textContent;
  return s === 'done' || s === 'cancelled' || document.querySelector('[data-testid="error"]');
}, null, { timeout: 600_000 });

/** Loads cls and removes 30% of the channels of every group in the channels card (the student). */
async function channelsStudent(page) {
  await page.getByTestId('model-file').setInputFiles(CLS);
  await page.waitForFunction(() => /channel groups/.test(document.getElementById('channels-status').textContent), null, { timeout: 120_000 });
  await page.getByTestId('channels-fraction').fill('30');
  await page.getByTestId('channels-scope').selectOption('layer');
  await page.getByTestId('channels-runs').fill('1');
  await page.getByTestId('channels-run').click();
  await page.getByTestId('channels-cosine').waitFor({ timeout: 600_000 });
  return Number(await page.getByTestId('channels-summary').getAttribute('data-params-after'));
}

async function settings(page, { samples, heldOut, epochs, batch, features = 0 }) {
  await page.getByTestId('recover-features').fill(String(features));
  await page.getByTestId('recover-samples').fill(String(samples));
  await page.getByTestId('recover-heldout').fill(String(heldOut));
  await page.getByTestId('recover-epochs').fill(String(epochs));
  await page.getByTestId('recover-batch').fill(String(batch));
}

test('recover card on cls after channel removal: live fidelity curve, no loss, a download onnxruntime-node agrees with', async (t) => {
  const { context, page, problems } = await playground.openPage('?model=none');
  const pAfter = await channelsStudent(page);
  assert.equal(await page.getByTestId('recover-source').inputValue(), 'channels', 'the channels card\'s model is offered first');
  await settings(page, { samples: 8, heldOut: 4, epochs: 2, batch: 4, features: 2 });
  const t0 = Date.now();
  await page.getByTestId('recover-run').click();
  await finished(page);
  assert.equal(await page.getByTestId('error').count(), 0, await page.locator('#error-slot').textContent());
  assert.equal(await page.getByTestId('recover-status').textContent(), 'done');

  // The curve: the pruned model's score first, then one point per later measurement (closed-form
  // steps, epochs, the final one); the run keeps the best, so it never ends below its start.
  const pts = await page.locator('#recover-curve circle').evaluateAll((els) => els.map((e) => ({ label: e.dataset.label, f: Number(e.dataset.fidelity) })));
  assert.ok(pts.length >= 3, `points: ${JSON.stringify(pts)}`);
  assert.equal(pts[0].label, 'pruned');
  assert.ok(pts.some((p) => /^epoch /.test(p.label)), `an epoch was measured: ${JSON.stringify(pts)}`);
  const summary = page.getByTestId('recover-summary');
  const before = Number(await summary.getAttribute('data-before'));
  const afterScore = Number(await summary.getAttribute('data-after'));
  assert.ok(Math.abs(before - pts[0].f) < 1e-9, 'the first point is the pruned model\'s score');
  assert.ok(afterScore >= before - 1e-9, `held-out fidelity ${before} -> ${afterScore}`);
  assert.match(await page.getByTestId('recover-steps').textContent(), /distillation: 2 epochs.*2 matched block outputs/);

  // The download: the student's structure (removed channels stay removed), the page's fidelity.
  const file = path.join(tmpDir('sk-recover-'), 'cls.recovered.onnx');
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByTestId('recover-export').click()]);
  await dl.saveAs(file);
  const out = await loadOnnx(fs.readFileSync(file));
  assert.equal(params(out), pAfter, 'the recovered model keeps the student\'s parameter count');
  const runner = makeOrtRunner(ort);
  const samples = makeInputSet(OnnxModel.parse(fs.readFileSync(CLS)), { count: 4, set: 'heldOut' });
  const node = compareSets(await runSet(runner, fs.readFileSync(CLS), samples), await runSet(runner, fs.readFileSync(file), samples));
  t.diagnostic(`recover ${((Date.now() - t0) / 1000).toFixed(1)} s; fidelity ${before.toFixed(4)} -> ${afterScore.toFixed(4)} (onnxruntime-node ${node.fidelity.score.toFixed(4)}); curve ${pts.map((p) => `${p.label} ${p.f.toFixed(4)}`).join(', ')}`);
  assert.ok(Math.abs(node.fidelity.score - afterScore) < 0.02, `onnxruntime-node ${node.fidelity.score} vs page ${afterScore}`);
  assert.deepEqual(problems, []);
  await context.close();
});

test('recover card: Cancel stops a run, nothing to download, the card stays usable', async () => {
  const { context, page, problems } = await playground.openPage('?model=none');
  await channelsStudent(page);
  await settings(page, { samples: 32, heldOut: 4, epochs: 50, batch: 4 });
  await page.getByTestId('recover-run').click();
  await page.waitForFunction(() => /distillation|statistics|least-squares/.test(document.getElementById('recover-status').textContent), null, { timeout: 300_000 });
  await page.getByTestId('recover-cancel').click();
  await page.waitForFunction(() => document.getElementById('recover-status').textContent === 'cancelled', null, { timeout: 60_000 });
  assert.equal(await page.getByTestId('error').count(), 0, 'a cancel is not an error');
  assert.ok(await page.getByTestId('recover-run').isEnabled(), 'Recover is available again');
  assert.ok(await page.getByTestId('recover-export').isHidden(), 'no download from a cancelled run');
  assert.deepEqual(problems, []);
  await context.close();
});
