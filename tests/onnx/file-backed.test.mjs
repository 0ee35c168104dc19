// A model read from its file keeps its large inline initializers in the file (file-backed.ts, issue
// 40): they are read, changed and put back as external data is, the model is written as a model
// read from bytes is, byte for byte, and nothing holds the file's bytes once the model is parsed.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import ort from 'onnxruntime-node';
import { build, ROOT, PKG } from './build.mjs';

build();
const O = await import('#onnx-internal');
const G = await import('./graphs.mjs');
const { FileExternalSource, FileSpillStore } = await import(path.join(PKG, 'src/onnx/node-io.js'));
const runner = O.makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });
const MODELS = path.join(ROOT, 'tests/data/models');
const DECODER = path.join(MODELS, 'smollm2-tiny-gqa.onnx');

let dir;
before(() => { dir = G.tmpDir(); });

/** `file` parsed as loadOnnxFile parses it, with initializers of at least `minBytes` file-backed. */
function parseBacked(file, minBytes) {
  const source = new FileExternalSource(path.dirname(file));
  const bytes = source.readAll(path.basename(file));
  const model = O.OnnxModel.parse(bytes, { externalFiles: source, fileName: path.basename(file), spill: new FileSpillStore(), fileBacked: { location: path.basename(file), minBytes } });
  return { model, bytes };
}

const backedCount = (m) => m.graph.initializer.filter((t) => t.data_location === 1 && !m.externalTensors().includes(t)).length;

/** Every Uint8Array reachable from `obj`. */
function* byteFields(obj, seen = new Set()) {
  if (!obj || typeof obj !== 'object' || seen.has(obj)) return;
  seen.add(obj);
  if (obj instanceof Uint8Array) { yield obj; return; }
  for (const v of Object.values(obj)) yield* byteFields(v, seen);
}

const copyTo = (name) => { const f = path.join(dir, name); fs.copyFileSync(path.join(MODELS, name), f); return f; };
const saved = async (model, name) => { const f = path.join(dir, name); await O.saveOnnx(model, f); return fs.readFileSync(f); };

test('read from its path, a model encodes and saves byte for byte as read from its bytes, its large initializers left in the file', async () => {
  for (const name of ['smollm2-tiny.onnx', 'bert-torch.onnx', 'yolov8n-ultralytics.onnx']) {
    const file = path.join(MODELS, name);
    const mem = O.OnnxModel.parse(fs.readFileSync(file));
    const m = await O.loadOnnx(file);
    assert.ok(backedCount(m) >= 2, `${name}: initializers file-backed`);
    assert.deepEqual(m.externalLocations, [], `${name}: no external data to write`);
    assert.ok(m.weights.every((w) => w.storage === mem.weight(w.name).storage), `${name}: stored as written`);
    assert.ok(Buffer.from(m.encode()).equals(Buffer.from(mem.encode())), `${name}: encode()`);
    assert.ok((await saved(m, `a-${name}`)).equals(await saved(mem, `b-${name}`)), `${name}: saveOnnx`);
    for (const w of mem.weights) assert.deepEqual(m.readFloat(m.weight(w.name)), mem.readFloat(w), `${name}: ${w.name}`);
  }
});

test('nothing the parsed model holds views the file\'s bytes, and they are collected', async () => {
  const file = copyTo('smollm2-tiny.onnx');
  let { model, bytes } = parseBacked(file, 1);
  assert.ok(model.graph.initializer.filter((t) => t.raw_data?.length).length === 0, 'every initializer with raw_data is backed');
  const views = [...byteFields(model.model)].filter((b) => b.buffer === bytes.buffer);
  assert.deepEqual(views.map((b) => b.length), [], 'no bytes field views the file buffer');
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const ref = new WeakRef(bytes.buffer);
  bytes = undefined;
  // A WeakRef's target is kept to the end of the job that made it, and a collection may leave it to
  // the next one: a few collections, each in a later turn of the event loop.
  for (let i = 0; i < 10 && ref.deref(); i++) { await new Promise((r) => setTimeout(r, 10)); gc(); }
  assert.equal(ref.deref(), undefined, 'the file buffer was collected');
  assert.ok(model.readFloat(model.prunable()[0]).length > 0);
});

test('pruned, channel-cut and quantized from its path with every initializer file-backed: the bytes of the same job from memory', async () => {
  const file = copyTo('smollm2-tiny.onnx');
  const bytes = fs.readFileSync(file);
  const jobs = [
    { mode: { kind: 'sparsity', sparsity: 0.5 } },
    { mode: { kind: 'nm', nm: [2, 4] }, quantize: { scheme: 'int8' } },
    { mode: { kind: 'channels', fraction: 0.5, roundTo: 1 } },
  ];
  for (const [i, job] of jobs.entries()) {
    const a = await O.runJob(O.OnnxModel.parse(bytes), job);
    const { model } = parseBacked(file, 1);
    assert.ok(backedCount(model) >= 10);
    const b = await O.runJob(model, job);
    assert.ok((await saved(b.model, `job${i}-file.onnx`)).equals(await saved(a.model, `job${i}-mem.onnx`)), JSON.stringify(job.mode));
  }
  assert.ok(fs.readFileSync(file).equals(bytes), 'the source file is never written');
});

test('channel-cut, then recovered, from its path: the training copy declares the cut sizes; the bytes of the same job from memory', async () => {
  // removing channels gives a file-backed weight new bytes of another size; the copy recovery trains
  // (OnnxModel.copy) was checked against the file's length for it and refused the model
  const file = copyTo('smollm2-tiny.onnx');
  const bytes = fs.readFileSync(file);
  const samples = O.makeInputSet(O.OnnxModel.parse(bytes), { count: 4 });
  const job = { mode: { kind: 'channels', fraction: 0.5, roundTo: 1 }, calibration: { samples }, recover: { epochs: 1, batchSize: 2 } };
  const a = await O.runJob(O.OnnxModel.parse(bytes), job, { ort: runner });
  const { model } = parseBacked(file, 1);
  const b = await O.runJob(model, job, { ort: runner });
  assert.equal(b.report.recover.distill.steps, 2);
  assert.ok((await saved(b.model, 'cut-recovered-file.onnx')).equals(await saved(a.model, 'cut-recovered-mem.onnx')));
  assert.ok(fs.readFileSync(file).equals(bytes), 'the source file is never written');
});

test('SparseGPT from a path, written over its own input: the bytes of the same run from memory', async () => {
  const file = copyTo('smollm2-tiny-gqa.onnx');
  const bytes = fs.readFileSync(file);
  const calibration = O.makeInputSet(O.OnnxModel.parse(bytes), { count: 3 });
  const job = { mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'sparsegpt', calibration: { samples: calibration } };
  const a = await O.runJob(O.OnnxModel.parse(bytes), job, { ort: runner });
  const { model } = parseBacked(file, 1);
  const b = await O.runJob(model, job, { ort: runner });
  await O.saveOnnx(b.model, file); // renamed over the path the model is read from: its open descriptor keeps the old file
  assert.ok(fs.readFileSync(file).equals(await saved(a.model, 'gqa-mem.onnx')));
});

test('a calibrated prune of file-backed weights cancelled half way puts them back: the model encodes as read', async () => {
  const file = copyTo('smollm2-tiny-gqa.onnx');
  const { model } = parseBacked(file, 1);
  const before = Buffer.from(model.encode());
  const ac = new AbortController();
  let pruned = 0;
  await assert.rejects(O.calibratePrune(model, {
    ort: runner, calibration: O.makeInputSet(model, { count: 3 }), sparsity: 0.5, criterion: 'sparsegpt', signal: ac.signal,
    onProgress: (p) => { if (p.phase === 'prune' && ++pruned === 5) ac.abort(); },
  }), (e) => e.code === 'cancelled');
  assert.equal(pruned, 5);
  for (const w of model.prunable()) assert.equal(model.externalState(w.tensor)?.bytes, undefined, `${w.name} reads its file again`);
  assert.ok(Buffer.from(model.encode()).equals(before));
});

test('a model file that changes under a file-backed model: typed errors, never other bytes', async () => {
  const file = copyTo('smollm2-tiny.onnx');
  const m = await O.loadOnnx(file);
  const w = m.prunable().find((x) => m.graph.initializer.includes(x.tensor) && x.tensor.data_location === 1);
  fs.truncateSync(file, 1000); // the same file, cut short after the load
  assert.throws(() => m.readFloat(w), (e) => e instanceof O.OnnxError && ['bad_external', 'truncated'].includes(e.reason));
  await assert.rejects(O.saveOnnx(m, path.join(dir, 'never.onnx')), (e) => e instanceof O.OnnxError);
  assert.ok(!fs.existsSync(path.join(dir, 'never.onnx')), 'a failed write leaves no file');
  // bytes that are not the file the source reads are refused before anything is backed
  const other = copyTo('smollm2-tiny-gqa.onnx');
  const source = new FileExternalSource(path.dirname(other));
  assert.throws(() => O.OnnxModel.parse(fs.readFileSync(path.join(MODELS, 'smollm2-tiny.onnx')), { externalFiles: source, fileBacked: { location: path.basename(other) } }),
    (e) => e instanceof O.OnnxError && e.reason === 'bad_external');
});

test('a model with external data and large inline initializers: external stays external, inline stays inline', async () => {
  const src = fs.readFileSync(DECODER);
  const model = O.ModelProto.decode(src);
  const big = model.graph.initializer.filter((t) => t.raw_data?.length >= 1024);
  const outside = big.slice(0, Math.floor(big.length / 2));
  assert.ok(outside.length >= 2 && big.length - outside.length >= 2);
  let off = 0;
  const chunks = [];
  for (const t of outside) {
    chunks.push(Buffer.from(t.raw_data));
    t.external_data = [{ key: 'location', value: 'mixed.onnx_data' }, { key: 'offset', value: String(off) }, { key: 'length', value: String(t.raw_data.length) }];
    t.data_location = 1;
    t.raw_data = new Uint8Array(0);
    off += chunks.at(-1).length;
  }
  const file = path.join(dir, 'mixed.onnx');
  fs.writeFileSync(file + '_data', Buffer.concat(chunks));
  fs.writeFileSync(file, O.ModelProto.encode(model).finish());
  const { model: m } = parseBacked(file, 1024);
  assert.equal(m.externalTensors().length, outside.length);
  assert.equal(backedCount(m), big.length - outside.length);
  const mem = await O.loadOnnx(file); // the default threshold: fewer backed
  for (const d of ['mixed-a', 'mixed-b']) fs.mkdirSync(path.join(dir, d));
  const out = path.join(dir, 'mixed-a', 'out.onnx'), ref = path.join(dir, 'mixed-b', 'out.onnx'); // one name: the model names its data file
  const s = await O.saveOnnx(m, out);
  await O.saveOnnx(mem, ref);
  assert.ok(s.data && fs.readFileSync(out).equals(fs.readFileSync(ref)) && fs.readFileSync(s.data).equals(fs.readFileSync(ref + '.data')));
  const back = O.ModelProto.decode(fs.readFileSync(out));
  const byName = new Map(back.graph.initializer.map((t) => [t.name, t]));
  for (const t of outside) assert.equal(byName.get(t.name).data_location, 1, `${t.name} external`);
  for (const t of big.filter((x) => !outside.includes(x))) assert.ok(byName.get(t.name).raw_data.length > 0 && byName.get(t.name).data_location !== 1, `${t.name} inline`);
});
