// Where the served bytes go (served-bytes.ts): a tensor's compressed size from a sample of its
// blocks, the split of a file's figure over its tensors (embedding tables apart, through a
// dequantize too), and the search's `bytes` objective, whose gain is the bytes a cell saves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import ort from 'onnxruntime-node';
import { OnnxModel, servedSplit, servedBytes, byteSizer, allocate, sensitivity, compress, readCalibrationDir, makeOrtRunner, makeInputSet } from '#onnx-internal';
import { tinyDecoder } from './text-models.mjs';
import * as G from './graphs.mjs';

const runner = () => makeOrtRunner(ort, { intraOpNumThreads: 1 });

test('servedBytes: a small tensor is compressed whole, a large one from a sample that scales to within a few percent', async () => {
  const sizer = await byteSizer();
  assert.match(sizer.name, /brotli/);
  const r = G.rng(3);
  const small = new Uint8Array(Float32Array.from({ length: 1000 }, () => r()).buffer);
  const whole = zlib.brotliCompressSync(small, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } }).length;
  assert.equal(await servedBytes(sizer, small), whole);
  // 4 MiB of float32 weights, half of them pruned to zero: the sample's ratio is the whole's
  const big = new Uint8Array(Float32Array.from({ length: 1 << 20 }, () => (r() > 0 ? r() * 0.05 : 0)).buffer);
  const full = zlib.brotliCompressSync(big, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } }).length;
  const est = await servedBytes(sizer, big);
  assert.ok(Math.abs(est / full - 1) < 0.05, `sampled ${est} vs whole ${full}`);
  assert.equal(await servedBytes(sizer, new Uint8Array(0)), 0);
});

test('servedSplit: the parts sum to the file figure, tables read by Gather are the embeddings, largest first', async () => {
  const model = OnnxModel.parse(tinyDecoder({ dim: 32, vocab: 200, maxPos: 64 }));
  const total = 20000;
  const s = await servedSplit(model, total, { minBytes: 1024 });
  assert.ok(Math.abs(s.parts.embeddings + s.parts.weights + s.parts.rest - total) < 1e-6);
  const names = s.tensors.map((t) => t.name);
  assert.deepEqual(names.filter((n) => s.tensors.find((t) => t.name === n).op === 'table').sort(), ['pos', 'tok']);
  assert.ok(names.includes('head') && names.includes('w1'), names.join());
  for (let i = 1; i < s.tensors.length; i++) assert.ok(s.tensors[i - 1].served >= s.tensors[i].served);
  // the vocabulary table (200 x 32 floats) outweighs the 32 x 32 layer
  assert.ok(s.tensors.find((t) => t.name === 'tok').served > s.tensors.find((t) => t.name === 'w1').served);
  assert.ok(s.parts.embeddings > 0 && s.parts.weights > 0);
});

test('allocate with the bytes objective maximises the bytes saved, not the parameters', () => {
  // unit a removes more parameters, unit b saves more bytes; the budget affords one of them
  const cell = (removed, bytes) => ({ level: 0.5, fidelity: 0.99, worst: 'y', removed, flops: 0, bytes, cosineLoss: 0 });
  const table = { mode: 'sparsity', method: 'magnitude', levels: [0.5], baseline: 1, samples: 1, sessions: 0, runs: 0, ms: {},
    units: [{ name: 'a', op: 'MatMul', params: 10, cells: [cell(100, 10)] }, { name: 'b', op: 'MatMul', params: 10, cells: [cell(50, 400)] }] };
  assert.deepEqual(allocate(table, 0.015, 'params').choice, [0, -1]);
  assert.deepEqual(allocate(table, 0.015, 'bytes').choice, [-1, 0]);
});

test('sensitivity with measureBytes: bytes saved per cell, zero when nothing is removed, growing with the level; compress by bytes', async () => {
  const bytes = G.residual();
  const model = OnnxModel.parse(bytes);
  const set = makeInputSet(model, { count: 4, seed: 5 });
  const sizer = await byteSizer();
  const t = await sensitivity(model, { ort: runner(), eval: set, mode: 'sparsity', levels: [0.25, 0.5, 0.9], measureBytes: sizer });
  for (const u of t.units) {
    const b = u.cells.map((c) => c.bytes);
    assert.ok(b.every((x) => typeof x === 'number'), u.name);
    for (const c of u.cells) if (c.removed === 0) assert.equal(c.bytes, 0);
    assert.ok(b[2] > b[0] && b[0] >= 0, `${u.name}: ${b}`);
  }
  const res = await compress(model, { ort: runner(), eval: set, mode: 'sparsity', levels: [0.25, 0.5, 0.9], minFidelity: 0.9, objective: 'bytes', table: t });
  assert.ok(res.steps.length > 0);
  // a table measured without bytes cannot drive the bytes objective
  const plain = await sensitivity(model, { ort: runner(), eval: set, mode: 'sparsity', levels: [0.5] });
  await assert.rejects(compress(model, { ort: runner(), eval: set, mode: 'sparsity', minFidelity: 0.9, objective: 'bytes', table: plain }), /measureBytes/);
});

test('channel cells with measureBytes save the compressed bytes of the elements they delete', async () => {
  const model = OnnxModel.parse(G.residual());
  const set = makeInputSet(model, { count: 2, seed: 7 });
  const t = await sensitivity(model, { ort: runner(), eval: set, mode: 'channels', levels: [0.25, 0.5], roundTo: 1, measureBytes: await byteSizer() });
  assert.ok(t.units.length > 0);
  for (const u of t.units) {
    assert.ok(u.cells[1].bytes >= u.cells[0].bytes && u.cells[0].bytes > 0, `${u.name}: ${u.cells.map((c) => c.bytes)}`);
    // a deleted float32 element of random data costs at most about its 4 bytes
    for (const c of u.cells) assert.ok(c.bytes <= 4.2 * c.removed);
  }
});

test('CLI: --objective bytes searches by the bytes saved; --report says where the served bytes go', async () => {
  const { spawnSync } = await import('node:child_process');
  const fs = await import('node:fs');
  const path = await import('node:path');
  const { build, CLI } = await import('./build.mjs');
  build();
  const dir = G.tmpDir('sk-served-');
  const file = path.join(dir, 'm.onnx');
  fs.writeFileSync(file, G.residual());
  const report = path.join(dir, 'r.json');
  const r = spawnSync(process.execPath, [CLI, 'prune', file, '-o', path.join(dir, 'o.onnx'), '--sparsity', 'auto', '--min-fidelity', '0.9',
    '--objective', 'bytes', '--eval', 'synthetic', '--levels', '0.25,0.5,0.9', '--report', report], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /served bytes \(brotli\): embedding tables .*other weights/);
  const rep = JSON.parse(fs.readFileSync(report, 'utf8'));
  assert.equal(rep.search.recipe.meta.objective, 'bytes');
  assert.ok(rep.search.table.units.every((u) => u.cells.every((c) => typeof c.bytes === 'number')));
  const sv = rep.files.served;
  assert.match(sv.compressor, /brotli/);
  assert.ok(Math.abs(sv.parts.embeddings + sv.parts.weights + sv.parts.rest - rep.files.brotliAfter) < 1);
  // a model with tables of 4 KiB and more: they are the embeddings, the head and layer the weights
  const lm = path.join(dir, 'lm.onnx');
  fs.writeFileSync(lm, tinyDecoder({ dim: 64, vocab: 300 }));
  const q = spawnSync(process.execPath, [CLI, 'prune', lm, '-o', path.join(dir, 'lm-out.onnx'), '--sparsity', '0.5', '--report', report], { encoding: 'utf8' });
  assert.equal(q.status, 0, q.stderr);
  const lmRep = JSON.parse(fs.readFileSync(report, 'utf8')).files.served;
  assert.deepEqual(lmRep.tensors.map((t) => `${t.name}:${t.op}`).sort(), ['head:MatMul', 'pos:table', 'tok:table', 'w1:MatMul']);
  assert.ok(lmRep.parts.embeddings > 0 && lmRep.parts.weights > 0);
  const bad = spawnSync(process.execPath, [CLI, 'prune', file, '-o', path.join(dir, 'x.onnx'), '--sparsity', 'auto', '--min-fidelity', '0.9', '--objective', 'size', '--eval', 'synthetic'], { encoding: 'utf8' });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /bytes/);
});
