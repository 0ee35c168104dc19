// recover(): closed-form steps that never lower the held-out fidelity, distillation that raises it,
// zeros that stay zero, an abort that leaves the model untouched; the CLI's exit codes, no output on
// a refused model, a checkpoint that a second run continues. A small generated network, and PaddleOCR cls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { build, CLI } from './build.mjs';
import { CLS } from '../e2e/helpers.mjs';

build();
const { OnnxModel, OnnxError, makeInputSet, recover, proxPrune, removeChannels, pruneSparsity, makeOrtRunner, CancelledError, fitLayers, trainSetup } = await import('#onnx-internal');
const { makeModel, tmpDir, convNet } = await import('./graphs.mjs');

const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });

/** x -> conv 3x3 (16) -> op -> conv 1x1 (16) -> Relu -> conv 3x3 (8) -> y: a dense output, read as values. */
const net = (op = 'Relu') => convNet({ act: op });

const kinds = { y: 'generic' };

/** conv -> Softmax over channels (opset 13: axis 1 given) | conv -> Sigmoid: the loss follows the output. */
const headed = (op) => makeModel({
  inputs: [['x', [1, 3, 4, 4]]], outputs: [['y', [1, 4, 4, 4]]],
  inits: { 'a.w': { dims: [4, 3, 1, 1] }, 'a.b': { dims: [4] } },
  nodes: [['Conv', ['x', 'a.w', 'a.b'], ['a']], [op, ['a'], ['y'], op === 'Softmax' ? { axis: 1 } : {}]],
});

test('the loss per output kind: logits or KL for a Softmax head, BCE for a Sigmoid map, MSE otherwise', () => {
  const soft = OnnxModel.parse(headed('Softmax'));
  let s = trainSetup(soft, { y: 'classification' });
  assert.deepEqual(s.trained.map((t) => [t.tensor, t.loss]), [['a', 'logits']]);
  assert.deepEqual(s.graph.outputs, ['a']);
  assert.ok(!s.graph.nodes.some((n) => n.opType === 'Softmax'));
  s = trainSetup(soft, { y: 'classification' }, 'kl');
  assert.deepEqual(s.trained.map((t) => [t.tensor, t.loss, t.axis]), [['y', 'kl', 1]]);
  assert.deepEqual(trainSetup(soft, { y: 'generic' }).trained.map((t) => t.loss), ['mse']);
  // A sequence output: KL by default, the logits when asked.
  assert.deepEqual(trainSetup(soft, { y: 'sequence' }).trained.map((t) => [t.tensor, t.loss, t.axis]), [['y', 'kl', 1]]);
  assert.deepEqual(trainSetup(soft, { y: 'sequence' }, 'logits').trained.map((t) => [t.tensor, t.loss]), [['a', 'logits']]);
  assert.deepEqual(trainSetup(OnnxModel.parse(headed('Sigmoid')), { y: 'dense-map' }).trained.map((t) => t.loss), ['bce']);
  // only the linear layers' weights and biases train
  assert.deepEqual(s.graph.frozen, []);
});
const train = (m) => makeInputSet(m, { count: 16 });
const heldOut = (m) => makeInputSet(m, { count: 8, set: 'heldOut' });

test('fitLayers finds the Conv layers with a bias, the 1x1 one as pointwise, and their order', () => {
  const ls = fitLayers(OnnxModel.parse(net()));
  assert.deepEqual(ls.map((l) => [l.output, l.channels, l.pointwise, l.dependsOn]), [['a', 16, false, -1], ['b', 16, true, 0], ['y', 8, false, 1]]);
});

test('closed-form steps never lower the held-out fidelity; channels removed are matched to the teacher', async () => {
  const bytes = net();
  const teacher = OnnxModel.parse(bytes), pruned = OnnxModel.parse(bytes);
  removeChannels(pruned, { fraction: 0.5, roundTo: 1 });
  const rep = await recover(pruned, teacher, train(teacher), { ort: runner, evalSamples: heldOut(teacher), kinds, steps: ['stats', 'lsq'] });
  assert.equal(rep.closedForm.length, 2);
  for (const s of rep.closedForm) {
    assert.ok(s.layers > 0, `${s.step} changed no layer`);
    assert.ok(!s.applied || s.after >= s.before, `${s.step} applied with ${s.after} < ${s.before}`);
  }
  assert.ok(rep.after.score >= rep.before.score, `${rep.after.score} < ${rep.before.score}`);
  assert.ok(rep.closedForm.some((s) => s.applied && s.after > s.before), 'no closed-form step improved the pruned model');
});

test('distillation raises the fidelity of a pruned model and keeps its zeros at zero', async () => {
  const bytes = net();
  const teacher = OnnxModel.parse(bytes), pruned = OnnxModel.parse(bytes);
  pruneSparsity(pruned, { sparsity: 0.6 });
  const zerosBefore = Object.fromEntries(['a.w', 'b.w', 'c.w'].map((n) => [n, pruned.readFloat(pruned.weight(n)).map((v) => (v === 0 ? 1 : 0))]));
  const rep = await recover(pruned, teacher, train(teacher), { ort: runner, evalSamples: heldOut(teacher), kinds, steps: ['distill'], epochs: 12, lr: 3e-3, batchSize: 4 });
  assert.ok(rep.after.score > rep.before.score + 0.01, `fidelity ${rep.before.score} -> ${rep.after.score}`);
  assert.equal(rep.distill.epochs, 12);
  assert.ok(rep.distill.bestEpoch > 0);
  for (const [n, z] of Object.entries(zerosBefore)) {
    const w = pruned.readFloat(pruned.weight(n));
    z.forEach((isZero, i) => { if (isZero) assert.ok(w[i] === 0, `${n}[${i}] is ${w[i]}`); });
  }
});

test('an abort leaves the model untouched', async () => {
  const bytes = net();
  const teacher = OnnxModel.parse(bytes), pruned = OnnxModel.parse(bytes);
  pruneSparsity(pruned, { sparsity: 0.5 });
  const before = pruned.encode();
  const ac = new AbortController();
  await assert.rejects(recover(pruned, teacher, train(teacher), {
    ort: runner, kinds, epochs: 50, signal: ac.signal, onProgress: (p) => { if (p.phase === 'distill' && p.step >= 2) ac.abort(); },
  }), (e) => e instanceof CancelledError && e.code === 'cancelled');
  assert.deepEqual(pruned.encode(), before);
});

test('training samples whose inputs exceed the bound are refused before anything runs (recover and proxPrune)', async () => {
  const bytes = net();
  const teacher = OnnxModel.parse(bytes), pruned = OnnxModel.parse(bytes);
  const [one] = train(teacher);
  const name = Object.keys(one.feeds)[0];
  // one sample whose input alone holds 257 MiB (allocated, never written: the check reads only its size)
  const big = { ...one, feeds: { ...one.feeds, [name]: { ...one.feeds[name], data: new Float32Array(257 * 2 ** 18) } } };
  let progressed = false;
  const onProgress = () => { progressed = true; };
  await assert.rejects(recover(pruned, teacher, [big], { ort: runner, kinds, onProgress }), (e) => e instanceof OnnxError && /257\.0 MiB of inputs \(1 samples\)/.test(e.message));
  await assert.rejects(proxPrune(pruned, [big], { ort: runner, sparsity: 0.5, onProgress }), (e) => e instanceof OnnxError && /at most 256\.0 MiB/.test(e.message));
  assert.equal(progressed, false);
  assert.deepEqual(pruned.encode(), bytes);
});

test('an op outside the training core is refused by name before anything runs', async () => {
  const bytes = net('Softplus');
  const teacher = OnnxModel.parse(bytes), pruned = OnnxModel.parse(bytes);
  let progressed = false;
  await assert.rejects(recover(pruned, teacher, train(teacher), { ort: runner, kinds, onProgress: (p) => { if (p.phase !== 'teacher') progressed = true; } }), (e) => /Softplus/.test(e.message));
  assert.equal(progressed, false);
});

test('PaddleOCR cls with 30% of its channels removed: closed-form steps keep or raise the fidelity, zeros stay zero', async () => {
  const bytes = fs.readFileSync(CLS);
  const teacher = OnnxModel.parse(bytes), pruned = OnnxModel.parse(bytes);
  removeChannels(pruned, { fraction: 0.3, scope: 'global' });
  pruneSparsity(pruned, { sparsity: 0.2 });
  const zeros = pruned.prunable().map((w) => [w.name, pruned.readFloat(w)]);
  const rep = await recover(pruned, teacher, makeInputSet(teacher, { count: 8 }), { ort: runner, evalSamples: makeInputSet(teacher, { count: 8, set: 'heldOut' }), steps: ['stats', 'lsq'] });
  assert.ok(rep.after.score >= rep.before.score);
  assert.equal(rep.after.outputs[0].kind, 'classification');
  assert.ok(rep.after.outputs[0].metrics.meanKL <= rep.before.outputs[0].metrics.meanKL + 1e-9 || rep.closedForm.every((s) => !s.applied));
  for (const [n, w0] of zeros) {
    const w = pruned.readFloat(pruned.weight(n));
    w0.forEach((v, i) => { if (v === 0) assert.ok(w[i] === 0, `${n}[${i}] is ${w[i]}`); });
  }
});

const cli = (args) => spawnSync(process.execPath, [CLI, 'recover', ...args], { encoding: 'utf8' });

test('CLI: usage errors exit 2, a refused op exits 1 with one line naming it and no output file', () => {
  const dir = tmpDir('sk-recover-');
  const t = path.join(dir, 't.onnx'), bad = path.join(dir, 'softplus.onnx'), out = path.join(dir, 'out.onnx');
  fs.writeFileSync(t, net()); fs.writeFileSync(bad, net('Softplus'));
  let r = cli([t, '-o', out]);
  assert.equal(r.status, 2); assert.match(r.stderr, /--teacher/);
  r = cli([t, '--teacher', t, '-o', out, '--epochs', '0']);
  assert.equal(r.status, 2);
  r = cli([bad, '--teacher', bad, '-o', out, '--calib-count', '4', '-q']);
  assert.equal(r.status, 1, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /Softplus/);
  assert.equal(fs.existsSync(out), false);
});

test('CLI: a checkpoint per epoch, and a run given an existing checkpoint continues from it', () => {
  const dir = tmpDir('sk-recover-');
  const t = path.join(dir, 't.onnx'), p = path.join(dir, 'p.onnx'), out = path.join(dir, 'out.onnx'), ck = path.join(dir, 'ck.bin');
  const pruned = OnnxModel.parse(net());
  pruneSparsity(pruned, { sparsity: 0.6 });
  fs.writeFileSync(t, net()); fs.writeFileSync(p, pruned.encode());
  const common = [p, '--teacher', t, '--calib-count', '8', '--eval', 'synthetic', '--eval-count', '4', '--lr', '3e-3', '--batch', '4', '-q', '--metric', 'y=generic'];
  let r = cli([...common, '--epochs', '1', '--checkpoint', ck, '-o', out, '--report', path.join(dir, 'r1.json')]);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(fs.existsSync(ck) && fs.existsSync(out));
  const r1 = JSON.parse(fs.readFileSync(path.join(dir, 'r1.json'), 'utf8'));
  assert.equal(r1.distill.epochs, 1);
  r = cli([...common, '--epochs', '3', '--checkpoint', ck, '-o', out, '--report', path.join(dir, 'r2.json')]);
  assert.equal(r.status, 0, r.stderr);
  const r2 = JSON.parse(fs.readFileSync(path.join(dir, 'r2.json'), 'utf8'));
  assert.equal(r2.distill.epochs, 3);
  assert.equal(r2.distill.history.length, 3);
  assert.deepEqual(r2.distill.history[0], r1.distill.history[0]);
  assert.equal(r2.closedForm.length, 0, 'a resumed run does not redo the closed-form steps');
});

test('CLI: prune … --recover prunes and recovers in one go, leaving no temporary file', () => {
  const dir = tmpDir('sk-recover-');
  const t = path.join(dir, 't.onnx'), out = path.join(dir, 'out.onnx');
  fs.writeFileSync(t, net());
  const r = spawnSync(process.execPath, [CLI, 'prune', t, '--sparsity', '0.5', '--recover', '--epochs', '1', '--calib-count', '8', '--eval', 'synthetic', '--eval-count', '4', '--metric', 'y=generic', '-q', '-o', out], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /distill: 1 epochs/);
  assert.deepEqual(fs.readdirSync(dir).sort(), ['out.onnx', 't.onnx']);
  const m = OnnxModel.parse(fs.readFileSync(out));
  const w = m.readFloat(m.weight('b.w'));
  assert.ok(w.filter((v) => v === 0).length >= w.length / 2 - 1, 'the pruned zeros are kept');
});

test("ultralytics' static YOLOv8 export: a stacked batch fails typed with the way out, batch size 1 trains it", async () => {
  // tests/gen/export_yolov8.py: the Detect head reshapes to constant shapes holding the batch of 1.
  const bytes = fs.readFileSync(new URL('../data/models/yolov8n-ultralytics.onnx', import.meta.url));
  const teacher = OnnxModel.parse(bytes);
  const samples = makeInputSet(teacher, { count: 2 });
  const held = makeInputSet(teacher, { count: 1, set: 'heldOut' });
  const pruned = OnnxModel.parse(bytes);
  pruneSparsity(pruned, { sparsity: 0.5 });
  const opts = { ort: runner, evalSamples: held, steps: ['distill'], epochs: 1, lr: 1e-4 };
  await assert.rejects(recover(pruned, teacher, samples, { ...opts, batchSize: 2 }), (e) => {
    assert.equal(e.code, 'shape_mismatch', e.message);
    assert.match(e.message, /fixed batch of 1.*--batch 1/);
    return true;
  });
  const rep = await recover(pruned, teacher, samples, { ...opts, batchSize: 1 });
  assert.equal(rep.distill.steps, 2);
});
