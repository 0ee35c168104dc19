// Sequential calibration in one sweep (calib/sweep.ts): calibratePrune captures each group's inputs
// from the previous cut instead of re-running the model, and must give the weights the re-running
// reference gives (tests/onnx/calib-reference.mjs), to float rounding: on the small graphs (skips,
// concat, depthwise, Gemm after Flatten, float16 weights behind Cast, Constant-node weights, a weight
// used twice) and on PaddleOCR det and cls. Each node runs about once per sample.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import ort from 'onnxruntime-node';
import { build } from './build.mjs';
import { calibratePruneByReruns, weightDistance } from '../../kit/calib-reference.mjs';

build();
const O = await import('#onnx-internal');
const G = await import('./graphs.mjs');
const { DET, CLS } = await import('../e2e/helpers.mjs');
const runner = O.makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });

/** The same prune both ways on two copies of `bytes`; returns the new report and the distance of the weights. */
async function both(bytes, calibration, opts) {
  const a = O.OnnxModel.parse(bytes), b = O.OnnxModel.parse(bytes);
  const rep = await O.calibratePrune(a, { ort: runner, calibration, ...opts });
  await calibratePruneByReruns(b, { runner, calibration, ...opts });
  return { rep, d: weightDistance(a, b), a };
}

/** A weight used twice: W1 feeds a layer of the first group and, again, a value read by a later group. */
const sharedWeight = () => G.makeModel({
  inputs: [['x', [4, 16]]], outputs: [['y', [4, 8]]],
  inits: { W1: { dims: [16, 16] }, W3: { dims: [16, 16] }, W4: { dims: [16, 8] } },
  nodes: [
    ['MatMul', ['x', 'W1'], ['a']],      // layer W1 (group 1)
    ['MatMul', ['x', 'W1'], ['c']],      // W1 again: c changes when W1 is pruned
    ['MatMul', ['c', 'W3'], ['d']],      // layer W3, captured with W1 (group 1)
    ['Add', ['a', 'c'], ['s']],
    ['Relu', ['s'], ['r']],
    ['Add', ['r', 'd'], ['t']],
    ['MatMul', ['t', 'W4'], ['y']],      // layer W4: its input needs c and d recomputed with W1, W3 pruned
  ],
});

const SMALL = [
  ['residual', () => G.residual()], ['residual, float16 weights behind Cast', () => G.residual('fp16')],
  ['residual, Constant-node weights', () => G.residual('constant')], ['concat', () => G.concat()],
  ['depthwise', () => G.depthwise()], ['flatten + Gemm', () => G.flattenGemm()], ['mlp', () => G.mlp()],
  ['unhandled op', () => G.unhandled()], ['convTranspose', () => G.convTranspose()], ['shared weight', sharedWeight],
];

for (const [name, make] of SMALL) {
  test(`sweep = re-running reference, to float rounding: ${name}`, async () => {
    const bytes = make();
    const calibration = O.makeInputSet(O.OnnxModel.parse(bytes), { count: 6 });
    for (const opts of [{ sparsity: 0.5, criterion: 'sparsegpt', percDamp: 0.01, minVectors: 0 }, { sparsity: 0.6, criterion: 'wanda' }, { nm: [2, 4], criterion: 'sparsegpt', minVectors: 0 }]) {
      if (opts.nm && !O.findLayers(O.OnnxModel.parse(bytes)).some((l) => O.allowsNm(l, 4))) continue;
      const { rep, d } = await both(bytes, calibration, opts);
      assert.ok(d.maskDiff === 0 && d.rel < 1e-5, `${JSON.stringify(opts)}: ${JSON.stringify(d)}`);
      const s = rep.sweep;
      assert.equal(s.sessions, rep.passes);
      assert.equal(s.runs, s.sessions * calibration.length);
      // Every node that is not a constant (Constant, Cast of a weight) runs at most once per sample.
      const model = O.OnnxModel.parse(bytes);
      const constants = model.graph.node.filter((n) => n.op_type === 'Constant' || (n.op_type === 'Cast' && model.weights.some((w) => w.name === n.input[0]))).length;
      assert.ok(s.nodeRuns <= (s.graphNodes - constants) * calibration.length + constants * s.runs, `${s.nodeRuns} node runs, ${s.graphNodes} nodes`);
      assert.ok(Math.abs(rep.time.model + rep.time.library - rep.ms) <= 2, 'model + library = total');
    }
  });
}

test('shared weight: what was computed from a weight not yet pruned is recomputed, not cached', async () => {
  const m = O.OnnxModel.parse(sharedWeight());
  assert.deepEqual(O.captureGroups(O.findLayers(m)).map((g) => g.map((l) => l.name)), [['W1', 'W3'], ['W4']]);
  const calibration = O.makeInputSet(m, { count: 3 });
  const rep = await O.calibratePrune(m, { ort: runner, calibration, sparsity: 0.5, percDamp: 0.01, minVectors: 0 });
  // group 1: MatMul W1 (twice; c is computed from W1, which changes), MatMul W3; group 2 recomputes c, d, a and the rest.
  assert.equal(rep.sweep.nodeRuns, (1 + 6) * calibration.length);
});

test('the old cut is let go sample by sample: a chain holds one cut and one sample at most, not two cuts', async () => {
  // x -> MatMul W1 -> Relu -> r1 -> MatMul W2 -> Relu -> r2 -> MatMul W3 -> Relu -> r3 -> MatMul W4 -> y: one layer
  // per group, so each capture reads the previous cut (r_k, 6 samples of 4 x 16 floats) and makes the next.
  const n = 6, sample = 4 * 16 * 4;
  const bytes = G.makeModel({
    inputs: [['x', [4, 16]]], outputs: [['y', [4, 16]]],
    inits: Object.fromEntries([1, 2, 3, 4].map((i) => [`W${i}`, { dims: [16, 16] }])),
    nodes: [1, 2, 3, 4].flatMap((i) => [['MatMul', [i === 1 ? 'x' : `r${i - 1}`, `W${i}`], [i === 4 ? 'y' : `a${i}`]], ...(i < 4 ? [['Relu', [`a${i}`], [`r${i}`]]] : [])]),
  });
  const calibration = O.makeInputSet(O.OnnxModel.parse(bytes), { count: n });
  const { rep, d } = await both(bytes, calibration, { sparsity: 0.5, criterion: 'wanda' });
  assert.ok(d.maskDiff === 0 && d.rel === 0, JSON.stringify(d));
  assert.deepEqual(rep.sweep.sessions, 3);
  assert.equal(rep.sweep.peakCacheBytes, (n + 1) * sample, 'r_k of every sample and r_k+1 of one');
});

test('Sweep: float16 activations cut and fed again; a value needed by later captures is held, the rest dropped', async () => {
  // x (float16) -> Mul(x, 2) -> h (float16, the cut) -> Cast -> MatMul W -> y;  h also read by a later Add.
  const bytes = G.makeModel({
    inputs: [['x', [2, 8], O.DT.FLOAT16]], outputs: [['y', [2, 8]]],
    inits: { W: { dims: [8, 8] }, two: { dims: [1], data: [2] } },
    nodes: [['Cast', ['two'], ['two16'], { to: O.DT.FLOAT16 }], ['Mul', ['x', 'two16'], ['h']], ['Cast', ['h'], ['hf'], { to: 1 }],
      ['MatMul', ['hf', 'W'], ['m']], ['Add', ['m', 'hf'], ['y']]],
  });
  const m = O.OnnxModel.parse(bytes);
  const samples = O.makeInputSet(m, { count: 2 });
  const sweep = new O.Sweep(m, runner, samples);
  const seen = [];
  await sweep.capture(['h'], (name, t, k) => seen.push([name, t.type, k]));
  assert.deepEqual(seen, [['h', 'float16', 0], ['h', 'float16', 1]]);
  await sweep.capture(['m'], (name, t) => assert.deepEqual(t.dims, [2, 8]));
  assert.equal(sweep.stats.sessions, 2);
  // The second segment starts from the cut h: Cast, MatMul (2 nodes), not from x.
  assert.equal(sweep.stats.nodeRuns, 2 * 2 + 2 * 2);
  const x = O.halfArrayToFloat(samples[0].feeds.x.data);
  let got;
  await O.capture(runner, m, ['hf'], samples.slice(0, 1), (name, t) => { got = O.outputAsFloat(t); });
  assert.deepEqual(Array.from(got), Array.from(x, (v) => 2 * v));
});

for (const [name, file, count] of [['cls', CLS, 4], ['det', DET, 2]]) {
  test(`PaddleOCR ${name}, SparseGPT 50%, ${count} samples: sweep = re-running reference; about one run of the model`, async () => {
    const bytes = fs.readFileSync(file);
    const calibration = O.makeInputSet(O.OnnxModel.parse(bytes), { count });
    const { rep, d } = await both(bytes, calibration, { sparsity: 0.5, criterion: 'sparsegpt', percDamp: 0.1 });
    assert.ok(d.maskDiff < 1e-3 && d.rel < 1e-3, JSON.stringify(d));
    const s = rep.sweep;
    const perRun = s.nodeRuns / s.graphNodes / count;
    assert.ok(perRun <= 1.05, `${perRun.toFixed(2)} runs of the model`);
    assert.ok(s.peakCacheBytes > 0);
  });
}

test('over the cut budget, a Llama-shaped decoder recomputes positions and its layers\' inputs from the residual stream: the same weights, a smaller cut', async () => {
  const bytes = fs.readFileSync(new URL('../data/models/smollm2-tiny-gqa.onnx', import.meta.url));
  const calibration = O.makeInputSet(O.OnnxModel.parse(bytes), { count: 4 });
  for (const criterion of ['wanda', 'sparsegpt']) {
    const opts = { ort: runner, calibration, sparsity: 0.5, criterion, percDamp: 0.01, minVectors: 0 };
    const cached = O.OnnxModel.parse(bytes), recomputed = O.OnnxModel.parse(bytes);
    const a = await O.calibratePrune(cached, { ...opts, cacheBudget: Infinity });
    const b = await O.calibratePrune(recomputed, { ...opts, cacheBudget: 0 });
    assert.equal(a.sweep.recomputed, 0);
    assert.ok(b.sweep.recomputed > 0);
    for (const w of cached.prunable()) assert.deepEqual(recomputed.readFloat(recomputed.weight(w.name)), cached.readFloat(w), `${criterion}: ${w.name}, bit for bit`);
    assert.deepEqual(b.layers.map((l) => l.relError), a.layers.map((l) => l.relError));
    // the cut of the cached run holds 2 to 4 values a token besides the residual stream; the causal
    // mask stays in both (it reads the embedding table: next test)
    assert.ok(b.sweep.peakCacheBytes < 0.8 * a.sweep.peakCacheBytes, `${b.sweep.peakCacheBytes} vs ${a.sweep.peakCacheBytes}`);
    assert.ok(b.sweep.nodeRuns > a.sweep.nodeRuns);
  }
  await assert.rejects(O.calibratePrune(O.OnnxModel.parse(bytes), { ort: runner, calibration, sparsity: 0.5, cacheBudget: -1 }), (e) => e.code === 'invalid_arguments');
});

test('a value computed through a table larger than one sample of it is cut, not recomputed: the embedding table is in block 0\'s segments only', async () => {
  // The decoder's causal mask reads Shape(token embeddings): recomputing it would put the whole
  // embedding table (1024 x 16 floats here) in every block's attention segment.
  const bytes = fs.readFileSync(new URL('../data/models/smollm2-tiny-gqa.onnx', import.meta.url));
  const m = O.OnnxModel.parse(bytes);
  const table = m.weight('model.model.embed_tokens.weight');
  const tableBytes = table.numel * 4;
  const blocks = new Set(O.findLayers(m).map((l) => /layers\.(\d+)/.exec(l.node)?.[1])).size;
  assert.ok(blocks >= 2, `${blocks} blocks`);
  const calibration = O.makeInputSet(m, { count: 4 });
  for (const cutStore of [undefined, await O.fileCutStore()]) {
    const sizes = [];
    const counting = { async createSession(b) { sizes.push(b.length); return runner.createSession(b); } };
    const rep = await O.calibratePrune(O.OnnxModel.parse(bytes), { ort: counting, calibration, sparsity: 0.5, criterion: 'sparsegpt', percDamp: 0.01, minVectors: 0, cacheBudget: 0, cutStore });
    assert.equal(sizes.length, rep.sweep.sessions);
    const withTable = sizes.filter((n) => n > tableBytes).length;
    assert.ok(withTable >= 1 && withTable <= 2, `${withTable} of ${sizes.length} segments carry the ${tableBytes}-byte table (${blocks} blocks)`);
    assert.ok(rep.sweep.recomputed > 0, 'positions and layer inputs are still recomputed');
  }
});
