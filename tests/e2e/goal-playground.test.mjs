// End-to-end test of the job card's goal down to a fidelity floor in headless Chromium, on the PaddleOCR
// direction classifier: the channels search ("smaller") at floor 0.95 with few samples and levels must fill the
// sensitivity map (one row per channel group the package finds, every cell a score in [0, 1]), draw
// the verified plans, choose a plan whose verified fidelity meets the floor, and download a model with
// fewer parameters (it parses and runs in onnxruntime-node) and its recipe. Cancel must stop a run,
// and the card must then run a search to the end.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import ort from 'onnxruntime-node';
import { OnnxModel, loadOnnx, findChannelGroups, makeInputSet, makeOrtRunner, runSet, compareSets } from 'sparsekit-wasm/onnx';
import { CLS, tmpDir, startPlayground } from './helpers.mjs';

let playground;

before(async () => {
  playground = await startPlayground();
});

after(async () => {
  await playground?.stop();
});

const params = (m) => m.weights.reduce((a, w) => a + w.numel, 0);

async function settings(page, { floor, samples, levels, steps }) {
  await page.getByTestId('goal-kind').selectOption('smaller');
  await page.getByTestId('goal-floor').fill(String(floor));
  await page.getByTestId('goal-samples').fill(String(samples));
  await page.getByTestId('goal-levels').fill(levels);
  await page.getByTestId('goal-steps').fill(String(steps));
}

const finished = (page) => page.waitForFunction(() => {
  const s = document.getElementById('goal-status').textContent;
  return s === 'done' || s === 'no plan met the floor' || document.querySelector('[data-testid="error"]');
}, null, { timeout: 300_000 });

test('goal card on cls: channels search to floor 0.95, map, curve, plan at or above the floor, smaller download and recipe', async (t) => {
  const { context, page, problems } = await playground.openPage('?model=none');
  await page.getByTestId('model-file').setInputFiles(CLS);
  await page.getByTestId('goal-run').waitFor({ state: 'visible', timeout: 120_000 });
  const t0 = Date.now();
  await settings(page, { floor: 0.95, samples: 6, levels: '0.25, 0.5', steps: 4 });
  await page.getByTestId('goal-run').click();
  await finished(page);
  const seconds = (Date.now() - t0) / 1000;
  assert.equal(await page.getByTestId('error').count(), 0, await page.locator('#error-slot').textContent());
  assert.equal(await page.getByTestId('goal-status').textContent(), 'done', 'a plan met the floor');

  // The map: one row per prunable channel group the package finds, two levels each, scores in [0, 1].
  const orig = await loadOnnx(fs.readFileSync(CLS));
  const groups = findChannelGroups(orig).groups.filter((g) => g.prunable && g.producers.length);
  assert.equal(await page.locator('#goal-map tbody tr').count(), groups.length, 'one row per prunable group');
  const cells = await page.locator('#goal-map td[data-testid^="goal-cell-"]').evaluateAll((els) => els.map((e) => Number(e.dataset.fidelity)));
  assert.equal(cells.length, groups.length * 2, 'groups × levels cells');
  assert.ok(cells.every((f) => f >= 0 && f <= 1), `cell scores in [0, 1]: ${cells}`);
  assert.ok(cells.some((f) => f < 1), 'some cell loses fidelity (the map is not flat)');
  const chosen = await page.locator('#goal-map td[data-testid^="goal-chosen-"]').allTextContents();
  assert.ok(chosen.some((c) => /channels$/.test(c)), `the map marks the groups the plan reduces: ${chosen}`);

  // The curve: one point per distinct verified plan; the chosen plan's verified fidelity meets the floor.
  assert.ok(await page.locator('#goal-curve circle').count() >= 1, 'verified plans drawn');
  const fid = Number(await page.getByTestId('goal-fidelity').textContent());
  assert.ok(fid >= 0.95 && fid <= 1, `verified fidelity ${fid} >= floor 0.95`);
  const summary = page.getByTestId('goal-summary');
  const pBefore = Number(await summary.getAttribute('data-params-before'));
  const pAfter = Number(await summary.getAttribute('data-params-after'));
  assert.equal(pBefore, params(orig));
  assert.ok(pAfter < pBefore, `parameters ${pBefore} -> ${pAfter}`);

  // Downloads: the model (fewer parameters, as reported; runs in onnxruntime-node) and its recipe.
  const dir = tmpDir('sk-goal-');
  const file = path.join(dir, 'cls.goal.onnx');
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByTestId('goal-export').click()]);
  await dl.saveAs(file);
  const out = await loadOnnx(fs.readFileSync(file));
  assert.equal(params(out), pAfter, 'the download holds the reported parameter count');
  assert.ok(params(out) < params(orig), 'the download holds fewer parameters');
  const [rdl] = await Promise.all([page.waitForEvent('download'), page.getByTestId('goal-recipe').click()]);
  const recipeFile = path.join(dir, 'cls.recipe.json');
  await rdl.saveAs(recipeFile);
  const recipe = JSON.parse(fs.readFileSync(recipeFile, 'utf8'));
  assert.equal(recipe.sparsekit, 'recipe/1');
  assert.ok(Object.keys(recipe.layers).length >= 1, 'the recipe names per-group settings');
  assert.equal(recipe.meta.minFidelity, 0.95);
  assert.ok(Math.abs(recipe.meta.fidelity - fid) < 1e-3, 'the recipe records the verified fidelity');
  // Independent check in Node: the same held-out samples, onnxruntime-node.
  const runner = makeOrtRunner(ort);
  const samples = makeInputSet(OnnxModel.parse(fs.readFileSync(CLS)), { count: 6, set: 'heldOut' });
  const node = compareSets(await runSet(runner, fs.readFileSync(CLS), samples), await runSet(runner, fs.readFileSync(file), samples));
  t.diagnostic(`search ${seconds.toFixed(1)} s; ${groups.length} groups; params ${pBefore} -> ${pAfter}; fidelity page ${fid}, onnxruntime-node ${node.fidelity.score.toFixed(4)}; plans ${await page.locator('#goal-curve circle').count()}`);
  assert.deepEqual(problems, []);
  await context.close();
});

test('goal card: Cancel stops a search, the card then runs one to the end', async () => {
  const { context, page, problems } = await playground.openPage('?model=none');
  await page.getByTestId('model-file').setInputFiles(CLS);
  await page.getByTestId('goal-run').waitFor({ state: 'visible', timeout: 120_000 });
  await settings(page, { floor: 0.99, samples: 8, levels: '0.125, 0.25, 0.375, 0.5', steps: 8 });
  await page.getByTestId('goal-run').click();
  await page.waitForFunction(() => /^sensitivity/.test(document.getElementById('goal-status').textContent), null, { timeout: 120_000 });
  assert.ok(await page.getByTestId('goal-cancel').isEnabled());
  await page.getByTestId('goal-cancel').click();
  await page.waitForFunction(() => document.getElementById('goal-status').textContent === 'cancelled', null, { timeout: 60_000 });
  assert.equal(await page.getByTestId('error').count(), 0, 'a cancel is not an error');
  assert.ok(await page.getByTestId('goal-run').isEnabled(), 'Run is available again');
  assert.ok(await page.getByTestId('goal-cancel').isDisabled());
  assert.ok(await page.getByTestId('goal-export').isHidden(), 'no download from a cancelled run');

  await settings(page, { floor: 0.9, samples: 2, levels: '0.5', steps: 2 });
  await page.getByTestId('goal-run').click();
  await finished(page);
  assert.equal(await page.getByTestId('error').count(), 0, await page.locator('#error-slot').textContent());
  assert.ok(['plan', 'none'].includes(await page.getByTestId('goal-summary').getAttribute('data-outcome')), 'the next search finished');
  assert.ok(await page.locator('#goal-map td[data-testid^="goal-cell-"]').count() >= 1);
  assert.deepEqual(problems, []);
  await context.close();
});

/** An RGB PNG of w×h: dark strokes on white (a text-line-like image), written with zlib. */
function pngOf(w, h, seed) {
  const rows = Buffer.alloc(h * (1 + 3 * w), 255);
  for (let y = 0; y < h; y++) {
    rows[y * (1 + 3 * w)] = 0;
    for (let x = 0; x < w; x++) {
      const ink = ((x * 7 + seed * 13) % 23 < 3 && y > h / 4 && y < (3 * h) / 4) || ((y + seed) % 17 === 0 && x % 29 < 20);
      if (ink) rows.fill(30, y * (1 + 3 * w) + 1 + 3 * x, y * (1 + 3 * w) + 4 + 3 * x);
    }
  }
  const chunk = (type, data) => {
    const len = Buffer.alloc(4); len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4); crc.writeUInt32BE(zlib.crc32(td));
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0); ihdr.writeUInt32BE(h, 4); ihdr[8] = 8; ihdr[9] = 2;
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

test('goal card: the fidelity measured on the user\'s own images (no generated samples), said in the result', async () => {
  const { context, page, problems } = await playground.openPage('?model=none');
  await page.getByTestId('model-file').setInputFiles(CLS);
  await page.getByTestId('goal-run').waitFor({ state: 'visible', timeout: 120_000 });
  await settings(page, { floor: 0.9, samples: 0, levels: '0.5', steps: 2 });
  await page.getByTestId('goal-images').setInputFiles([0, 1, 2].map((k) => ({ name: `line-${k}.png`, mimeType: 'image/png', buffer: pngOf(160, 40, k) })));
  await page.getByTestId('goal-run').click();
  await finished(page);
  assert.equal(await page.getByTestId('error').count(), 0, await page.locator('#error-slot').textContent());
  assert.ok(['plan', 'none'].includes(await page.getByTestId('goal-summary').getAttribute('data-outcome')));
  assert.equal(await page.getByTestId('goal-summary').getAttribute('data-images'), '3', 'measured on the 3 images');
  assert.equal(await page.getByTestId('goal-summary').getAttribute('data-generated'), '0', 'and no generated sample');
  if (await page.getByTestId('goal-summary').getAttribute('data-outcome') === 'plan') {
    assert.match(await page.getByTestId('goal-summary').textContent(), /on 3 of your images/);
  }
  assert.ok(await page.locator('#goal-map td[data-testid^="goal-cell-"]').count() >= 1, 'the sensitivity map was measured on the images');
  assert.deepEqual(problems, []);
  await context.close();
});
