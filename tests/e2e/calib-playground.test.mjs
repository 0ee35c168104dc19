// End-to-end test of the playground's calibration card in headless Chromium: the page opens with its
// default model; on the PaddleOCR direction classifier, SparseGPT at 2:4 must beat magnitude at 2:4 on
// held-out inputs; the calibrated export must be exactly 2:4 wherever the report says it pruned; a
// cancelled run must stop without an error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { OnnxModel, findLayers, viewValues } from '#onnx-internal';
import { CLS, tmpDir, runModel, startPlayground, openPerLayer } from './helpers.mjs';

let playground;

before(async () => {
  playground = await startPlayground();
});

after(async () => {
  await playground?.stop();
});

// the page opens on the job; these tests drive the per-layer controls, one fold away
const openPage = async (query) => { const p = await playground.openPage(query); await openPerLayer(p.page); return p; };

test('the page opens with its default model loaded', async () => {
  const { context, page, problems } = await openPage();
  await page.waitForSelector('#layers tbody tr', { timeout: 60_000 });
  assert.ok(await page.locator('#layers tbody tr').count() >= 40);
  assert.equal(await page.locator('#calib-card').isHidden(), false);
  assert.ok(await page.locator('#calib-layers tbody tr').count() >= 40);
  assert.deepEqual(problems, []);
  await context.close();
});

test('SparseGPT beats magnitude at 2:4 on cls in the page; the calibrated export is exactly 2:4', async () => {
  const { context, page, problems } = await openPage('?model=none');
  await page.getByTestId('model-file').setInputFiles(CLS);
  await page.waitForSelector('#calib-layers tbody tr');
  await page.getByTestId('preset-sparsegpt-24').click();
  await page.getByTestId('calib-pages').fill('32');
  await page.getByTestId('calib-heldout').fill('16');

  await page.getByTestId('calib-compare').click();
  await page.getByTestId('compare-sparsegpt').waitFor({ timeout: 600_000 });
  assert.equal(await page.getByTestId('error').count(), 0, await page.locator('#error-slot').textContent());
  const cos = {};
  for (const c of ['magnitude', 'wanda', 'sparsegpt']) cos[c] = Number(await page.getByTestId(`compare-${c}`).textContent());
  assert.ok(cos.sparsegpt > cos.magnitude, `SparseGPT ${cos.sparsegpt} > magnitude ${cos.magnitude} at 2:4`);
  const fid = {};
  for (const c of ['magnitude', 'wanda', 'sparsegpt']) fid[c] = Number(await page.getByTestId(`compare-fidelity-${c}`).getAttribute('data-score'));
  assert.ok(Object.values(fid).every((f) => f >= 0 && f <= 1), `fidelity per criterion in [0, 1]: ${JSON.stringify(fid)}`);

  await page.getByTestId('calib-run').click();
  await page.getByTestId('calib-cosine').waitFor({ timeout: 600_000 });
  const shown = Number(await page.getByTestId('calib-cosine').textContent());
  assert.ok(Math.abs(shown - cos.sparsegpt) < 1e-4, `the run reproduces the comparison's SparseGPT cosine (${shown} vs ${cos.sparsegpt})`);
  const shownFid = Number(await page.getByTestId('calib-fidelity').textContent());
  assert.ok(Math.abs(shownFid - fid.sparsegpt) < 1e-4, `the run reproduces the comparison's SparseGPT fidelity (${shownFid} vs ${fid.sparsegpt})`);
  const relErrs = (await page.getByTestId('calib-relerr').allTextContents()).filter((t) => /^\d/.test(t)).map(Number);
  assert.ok(relErrs.length >= 30 && relErrs.every((e) => e >= 0 && e < 1), `per-layer reconstruction errors shown (${relErrs.length})`);

  const file = path.join(tmpDir('sk-calib-'), 'cls.calibrated.onnx');
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByTestId('calib-export').click()]);
  await dl.saveAs(file);
  const orig = OnnxModel.parse(fs.readFileSync(CLS));
  const out = OnnxModel.parse(fs.readFileSync(file));
  let pruned = 0;
  const before = new Map(findLayers(orig).map((l) => [l.name, l]));
  for (const l of findLayers(out)) {
    const v = viewValues(out.readFloat(l.weight), l);
    const v0 = viewValues(orig.readFloat(before.get(l.name).weight), l);
    const allows = l.cols % 4 === 0 && (l.op !== 'Conv' || l.weight.dims[1] % 4 === 0);
    if (!allows) { assert.deepEqual(Array.from(v), Array.from(v0), `${l.name} stays dense`); continue; }
    pruned++;
    for (let i = 0; i < v.length; i += 4) {
      const nz = (v[i] !== 0) + (v[i + 1] !== 0) + (v[i + 2] !== 0) + (v[i + 3] !== 0);
      assert.ok(nz <= 2, `${l.name}: group at ${i} keeps ${nz} of 4`);
    }
  }
  assert.ok(pruned >= 30, `${pruned} layers pruned 2:4`);
  const res = await runModel(file, out);                 // the export runs in onnxruntime-node
  assert.ok(Object.values(res).every((a) => a.every(Number.isFinite)));
  assert.deepEqual(problems, []);
  await context.close();
});

test('cancel stops a calibration run without an error', async () => {
  const { context, page } = await openPage('?model=none');
  await page.getByTestId('model-file').setInputFiles(CLS);
  await page.waitForSelector('#calib-layers tbody tr');
  await page.getByTestId('calib-pages').fill('64');
  await page.getByTestId('calib-run').click();
  await page.waitForFunction(() => document.getElementById('calib-status').textContent.includes('layers'), null, { timeout: 120_000 });
  await page.getByTestId('calib-cancel').click();
  await page.waitForFunction(() => document.getElementById('calib-status').textContent === 'cancelled', null, { timeout: 120_000 });
  assert.equal(await page.getByTestId('error').count(), 0);
  assert.equal(await page.getByTestId('calib-cosine').count(), 0);
  assert.equal(await page.getByTestId('calib-run').isDisabled(), false);
  await context.close();
});
