// The playground's ONNX layer against the real PaddleOCR models and onnxruntime-node: lossless
// re-encoding, raw_data / float_data / FLOAT16 / external-data weights, and clear errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { OnnxModel, OnnxError, DT } from '../../www/src/onnx-model.js';
import { compareOutputs } from '../../www/src/model-input.js';
import { DET, CLS, REC, runModel, parseFile, makeExternalDataModel, makeFp16Model, tmpDir } from './helpers.mjs';

for (const file of [DET, CLS, REC]) {
  test(`unchanged re-encode is byte-identical and runs identically: ${path.basename(file)}`, async () => {
    const bytes = fs.readFileSync(file);
    const m = OnnxModel.parse(bytes);
    assert.ok(m.weights.filter((w) => w.prunable).length > 10, 'finds the conv weights');
    for (const w of m.weights) m.writeFloat(w, m.readFloat(w));          // read + write back every weight
    const out = m.encode();
    assert.equal(Buffer.compare(Buffer.from(out), bytes), 0, 'same bytes');
    const a = await runModel(file, m);
    const b = await runModel(out, m);
    const cmp = compareOutputs(a, b);
    assert.equal(cmp.maxAbs, 0);
  });
}

test('weights list: names, shapes, consuming op, reduction axis', () => {
  const m = parseFile(REC);
  const conv = m.weights.find((w) => w.name === 'conv2d_10.w_0');
  assert.deepEqual(conv.dims, [16, 3, 3, 3]);
  assert.equal(conv.op, 'Conv');
  assert.equal(conv.prunable, true);
  assert.equal(conv.reduceAxis, 1);
  const fc = m.weights.find((w) => w.name === 'linear_85.w_0');
  assert.deepEqual(fc.dims, [120, 6625]);
  assert.equal(fc.op, 'MatMul');
  assert.equal(fc.reduceAxis, 0);
  const bias = m.weights.find((w) => w.name === 'conv2d_106.b_0');
  assert.equal(bias.prunable, false);
  assert.equal(bias.role, 'input 2');
});

test('pruned weights are written back and the model still runs', async () => {
  const m = parseFile(CLS);
  const base = await runModel(CLS, m);
  let zeroed = 0;
  for (const w of m.weights.filter((x) => x.prunable)) {
    const v = m.readFloat(w);
    for (let i = 0; i < v.length; i += 7) { v[i] = 0; zeroed++; }
    m.writeFloat(w, v);
  }
  const bytes = m.encode();
  const back = OnnxModel.parse(bytes);
  for (const w of back.weights.filter((x) => x.prunable)) assert.equal(back.readFloat(w)[0], 0);
  const cmp = compareOutputs(base, await runModel(bytes, back));
  assert.ok(zeroed > 1000);
  assert.ok(cmp.cosine < 1 && cmp.cosine > 0.5, `cosine ${cmp.cosine}`);
});

test('float_data weights: read, written back in float_data', async () => {
  const m = parseFile(CLS);
  for (const w of m.weights) {                                 // move all weights to float_data
    const v = m.readFloat(w);
    delete w.tensor.raw_data;
    w.tensor.float_data = Array.from(v);
  }
  const bytes = m.encode();
  const m2 = OnnxModel.parse(bytes);
  assert.ok(m2.weights.every((w) => w.storage === 'float_data'));
  const w = m2.weights.find((x) => x.prunable);
  const v = m2.readFloat(w);
  v.fill(0, 0, 8);
  m2.writeFloat(w, v);
  const m3 = OnnxModel.parse(m2.encode());
  const w3 = m3.weights.find((x) => x.name === w.name);
  assert.equal(w3.storage, 'float_data');
  assert.deepEqual(Array.from(m3.readFloat(w3).subarray(0, 9)), [0, 0, 0, 0, 0, 0, 0, 0, v[8]]);
  const cmp = compareOutputs(await runModel(CLS, m), await runModel(bytes, m2));
  assert.ok(cmp.maxAbs < 1e-6, `maxAbs ${cmp.maxAbs}`);
});

test('FLOAT16 weights: converted for pruning and written back as FLOAT16', async () => {
  const bytes = makeFp16Model(CLS);
  const m = OnnxModel.parse(bytes);
  const half = m.weights.filter((w) => w.dtype === DT.FLOAT16);
  assert.ok(half.length > 40);
  assert.ok(half.every((w) => w.prunable && w.op === 'Conv'), 'seen through the Cast');
  for (const w of half) m.writeFloat(w, m.readFloat(w));
  assert.equal(Buffer.compare(Buffer.from(m.encode()), Buffer.from(bytes)), 0, 'fp16 round trip is exact');
  const w = half[5];
  const v = m.readFloat(w);
  v.fill(0);
  m.writeFloat(w, v);
  const out = m.encode();
  const m2 = OnnxModel.parse(out);
  const w2 = m2.weights.find((x) => x.name === w.name);
  assert.equal(w2.dtype, DT.FLOAT16);
  assert.equal(w2.tensor.raw_data.length, w.numel * 2);
  assert.ok(m2.readFloat(w2).every((x) => x === 0));
  const cmp = compareOutputs(await runModel(CLS, m), await runModel(bytes, m));
  assert.ok(cmp.cosine > 0.999, `fp16 model agrees with the float model: ${cmp.cosine}`);
  await runModel(out, m2);
});

test('external data: weights read from and written to the data file', async () => {
  const dir = tmpDir();
  const { onnxPath, dataPath } = makeExternalDataModel(CLS, dir);
  const onnx = fs.readFileSync(onnxPath);
  assert.throws(() => OnnxModel.parse(onnx).readFloat(OnnxModel.parse(onnx).weights.find((w) => w.storage === 'external')),
    (e) => e instanceof OnnxError && e.code === 'missing_external' && /weights\.bin/.test(e.message));
  const m = OnnxModel.parse(onnx, { externalFiles: { 'weights.bin': fs.readFileSync(dataPath) } });
  assert.deepEqual(m.externalLocations, ['weights.bin']);
  assert.deepEqual(m.missingExternalFiles(), []);
  const ext = m.weights.filter((w) => w.storage === 'external');
  assert.ok(ext.length > 40);
  const orig = parseFile(CLS);
  const conv = ext.find((w) => w.name === 'conv2d_17.w_0');
  assert.deepEqual(m.readFloat(conv), orig.readFloat(orig.weights.find((w) => w.name === 'conv2d_17.w_0')));
  const base = await runModel(onnxPath, m);
  assert.equal(compareOutputs(base, await runModel(CLS, orig)).maxAbs, 0);
  for (const w of ext.filter((x) => x.prunable)) {
    const v = m.readFloat(w);
    for (let i = 1; i < v.length; i += 2) v[i] = 0;
    m.writeFloat(w, v);
  }
  const out = tmpDir();
  fs.writeFileSync(path.join(out, 'pruned.onnx'), m.encode());
  for (const [name, data] of m.externalData()) fs.writeFileSync(path.join(out, name), data);
  assert.equal(Buffer.compare(fs.readFileSync(path.join(dir, 'weights.bin')), fs.readFileSync(dataPath)), 0, 'input untouched');
  const pruned = await runModel(path.join(out, 'pruned.onnx'), m);
  const cmp = compareOutputs(base, pruned);
  assert.ok(cmp.maxAbs > 0 && Number.isFinite(cmp.cosine));
  const m2 = OnnxModel.parse(fs.readFileSync(path.join(out, 'pruned.onnx')), { externalFiles: m.externalData() });
  assert.equal(m2.readFloat(m2.weights.find((w) => w.name === 'conv2d_17.w_0'))[1], 0);
});

test('malformed files give clear errors', () => {
  const bytes = fs.readFileSync(CLS);
  for (const cut of [100, 5000, bytes.length >> 1, bytes.length - 1000]) {
    assert.throws(() => OnnxModel.parse(bytes.subarray(0, cut)), (e) => e instanceof OnnxError && /truncated|ends too early/.test(e.message), `cut at ${cut}`);
  }
  assert.throws(() => OnnxModel.parse(new TextEncoder().encode('hello, this is not a model\n')), (e) => e instanceof OnnxError && /not (a valid )?(an )?ONNX/i.test(e.message));
  assert.throws(() => OnnxModel.parse(new Uint8Array(0)), /empty/);
  assert.throws(() => OnnxModel.parse(fs.readFileSync(new URL(import.meta.url))), OnnxError);
});
