// GPTQ after pruning (calib/quantize-pass.ts) runs a sweep of its own over the calibration samples:
// the job's cut store and the cut budget must reach it, or a large GPTQ pass holds its whole cut in
// memory while the pruning before it did not (issue 40).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { build, ROOT } from './build.mjs';

build();
const O = await import('#onnx-internal');
const bytes = fs.readFileSync(path.join(ROOT, 'tests/data/models/smollm2-tiny.onnx'));
const calibration = O.makeInputSet(O.OnnxModel.parse(bytes), { count: 4 });
const runner = O.makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });

/** A file store that counts what went through it. */
async function countingStore() {
  const file = await O.fileCutStore();
  const store = { puts: 0, put: (b) => { store.puts++; return file.put(b); }, read: (r, into) => file.read(r, into), free: (r, n) => file.free(r, n), get size() { return file.size; } };
  return store;
}

test('the GPTQ pass hands its cut store and budget to its sweep: the cut goes to the store, the file is the same', async () => {
  const quant = { scheme: 'int4', group: 16 };
  const inMemory = O.OnnxModel.parse(bytes), filed = O.OnnxModel.parse(bytes);
  const a = await O.quantizePass(inMemory, quant, { runner, calibration, cacheBudget: 0 });
  const store = await countingStore();
  const b = await O.quantizePass(filed, quant, { runner, calibration, cacheBudget: 0, cutStore: store });
  assert.ok(a.gptq.layers > 0 && b.gptq.layers === a.gptq.layers);
  assert.ok(store.puts > 0, 'values of the cut went to the store');
  assert.equal(store.size, 0, 'and were let go');
  assert.deepEqual(filed.encode(), inMemory.encode(), 'the same quantized model, byte for byte');
  // a budget the cut stays under leaves the store unused
  const idle = await countingStore();
  await O.quantizePass(O.OnnxModel.parse(bytes), quant, { runner, calibration, cutStore: idle });
  assert.equal(idle.puts, 0);
});

test('the job\'s cutStore reaches its GPTQ pass after a magnitude prune (checked there: a bad one is refused)', async () => {
  const job = { mode: { kind: 'sparsity', sparsity: 0.5 }, calibration: { samples: calibration }, quantize: { scheme: 'int4', group: 16 } };
  const env = { ort, sessionOptions: { logSeverityLevel: 3 } };
  await assert.rejects(O.runJob(O.OnnxModel.parse(bytes), job, { ...env, cutStore: 'disk' }), (e) => e.code === 'invalid_arguments' && /cutStore/.test(e.message));
  const { report } = await O.runJob(O.OnnxModel.parse(bytes), job, { ...env, cutStore: await countingStore() });
  assert.equal(report.quantize.gptq.pass, 'after');
});
