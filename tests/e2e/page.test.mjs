// The playground as a whole, in headless Chromium: every worker speaks the one protocol (an error
// sent through each arrives with its name, code and reason), the page leads with the job (model →
// goal → samples → recover → result, the per-layer controls folded), the page fits a 1400-px-wide window, and
// a YOLO-like detector with dynamic height and width gets a test input that runs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { OnnxModel, resolveInputShape, JOB_DEFAULTS } from 'sparsekit-wasm/onnx';
import { DET, ROOT, makeYoloLikeModel, startPlayground, tmpDir, openPerLayer } from './helpers.mjs';

const YOLO_STYLE = path.join(ROOT, 'tests/data/models/yolov8-style.onnx');

let playground;
before(async () => { playground = await startPlayground(); });
after(async () => { await playground?.stop(); });

const NOT_ONNX = 'These are my notes, not a neural network.\n'.repeat(8);

/** What the package throws in Node for the same input: the fields the page must receive. */
function thrown(fn) {
  try { fn(); } catch (e) { return { name: e.name, code: e.code ?? null, reason: e.reason ?? null }; }
  throw new Error('expected a throw');
}

test('every worker sends its errors through the one protocol, code (and reason) kept', async () => {
  const { context, page, problems } = await playground.openPage('?model=none&test-surface');
  await page.waitForFunction(() => !!window.sparsekitPlayground);
  const send = (worker, op, payload) => page.evaluate(async ([w, o, p]) => {
    // Payloads with typed arrays are built here, in the page (they do not cross evaluate() as such).
    const text = new TextEncoder().encode(p.notOnnx ?? '');
    const build = {
      badModel: () => ({ a: { model: text, externalData: [] }, b: { model: text, externalData: [] }, inputs: [{ name: 'x', elemType: 1, shape: [1, 4] }], runs: 1, warmup: 1 }),
      badShape: () => ({ a: { model: text, externalData: [] }, b: { model: text, externalData: [] }, inputs: [{ name: 'x', elemType: 1, shape: [1, 0] }], runs: 1, warmup: 1 }),
      calib: () => ({ bytes: text, criterion: 'sparsegpt', dense: {}, target: { sparsity: 0.5 }, pages: 1, heldOut: 1, images: [], sequential: true, percDamp: 0.01, normalization: 'symmetric' }),
      channels: () => ({ bytes: text, fraction: 0.3, scope: 'layer', roundTo: 8 }),
      job: () => ({
        bytes: text, goal: 'nm', floor: null, amount: 0, nm: '2:4', levels: [], maxSteps: 8, method: 'magnitude', quantize: null,
        samples: { calibration: 0, heldOut: 0, images: [], text: null }, recover: null,
      }),
      none: () => ({}),
    };
    return window.sparsekitPlayground.request(w, o, build[p.kind]());
  }, [worker, op, payload]);

  const notOnnx = thrown(() => OnnxModel.parse(new TextEncoder().encode(NOT_ONNX)));
  assert.ok(notOnnx.code && notOnnx.reason, `the package's errors carry codes: ${JSON.stringify(notOnnx)}`);

  const cases = [
    ['eval', 'bench', { kind: 'badShape', notOnnx: NOT_ONNX }, { name: 'PlaygroundError', code: 'invalid_input_shape', reason: null }],
    ['eval', 'bench', { kind: 'badModel', notOnnx: NOT_ONNX }, { name: 'PlaygroundError', code: 'ort_session_failed', reason: null }],
    ['calib', 'run', { kind: 'calib', notOnnx: NOT_ONNX }, notOnnx],
    ['calib', 'compare', { kind: 'calib', notOnnx: NOT_ONNX }, notOnnx],
    ['channels', 'groups', { kind: 'channels', notOnnx: NOT_ONNX }, notOnnx],
    ['channels', 'remove', { kind: 'channels', notOnnx: NOT_ONNX }, notOnnx],
    ['job', 'run', { kind: 'job', notOnnx: NOT_ONNX }, notOnnx],
    ...['eval', 'calib', 'channels', 'job'].map((w) => [w, 'no-such-op', { kind: 'none' }, { name: 'PlaygroundError', code: 'unknown_operation', reason: null }]),
  ];
  for (const [worker, op, payload, want] of cases) {
    const got = await send(worker, op, payload);
    assert.equal(got.ok, false, `${worker}.${op} fails`);
    const { name, code, reason } = got.error;
    assert.deepEqual({ name, code, reason }, want, `${worker}.${op}: ${got.error.message}`);
    assert.ok(got.error.message.length > 0);
  }
  assert.deepEqual(problems, []);
  await context.close();
});

test('the page leads with the job: model, goal, samples, recover, result in that order, the per-layer controls folded', async () => {
  const { context, page, problems } = await playground.openPage('?model=none');
  await page.getByTestId('model-file').setInputFiles(YOLO_STYLE);
  await page.getByTestId('goal-run').waitFor({ state: 'visible', timeout: 120_000 });
  const headings = await page.locator('main h2:visible').allTextContents();
  const steps = ['1 · Model', '2 · Goal', '3 · Samples', '4 · Recover', '5 · Result'];
  assert.deepEqual(headings.slice(0, 5).map((h, i) => h.startsWith(steps[i])), steps.map(() => true), `the steps in order: ${headings.join(' | ')}`);
  assert.equal(await page.locator('#more').evaluate((d) => d.open), false, 'the per-layer controls start folded');
  assert.equal(await page.locator('#config-card').isVisible(), false);
  await openPerLayer(page);
  assert.equal(await page.locator('#config-card').isVisible(), true, 'one click away');
  // the job's defaults are the package's (JOB_DEFAULTS), as the CLI's help prints them
  assert.equal(await page.getByTestId('job-calib').inputValue(), String(JOB_DEFAULTS.calibrationCount));
  assert.equal(await page.getByTestId('goal-samples').inputValue(), String(JOB_DEFAULTS.generatedEvalCount));
  assert.equal(await page.getByTestId('goal-steps').inputValue(), String(JOB_DEFAULTS.maxSteps));
  assert.deepEqual(problems, []);
  await context.close();
});

test('a setting the job refuses is named by the card\'s field (the package\'s JobError, its option read back), and nothing is written', async () => {
  const { context, page, problems } = await playground.openPage('?model=none');
  await page.getByTestId('model-file').setInputFiles(YOLO_STYLE);
  await page.getByTestId('goal-run').waitFor({ state: 'visible', timeout: 120_000 });
  let last = null;
  const failure = async () => {
    await page.getByTestId('goal-run').click();
    // a new run clears the last error: wait for this run's
    await page.waitForFunction((prev) => { const e = document.querySelector('[data-testid="error"]'); return e && e.textContent !== prev; }, last, { timeout: 120_000 });
    const text = last = await page.getByTestId('error').textContent();
    assert.ok(await page.getByTestId('goal-export').isHidden(), 'nothing to download');
    return text;
  };
  await page.getByTestId('goal-kind').selectOption('nm');
  await page.getByTestId('goal-use-floor').setChecked(false);
  await page.getByTestId('goal-nm').fill('5:4');
  assert.match(await failure(), /^Error: N:M: must be N:M with 1 <= N <= M, e\.g\. 2:4 \(got 5:4\)$/);
  await page.getByTestId('goal-nm').fill('2:4');
  await page.getByTestId('job-quantize').selectOption('int4');
  await page.getByTestId('job-group').fill('20');
  assert.match(await failure(), /^Error: Group: must be a power of two >= 16 \(got 20\)$/);
  assert.deepEqual(problems, []);
  await context.close();
});

test('the page fits a 1400-px-wide window: no horizontal overflow, with a model loaded and pruned', async (t) => {
  const { context, page, problems } = await playground.openPage('?model=none');
  await openPerLayer(page);
  await page.getByTestId('model-file').setInputFiles(DET);
  await page.waitForSelector('#layers tbody tr');
  await page.waitForFunction(() => /channel groups/.test(document.getElementById('channels-status').textContent), null, { timeout: 120_000 });
  await page.getByTestId('run').click();
  await page.getByTestId('cosine').waitFor({ timeout: 180_000 });
  // The effect leads with the label-free fidelity of every output (the worst one's score), not one cosine.
  const fid = Number(await page.getByTestId('fidelity').textContent());
  assert.ok(fid >= 0 && fid <= 1, `fidelity ${fid}`);
  assert.ok((await page.locator('#effect .fidelity-outputs li[data-kind]').count()) >= 1, 'each output listed with its kind');
  const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  assert.ok(widths.scroll <= widths.client, `content ${widths.scroll} px wide in a ${widths.client} px window`);
  // The latency is a median over interleaved runs after a warm-up, and says so.
  const effect = page.locator('#effect');
  assert.equal(await effect.getAttribute('data-runs'), '5');
  assert.equal(await effect.getAttribute('data-warmup'), '1');
  assert.match(await effect.textContent(), /median of 5 runs, interleaved with the other model after 1 warm-up/);
  assert.match(await page.getByTestId('latency-original').textContent(), /^\d+(\.\d)? ms$/);
  t.diagnostic(`page ${widths.scroll} px in ${widths.client} px; det, default settings: latency original ${await page.getByTestId('latency-original').textContent()}, pruned ${await page.getByTestId('latency-pruned').textContent()} (median of 5 interleaved after 1 warm-up)`);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a YOLO-like detector with dynamic height and width gets a test input that runs, in Node and in the page', async () => {
  const bytes = makeYoloLikeModel();
  const model = OnnxModel.parse(bytes);
  const shape = resolveInputShape(model.inputs[0], model.outputs);
  assert.deepEqual(shape, [1, 3, 320, 320], 'multiples of 32 for a model with a rank-3 output');
  const session = await ort.InferenceSession.create(bytes);
  const run = (s) => session.run({ images: new ort.Tensor('float32', new Float32Array(s.reduce((a, b) => a * b, 1)).fill(0.5), s) });
  await assert.rejects(run([1, 3, 48, 192]), 'the old text-line size does not run on this model (the test can fail)');
  const out = await run(shape);
  assert.equal(out.output0.dims.length, 3);

  const file = path.join(tmpDir('sk-yolo-'), 'yolo-like.onnx');
  fs.writeFileSync(file, bytes);
  const { context, page, problems } = await playground.openPage('?model=none');
  await openPerLayer(page);
  await page.getByTestId('model-file').setInputFiles(file);
  await page.waitForSelector('#layers tbody tr');
  assert.equal(await page.getByTestId('input-shape').inputValue(), '1x3x320x320');
  assert.match(await page.getByTestId('input-note').textContent(), /height and width are dynamic.*multiples of 32/);
  await page.getByTestId('run').click();
  await page.getByTestId('cosine').waitFor({ timeout: 120_000 });
  assert.equal(await page.getByTestId('error').count(), 0, await page.locator('#error-slot').textContent());
  assert.equal(await page.locator('#effect').getAttribute('data-input'), '1x3x320x320');
  assert.deepEqual(problems, []);
  await context.close();
});

test('when the chosen size does not run, the page retries a square 320, then 640, and says so', async () => {
  // Seven stride-2 levels: the pyramid lines up only for sides that are multiples of 128, so the
  // chosen 320x320 fails in onnxruntime-web and 640x640 runs.
  const file = path.join(tmpDir('sk-yolo-'), 'yolo-deep.onnx');
  fs.writeFileSync(file, makeYoloLikeModel({ levels: 7 }));
  const { context, page, problems } = await playground.openPage('?model=none');
  await openPerLayer(page);
  await page.getByTestId('model-file').setInputFiles(file);
  await page.waitForSelector('#layers tbody tr');
  assert.equal(await page.getByTestId('input-shape').inputValue(), '1x3x320x320');
  await page.getByTestId('run').click();
  await page.getByTestId('cosine').waitFor({ timeout: 120_000 });
  assert.equal(await page.getByTestId('error').count(), 0, await page.locator('#error-slot').textContent());
  assert.equal(await page.locator('#effect').getAttribute('data-input'), '1x3x640x640');
  assert.equal(await page.getByTestId('input-shape').inputValue(), '1x3x640x640', 'the size that ran is written back');
  assert.match(await page.getByTestId('input-note').textContent(), /could not run 1×3×320×320; ran 1×3×640×640 instead/);
  // onnxruntime-web logs the failed 320x320 run itself (the page reports it in the note instead).
  assert.deepEqual(problems.filter((p) => !/ExecuteKernel\] Non-zero status code returned while running Concat node\. Name:'fpn'/.test(p)), []);
  await context.close();
});
