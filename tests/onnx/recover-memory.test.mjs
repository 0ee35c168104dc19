// What a recovery holds (issue 37, item 5): the teacher and the work copy are OnnxModel.copy()s that
// read the weights where the model does (its file, the spill), not copies of its bytes; the
// teacher's targets and the best epoch's parameters may wait in a cut store and come back as they went in, so the
// recovered model is the one an in-memory run writes.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { build, ROOT } from './build.mjs';
import { wordTokenizer, tinyDecoder, tinyEncoder } from './text-models.mjs';

build();
const O = await import('#onnx-internal');
const G = await import('./graphs.mjs');
const runner = O.makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });
const MODELS = path.join(ROOT, 'tests/data/models');

let dir;
before(() => { dir = G.tmpDir(); });

/** Initializers held as a reference into the model's own file (no bytes in memory). */
const backed = (m) => m.graph.initializer.filter((t) => t.data_location === 1 && !Object.prototype.hasOwnProperty.call(t, 'raw_data') && !m.externalTensors().includes(t)).map((t) => t.name);
const same = (a, b) => Buffer.from(a.encode()).equals(Buffer.from(b.encode()));

test('a copy reads the values where its model does: the same bytes, no weight copied from a file, a write to either leaves the other', async () => {
  const file = path.join(dir, 'smollm2-tiny.onnx');
  fs.copyFileSync(path.join(MODELS, 'smollm2-tiny.onnx'), file);
  for (const load of [() => O.loadOnnx(file), () => O.OnnxModel.parse(fs.readFileSync(file))]) {
    const m = await load();
    const original = m.encode();
    const teacher = m.copy();
    assert.ok(same(teacher, m), 'the copy encodes as the model');
    assert.deepEqual(backed(teacher), backed(m), 'a file-backed initializer stays in the file in the copy');
    O.pruneSparsity(m, { sparsity: 0.5 });
    assert.ok(!Buffer.from(m.encode()).equals(Buffer.from(original)), 'the pruning changed the model');
    assert.ok(Buffer.from(teacher.encode()).equals(Buffer.from(original)), 'the copy made before kept the values from before');
    const work = m.copy();
    assert.ok(same(work, m), 'a copy after the writes has them');
    const pruned = m.encode();
    O.pruneNm(work, { nm: [1, 4] });
    assert.ok(Buffer.from(m.encode()).equals(Buffer.from(pruned)), 'a write to the copy leaves the model');
    assert.ok(!same(work, m));
  }
  assert.ok(backed(await O.loadOnnx(file)).length >= 2, 'the test model has file-backed initializers');
});

/** A cut store in memory that counts what goes through it. */
function countingStore() {
  const held = new Map();
  let next = 1;
  const s = {
    puts: [], reads: [],
    put(bytes) { s.puts.push(bytes.length); held.set(next, new Uint8Array(bytes)); return next++; },
    read(ref, into) { s.reads.push(into.length); into.set(held.get(ref)); },
    free(ref) { held.delete(ref); },
    get live() { return held.size; },
  };
  return s;
}

const SENTENCES = ['the cat sat on the mat.', 'a dog ran to the park, and then slept.', 'the big red house under a small blue tree.', 'then the small dog sat under the tree.'];
const text = (n, shift) => Array.from({ length: n }, (_, i) => SENTENCES[(i * 3 + shift) % SENTENCES.length]).join(' ');

test('the teacher\'s targets and the best parameters through a cut store: every sample\'s stored once, read per step, given back; the same recovered model as in memory', async () => {
  const bytes = tinyDecoder({ dim: 24 });
  const base = O.OnnxModel.parse(bytes);
  const sets = (t, shift, seqLen) => O.textSamples({ text: text(t, shift), tokenizer: wordTokenizer('bos'), seqLen, inputs: base.inputs, outputs: base.outputs }).samples;
  const train = sets(30, 0, 16), held = sets(12, 1, 12);
  const run = async (cutStore) => {
    const teacher = O.OnnxModel.parse(bytes), pruned = O.OnnxModel.parse(bytes);
    O.pruneSparsity(pruned, { sparsity: 0.7 });
    const rep = await O.recover(pruned, teacher, train, { ort: runner, evalSamples: held, steps: ['distill'], epochs: 2, lr: 3e-3, batchSize: 2, cutStore });
    return { rep, bytes: pruned.encode() };
  };
  const mem = await run(undefined);
  assert.ok(mem.rep.after.score > mem.rep.before.score, `the recovery moved the model (${mem.rep.before.score} -> ${mem.rep.after.score})`);
  const store = countingStore();
  const stored = await run(store);
  const vocab = base.outputs[0].dims[2];
  const target = 16 * vocab * 4, reference = 12 * vocab * 4; // a window's next-token distributions, a held-out window's logits
  assert.equal(store.puts.filter((n) => n === target).length, train.length, 'one target per sample went to the store');
  assert.equal(store.reads.filter((n) => n === target).length, mem.rep.distill.epochs * train.length, 'each step read its batch\'s targets');
  assert.equal(store.puts.filter((n) => n === reference).length, held.length, 'the original\'s held-out logits went there');
  // judged before the training, after each epoch and at the end
  assert.equal(store.reads.filter((n) => n === reference).length, (mem.rep.distill.epochs + 2) * held.length, 'each judgement read them back');
  assert.deepEqual(stored.rep.after, mem.rep.after, 'the same report of the held-out fidelity');
  const params = store.puts.filter((n) => n !== target && n !== reference);
  assert.ok(params.length > 0 && params.reduce((a, n) => a + n, 0) >= 4 * mem.rep.distill.params, 'the best parameters went there too');
  assert.equal(store.live, 0, 'the store was emptied at the end');
  assert.ok(Buffer.from(stored.bytes).equals(Buffer.from(mem.bytes)), 'the same recovered model');
  assert.deepEqual(stored.rep.distill.history, mem.rep.distill.history);
  const file = await run('file');
  assert.ok(Buffer.from(file.bytes).equals(Buffer.from(mem.bytes)), 'the same through the scratch file');
});

test('a held-out set in a cut store: a language model judged sample by sample gives the report of the whole set; other kinds are held as before', async () => {
  const bytes = tinyDecoder({ dim: 24 });
  const teacher = O.OnnxModel.parse(bytes), pruned = O.OnnxModel.parse(bytes);
  O.pruneSparsity(pruned, { sparsity: 0.6 });
  const samples = O.textSamples({ text: text(20, 2), tokenizer: wordTokenizer('bos'), seqLen: 12, inputs: teacher.inputs, outputs: teacher.outputs }).samples;
  const whole = await O.heldOut(runner, teacher, samples);
  const store = countingStore();
  const streamed = await O.heldOut(runner, teacher, samples, { store });
  assert.equal(store.live, samples.length, 'the original\'s logits wait in the store');
  assert.deepEqual(streamed.kinds, whole.kinds);
  assert.deepEqual(streamed.reference, whole.reference, 'read back as they went in');
  const [a, b] = [await whole.judge(pruned), await streamed.judge(pruned)];
  assert.ok(a.score < 1 && a.outputs[0].kind === 'language-model');
  assert.deepEqual(b, a);
  streamed.release();
  assert.equal(store.live, 0);
  await assert.rejects(streamed.judge(pruned), /released/);
  // an embedding (neighbours within the set): nothing in the store, the set held
  const enc = O.OnnxModel.parse(tinyEncoder());
  const encSamples = O.textSamples({ lines: SENTENCES, tokenizer: wordTokenizer('bert'), seqLen: 12, inputs: enc.inputs, outputs: enc.outputs }).samples;
  const encStore = countingStore();
  const h = await O.heldOut(runner, enc, encSamples, { store: encStore, kinds: { sentence_embedding: 'embedding' } });
  assert.equal(encStore.live, 0);
  assert.equal(h.reference.length, encSamples.length);
  assert.deepEqual(await h.judge(enc), await (await O.heldOut(runner, enc, encSamples, { kinds: { sentence_embedding: 'embedding' } })).judge(enc));
});

test('runJob with recover on a model read from its file: the teacher is the model as given (a copy), the result that of the model read from bytes', async () => {
  const file = path.join(dir, 'smollm2-tiny-gqa.onnx');
  fs.copyFileSync(path.join(MODELS, 'smollm2-tiny-gqa.onnx'), file);
  const fromBytes = O.OnnxModel.parse(fs.readFileSync(file));
  const samples = O.makeInputSet(fromBytes, { count: 6 });
  const job = { mode: { kind: 'sparsity', sparsity: 0.6 }, calibration: { samples }, recover: { steps: ['distill'], epochs: 1, batchSize: 2 } };
  const a = await O.runJob(fromBytes, job, { ort, sessionOptions: { logSeverityLevel: 3 } });
  const b = await O.runJob(await O.loadOnnx(file), job, { ort, sessionOptions: { logSeverityLevel: 3 }, cutStore: 'file' });
  assert.ok(a.report.recover.before.score < 1, 'the teacher is the original, not the pruned model');
  assert.equal(b.report.recover.before.score, a.report.recover.before.score);
  assert.ok(same(a.model, b.model), 'the same recovered model');
});

test('a session made by the ort runner does not keep the model\'s bytes alive while it lives', async () => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  // an onnxruntime namespace that keeps nothing of what it is given
  const fake = { Tensor: class {}, InferenceSession: { create: async () => ({ run: async () => ({}), release: async () => {} }) } };
  let bytes = new Uint8Array(1 << 20);
  const ref = new WeakRef(bytes);
  const session = await O.makeOrtRunner(fake).createSession(bytes);
  bytes = null;
  for (let i = 0; i < 10 && ref.deref(); i++) { await new Promise((r) => setTimeout(r, 10)); gc(); }
  assert.equal(ref.deref(), undefined, 'the bytes were collected while the session is held');
  await session.release();
});

test('a session of a large model in Node reads it from files onnxruntime maps (a graph and its data file), with the outputs of a session from bytes; the files go once it is made', async () => {
  const file = path.join(dir, 'smollm2-tiny-files.onnx');
  fs.copyFileSync(path.join(MODELS, 'smollm2-tiny.onnx'), file);
  const m = await O.loadOnnx(file);
  O.pruneSparsity(m, { sparsity: 0.5 }); // changed weights in the spill beside the file-backed ones
  const samples = O.makeInputSet(m, { count: 3 });
  const before = Buffer.from(m.encode());
  // what onnxruntime is given: an onnxruntime namespace that records it, then creates the real session
  const given = [];
  const seen = { InferenceSession: { create: async (src, o) => { given.push(typeof src === 'string' ? { path: src, files: fs.readdirSync(path.dirname(src)) } : src); return ort.InferenceSession.create(src, o); } }, Tensor: ort.Tensor };
  const r = O.makeOrtRunner(seen, { intraOpNumThreads: 1, logSeverityLevel: 3 });
  const run = async (minBytes) => {
    const s = await O.openSession(r, m, minBytes);
    try { return await Promise.all(samples.map((x) => s.run(x.feeds))); } finally { await s.release(); }
  };
  const fromFiles = await run(0), fromBytes = await run(Infinity);
  assert.equal(typeof given[0].path, 'string', 'the first session was made from a path');
  assert.deepEqual(given[0].files.sort(), ['model.onnx', 'model.onnx.data']);
  assert.ok(!fs.existsSync(path.dirname(given[0].path)), 'the files were removed once the session was made');
  assert.ok(given[1] instanceof Uint8Array, 'below the size, the encoded bytes');
  for (let k = 0; k < samples.length; k++) {
    for (const [name, v] of Object.entries(fromBytes[k])) assert.deepEqual(Array.from(fromFiles[k][name].data), Array.from(v.data), `${name}, sample ${k}: the same bits`);
  }
  assert.ok(Buffer.from(m.encode()).equals(before), 'the model is as it was (its tensors put back)');
  assert.ok(backed(m).length >= 2, 'its file-backed initializers still are');
  // a runner without files (a browser's, a test's) gets the bytes whatever the size
  const bytesOnly = { createSession: async (b) => { given.push(b); return r.createSession(b); } };
  await (await O.openSession(bytesOnly, m, 0)).release();
  assert.ok(given.at(-1) instanceof Uint8Array);
});
