// End-to-end test of the playground's "remove channels" card in headless Chromium, on the PaddleOCR
// direction classifier: the groups listed must be those sparsekit-wasm/onnx finds in Node (members on
// hover); removing 30% per group must shrink the parameter count and the file; the exported model must
// parse, hold the parameter count the page reported, and run in onnxruntime-node with the original's
// output shapes, close to the page's cosine.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { OnnxModel, loadOnnx, findChannelGroups } from 'sparsekit-wasm/onnx';
import { CLS, ROOT, tmpDir, runModelOutputs, startPlayground, importWww, openPerLayer } from './helpers.mjs';

const { compareOutputs } = await importWww('model-input.ts');

let playground;

before(async () => {
  playground = await startPlayground();
});

after(async () => {
  await playground?.stop();
});

/** Outputs and their shapes on the page's deterministic input. */
const run = (file) => runModelOutputs(file, OnnxModel.parse(fs.readFileSync(file)));

/** A fresh page with `file` loaded, its channel groups listed. */
async function openWith(file) {
  const opened = await playground.openPage('?model=none');
  await openPerLayer(opened.page);
  await opened.page.getByTestId('model-file').setInputFiles(file);
  await opened.page.waitForFunction(() => /channel groups/.test(document.getElementById('channels-status').textContent), null, { timeout: 120_000 });
  return opened;
}

/** The card's removal with these fields filled (testid suffix -> value), run to its measured result without an error. */
async function removeOnPage(page, fields) {
  for (const [k, v] of Object.entries(fields)) {
    const el = page.getByTestId(`channels-${k}`);
    if (k === 'scope') await el.selectOption(v); else await el.fill(v);
  }
  await page.getByTestId('channels-run').click();
  await page.getByTestId('channels-cosine').waitFor({ timeout: 600_000 });
  assert.equal(await page.getByTestId('error').count(), 0, await page.locator('#error-slot').textContent());
}

/** The card's export, saved as `file`. */
async function exportTo(page, file) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByTestId('channels-export').click()]);
  await dl.saveAs(file);
  return file;
}

test('remove channels on cls: fewer parameters, a smaller file, an export that runs with the original output shapes', async (t) => {
  const { context, page, problems } = await openWith(CLS);

  const orig = await loadOnnx(fs.readFileSync(CLS));
  const expected = findChannelGroups(orig).groups;
  const rows = page.locator('#channels-groups tbody tr');
  assert.equal(await rows.count(), expected.length, 'one row per channel group');
  const prunable = expected.find((g) => g.prunable && g.members.length > 1);
  const hover = await page.locator(`#channels-groups tbody tr[data-group="${prunable.id}"]`).getAttribute('title');
  for (const m of prunable.members) assert.ok(hover.includes(m.tensor), `hover lists member ${m.tensor}`);

  await removeOnPage(page, { fraction: '30', scope: 'layer', runs: '3' });
  const summary = page.getByTestId('channels-summary');
  const pBefore = Number(await summary.getAttribute('data-params-before'));
  const pAfter = Number(await summary.getAttribute('data-params-after'));
  assert.ok(pAfter < pBefore * 0.9, `parameters ${pBefore} -> ${pAfter}`);
  assert.match(await page.getByTestId('channels-latency').textContent(), /^[\d.]+ → [\d.]+ ms$/);
  const pageCos = Number(await page.getByTestId('channels-cosine').textContent());
  assert.ok(pageCos > 0 && pageCos <= 1.00001, `page cosine ${pageCos}`);
  const pageFid = Number(await page.getByTestId('channels-fidelity').textContent());
  assert.ok(pageFid >= 0 && pageFid <= 1, `page fidelity ${pageFid}`);
  assert.ok((await summary.locator('.fidelity-outputs li').count()) >= 1, 'every output listed with its kind and score');

  const file = await exportTo(page, path.join(tmpDir('sk-channels-'), 'cls.channels.onnx'));
  assert.ok(fs.statSync(file).size < fs.statSync(CLS).size * 0.9, 'the exported file is smaller');
  const out = await loadOnnx(fs.readFileSync(file));
  assert.equal(out.weights.reduce((a, w) => a + w.numel, 0), pAfter, 'the export holds the reported parameter count');
  assert.equal(orig.weights.reduce((a, w) => a + w.numel, 0), pBefore);
  const a = await run(CLS), b = await run(file);
  assert.deepEqual(b.dims, a.dims, 'same output names and shapes');
  assert.ok(Object.values(b.data).every((v) => v.every(Number.isFinite)));
  const cos = compareOutputs(a.data, b.data).cosine;
  assert.ok(Math.abs(cos - pageCos) < 1e-3, `Node cosine ${cos} matches the page's ${pageCos}`);
  t.diagnostic(`params ${pBefore} -> ${pAfter}; file ${fs.statSync(CLS).size} -> ${fs.statSync(file).size} B; latency ${await page.getByTestId('channels-latency').textContent()}; cosine page ${pageCos}, node ${cos.toFixed(5)}`);
  assert.deepEqual(problems, []);
  await context.close();
});

test('remove channels on a grouped-query decoder, query heads within KV groups: the K/V projections kept, the export runs', async () => {
  const GQA = path.join(ROOT, 'tests/data/models/smollm2-tiny-gqa.onnx');
  const { context, page, problems } = await openWith(GQA);
  const orig = await loadOnnx(fs.readFileSync(GQA));
  const expected = findChannelGroups(orig, 'query').groups;
  await page.getByTestId('channels-heads').selectOption('query');
  const rows = page.locator('#channels-groups tbody tr');
  await page.waitForFunction((n) => document.querySelectorAll('#channels-groups tbody tr').length === n, expected.length, { timeout: 60_000 });
  for (const g of expected.filter((x) => x.runs)) {
    assert.match(await page.locator(`#channels-groups tbody tr[data-group="${g.id}"]`).textContent(), /query heads of 2 KV groups/);
  }
  assert.equal(await rows.count(), expected.length);
  await removeOnPage(page, { fraction: '50', round: '1', runs: '1' });
  const file = await exportTo(page, path.join(tmpDir('sk-channels-'), 'gqa.channels.onnx'));
  const out = await loadOnnx(fs.readFileSync(file));
  const dims = (m, p) => m.weight(m.graph.node.find((n) => n.name === p).input[1]).dims.map(Number);
  for (const layer of [0, 1]) {
    const at = `/model/model/layers.${layer}/self_attn`;
    assert.deepEqual(dims(out, `${at}/q_proj/MatMul`), [16, 8], 'half of the query heads went');
    assert.deepEqual(dims(out, `${at}/k_proj/MatMul`), dims(orig, `${at}/k_proj/MatMul`), 'the K heads stayed');
  }
  const a = await run(GQA), b = await run(file);
  assert.deepEqual(b.dims, a.dims, 'same output names and shapes');
  assert.deepEqual(problems, []);
  await context.close();
});
