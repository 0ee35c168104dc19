// sparsekit-wasm/onnx, the model layer: loading from bytes and paths, the prunable weights and their
// 2-D views, keep-masks, FLOAT16, float_data, Constant nodes and external data, typed errors.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { build } from './build.mjs';
import { externalize as externalizeWith } from './external-files.mjs';

build();
const { OnnxModel, OnnxError, loadOnnx, saveOnnx, DT, ModelProto } = await import('#onnx-internal');
const { SparseKitError } = await import('sparsekit-wasm');
const G = await import('./graphs.mjs');

let dir;
before(() => { dir = G.tmpDir(); });

test('prunable weights: consumer op and the 2-D view (Conv, Gemm transB, MatMul transposed)', () => {
  const m = OnnxModel.parse(G.residual());
  const names = m.prunable().map((w) => w.name).sort();
  assert.deepEqual(names, ['A.w', 'B.w', 'C.w', 'fc.w']);
  const a = m.weight('A.w');
  assert.equal(a.op, 'Conv');
  assert.deepEqual([a.view.rows, a.view.cols, a.view.transposed], [8, 4 * 3 * 3, false]);
  const fc = m.weight('fc.w');
  assert.deepEqual([fc.op, fc.view.rows, fc.view.cols, fc.view.transposed], ['Gemm', 5, 6, false]);
  assert.equal(m.weight('A.b').prunable, false);
  const g = OnnxModel.parse(G.flattenGemm()).weight('fc.w');
  assert.deepEqual([g.view.rows, g.view.cols, g.view.transposed, ...g.view.stride], [5, 96, true, 1, 5]);
  const mm = OnnxModel.parse(G.mlp()).weight('W1');
  assert.deepEqual([mm.op, mm.view.rows, mm.view.cols, mm.view.transposed], ['MatMul', 32, 16, true]);
  const dw = OnnxModel.parse(G.depthwise()).weight('dw.w');
  assert.equal(dw.group, 8);
});

test('a view row is one output: zeroing view row 2 of a Gemm(transB=0) weight leaves y[2] = bias[2]', async () => {
  const bytes = G.flattenGemm();
  const m = OnnxModel.parse(bytes);
  const w = m.weight('fc.w');
  const keep = new Uint8Array(w.numel).fill(1);
  keep.fill(0, 2 * 96, 3 * 96); // view row 2 (output 2), all 96 inputs
  m.applyMask(w, keep, { layout: 'view' });
  const stored = m.readFloat(w);
  for (let k = 0; k < 96; k++) assert.equal(stored[k * 5 + 2], 0);
  assert.ok(stored.filter((v) => v === 0).length === 96);
  const feeds = G.feedsFor(null, { x: [1, 3, 4, 4] });
  const y = (await G.run(m.encode(), feeds)).y.data;
  assert.ok(Math.abs(y[2] - m.readFloat(m.weight('fc.b'))[2]) < 1e-6);
});

for (const store of ['raw', 'float_data', 'constant', 'fp16']) {
  test(`unchanged write-back is lossless and masks land where asked (${store})`, async () => {
    const bytes = G.residual(store);
    const m = OnnxModel.parse(bytes);
    assert.equal(m.prunable().length, 4);
    for (const w of m.weights) m.writeFloat(w, m.readFloat(w));
    if (store !== 'fp16') assert.equal(Buffer.compare(Buffer.from(m.encode()), Buffer.from(bytes)), 0);
    const w = m.weight('B.w');
    assert.equal(w.dtype, store === 'fp16' ? DT.FLOAT16 : DT.FLOAT);
    const keep = Uint8Array.from({ length: w.numel }, (_, i) => i % 3 !== 0);
    m.applyMask(w, keep);
    const out = OnnxModel.parse(m.encode());
    const ow = out.weight('B.w');
    assert.equal(ow.dtype, w.dtype, 'data type kept');
    assert.equal(ow.storage, w.storage, 'storage form kept');
    const v = out.readFloat(ow);
    const orig = OnnxModel.parse(bytes).readFloat(OnnxModel.parse(bytes).weight('B.w'));
    for (let i = 0; i < v.length; i++) assert.equal(v[i], keep[i] ? orig[i] : 0);
    const feeds = G.feedsFor(null, { x: [1, 4, 8, 8] });
    const y = await G.run(out.encode(), feeds);
    assert.equal(y.y.data.length, 5);
  });
}

/** The model with every initializer moved to one external data file next to it. */
const externalize = (bytes, file) => externalizeWith(ModelProto, bytes, file, { suffix: '.bin' });

test('external data: loaded from a path, pruned, written back as external data (source untouched)', async () => {
  const src = path.join(dir, 'ext.onnx');
  externalize(G.residual(), src);
  const dataBefore = fs.readFileSync(src + '.bin');
  const m = await loadOnnx(src);
  assert.deepEqual(m.externalLocations, ['ext.onnx.bin']);
  const w = m.weight('B.w');
  assert.equal(w.storage, 'external');
  m.applyMask(w, new Uint8Array(w.numel)); // prune all of B
  const out = path.join(dir, 'ext-out.onnx');
  const saved = await saveOnnx(m, out);
  assert.equal(saved.data, out + '.data');
  assert.deepEqual(fs.readFileSync(src + '.bin'), dataBefore, 'input data file unchanged');
  const back = await loadOnnx(out);
  assert.equal(back.weight('B.w').storage, 'external');
  assert.deepEqual(back.externalLocations, ['ext-out.onnx.data']);
  assert.equal(back.readFloat(back.weight('B.w')).every((v) => v === 0), true);
  assert.deepEqual(back.readFloat(back.weight('A.w')), m.readFloat(m.weight('A.w')));
  const feeds = G.feedsFor(null, { x: [1, 4, 8, 8] });
  const a = await G.run(out, feeds);
  const mem = OnnxModel.parse(G.residual());
  mem.writeFloat(mem.weight('B.w'), new Float32Array(mem.weight('B.w').numel));
  const b = await G.run(mem.encode(), feeds);
  assert.ok(G.maxAbsDiff(a.y.data, b.y.data) < 1e-6);
  assert.deepEqual(fs.readdirSync(dir).filter((f) => f.includes('.tmp-')), [], 'no temporary files left');
});

test('bad input: typed errors with a stable code and a reason', async () => {
  const bytes = G.residual();
  const cases = [
    [new Uint8Array(0), 'not_onnx'],
    [new TextEncoder().encode('this is not a model at all, just some text'), 'not_onnx'],
    [bytes.subarray(0, Math.floor(bytes.length / 2)), 'truncated'],
  ];
  for (const [b, reason] of cases) {
    assert.throws(() => OnnxModel.parse(b), (e) => e instanceof OnnxError && e instanceof SparseKitError && e.code === 'invalid_value' && e.reason === reason, reason);
  }
  await assert.rejects(loadOnnx(path.join(dir, 'nope.onnx')), (e) => e.reason === 'no_file' && e.code === 'invalid_value');
  const src = path.join(dir, 'ext2.onnx');
  externalize(G.residual(), src);
  fs.unlinkSync(src + '.bin');
  const m = await loadOnnx(src);
  assert.throws(() => m.readFloat(m.weight('A.w')), (e) => e.reason === 'missing_external');
  const mm = OnnxModel.parse(bytes);
  assert.throws(() => mm.applyMask(mm.weight('A.w'), new Uint8Array(3)), (e) => e.code === 'shape_mismatch');
});

test('before any weight is read: missing external files, reduction axes, output ranks', () => {
  const src = path.join(dir, 'ext3.onnx');
  externalize(G.residual(), src);
  const bytes = fs.readFileSync(src);
  assert.deepEqual(OnnxModel.parse(bytes).missingExternalFiles(), ['ext3.onnx.bin']);
  const given = OnnxModel.parse(bytes, { externalFiles: new Map([['ext3.onnx.bin', fs.readFileSync(src + '.bin')]]) });
  assert.deepEqual(given.missingExternalFiles(), []);
  assert.deepEqual(OnnxModel.parse(G.residual()).missingExternalFiles(), [], 'no external data: nothing missing');

  const r = OnnxModel.parse(G.residual());
  assert.deepEqual(['A.w', 'fc.w', 'A.b'].map((n) => r.weight(n).reduceAxis), [1, 1, 1], 'Conv, Gemm transB = 1, a bias');
  assert.equal(OnnxModel.parse(G.flattenGemm()).weight('fc.w').reduceAxis, 0, 'Gemm transB = 0 stores (K, N)');
  assert.equal(OnnxModel.parse(G.mlp()).weight('W1').reduceAxis, 0, 'MatMul stores (K, N)');

  assert.deepEqual(r.outputs.map((o) => [o.rank, o.dims]), [[2, [1, 5]]]);
  const noShape = ModelProto.decode(G.residual());
  delete noShape.graph.output[0].type.tensor_type.shape;
  assert.deepEqual(OnnxModel.parse(ModelProto.encode(noShape).finish()).outputs.map((o) => [o.rank, o.dims]), [[-1, []]], 'unknown rank is not a scalar');
});

test('an empty tensor written back stays without a data field (unchanged bytes)', () => {
  const model = ModelProto.decode(G.residual());
  model.graph.initializer.push({ name: 'empty', dims: [0], data_type: DT.FLOAT });
  const bytes = ModelProto.encode(model).finish();
  const m = OnnxModel.parse(bytes);
  const w = m.weight('empty');
  assert.deepEqual([w.storage, w.numel], ['empty', 0]);
  m.writeFloat(w, new Float32Array(0));
  assert.equal(Buffer.compare(Buffer.from(m.encode()), Buffer.from(bytes)), 0);
});

test('written in pieces: the bytes of encode(), the weights from where they are held', async () => {
  const concat = (parts) => Buffer.concat(parts.map((b) => Buffer.from(b.buffer, b.byteOffset, b.length)));
  const modelsDir = path.join(path.dirname(new URL(import.meta.url).pathname), '../data/models');
  const files = fs.readdirSync(modelsDir).filter((f) => f.endsWith('.onnx'));
  assert.ok(files.length >= 5);
  for (const f of files) {
    const m = await loadOnnx(path.join(modelsDir, f));
    const parts = [];
    const n = m.encodeTo((b) => parts.push(b));
    const whole = Buffer.from(m.encode());
    assert.equal(n, whole.length, f);
    assert.equal(Buffer.compare(concat(parts), whole), 0, `${f}: the pieces are encode()'s bytes`);
    const held = m.graph.initializer.filter((t) => t.raw_data?.length);
    if (held.length) assert.ok(held.every((t) => parts.includes(t.raw_data)), `${f}: raw_data written as held, not copied`);
  }
  // a weight changed, an empty tensor, a Constant node's tensor, no graph name
  const model = ModelProto.decode(G.residual());
  model.graph.initializer.push({ name: 'empty', dims: [0], data_type: DT.FLOAT });
  const m = OnnxModel.parse(ModelProto.encode(model).finish());
  m.applyMask(m.weight('B.w'), new Uint8Array(m.weight('B.w').numel));
  const parts = [];
  m.encodeTo((b) => parts.push(b));
  assert.equal(Buffer.compare(concat(parts), Buffer.from(m.encode())), 0);
  const out = path.join(dir, 'pieces.onnx');
  const saved = await saveOnnx(m, out);
  assert.equal(Buffer.compare(fs.readFileSync(out), Buffer.from(m.encode())), 0, 'saveOnnx writes the pieces');
  assert.equal(saved.modelBytes, fs.statSync(out).size);
  // with external data: the model's bytes and the data file as encode({location, sink}) gives them
  const src = path.join(dir, 'ext-pieces.onnx');
  externalize(G.residual(), src);
  const e = await loadOnnx(src);
  const sinkA = [], sinkB = [], pieces = [];
  const a = e.encode({ location: 'x.data', sink: (b) => sinkA.push(Buffer.from(b)) });
  e.encodeTo((b) => pieces.push(b), { location: 'x.data', sink: (b) => sinkB.push(Buffer.from(b)) });
  assert.equal(Buffer.compare(concat(pieces), Buffer.from(a)), 0);
  assert.equal(Buffer.compare(Buffer.concat(sinkA), Buffer.concat(sinkB)), 0);
});
