// The calibrated channel removal's 'fluctuation' score (FLAP's metric, as a share of each consumer's
// output fluctuation): a channel that carries a constant costs nothing once its mean is folded, however
// large its weights and activations, and goes first; consumers of different scales compete on their
// shares in global scope; a bad score value is a typed error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import ort from 'onnxruntime-node';
import { build } from './build.mjs';

build();
const O = await import('#onnx-internal');
const G = await import('./graphs.mjs');
const { twoConstantLayers } = await import('./constant-channels.mjs');
const runner = O.makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });

/**
 * x (4) -> MatMul W1 -> Add b1 -> Relu -> MatMul W2 (8 -> 3) -> y. Hidden channels 4..7 output
 * constants and have the largest output weights: 4 and 5 large input weights and bias -100 (always 0
 * after the Relu), 6 and 7 zero input weights and bias 3 (always 3).
 */
function constantChannels() {
  const r = G.rng(11);
  const w1 = Float32Array.from({ length: 32 }, (_, i) => ((i % 8) < 4 ? r() : (i % 8) < 6 ? 3 * r() : 0));
  const b1 = Float32Array.from({ length: 8 }, (_, c) => (c < 4 ? 0.1 : c < 6 ? -100 : 3));
  const w2 = Float32Array.from({ length: 24 }, (_, i) => (Math.floor(i / 3) < 4 ? 0.3 : 2) * r());
  return G.makeModel({
    inputs: [['x', [1, 10, 4]]], outputs: [['y', [1, 10, 3]]],
    inits: { W1: { dims: [4, 8], data: w1 }, b1: { dims: [8], data: b1 }, W2: { dims: [8, 3], data: w2 } },
    nodes: [['MatMul', ['x', 'W1'], ['h']], ['Add', ['h', 'b1'], ['hb']], ['Relu', ['hb'], ['hr']], ['MatMul', ['hr', 'W2'], ['y']]],
  });
}

/** x (6) -> W1, b1, Relu (8) -> W2, b2, Relu (8) -> W3 (8 -> 4) -> y, the last consumer's weights times `scale3`. */
function twoLayers(scale3) {
  const r = G.rng(5);
  const rand = (n, s) => Float32Array.from({ length: n }, () => s * r());
  const w1 = rand(48, 0.6), b1 = rand(8, 0.2), w2 = rand(64, 0.5), b2 = rand(8, 0.2), w3 = rand(32, 0.5).map((v) => v * scale3);
  return G.makeModel({
    inputs: [['x', [1, 12, 6]]], outputs: [['y', [1, 12, 4]]],
    inits: { W1: { dims: [6, 8], data: w1 }, b1: { dims: [8], data: b1 }, W2: { dims: [8, 8], data: w2 }, b2: { dims: [8], data: b2 }, W3: { dims: [8, 4], data: w3 } },
    nodes: [
      ['MatMul', ['x', 'W1'], ['h']], ['Add', ['h', 'b1'], ['hb']], ['Relu', ['hb'], ['hr']],
      ['MatMul', ['hr', 'W2'], ['g']], ['Add', ['g', 'b2'], ['gb']], ['Relu', ['gb'], ['gr']],
      ['MatMul', ['gr', 'W3'], ['y']],
    ],
  });
}

const calib = (bytes, count, set) => O.makeInputSet(O.OnnxModel.parse(bytes), { count, generator: 'generic', ...(set ? { set } : {}) });

test('fluctuation removes the constant channels (exact once their means are folded); activations keeps them', async () => {
  const bytes = constantChannels();
  const calibration = calib(bytes, 16), heldOut = calib(bytes, 8, 'heldOut');
  const reference = await O.runSet(runner, bytes, heldOut);
  const w2 = O.OnnxModel.parse(bytes).readFloat(O.OnnxModel.parse(bytes).weights.find((w) => w.name === 'W2'));
  const out = {};
  for (const score of ['fluctuation', 'activations']) {
    const m = O.OnnxModel.parse(bytes);
    const r = await O.removeChannelsCalibrated(m, { ort: runner, calibration, fraction: 0.5, roundTo: 1, method: 'wanda', score });
    assert.equal(r.options.score, score);
    out[score] = { model: m, outputs: await O.runSet(runner, m.encode(), heldOut) };
  }
  // Wanda leaves kept columns as they are: W2's rows after removal are the kept channels' rows.
  const kept = out.fluctuation.model.readFloat(out.fluctuation.model.weights.find((w) => w.name === 'W2'));
  assert.deepEqual(Array.from(kept), Array.from(w2.subarray(0, 12)), 'channels 0..3 kept, 4..7 removed');
  for (let i = 0; i < reference.length; i++) {
    const scale = Math.max(1, ...reference[i].y.map(Math.abs));
    assert.ok(G.maxAbsDiff(out.fluctuation.outputs[i].y, reference[i].y) <= 1e-5 * scale, 'removing constant channels with their means folded changes nothing');
  }
  // Activation RMS ranks the constant channels first (3 and the largest weights) and removes the varying ones.
  const keptA = out.activations.model.readFloat(out.activations.model.weights.find((w) => w.name === 'W2'));
  assert.deepEqual(Array.from(keptA), Array.from(w2.subarray(12, 24)), 'activations: channels 4..7 kept');
  const worst = Math.max(...reference.map((ref, i) => G.maxAbsDiff(out.activations.outputs[i].y, ref.y)));
  assert.ok(worst > 0.05, `activations: outputs move (${worst})`);
});

test('fluctuation in global scope: a consumer scaled by 100 does not move the removal to the other layer', async () => {
  const decide = async (scale3, score) => {
    const bytes = twoLayers(scale3);
    const m = O.OnnxModel.parse(bytes);
    const r = await O.removeChannelsCalibrated(m, { ort: runner, calibration: calib(bytes, 16), fraction: 0.5, roundTo: 1, method: 'wanda', score, scope: 'global' });
    return Object.fromEntries(m.weights.map((w) => [w.name, w.dims.join('x')]).concat([['removed', r.groups.removed.map((g) => `${g.producers.join('+')}:${g.channelsAfter}`).sort().join(' ')]]));
  };
  const base = await decide(1, 'fluctuation');
  assert.notEqual(base.W2.split('x')[0], '8', 'the first hidden layer loses channels');
  assert.notEqual(base.W2.split('x')[1], '8', 'the second hidden layer loses channels');
  assert.deepEqual(await decide(100, 'fluctuation'), base);
  // The weights' own norms (scored per element in global scope) do move it: the test sees a difference.
  assert.notDeepEqual(await decide(100, 'weights'), await decide(1, 'weights'));
});

test('a score other than activations, fluctuation or weights is refused before any change', async () => {
  const bytes = constantChannels();
  const m = O.OnnxModel.parse(bytes);
  await assert.rejects(O.removeChannelsCalibrated(m, { ort: runner, calibration: calib(bytes, 4), fraction: 0.5, score: 'variance' }), (e) => e.code === 'invalid_arguments');
  assert.deepEqual(m.encode(), bytes);
  assert.throws(() => O.checkJob({ mode: { kind: 'channels', fraction: 0.2, score: 'fluctuation' } }), (e) => /mode\.score/.test(e.message));
});

test('later consumers are captured with the earlier ones\' means in the graph: constant channels in two layers go exactly', async () => {
  // x (4) -> W1, b1, Relu (8) -> W2, b2, Relu (8) -> W3 (8 -> 3) -> y. Channels 4..7 of the first hidden
  // layer output 3; channels 4..7 of the second read only those and output 5 + 3 * (their weights' sum).
  // Without the first layer's mean in the graph, the second layer's constants are captured as 5.
  const bytes = twoConstantLayers();
  const heldOut = calib(bytes, 8, 'heldOut');
  const reference = await O.runSet(runner, bytes, heldOut);
  for (const method of ['wanda', 'sparsegpt']) {
    const m = O.OnnxModel.parse(bytes);
    const nodes = O.OnnxModel.parse(bytes).graph.node.length;
    const r2 = await O.removeChannelsCalibrated(m, { ort: runner, calibration: calib(bytes, 16), fraction: 0.5, roundTo: 1, method, score: 'fluctuation', percDamp: 0.1 });
    assert.equal(r2.groups.removed.length, 2, 'both hidden layers lose channels');
    assert.ok(!m.graph.node.some((n) => /calib_shift/.test(n.name)) && m.graph.node.length <= nodes + 2, 'the capture-time Adds are gone');
    const outs = await O.runSet(runner, m.encode(), heldOut);
    for (let i = 0; i < reference.length; i++) {
      const scale = Math.max(1, ...reference[i].y.map(Math.abs));
      assert.ok(G.maxAbsDiff(outs[i].y, reference[i].y) <= 1e-4 * scale, `${method}: ${G.maxAbsDiff(outs[i].y, reference[i].y)}`);
    }
  }
});

test('channels removed twice, their means folded each time: the second cut names its new nodes apart from the first cut\'s', async () => {
  const bytes = constantChannels();
  const calibration = calib(bytes, 16), heldOut = calib(bytes, 8, 'heldOut');
  const m = O.OnnxModel.parse(bytes);
  const opts = { ort: runner, calibration, fraction: 0.5, roundTo: 1, method: 'wanda', score: 'fluctuation' };
  const first = await O.removeChannelsCalibrated(m, opts);
  const second = await O.removeChannelsCalibrated(m, opts);
  assert.ok(first.folded.created >= 1 && second.folded.created >= 1, JSON.stringify([first.folded, second.folded]));
  const names = m.graph.node.map((n) => n.name).filter(Boolean);
  assert.equal(new Set(names).size, names.length, names.join(', '));
  assert.equal((await O.runSet(runner, m.encode(), heldOut)).length, heldOut.length, 'onnxruntime loads and runs it');
});
