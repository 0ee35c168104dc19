// The learning-rate schedule of recovery (recover/lr-schedule.ts): its values (warm-up, cosine decay,
// floor), the share of a run done by steps or by time, bad values refused typed before anything
// runs; Trainer.setLr scaling the next Adam update through the package; and a recover() run whose
// steps use the schedule's lr, reported.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import ort from 'onnxruntime-node';
import { build } from './build.mjs';

build();
const sk = await import('sparsekit-wasm');
const { OnnxModel, makeInputSet, recover, pruneSparsity, makeOrtRunner, trainGraph, lrSchedule, lrAt, runShare, OnnxError } = await import('#onnx-internal');
const { convNet, makeModel, rng } = await import('./graphs.mjs');

const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);
/** `a` is `b` rounded to f32 (the trainer's lr). */
const f32 = (a, b, what) => assert.equal(a, Math.fround(b), what);

test('cosine: from the floor up to the lr over the warm-up, a half cosine down to the floor at the end', () => {
  const s = lrSchedule({ schedule: 'cosine', lr: 1e-3, warmup: 0.1 });
  assert.deepEqual(s, { kind: 'cosine', lr: 1e-3, warmup: 0.1, floor: 0.1 });
  close(lrAt(s, 0), 1e-4, 'start: the floor');
  close(lrAt(s, 0.05), 1e-4 + 0.5 * 9e-4, 'half the warm-up');
  close(lrAt(s, 0.1), 1e-3, 'end of the warm-up: the lr');
  close(lrAt(s, 0.55), 1e-4 + 0.5 * 9e-4, 'half the decay: halfway down');
  close(lrAt(s, 1), 1e-4, 'end: the floor');
  close(lrAt(s, 7), 1e-4, 'past the end: clamped');
  close(lrAt(s, -1), 1e-4, 'before the start: clamped');
  // rising through the warm-up, falling after it
  const xs = Array.from({ length: 101 }, (_, i) => lrAt(s, i / 100));
  for (let i = 1; i <= 10; i++) assert.ok(xs[i] > xs[i - 1], `warm-up rises at ${i}`);
  for (let i = 11; i <= 100; i++) assert.ok(xs[i] < xs[i - 1], `decay falls at ${i}`);
  // the default warm-up of a cosine schedule is 5%, the floor a tenth
  assert.deepEqual(lrSchedule({ schedule: 'cosine', lr: 2e-4 }), { kind: 'cosine', lr: 2e-4, warmup: 0.05, floor: 0.1 });
});

test('constant: the lr throughout, after a warm-up only when one is asked for', () => {
  const c = lrSchedule({ schedule: 'constant', lr: 3e-4 });
  assert.equal(c.warmup, 0);
  for (const p of [0, 0.3, 1]) assert.equal(lrAt(c, p), 3e-4);
  const w = lrSchedule({ schedule: 'constant', lr: 3e-4, warmup: 0.2 });
  close(lrAt(w, 0), 3e-5, 'warm-up from the floor');
  close(lrAt(w, 0.1), 3e-5 + 0.5 * 2.7e-4, 'half the warm-up');
  for (const p of [0.2, 0.6, 1]) assert.equal(lrAt(w, p), 3e-4);
  // the package default: constant at 1e-4, no warm-up: each step at the lr, as before schedules (docs/guides/recover.md says why)
  assert.deepEqual(lrSchedule({}), { kind: 'constant', lr: 1e-4, warmup: 0, floor: 0.1 });
  for (const p of [0, 0.5, 1]) assert.equal(lrAt(lrSchedule({}), p), 1e-4);
});

test('the share of a run done: steps of the planned steps, time of the budget, the larger of the two', () => {
  assert.equal(runShare(25, 100, 1e9, Infinity), 0.25, 'epochs only: steps');
  assert.equal(runShare(10 ** 6, Infinity, 30_000, 120_000), 0.25, 'minutes only: time');
  assert.equal(runShare(50, 100, 30_000, 120_000), 0.5, 'both: the first bound reached');
  assert.equal(runShare(50, 100, 90_000, 120_000), 0.75);
  assert.equal(runShare(200, 100, 0, Infinity), 1, 'clamped');
  assert.equal(runShare(0, 0, 0, Infinity), 0, 'nothing planned');
});

test('bad schedules are refused typed (invalid_value), by recover() before anything runs', async () => {
  const bad = [{ schedule: 'linear' }, { schedule: 1 }, { warmup: 1 }, { warmup: -0.01 }, { warmup: Number.NaN }, { warmup: '0.1' }, { schedule: 'cosine', lr: 0 }];
  for (const o of bad) assert.throws(() => lrSchedule(o), (e) => e instanceof OnnxError && e.code === 'invalid_value', JSON.stringify(o));
  const m = OnnxModel.parse(convNet());
  let ran = false;
  const runner = { run: async () => { ran = true; throw new Error('must not run'); } };
  for (const o of [{ schedule: 'step' }, { schedule: 'cosine', warmup: 2 }]) {
    await assert.rejects(recover(m, m, makeInputSet(m, { count: 2 }), { ort: runner, ...o }), (e) => e instanceof OnnxError && e.code === 'invalid_value' && /schedule|warmup/.test(e.message));
  }
  assert.equal(ran, false);
});

test('Trainer.setLr: the next update at half the lr moves each weight half as far; bad values refused', () => {
  const bytes = makeModel({
    inputs: [['x', [2, 6]]], outputs: [['y', [2, 4]]],
    inits: { w: { dims: [6, 4] }, b: { dims: [4], scale: 0.1 } },
    nodes: [['MatMul', ['x', 'w'], ['h']], ['Add', ['h', 'b'], ['y']]], seed: 3,
  });
  const r = rng(5);
  const X = [{ values: Float32Array.from({ length: 12 }, () => r()), shape: [2, 6] }];
  const T = [Float32Array.from({ length: 8 }, () => r())];
  const a = new sk.Trainer(trainGraph(OnnxModel.parse(bytes)), { lr: 1e-2 });
  const b = new sk.Trainer(trainGraph(OnnxModel.parse(bytes)), { lr: 1e-2 });
  a.step(X, T); b.step(X, T);
  const w0 = b.param('w');
  b.setLr(5e-3);
  assert.equal(b.lr, Math.fround(5e-3));
  assert.equal(a.lr, Math.fround(1e-2));
  a.step(X, T); b.step(X, T);
  const [wa, wb] = [a.param('w'), b.param('w')];
  for (let i = 0; i < w0.length; i++) {
    const da = wa[i] - w0[i], db = wb[i] - w0[i];
    assert.ok(Math.abs(da) > 1e-3, `weight ${i} moved ${da}`);
    assert.ok(Math.abs(db - da / 2) <= 1e-6 * Math.max(1, Math.abs(w0[i])), `weight ${i}: ${db} vs half of ${da}`);
  }
  for (const lr of [Number.NaN, -1, Infinity]) assert.throws(() => b.setLr(lr), (e) => e.code === 'invalid_value', String(lr));
  assert.throws(() => b.setLr('0.1'), (e) => e.code === 'invalid_arguments');
  assert.equal(b.lr, Math.fround(5e-3), 'a refused lr leaves the old one');
  a.free(); b.free();
});

test('recover() with a cosine schedule: each step runs at the schedule\'s lr for its share of the epochs', async () => {
  const bytes = convNet({ act: 'Relu' });
  const teacher = OnnxModel.parse(bytes), pruned = OnnxModel.parse(bytes);
  pruneSparsity(pruned, { sparsity: 0.6 });
  const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });
  const train = makeInputSet(teacher, { count: 16 }), held = makeInputSet(teacher, { count: 8, set: 'heldOut' });
  const run = async (schedule) => {
    const seen = [];
    // each step's progress carries the lr it ran at, read back from the trainer (the epoch's closing report has none)
    const rep = await recover(pruned.copy(), teacher, train, {
      ort: runner, evalSamples: held, kinds: { y: 'generic' }, steps: ['distill'], epochs: 5, batchSize: 4, lr: 3e-3, schedule, warmup: 0.2,
      onProgress: (p) => { if (p.phase === 'distill' && p.lr !== undefined) seen.push(p.lr); },
    });
    return { rep, seen };
  };
  const { rep, seen } = await run('cosine');
  const s = rep.distill.schedule;
  assert.deepEqual({ ...s, lastLr: Math.fround(s.lastLr) }, { kind: 'cosine', lr: 3e-3, warmup: 0.2, floor: 0.1, lastLr: seen[19] });
  // 16 samples in batches of 4 for 5 epochs: 20 steps, step k at lrAt(k / 20)
  assert.equal(rep.distill.steps, 20);
  assert.equal(seen.length, 20);
  seen.forEach((lr, k) => f32(lr, lrAt(s, k / 20), `step ${k}`));
  f32(seen[0], 3e-4, 'the first step at the floor');
  f32(seen[4], 3e-3, 'the warm-up ends at step 4 of 20');
  assert.ok(seen[19] < 4e-4, `the last step decays near the floor: ${seen[19]}`);
  // constant with the same warm-up: up over 4 steps, then 3e-3 to the end; a different run
  const c = await run('constant');
  c.seen.forEach((lr, k) => f32(lr, k < 4 ? 3e-4 + 2.7e-3 * (k / 4) : 3e-3, `constant step ${k}`));
  assert.notDeepEqual(c.rep.distill.history.map((h) => h.loss), rep.distill.history.map((h) => h.loss));
});
