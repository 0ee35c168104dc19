// End-to-end test of recovery as the job's last step, in headless Chromium, on the PaddleOCR direction
// classifier: the job card removes 30% of the channels per group and recovers the result towards the
// original (runJob's recover in the job worker, onnxruntime-web), draws the held-out fidelity after
// each step and epoch, never ends below where it started, and downloads a model with the pruned
// parameter count whose fidelity onnxruntime-node measures as the page did. Cancel must stop a job
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
  const s = document.getElementById('goal-status').textContent;
  return s === 'done' || s === 'cancelled' || document.querySelector('[data-testid="error"]');
}, null, { timeout: 600_000 });

/** Loads cls and sets the job: 30% of the channels of every group removed, then recovery. */
async function channelsJob(page, { samples, heldOut, epochs, batch, features = 0 }) {
  await page.getByTestId('model-file').setInputFiles(CLS);
  await page.getByTestId('goal-run').waitFor({ state: 'visible', timeout: 120_000 });
  await page.getByTestId('goal-kind').selectOption('smaller');
  await page.getByTestId('goal-use-floor').setChecked(false);
  await page.getByTestId('goal-amount').fill('30');
  await page.getByTestId('job-calib').fill(String(samples));
  await page.getByTestId('goal-samples').fill(String(heldOut));
  await page.getByTestId('recover-enabled').setChecked(true);
  await page.getByTestId('recover-features').fill(String(features));
  await page.getByTestId('recover-epochs').fill(String(epochs));
  await page.getByTestId('recover-batch').fill(String(batch));
}

test('job with recovery on cls after channel removal: live fidelity curve, no loss, a download onnxruntime-node agrees with', async (t) => {
  const { context, page, problems } = await playground.openPage('?model=none');
  await channelsJob(page, { samples: 8, heldOut: 4, epochs: 2, batch: 4, features: 2 });
  const t0 = Date.now();
  await page.getByTestId('goal-run').click();
  await finished(page);
  assert.equal(await page.getByTestId('error').count(), 0, await page.locator('#error-slot').textContent());
  assert.equal(await page.getByTestId('goal-status').textContent(), 'done');
  const pAfter = Number(await page.getByTestId('goal-summary').getAttribute('data-params-after'));
  assert.ok(pAfter < params(OnnxModel.parse(fs.readFileSync(CLS))), 'channels were removed');

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
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByTestId('goal-export').click()]);
  await dl.saveAs(file);
  const out = await loadOnnx(fs.readFileSync(file));
  assert.equal(params(out), pAfter, 'the recovered model keeps the pruned parameter count');
  const runner = makeOrtRunner(ort);
  const samples = makeInputSet(OnnxModel.parse(fs.readFileSync(CLS)), { count: 4, set: 'heldOut' });
  const node = compareSets(await runSet(runner, fs.readFileSync(CLS), samples), await runSet(runner, fs.readFileSync(file), samples));
  t.diagnostic(`recover ${((Date.now() - t0) / 1000).toFixed(1)} s; fidelity ${before.toFixed(4)} -> ${afterScore.toFixed(4)} (onnxruntime-node ${node.fidelity.score.toFixed(4)}); curve ${pts.map((p) => `${p.label} ${p.f.toFixed(4)}`).join(', ')}`);
  assert.ok(Math.abs(node.fidelity.score - afterScore) < 0.02, `onnxruntime-node ${node.fidelity.score} vs page ${afterScore}`);
  assert.deepEqual(problems, []);
  await context.close();
});

test('job with recovery: Cancel stops it, nothing to download, the card stays usable', async () => {
  const { context, page, problems } = await playground.openPage('?model=none');
  await channelsJob(page, { samples: 32, heldOut: 4, epochs: 50, batch: 4 });
  await page.getByTestId('goal-run').click();
  await page.waitForFunction(() => /distillation|statistics|least-squares/.test(document.getElementById('goal-status').textContent), null, { timeout: 300_000 });
  await page.getByTestId('goal-cancel').click();
  await page.waitForFunction(() => document.getElementById('goal-status').textContent === 'cancelled', null, { timeout: 60_000 });
  assert.equal(await page.getByTestId('error').count(), 0, 'a cancel is not an error');
  assert.ok(await page.getByTestId('goal-run').isEnabled(), 'Run is available again');
  assert.ok(await page.getByTestId('goal-export').isHidden(), 'no download from a cancelled job');
  assert.deepEqual(problems, []);
  await context.close();
});
