// The Trainer's API for recovery through the built package: per-output losses (kl on a Softmax,
// bce on a Sigmoid map, weights), intermediate values as outputs, backward(outputGrads) + update
// equal to step, the proximal step, parameter values, the state bytes (resume continues the same),
// and typed errors. Small graphs; the maths is checked in tests/train_api.rs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { build } from './build.mjs';

build();
const sk = await import('sparsekit-wasm');
const { OnnxModel, trainGraph } = await import('#onnx-internal');
const { makeModel, rng } = await import('./graphs.mjs');

// x [2,3,6,6] -> Conv 3x3 (w1,b1) -> Relu (r) -> Conv 1x1 (w2) -> z -> Softmax(axis 1) p, Sigmoid s
const NODES = [
  ['Conv', ['x', 'w1', 'b1'], ['c'], { pads: [1, 1, 1, 1] }],
  ['Relu', ['c'], ['r']],
  ['Conv', ['r', 'w2'], ['z']],
  ['Softmax', ['z'], ['p'], { axis: 1 }],
  ['Sigmoid', ['z'], ['s']],
];
const INITS = { w1: { dims: [8, 3, 3, 3] }, b1: { dims: [8], scale: 0.1 }, w2: { dims: [4, 8, 1, 1] } };
const bytes = (seed) => makeModel({ inputs: [['x', [2, 3, 6, 6]]], outputs: [['p', [2, 4, 6, 6]], ['s', [2, 4, 6, 6]]], nodes: NODES, inits: INITS, seed });
const r = rng(3);
const X = [{ values: Float32Array.from({ length: 216 }, () => r()), shape: [2, 3, 6, 6] }];

function pair(opts = {}) {
  const teacher = new sk.Trainer(trainGraph(OnnxModel.parse(bytes(7))));
  const targets = teacher.forward(X).map((o) => o.values);
  teacher.free();
  return { student: new sk.Trainer(trainGraph(OnnxModel.parse(bytes(8)), opts.graph), opts.trainer), targets };
}

test('kl on the Softmax output and bce on the Sigmoid map lower with steps; weights scale', () => {
  const { student, targets } = pair({ trainer: { lr: 1e-2 } });
  assert.deepEqual(student.outputNames, ['p', 's']);
  student.setLosses([{ kind: 'kl', axis: 1 }, { kind: 'bce', weight: 0.5 }]);
  const before = student.loss(X, targets);
  const [kl0, bce0] = student.lastLosses;
  assert.ok(Math.abs(kl0 + bce0 - before) < 1e-9);
  for (let k = 0; k < 30; k++) student.step(X, targets);
  const after = student.loss(X, targets);
  assert.ok(student.lastLosses[0] < 0.5 * kl0, `kl ${kl0} -> ${student.lastLosses[0]}`);
  assert.ok(after < before);
  const kl1 = student.lastLosses[0];
  student.setLosses([{ kind: 'kl', axis: 1, weight: 2 }, { kind: 'mse', weight: 0 }]);
  student.loss(X, targets);
  assert.ok(Math.abs(student.lastLosses[0] - 2 * kl1) < 1e-9 * kl1 && student.lastLosses[1] === 0);
  assert.throws(() => student.setLosses([{ kind: 'hinge' }, { kind: 'mse' }]), (e) => e.code === 'invalid_arguments');
  assert.throws(() => student.setLosses([{ kind: 'mse' }]), (e) => e.code === 'invalid_arguments');
  assert.throws(() => student.setLosses([{ kind: 'mse', axis: 1 }, { kind: 'mse' }]), (e) => e.code === 'invalid_arguments');
  student.free();
});

test('an intermediate value as an extra output; backward(outputGrads) + update equals step', () => {
  const a = pair({ graph: { extraOutputs: ['r'] } });
  const b = pair({ graph: { extraOutputs: ['r'] } });
  assert.deepEqual(a.student.outputNames, ['p', 's', 'r']);
  const outs = b.student.forward(X);
  assert.deepEqual(outs[2].shape, [2, 8, 6, 6]);
  const tr = outs[2].values.map((v) => v * 0.5);
  const targets = [...a.targets, tr];
  a.student.step(X, targets);
  // the same MSE gradient computed here as the core does (src/train/loss.rs): 2 (y - t) / n per
  // output, with y - t rounded to f32 first (a double difference differs in the last bit
  // wherever y and t have different exponents)
  const grads = outs.map((o, i) => o.values.map((y, j) => (2 * Math.fround(y - targets[i][j])) / o.values.length));
  b.student.backward(grads);
  b.student.update();
  for (const n of a.student.paramNames) assert.deepEqual(a.student.param(n), b.student.param(n), n);
  assert.throws(() => b.student.update(), (e) => e.code === 'invalid_arguments');
  assert.throws(() => b.student.backward([grads[0]]), (e) => e.code === 'invalid_arguments');
  assert.throws(() => trainGraph(OnnxModel.parse(bytes(7)), { extraOutputs: ['nope'] }), (e) => e.code === 'invalid_arguments' && e.reason === 'dangling_input');
  a.student.free();
  b.student.free();
});

test('prox zeroes blocks with Adam conditioners; params, moments and state round-trip', () => {
  const { student, targets } = pair({ trainer: { lr: 1e-2 } });
  assert.throws(() => student.prox('w1', [4, 9], 1, { view: [8, 27] }), (e) => e.code === 'invalid_arguments');
  student.step(X, targets);
  const v = student.secondMoments('w1');
  assert.equal(v.length, 216);
  assert.ok(v.some((x) => x > 0));
  const small = student.prox('w1', [4, 9], 1e-3, { view: [8, 27] });
  assert.equal(small.blocks, 6);
  const all = student.prox('w1', [4, 9], 1e6, { view: [8, 27] });
  assert.deepEqual(all, { zeroBlocks: 6, blocks: 6 });
  assert.ok(student.param('w1').every((x) => x === 0));
  assert.throws(() => student.prox('w2', [3, 1, 1, 1], 0.1), (e) => e.code === 'invalid_block_shape');
  assert.throws(() => student.prox('w2', [1], 0.1, { view: [5] }), (e) => e.code === 'shape_mismatch');
  assert.throws(() => student.prox('w2', [1, 1, 1, 1], 0.1, { bogus: 1 }), (e) => e.code === 'invalid_arguments');
  assert.deepEqual(student.paramShape('w2'), [4, 8, 1, 1]);

  student.setParam('w1', Float32Array.from({ length: 216 }, (_, i) => (i % 5) / 10));
  assert.throws(() => student.setParam('w1', new Float32Array(3)), (e) => e.code === 'shape_mismatch');
  student.step(X, targets);
  const state = student.saveState();
  assert.equal(state.length, student.stateBytes);
  const other = pair({ trainer: { lr: 1e-2 } }).student; // Adam's options are the trainer's, not the state's
  assert.throws(() => other.loadState(state.subarray(0, 100)), (e) => e.code === 'invalid_arguments');
  other.loadState(state);
  assert.equal(other.steps, 2);
  student.step(X, targets);
  other.step(X, targets);
  for (const n of student.paramNames) assert.deepEqual(other.param(n), student.param(n), n);
  student.free();
  other.free();
});
