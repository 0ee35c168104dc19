// One job, three faces (issue 36, Targets): the same job run from the CLI (`sparsekit-wasm prune`),
// the module (runJob in Node) and the playground's job card (runJob in a worker, onnxruntime-web)
// writes byte-identical models: N:M (alone and then int8), channel removal and a searched plan on a
// committed model (tests/data/models/yolov8-style.onnx) with the same generated held-out samples
// (makeInputSet's held-out seeds, which the CLI's `--eval synthetic` and the page's held-out count
// both draw), Wanda calibrated on text then int4 with 3-bit tables for a committed language model
// with its tokenizer.json, and the per-layer table's settings (a recipe: `prune --recipe` on the file
// the page downloads).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import ort from 'onnxruntime-node';
import { OnnxModel, runJob, makeInputSet, textSamples, dequantizeModel } from 'sparsekit-wasm/onnx';
import { ROOT, tmpDir, startPlayground } from './helpers.mjs';
import { CLI } from '../onnx/build.mjs';

const MODEL = path.join(ROOT, 'tests/data/models/yolov8-style.onnx');
const HELD_OUT = 4;
let playground;
before(async () => { playground = await startPlayground(); });
after(async () => { await playground?.stop(); });

/** The same job on each face: the card's fields, the CLI's flags, the module's PruneJob. */
const JOBS = [
  {
    name: 'N:M 2:4', page: { goal: 'nm', floor: null, nm: '2:4' }, cli: ['--nm', '2:4'],
    module: () => ({ mode: { kind: 'nm', nm: [2, 4] } }),
  },
  {
    name: 'channels 30%', page: { goal: 'smaller', floor: null, amount: '30' }, cli: ['--channels', '0.3'],
    module: () => ({ mode: { kind: 'channels', fraction: 0.3 } }),
  },
  {
    name: 'N:M 2:4 then int8', page: { goal: 'nm', floor: null, nm: '2:4', quantize: 'int8' }, cli: ['--nm', '2:4', '--quantize', 'int8'],
    module: () => ({ mode: { kind: 'nm', nm: [2, 4] }, quantize: { scheme: 'int8' } }),
  },
  {
    // whole residual blocks ranked by influence on the generated calibration samples (the card's default count of them)
    name: 'one residual block (layers:1)', page: { goal: 'layers', floor: null, amount: '1' }, cli: ['--channels', 'layers:1', '--calib', 'synthetic', '--calib-count', '16'],
    module: (m) => ({ mode: { kind: 'layers', count: 1 }, calibration: { samples: makeInputSet(m, { count: 16, set: 'calibration' }) } }),
    check: async (page) => assert.match(await page.getByTestId('goal-blocks').textContent(), /^1 of 2$/),
  },
  {
    name: 'residual blocks to floor 0.5 (layers:auto)', page: { goal: 'layers', floor: '0.5' },
    cli: ['--channels', 'layers:auto', '--min-fidelity', '0.5', '--calib', 'synthetic', '--calib-count', '16', '--eval', 'synthetic', '--eval-count', String(HELD_OUT)],
    module: (m) => ({
      mode: { kind: 'search', target: 'layers', minFidelity: 0.5 },
      calibration: { samples: makeInputSet(m, { count: 16, set: 'calibration' }) }, eval: { samples: makeInputSet(m, { count: HELD_OUT, set: 'heldOut' }) },
    }),
    check: async (page) => assert.match(await page.getByTestId('goal-blocks').textContent(), /^[12] of 2$/),
  },
  {
    name: 'searched plan (channels to floor 0.9)', page: { goal: 'smaller', floor: '0.9', levels: '0.25, 0.5' },
    cli: ['--channels', 'auto', '--min-fidelity', '0.9', '--levels', '0.25,0.5', '--eval', 'synthetic', '--eval-count', String(HELD_OUT)],
    module: (m) => ({ mode: { kind: 'search', target: 'channels', minFidelity: 0.9, levels: [0.25, 0.5] }, eval: { samples: makeInputSet(m, { count: HELD_OUT, set: 'heldOut' }) } }),
  },
];

/** Clicks the page's `testid` button and saves the download it starts as `file`. */
async function download(page, testid, file) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByTestId(testid).click()]);
  await dl.saveAs(file);
  return file;
}

function firstDifference(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

function assertSameBytes(a, b, what) {
  const at = firstDifference(a, b);
  assert.equal(at, -1, `${what}: ${a.length} vs ${b.length} bytes, first difference at byte ${at}`);
}

async function viaPage(job, dir) {
  const { context, page, problems } = await playground.openPage('?model=none');
  await page.getByTestId('model-file').setInputFiles(MODEL);
  await page.getByTestId('goal-run').waitFor({ state: 'visible', timeout: 120_000 });
  await page.getByTestId('goal-kind').selectOption(job.page.goal);
  await page.getByTestId('goal-use-floor').setChecked(job.page.floor !== null);
  if (job.page.floor !== null) {
    await page.getByTestId('goal-floor').fill(job.page.floor);
    if (job.page.levels !== undefined) await page.getByTestId('goal-levels').fill(job.page.levels);
  }
  if (job.page.amount !== undefined) await page.getByTestId('goal-amount').fill(job.page.amount);
  if (job.page.nm !== undefined) await page.getByTestId('goal-nm').fill(job.page.nm);
  if (job.page.quantize !== undefined) await page.getByTestId('job-quantize').selectOption(job.page.quantize);
  await page.getByTestId('goal-samples').fill(String(HELD_OUT));
  await page.getByTestId('goal-run').click();
  await page.waitForFunction(() => {
    const s = document.getElementById('goal-status').textContent;
    return s === 'done' || s === 'no plan met the floor' || document.querySelector('[data-testid="error"]');
  }, null, { timeout: 600_000 });
  assert.equal(await page.getByTestId('error').count(), 0, await page.locator('#error-slot').textContent());
  assert.equal(await page.getByTestId('goal-status').textContent(), 'done');
  await job.check?.(page);
  const file = await download(page, 'goal-export', path.join(dir, 'page.onnx'));
  // the weights view shows the job's model: one bar per prunable weight
  assert.equal(await page.locator('#results-card').isVisible(), true, 'the weights of the result are shown');
  assert.deepEqual(problems, []);
  await context.close();
  return fs.readFileSync(file);
}

for (const job of JOBS) {
  test(`one job, three faces: ${job.name} writes the same bytes from the CLI, the module and the playground`, async (t) => {
    const dir = tmpDir('sk-job-identity-');
    const original = fs.readFileSync(MODEL);

    const out = path.join(dir, 'cli.onnx');
    const r = spawnSync(process.execPath, [CLI, 'prune', MODEL, ...job.cli, '-o', out, '-q'], { encoding: 'utf8' });
    assert.equal(r.status, 0, `the CLI failed:\n${r.stderr}`);
    const cli = fs.readFileSync(out);

    const model = OnnxModel.parse(original);
    const res = await runJob(model, job.module(OnnxModel.parse(original)), { ort });
    const mod = res.model.encode();

    const t0 = Date.now();
    const page = await viaPage(job, dir);
    t.diagnostic(`${job.name}: ${cli.length} bytes (input ${original.length}); page ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    // The job did something: the model written is not the input (a vacuous job would match everywhere).
    assert.notEqual(firstDifference(cli, original), -1, 'the job changed the model');
    assertSameBytes(mod, cli, 'module vs CLI');
    assertSameBytes(page, cli, 'playground vs CLI');
  });
}

// Text for a language model: the page's pasted text and tokenizer.json against the CLI's --calib
// .txt / --tokenizer and the module's textSamples. Wanda reads the calibration windows (the first
// ones of the text on every face); the held-out windows measure the result and change no weight.
const LM = path.join(ROOT, 'tests/data/models/smollm2-tiny.onnx');
const TOKENIZER = path.join(ROOT, 'tests/data/tokenizers/smollm2-135m.json');

test('one job, three faces: Wanda 50% calibrated on text, then int4 with 3-bit tables, writes the same bytes from the CLI, the module and the playground', async (t) => {
  const dir = tmpDir('sk-job-identity-text-');
  const lines = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/data/text/lines.json'), 'utf8'));
  const text = lines.slice(0, 200).join('\n');
  const calib = path.join(dir, 'calib.txt');
  fs.writeFileSync(calib, text);
  const original = fs.readFileSync(LM);

  const out = path.join(dir, 'cli.onnx');
  const r = spawnSync(process.execPath, [CLI, 'prune', LM, '--sparsity', '0.5', '--method', 'wanda', '--calib', calib, '--tokenizer', TOKENIZER, '--seq-len', '32', '--calib-count', '4', '--quantize', 'int4,embeddings=int3', '-o', out, '-q'], { encoding: 'utf8' });
  assert.equal(r.status, 0, `the CLI failed:\n${r.stderr}`);
  const cli = fs.readFileSync(out);

  const model = OnnxModel.parse(original);
  const samples = textSamples({ text, format: 'txt', tokenizer: JSON.parse(fs.readFileSync(TOKENIZER, 'utf8')), seqLen: 32, inputs: model.inputs, outputs: model.outputs }).samples;
  const mod = (await runJob(model, { mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'wanda', calibration: { samples: samples.slice(0, 4) }, quantize: { scheme: 'int4', embeddings: 'int3' } }, { ort })).model.encode();

  const { context, page, problems } = await playground.openPage('?model=none');
  await page.getByTestId('model-file').setInputFiles(LM);
  await page.getByTestId('goal-run').waitFor({ state: 'visible', timeout: 120_000 });
  await page.getByTestId('goal-kind').selectOption('sparsity');
  await page.getByTestId('goal-use-floor').setChecked(false);
  await page.getByTestId('goal-amount').fill('50');
  await page.getByTestId('job-method').selectOption('wanda');
  await page.getByTestId('job-calib').fill('4');
  await page.getByTestId('goal-samples').fill('4');
  await page.getByTestId('job-quantize').selectOption('int4');
  await page.getByTestId('job-tables').selectOption('int3');
  await page.getByTestId('job-text').fill(text);
  await page.getByTestId('job-tokenizer').setInputFiles(TOKENIZER);
  await page.getByTestId('job-seq-len').fill('32');
  await page.getByTestId('goal-run').click();
  await page.waitForFunction(() => {
    const s = document.getElementById('goal-status').textContent;
    return s === 'done' || document.querySelector('[data-testid="error"]');
  }, null, { timeout: 600_000 });
  assert.equal(await page.getByTestId('error').count(), 0, await page.locator('#error-slot').textContent());
  const summary = page.getByTestId('goal-summary');
  assert.equal(await summary.getAttribute('data-text'), '8', '4 calibration + 4 held-out text samples');
  // judged as a language model on the held-out windows
  assert.ok(await summary.locator('.fidelity-outputs li[data-kind="language-model"]').count() >= 1, await summary.textContent());
  const pageBytes = fs.readFileSync(await download(page, 'goal-export', path.join(dir, 'page.onnx')));
  assert.deepEqual(problems, []);
  await context.close();
  t.diagnostic(`text job: ${cli.length} bytes`);

  assert.notEqual(firstDifference(cli, original), -1, 'the job changed the model');
  // the token table on 8 levels (its codes in -4..3), as each face asked
  const tables = dequantizeModel(OnnxModel.parse(cli)).layers.filter((l) => l.form.endsWith('-gather')).map((l) => l.form);
  assert.deepEqual(tables, ['int3-gather']);
  assertSameBytes(mod, cli, 'module vs CLI');
  assertSameBytes(pageBytes, cli, 'playground vs CLI');
});

// The per-layer table: its rows are one recipe, which the page runs as a job and offers as a file;
// the CLI's --recipe and the module's recipe mode on that file write the same bytes as the page.
const TABLES = [
  {
    name: 'N:M, dense, blocks per row and per layer',
    async set(page) {
      await page.selectOption('#bulk-op', '*');
      await page.selectOption('#bulk-criterion', 'hard');
      await page.fill('#bulk-block', '2x2');
      await page.fill('#bulk-scope', 'all');
      await page.fill('#bulk-sparsity', '50');
      await page.click('#bulk-apply');
      const row = (i) => page.locator('#layers tbody tr').nth(i);
      await row(1).locator('[data-field="criterion"]').selectOption('nm');
      await row(1).locator('[data-field="nm"]').fill('2:4');
      await row(1).locator('[data-field="nm"]').dispatchEvent('change');
      await row(2).locator('[data-field="criterion"]').selectOption('none');
      await row(3).locator('[data-field="scope"]').fill('1xall');
      await row(3).locator('[data-field="scope"]').dispatchEvent('change');
      await row(3).locator('[data-field="sparsity"]').fill('75');
      await row(3).locator('[data-field="sparsity"]').dispatchEvent('change');
    },
    check(settings) {
      const v = Object.values(settings);
      assert.deepEqual(v[1], { nm: '2:4' });
      assert.equal(v[2], 'dense');
      assert.deepEqual(v[3], { sparsity: 0.75, block: '2x2', scope: 'row' });
      assert.deepEqual(v[0], { sparsity: 0.5, block: '2x2' });
    },
  },
  {
    name: 'blocks ranked model-wide (global scope)',
    async set(page) {
      await page.selectOption('#bulk-op', '*');
      await page.selectOption('#bulk-criterion', 'hard');
      await page.fill('#bulk-block', '4x1');
      await page.click('#bulk-apply');
      await page.check('#global-enabled');
      await page.fill('#global-keep', '40');
    },
    check(settings) {
      for (const s of Object.values(settings)) assert.deepEqual(s, { sparsity: 0.6, block: '4x1', scope: 'global' });
    },
  },
];

/** After a run without error: the model the page's `exportId` button saves and the recipe it exports; closes the page. */
async function pageModelAndRecipe({ context, page, problems }, dir, exportId) {
  assert.equal(await page.getByTestId('error').count(), 0, await page.locator('#error-slot').textContent());
  const save = (testid, name) => download(page, testid, path.join(dir, name));
  const pageBytes = fs.readFileSync(await save(exportId, 'page.onnx'));
  const recipeFile = await save('export-recipe', 'recipe.json');
  assert.deepEqual(problems, []);
  await context.close();
  return { pageBytes, recipeFile, recipe: JSON.parse(fs.readFileSync(recipeFile, 'utf8')) };
}

/**
 * The page's bytes for a recipe (the table's, saved as `recipeFile`) against `prune --recipe FILE
 * [cliExtra]` and the module's recipe job [jobExtra]: all three the same bytes, and not the original's.
 */
async function sameAsRecipeFaces(t, { dir, pageBytes, recipeFile, recipe, cliExtra = [], jobExtra = {}, label }) {
  const original = fs.readFileSync(MODEL);
  const out = path.join(dir, 'cli.onnx');
  const r = spawnSync(process.execPath, [CLI, 'prune', MODEL, '--recipe', recipeFile, ...cliExtra, '-o', out, '-q'], { encoding: 'utf8' });
  assert.equal(r.status, 0, `the CLI failed:\n${r.stderr}`);
  const cli = fs.readFileSync(out);
  const mod = (await runJob(OnnxModel.parse(original), { mode: { kind: 'recipe', recipe }, ...jobExtra }, { ort })).model.encode();
  t.diagnostic(`${label}: ${cli.length} bytes`);
  assert.notEqual(firstDifference(cli, original), -1, 'the job changed the model');
  assertSameBytes(mod, cli, 'module vs CLI');
  assertSameBytes(pageBytes, cli, 'playground vs CLI');
}

for (const table of TABLES) {
  test(`one job, three faces: the per-layer table (${table.name}) writes the same bytes as prune --recipe and the module`, async (t) => {
    const dir = tmpDir('sk-job-identity-recipe-');
    const original = fs.readFileSync(MODEL);
    const { context, page, problems } = await playground.openPage('?model=none');
    await page.getByTestId('model-file').setInputFiles(MODEL);
    await page.locator('#more > summary').click();
    await page.waitForSelector('#layers tbody tr');
    await table.set(page);
    await page.getByTestId('run').click();
    await page.getByTestId('total-sparsity').waitFor({ timeout: 300_000 });
    const { pageBytes, recipeFile, recipe } = await pageModelAndRecipe({ context, page, problems }, dir, 'export');
    assert.equal(Object.keys(recipe.layers).length, OnnxModel.parse(original).prunable().length, 'one entry per row');
    table.check(recipe.layers);

    await sameAsRecipeFaces(t, { dir, pageBytes, recipeFile, recipe, label: table.name });
  });
}

// The job card's "per layer" goal: the table's recipe composed with the card's other settings
// (here int8 after pruning), as `prune --recipe FILE --quantize int8` composes them.
test('one job, three faces: the card\'s per-layer goal (the table\'s recipe, then int8) writes the same bytes as prune --recipe --quantize int8 and the module', async (t) => {
  const dir = tmpDir('sk-job-identity-recipe-card-');
  const { context, page, problems } = await playground.openPage('?model=none');
  await page.getByTestId('model-file').setInputFiles(MODEL);
  await page.getByTestId('goal-run').waitFor({ state: 'visible', timeout: 120_000 });
  await page.locator('#more > summary').click();
  await page.waitForSelector('#layers tbody tr');
  await TABLES[0].set(page);
  await page.getByTestId('goal-kind').selectOption('recipe');
  assert.equal(await page.getByTestId('goal-use-floor').isDisabled(), true, 'the table is the plan: no floor to search');
  await page.getByTestId('job-quantize').selectOption('int8');
  await page.getByTestId('goal-samples').fill(String(HELD_OUT));
  await page.getByTestId('goal-run').click();
  await page.waitForFunction(() => {
    const s = document.getElementById('goal-status').textContent;
    return s === 'done' || document.querySelector('[data-testid="error"]');
  }, null, { timeout: 600_000 });
  const { pageBytes, recipeFile, recipe } = await pageModelAndRecipe({ context, page, problems }, dir, 'goal-export');
  TABLES[0].check(recipe.layers);

  await sameAsRecipeFaces(t, { dir, pageBytes, recipeFile, recipe, cliExtra: ['--quantize', 'int8'], jobExtra: { quantize: { scheme: 'int8' } }, label: 'per-layer goal then int8' });
});
