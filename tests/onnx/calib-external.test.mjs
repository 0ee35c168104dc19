// Calibrated pruning of a model whose weights are external data (issue 40: a model over 2 GB is read
// and written with external data, and pruned within bounded memory): each graph segment the sweep
// runs is given its initializers' bytes (graph-cut.ts), so the result is the in-memory model's to
// the bit; a run that fails puts external weights back by where their bytes were, without holding a
// copy of them (rollback.ts); an external tensor that a segment cannot be given is refused by name.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { build, ROOT } from './build.mjs';
import { externalize as externalizeWith } from './external-files.mjs';

build();
const O = await import('#onnx-internal');
const G = await import('./graphs.mjs');
const runner = O.makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });
const DECODER = path.join(ROOT, 'tests/data/models/smollm2-tiny-gqa.onnx');

let dir;
before(() => { dir = G.tmpDir(); });

const externalize = (bytes, file, opts = {}) => externalizeWith(O.ModelProto, bytes, file, { min: 64, ...opts });

test('Wanda and SparseGPT on a Llama-shaped decoder held in external data: the weights of the same run from memory, bit for bit', async () => {
  const bytes = fs.readFileSync(DECODER);
  const file = path.join(dir, 'decoder.onnx');
  assert.ok(externalize(bytes, file) >= 10, 'the weights are external');
  const dataBefore = fs.readFileSync(file + '_data');
  const calibration = O.makeInputSet(O.OnnxModel.parse(bytes), { count: 4 });
  for (const criterion of ['wanda', 'sparsegpt']) {
    const mem = O.OnnxModel.parse(bytes);
    const ext = await O.loadOnnx(file);
    assert.ok(ext.prunable().every((w) => w.storage === 'external'));
    const opts = { ort: runner, calibration, sparsity: 0.5, criterion, percDamp: 0.01, minVectors: 0 };
    const a = await O.calibratePrune(mem, opts);
    const b = await O.calibratePrune(ext, opts);
    assert.equal(b.layers.length, a.layers.length);
    assert.ok(b.layers.length >= 14 && b.layers.every((l) => l.method === criterion), `${criterion}: ${b.layers.map((l) => l.method)}`);
    for (const w of mem.prunable()) assert.deepEqual(ext.readFloat(ext.weight(w.name)), mem.readFloat(w), `${criterion}: ${w.name}`);
    assert.equal(b.sparsity, a.sparsity);
    assert.ok(Math.abs(b.sparsity - 0.5) < 0.01, `sparsity ${b.sparsity}`);
    // written back as external data, it runs in onnxruntime as the in-memory result does
    const out = path.join(dir, `decoder-${criterion}.onnx`);
    const saved = await O.saveOnnx(ext, out);
    assert.ok(saved.data, 'the output keeps external data');
    const [feeds] = calibration;
    const onFile = await ort.InferenceSession.create(out);
    const inMem = await ort.InferenceSession.create(mem.encode());
    const t = Object.fromEntries(Object.entries(feeds.feeds).map(([k, v]) => [k, new ort.Tensor(v.type, v.data, v.dims)]));
    const [y1, y2] = [(await onFile.run(t)).logits.data, (await inMem.run(t)).logits.data];
    assert.equal(G.maxAbsDiff(y1, y2), 0);
  }
  assert.deepEqual(fs.readFileSync(file + '_data'), dataBefore, 'the source data file is never written');
});

test('a calibrated prune of external weights cancelled half way puts them back where they were, with no copy held', async () => {
  const bytes = fs.readFileSync(DECODER);
  const file = path.join(dir, 'cancel.onnx');
  externalize(bytes, file);
  const ext = await O.loadOnnx(file);
  const calibration = O.makeInputSet(ext, { count: 3 });
  const ac = new AbortController();
  let pruned = 0;
  await assert.rejects(O.calibratePrune(ext, {
    ort: runner, calibration, sparsity: 0.5, criterion: 'wanda', signal: ac.signal,
    onProgress: (p) => { if (p.phase === 'prune' && ++pruned === 5) ac.abort(); },
  }), (e) => e.code === 'cancelled');
  assert.equal(pruned, 5, 'five layers were written before the cancel');
  const mem = O.OnnxModel.parse(bytes);
  for (const w of ext.prunable()) {
    assert.equal(ext.externalState(w.tensor).bytes, undefined, `${w.name} reads its source file again`);
    assert.deepEqual(ext.readFloat(w), mem.readFloat(mem.weight(w.name)), w.name);
  }
});

test('an external tensor outside the initializers (a Constant node\'s value) is refused by name before any run', async () => {
  const file = path.join(dir, 'constant.onnx');
  externalize(G.residual('constant'), file, { min: 16, constants: true });
  const m = await O.loadOnnx(file);
  const ext = m.externalTensors().filter((t) => !m.graph.initializer.includes(t));
  assert.ok(ext.length, 'a Constant value is external');
  let runs = 0;
  const counting = { createSession: async (b) => { runs++; return runner.createSession(b); } };
  await assert.rejects(O.calibratePrune(m, { ort: counting, calibration: O.makeInputSet(m, { count: 2 }), sparsity: 0.5, criterion: 'wanda' }),
    (e) => e instanceof O.OnnxError && e.code === 'unsupported_environment' && e.message.includes(`"${ext[0].name}"`));
  assert.equal(runs, 0);
});
