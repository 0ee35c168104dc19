// Matched intermediate tensors for distillation (recover/features.ts): the cut points of a graph,
// channel-pruned tensors matched on the kept channels, the teacher's values per batch, distillation
// with feature losses, and the refusals of names that cannot be matched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { build, CLI } from './build.mjs';

build();
const { OnnxModel, makeInputSet, recover, removeChannels, pruneSparsity, makeOrtRunner, cutPoints, matchFeatures, FeatureTeacher, OnnxError } = await import('#onnx-internal');
const { tmpDir, convNet, makeModel } = await import('./graphs.mjs');
const { modelBytes } = await import('./models.mjs');

const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });

/** x -> conv 3x3 (16) -> Relu -> conv 1x1 (16) -> Add(ar, b) -> Relu -> conv 3x3 (8) -> y: one residual block. */
const net = () => convNet({ size: 10, seed: 5, skip: true });
const check = () => {};
const train = (m) => makeInputSet(m, { count: 16 });

test('cut points: the tensors that are alone alive between two nodes, never inside a residual block or an output', () => {
  assert.deepEqual(cutPoints(OnnxModel.parse(net())), ['a', 'ar', 's', 'sr']);
});

test('cut points of transformers: block boundaries beside the mask and rotary tables that stay alive, none inside the first block', () => {
  const names = (f) => cutPoints(OnnxModel.parse(modelBytes(f)));
  // A BERT export: the attention mask (from attention_mask alone) is read by every layer; inside
  // layer 0 the token embeddings and the mask are both alive beside the scores, so no cut there.
  const L = (l, t) => `/bert/encoder/layer.${l}/${t}`;
  assert.deepEqual(names('bert-torch'), [
    L(0, 'attention/output/Add_output_0'), L(0, 'attention/output/LayerNorm/LayerNormalization_output_0'),
    L(0, 'output/Add_output_0'), L(0, 'output/LayerNorm/LayerNormalization_output_0'),
    L(1, 'attention/output/Add_output_0'), L(1, 'attention/output/LayerNorm/LayerNormalization_output_0'), L(1, 'output/Add_output_0'),
  ]);
  // A Llama-style decoder (RMSNorm, RoPE tables from position_ids, a causal mask): both residual adds of layer 0.
  const dec = names('smollm2-tiny');
  for (const n of ['/model/model/layers.0/Add_output_0', '/model/model/layers.0/Add_1_output_0', '/model/model/layers.1/Add_output_0']) assert.ok(dec.includes(n), n);
  assert.ok(!dec.some((n) => n.includes('self_attn') || n.includes('/mlp/')), dec.join(' '));
});

test('a channel-pruned tensor is matched on its kept channels: the teacher values per batch equal the student values', async () => {
  const teacher = OnnxModel.parse(net()), student = OnnxModel.parse(net());
  removeChannels(student, { fraction: 0.5, roundTo: 1 });
  const samples = train(teacher);
  const fs = await matchFeatures(runner, student, teacher, samples, { features: 4, exclude: new Set(['y']), check });
  assert.deepEqual(fs.map((f) => f.name), ['a', 'ar', 's', 'sr']);
  const a = fs.find((f) => f.name === 'a');
  assert.equal(a.teacherChannels, 16);
  assert.ok(a.map && a.map.length < 16, 'channels of "a" were removed and are mapped');
  for (let i = 1; i < a.map.length; i++) assert.ok(a.map[i] > a.map[i - 1], 'the map keeps the order');
  for (const f of fs) assert.ok(f.weight > 0 && Number.isFinite(f.weight));
  // Before any training, conv a's kept rows are the teacher's: its output is the teacher's on the kept channels.
  const ft = await FeatureTeacher.open(runner, teacher, [a]);
  try {
    const [got] = await ft.batch(samples, [2, 5]);
    const sess = await runner.createSession(segmentOf(student, 'a'));
    const want = [];
    for (const k of [2, 5]) want.push(...(await sess.run({ x: samples[k].feeds.x }, ['a'])).a.data);
    await sess.release();
    assert.equal(got.length, want.length);
    got.forEach((v, i) => assert.ok(Math.abs(v - want[i]) <= 1e-5 * (1 + Math.abs(want[i])), `${i}: ${v} vs ${want[i]}`));
  } finally { await ft.release(); }
});

/** Per feature, how many values of `got` equal `want` bit for bit, after checking they agree within 1e-5 relative. */
function agreeing(got, want, what) {
  assert.equal(got.length, want.length, `${what}: lengths`);
  let same = 0;
  got.forEach((v, i) => {
    assert.ok(Math.abs(v - want[i]) <= 1e-5 * (1 + Math.abs(want[i])), `${what}[${i}]: ${v} vs ${want[i]}`);
    if (Object.is(v, want[i])) same++;
  });
  return same;
}

test('the teacher runs a batch stacked in one onnxruntime call when its batch dim is dynamic: the per-sample values', async (t) => {
  const teacher = OnnxModel.parse(convNet({ size: 10, seed: 5, skip: true, batch: 'N' })), student = OnnxModel.parse(teacher.encode());
  removeChannels(student, { fraction: 0.5, roundTo: 1 });
  const samples = train(teacher);
  const fs = await matchFeatures(runner, student, teacher, samples, { features: 4, exclude: new Set(['y']), check });
  assert.ok(fs.some((f) => f.map), 'a feature is gathered on kept channels');
  const stacked = await FeatureTeacher.open(runner, teacher, fs, { stack: 'always' }), single = await FeatureTeacher.open(runner, teacher, fs, { stack: 'never' });
  const auto = await FeatureTeacher.open(runner, teacher, fs);
  try {
    assert.equal(stacked.batching.mode, 'undecided');
    assert.equal(single.batching.mode, 'per-sample');
    let same = 0, all = 0;
    // The first batch of 2+ settles 'always' (a batch of one runs alone and settles nothing); then one call per batch.
    // 'auto' times both ways on a warm-up and two more batches, then keeps the faster: either way, the same values.
    const batches = [[9], [2, 5, 7, 1], [0, 3, 4, 6, 8, 10, 11, 12], [13, 14], [15, 2, 3], [4, 1]];
    for (const [b, idx] of batches.entries()) {
      const got = await stacked.batch(samples, idx), want = await single.batch(samples, idx), mid = await auto.batch(samples, idx);
      assert.equal(stacked.batching.mode, idx.length === 1 ? 'undecided' : 'stacked', `after [${idx}]: ${JSON.stringify(stacked.batching)}`);
      assert.equal(auto.batching.mode === 'undecided', b < 3, `auto after batch ${b}: ${JSON.stringify(auto.batching)}`);
      fs.forEach((f, j) => {
        same += agreeing(got[j], want[j], `${f.name} of [${idx}]`); all += got[j].length;
        assert.deepEqual(mid[j], want[j], `auto: ${f.name} of [${idx}]`);
      });
    }
    if (auto.batching.mode === 'per-sample') assert.match(auto.batching.why, /one run per batch was slower/);
    t.diagnostic(`stacked vs per-sample: ${same}/${all} values bit-equal; auto settled on ${JSON.stringify(auto.batching)}`);
    assert.equal(same, all, 'stacked runs are kept only when bit-equal');
    await assert.rejects(FeatureTeacher.open(runner, teacher, fs, { stack: true }), (e) => e instanceof OnnxError && /stack must be auto, always or never/.test(e.message));
  } finally { await stacked.release(); await single.release(); await auto.release(); }
});

test('the teacher runs one sample at a time when its batch dim is fixed, or when stacking loses or mixes the samples', async () => {
  const check1 = async (bytes, names, why) => {
    const teacher = OnnxModel.parse(bytes);
    const samples = train(teacher);
    const fs = await matchFeatures(runner, teacher, teacher, samples, { features: names, exclude: new Set(['y']), check });
    const ft = await FeatureTeacher.open(runner, teacher, fs, { stack: 'always' }), ref = await FeatureTeacher.open(runner, teacher, fs, { stack: 'never' });
    try {
      for (const idx of [[1, 4, 2], [0, 3, 5, 6]]) {
        const got = await ft.batch(samples, idx), want = await ref.batch(samples, idx);
        fs.forEach((f, j) => assert.deepEqual(got[j], want[j], `${f.name} of [${idx}]`));
        assert.equal(ft.batching.mode, 'per-sample');
        assert.match(ft.batching.why, why);
      }
    } finally { await ft.release(); await ref.release(); }
  };
  // Declared batch 1 (an export at a fixed batch): settled when opened.
  await check1(convNet({ size: 10, seed: 5, skip: true }), ['ar', 'sr'], /input "x" is declared with a fixed batch dim 1/);
  // Dynamic batch, folded by Reshapes with a fixed 1 / 16: the batched outputs lose the batch axis, or keep it and mix samples.
  const folded = (mix) => makeModel({
    inputs: [['x', ['N', 3, 8, 8]]], outputs: [['y', ['N', 16, 64]]], seed: 3,
    inits: { 'a.w': { dims: [16, 3, 3, 3] }, 'a.b': { dims: [16], scale: 0.1 }, shape: { dims: [3], int64: mix ? [16, -1, 64] : [1, 16, -1] } },
    nodes: [
      ['Conv', ['x', 'a.w', 'a.b'], ['a'], { pads: [1, 1, 1, 1] }],
      ['Reshape', ['a', 'shape'], ['r']],
      ...(mix ? [['Transpose', ['r'], ['t'], { perm: [1, 0, 2] }]] : [['Identity', ['r'], ['t']]]),
      ['Relu', ['t'], ['y']],
    ],
  });
  await check1(folded(false), ['t'], /lose the batch axis/);
  await check1(folded(true), ['t'], /stacked values of "t" differ/);
});

/** The student with "name" as its output (a copy). */
function segmentOf(model, name) {
  const m = OnnxModel.parse(model.encode());
  m.graph.output.push({ name });
  return m.encode();
}

test('distillation with feature losses raises the fidelity, keeps zeros at zero and reports the features', async () => {
  const teacher = OnnxModel.parse(net()), pruned = OnnxModel.parse(net());
  pruneSparsity(pruned, { sparsity: 0.6 });
  const zeros = ['a.w', 'b.w', 'c.w'].map((n) => [n, pruned.readFloat(pruned.weight(n))]);
  const rep = await recover(pruned, teacher, train(teacher), {
    ort: runner, evalSamples: makeInputSet(teacher, { count: 8, set: 'heldOut' }), kinds: { y: 'generic' }, steps: ['distill'],
    epochs: 8, lr: 3e-3, batchSize: 4, features: 2,
  });
  assert.deepEqual(rep.distill.features.map((f) => f.name), ['ar', 'sr']);
  assert.ok(rep.after.score > rep.before.score + 0.01, `fidelity ${rep.before.score} -> ${rep.after.score}`);
  for (const [n, w0] of zeros) {
    const w = pruned.readFloat(pruned.weight(n));
    w0.forEach((v, i) => { if (v === 0) assert.ok(w[i] === 0, `${n}[${i}] is ${w[i]}`); });
  }
});

test('features that cannot be matched are refused by name, before any training', async () => {
  const teacher = OnnxModel.parse(net()), student = OnnxModel.parse(net());
  const samples = train(teacher);
  const refused = (features, re) => assert.rejects(matchFeatures(runner, student, teacher, samples, { features, exclude: new Set(['y']), check }),
    (e) => e instanceof OnnxError && re.test(e.message));
  await refused(['nope'], /"nope" is not computed/);
  await refused(['y'], /"y" is already trained/);
  await refused(-1, /features must be/);
  for (const features of [[], -2, 1.5, ['']]) {
    await assert.rejects(recover(student, teacher, samples, { ort: runner, features }), (e) => e instanceof OnnxError && /features must be/.test(e.message));
  }
  await assert.rejects(recover(student, teacher, samples, { ort: runner, features: 1, featureWeight: 0 }), /featureWeight must be > 0/);
});

test('CLI: recover, prune … --recover and prune --prox take --features; a bad value exits 2 with no output', () => {
  const dir = tmpDir('sk-features-');
  const t = path.join(dir, 't.onnx'), p = path.join(dir, 'p.onnx'), out = path.join(dir, 'out.onnx');
  const pruned = OnnxModel.parse(net());
  pruneSparsity(pruned, { sparsity: 0.5 });
  fs.writeFileSync(t, net()); fs.writeFileSync(p, pruned.encode());
  const run = (args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  const common = ['--calib-count', '8', '--eval', 'synthetic', '--eval-count', '4', '--metric', 'y=generic', '-q', '--epochs', '1', '--batch', '4'];
  let r = run(['recover', p, '--teacher', t, '--features', '2', ...common, '-o', out]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /features ar, sr/);
  r = run(['recover', p, '--teacher', t, '--features', 'sr,ar', ...common, '-o', out, '--report', path.join(dir, 'r.json')]);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, 'r.json'), 'utf8')).distill.features.map((f) => f.name), ['sr', 'ar']);
  fs.rmSync(out);
  for (const bad of [['--features', 'a,'], ['--features', '-1'], ['--features', '0']]) {
    r = run(['recover', p, '--teacher', t, ...bad, ...common, '-o', out]);
    assert.equal(r.status, 2, `${bad.join(' ')}: ${r.stderr}`);
    assert.equal(fs.existsSync(out), false);
  }
  r = run(['prune', t, '--sparsity', '0.5', '--recover', '--features', '1', ...common, '-o', out]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /features sr/);
  r = run(['prune', t, '--prox', '--sparsity', '0.5', '--block', '2x2', '--features', '1', ...common, '-o', out]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /features: sr/);
});
