// The sweep's cut store (calib/cut-store.ts, Node's scratch file in cut-file.ts): past the cut
// budget, after what can be recomputed is left out, the values a capture keeps go to the store and
// are read back when fed. The weights and errors must be those of the run that holds its cut in
// memory, bit for bit, and the cut held in memory must be smaller.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import ort from 'onnxruntime-node';
import { build } from './build.mjs';

build();
const O = await import('#onnx-internal');
const runner = O.makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });

test('the file store gives back what was put, uses freed space again and empties', async () => {
  const s = await O.fileCutStore();
  const a = Uint8Array.from({ length: 1000 }, (_, i) => i % 251), b = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7) % 253);
  const ra = s.put(a), rb = s.put(b);
  assert.equal(s.size, 2000);
  const got = new Uint8Array(1000);
  s.read(rb, got); assert.deepEqual(got, b);
  s.read(ra, got); assert.deepEqual(got, a);
  s.free(ra, 1000);
  const rc = s.put(b);
  assert.equal(rc, ra, 'a freed range of the same size is used again');
  assert.equal(s.size, 2000);
  s.read(rc, got); assert.deepEqual(got, b);
  s.free(rb, 1000);
  assert.equal(s.size, 1000, 'a free range at the end shortens the file');
  s.free(rc, 1000);
  assert.equal(s.size, 0);
  // a range read past what was written is refused with a typed error
  assert.throws(() => s.read(0, new Uint8Array(10)), (e) => e instanceof O.OnnxError && e.reason === 'corrupt');
});

test('over the cut budget with a store, a Llama-shaped decoder keeps part of its cut in the file: the same weights, less cut in memory', async () => {
  const bytes = fs.readFileSync(new URL('../data/models/smollm2-tiny-gqa.onnx', import.meta.url));
  const calibration = O.makeInputSet(O.OnnxModel.parse(bytes), { count: 4 });
  for (const criterion of ['wanda', 'sparsegpt']) {
    const opts = { ort: runner, calibration, sparsity: 0.5, criterion, percDamp: 0.01, minVectors: 0, cacheBudget: 0 };
    const memory = O.OnnxModel.parse(bytes), filed = O.OnnxModel.parse(bytes);
    const cutStore = await O.fileCutStore();
    const a = await O.calibratePrune(memory, opts);
    const b = await O.calibratePrune(filed, { ...opts, cutStore: criterion === 'wanda' ? cutStore : 'file' });
    assert.equal(a.sweep.stored, 0);
    assert.ok(b.sweep.stored > 0 && b.sweep.storedBytes > 0, JSON.stringify(b.sweep));
    for (const w of memory.prunable()) assert.deepEqual(filed.readFloat(filed.weight(w.name)), memory.readFloat(w), `${criterion}: ${w.name}, bit for bit`);
    assert.deepEqual(b.layers.map((l) => l.relError), a.layers.map((l) => l.relError));
    // with a store, layer inputs are stored rather than computed again from the residual stream
    assert.ok(b.sweep.nodeRuns < a.sweep.nodeRuns, `${b.sweep.nodeRuns} vs ${a.sweep.nodeRuns} nodes run`);
    assert.ok(b.sweep.recomputed < a.sweep.recomputed);
    assert.ok(b.sweep.peakCacheBytes < a.sweep.peakCacheBytes, `${b.sweep.peakCacheBytes} vs ${a.sweep.peakCacheBytes}`);
    if (criterion === 'wanda') assert.equal(cutStore.size, 0, 'everything the run put in the store was let go');
  }
  for (const cutStore of ['disk', 42, { put() {} }]) {
    await assert.rejects(O.calibratePrune(O.OnnxModel.parse(bytes), { ort: runner, calibration, sparsity: 0.5, cutStore }), (e) => e.code === 'invalid_arguments', String(cutStore));
  }
});

test('a sweep that reuses its cut\'s buffers captures the values of one that keeps onnxruntime\'s arrays', async () => {
  const bytes = fs.readFileSync(new URL('../data/models/smollm2-tiny-gqa.onnx', import.meta.url));
  const m = O.OnnxModel.parse(bytes);
  const samples = O.makeInputSet(m, { count: 3 });
  const names = O.captureGroups(O.findLayers(m), true).map((g) => g.map((l) => l.input));
  const run = async (opts) => {
    const sweep = new O.Sweep(m, runner, samples, opts);
    const seen = [];
    for (const group of names) await sweep.capture(group, (name, t, k) => seen.push([name, k, Array.from(O.outputAsFloat(t))]));
    return { seen, stats: sweep.stats };
  };
  const plain = await run({});
  const reused = await run({ reuse: true, cacheBudget: 0, cutStore: await O.fileCutStore() });
  assert.ok(reused.stats.stored > 0, 'values went to the store');
  assert.ok(plain.seen.length > 0);
  assert.deepEqual(reused.seen, plain.seen);
});

test('a job\'s held-out set of a language model waits in the cut store: the same report, every byte given back', async () => {
  const bytes = fs.readFileSync(new URL('../data/models/smollm2-tiny-gqa.onnx', import.meta.url));
  const base = O.OnnxModel.parse(bytes);
  const samples = O.makeInputSet(base, { count: 3, set: 'eval' });
  const job = { mode: { kind: 'sparsity', sparsity: 0.5 }, eval: { samples, kinds: { [base.outputs[0].name]: 'language-model' } } };
  const held = await O.runJob(O.OnnxModel.parse(bytes), job, { ort: runner });
  const file = await O.fileCutStore();
  let puts = 0;
  const store = { put: (b) => { puts++; return file.put(b); }, read: (r, into) => file.read(r, into), free: (r, n) => file.free(r, n) };
  const stored = await O.runJob(O.OnnxModel.parse(bytes), job, { ort: runner, cutStore: store });
  assert.equal(puts, samples.length, 'one reference output per held-out sample');
  assert.equal(file.size, 0, 'given back once the result is judged');
  assert.equal(stored.report.fidelity.outputs[0].kind, 'language-model');
  assert.deepEqual(stored.report.fidelity, held.report.fidelity);
});

test('a job\'s scratch file opens only for a language model\'s held-out set: another --eval job creates none', async () => {
  const { llamaBlocks } = await import('../../kit/shared-graphs.mjs');
  const made = [];
  const mkdtemp = fs.mkdtempSync;
  fs.mkdtempSync = (...a) => { made.push(String(a[0])); return mkdtemp.apply(fs, a); };
  const scratch = () => made.filter((p) => p.includes('sparsekit-cut-')).length;
  try {
    const plain = O.OnnxModel.parse(llamaBlocks({ blocks: 2 }));
    const job = (samples, kinds) => ({ mode: { kind: 'sparsity', sparsity: 0.5 }, eval: { samples, ...(kinds ? { kinds } : {}) } });
    await O.runJob(plain, job(O.makeInputSet(plain, { count: 2, set: 'eval' })), { ort: runner, cutStore: 'file' });
    assert.equal(scratch(), 0, 'no scratch file for a held-out set that is not a language model\'s');
    // the same spy sees the file a language model's held-out set opens
    const bytes = fs.readFileSync(new URL('../data/models/smollm2-tiny-gqa.onnx', import.meta.url));
    const lm = O.OnnxModel.parse(bytes);
    await O.runJob(lm, job(O.makeInputSet(lm, { count: 1, set: 'eval' }), { [lm.outputs[0].name]: 'language-model' }), { ort: runner, cutStore: 'file' });
    assert.equal(scratch(), 1);
  } finally { fs.mkdtempSync = mkdtemp; }
});
