// The OCR task metrics of bench/ocr/ocr-quality.mjs: the metric code on hand-made outputs, the original
// PaddleOCR models reading rendered text (Chromium, DejaVu) at the thresholds the bench relies on, a
// 2:4 magnitude-pruned recogniser measurably worse, and the rendered calibration directories read by
// readCalibrationDir (what `--calib DIR` does) at the generated inputs' shapes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { build } from './build.mjs';
import { DET, CLS, REC, tmpDir } from '../e2e/helpers.mjs';
import { renderText, openBrowser, loadDictionary } from '../../kit/ocr-text.mjs';
import { readTextSet, textSamples, evaluateOcr, ctcDecode, editDistance, detBoxes, matchBoxes, recMetrics } from '../../kit/ocr-metrics.mjs';

build();
const { OnnxModel, makeOrtRunner, pruneNm, readCalibrationDir, makeInputSet } = await import('sparsekit-wasm/onnx');
const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 });

test('dictionary: blank, the 6623 characters of ppocr_keys_v1.txt, space = the recogniser output width', async () => {
  const dict = loadDictionary();
  assert.equal(dict.length, 6625);
  assert.equal(dict[0], '<blank>');
  assert.equal(dict[6624], ' ');
  const rec = OnnxModel.parse(fs.readFileSync(REC));
  assert.equal(rec.outputs[0].dims.at(-1), 6625);
});

test('CTC greedy decode merges repeats, drops blanks, keeps a letter repeated across a blank', () => {
  const dict = loadDictionary();
  const C = dict.length, idx = (ch) => dict.indexOf(ch);
  const steps = [idx('a'), idx('a'), 0, idx('a'), idx('b'), 0, 0, C - 1, idx('7')];
  const probs = new Float32Array(steps.length * C);
  steps.forEach((c, t) => { probs[t * C + c] = 0.9; });
  assert.equal(ctcDecode(probs, C), 'aab 7');
  assert.throws(() => ctcDecode(new Float32Array(10), 5), /classes/);
  assert.equal(editDistance('kitten', 'sitting'), 3);
  assert.equal(editDistance('', 'abc'), 3);
  const set = { items: [{ text: 'ab' }, { text: 'cd' }] };
  const out = (s) => { const p = new Float32Array(s.length * C); [...s].forEach((ch, t) => { p[t * C + idx(ch)] = 1; }); return { o: p }; };
  const m = recMetrics(set, [out('ab'), out('cx')]);
  assert.deepEqual([m.cer, m.lineAcc], [0.25, 0.5]);
});

test('det boxes: components over the threshold, unclipped, matched one to one at IoU >= 0.5', () => {
  const h = 40, w = 100, prob = new Float32Array(h * w);
  for (let y = 10; y < 16; y++) for (let x = 10; x < 60; x++) prob[y * w + x] = 0.9;   // a line's shrunk kernel
  for (let y = 30; y < 32; y++) for (let x = 70; x < 72; x++) prob[y * w + x] = 0.9;   // a speck: too small
  for (let y = 25; y < 29; y++) for (let x = 10; x < 40; x++) prob[y * w + x] = 0.4;   // weak: mean < 0.6
  const boxes = detBoxes(prob, h, w);
  assert.equal(boxes.length, 1);
  const d = (50 * 6 * 1.5) / (2 * 56);
  assert.deepEqual(boxes[0].map((v) => +v.toFixed(3)), [10 - d, 10 - d, 60 + d, 16 + d].map((v) => +v.toFixed(3)));
  assert.equal(matchBoxes(boxes, [[6, 6, 64, 20], [0, 0, 5, 5]]), 1);
  assert.equal(matchBoxes(boxes, [[10, 10, 30, 16]]), 0, 'IoU < 0.5 is no match');
  assert.equal(matchBoxes([boxes[0], boxes[0]], [[6, 6, 64, 20]]), 1, 'one truth box matches once');
});

test('original models read rendered text; 2:4 magnitude pruning reads measurably worse; calibration dirs fit --calib DIR', async () => {
  const dir = tmpDir('sk-ocr-text-');
  const browser = await openBrowser();
  const dirs = {};
  try {
    dirs.lines = await renderText({ kind: 'lines', seed: 4242, count: 12, out: path.join(dir, 'lines'), browser });
    dirs.cls = await renderText({ kind: 'cls', seed: 4242, count: 12, out: path.join(dir, 'cls'), browser });
    dirs.pages = await renderText({ kind: 'pages', seed: 4242, count: 3, out: path.join(dir, 'pages'), browser });
    dirs.fitLines = await renderText({ kind: 'lines', seed: 7, count: 3, fit: [48, 192], out: path.join(dir, 'fit-lines'), browser });
    dirs.fitPages = await renderText({ kind: 'pages', seed: 7, count: 2, fit: [320, 320], out: path.join(dir, 'fit-pages'), browser });
  } finally { await browser.close(); }

  // deterministic for a seed: a second rendering is byte-identical
  const again = await renderText({ kind: 'lines', seed: 4242, count: 12, out: path.join(dir, 'lines-again') });
  for (const f of ['000.png', '011.png', 'truth.json']) assert.ok(fs.readFileSync(path.join(dirs.lines, f)).equals(fs.readFileSync(path.join(again, f))), f);

  const lines = readTextSet(dirs.lines), crops = readTextSet(dirs.cls), pages = readTextSet(dirs.pages);
  assert.ok(pages.items.every((p) => p.lines.length >= 5 && p.lines.every((l) => l.words.length >= 1)), 'pages carry line and word boxes');
  assert.deepEqual(crops.items.map((c) => c.label).slice(0, 4), [0, 1, 0, 1]);

  const recBytes = fs.readFileSync(REC);
  const recSamples = textSamples(lines, 'rec');
  const rec = await evaluateOcr(runner, recBytes, 'rec', lines, recSamples);
  assert.ok(rec.metrics.cer < 0.1, `rec CER ${rec.metrics.cer}`);
  assert.ok(rec.metrics.lineAcc >= 0.75, `rec exact lines ${rec.metrics.lineAcc}`);
  const cls = await evaluateOcr(runner, fs.readFileSync(CLS), 'cls', crops, textSamples(crops, 'cls'));
  assert.ok(cls.metrics.acc > 0.9, `cls accuracy ${cls.metrics.acc}`);
  const det = await evaluateOcr(runner, fs.readFileSync(DET), 'det', pages, textSamples(pages, 'det'));
  assert.ok(det.metrics.f1 > 0.8, `det F1 ${det.metrics.f1}`);

  const pruned = OnnxModel.parse(recBytes);
  pruneNm(pruned, { nm: [2, 4] });
  const bad = await evaluateOcr(runner, pruned.encode(), 'rec', lines, recSamples, rec.outputs);
  assert.ok(bad.metrics.cer > rec.metrics.cer + 0.2, `2:4 magnitude CER ${bad.metrics.cer} vs original ${rec.metrics.cer}`);
  assert.ok(bad.metrics.lineAcc < rec.metrics.lineAcc);

  // the fitted directories are what the CLI's --calib DIR reads: same shapes as the generated inputs
  for (const [file, d, n] of [[REC, dirs.fitLines, 3], [DET, dirs.fitPages, 2]]) {
    const model = OnnxModel.parse(fs.readFileSync(file));
    const got = await readCalibrationDir(d, model);
    assert.equal(got.length, n, 'truth.json is skipped');
    assert.deepEqual(got[0].feeds.x.dims, makeInputSet(model, { count: 1 })[0].feeds.x.dims);
  }
  fs.rmSync(dir, { recursive: true, force: true });
});
