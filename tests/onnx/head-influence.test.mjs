// The 'influence' channel score: each attention head's measured effect on the outputs when its
// output is replaced by its calibration mean (calib/head-influence.ts). Checked against the same
// ablation done by hand in the weights (a head whose value projection is zero outputs its value bias,
// whatever the attention does), on a real BERT export (tests/gen/export_bert.py, random init): the
// figure per head, and the removal of the heads that matter least.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import ort from 'onnxruntime-node';
import { build } from './build.mjs';

build();
const O = await import('#onnx-internal');
const G = await import('./graphs.mjs');
const M = await import('./models.mjs');
const runner = O.makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });

const HEADS = 4, HEAD = 16, WIDTH = 64, S = 7;
const at = (layer) => `/bert/encoder/layer.${layer}/attention`;
const projInput = (layer) => `${at(layer)}/self/Reshape_3_output_0`;
const projNode = (layer) => `${at(layer)}/output/dense/MatMul`;

/** Samples of 7 tokens, the last two of every other one padding. */
function samples(count, seed) {
  const r = G.rng(seed);
  return Array.from({ length: count }, (_, k) => ({
    source: `sample ${k}`,
    feeds: {
      input_ids: { type: 'int64', data: BigInt64Array.from({ length: S }, () => BigInt(Math.floor(r() * 999))), dims: [1, S] },
      attention_mask: { type: 'int64', data: BigInt64Array.from({ length: S }, (_, i) => (k % 2 && i >= S - 2 ? 0n : 1n)), dims: [1, S] },
    },
  }));
}

const ortFeeds = (s) => Object.fromEntries(Object.entries(s.feeds).map(([n, t]) => [n, new ort.Tensor(t.type, t.data, t.dims)]));

/** Per layer, the mean of each feature of the output projection's input over every row of `set` (padding included, as calibration's moments count them). */
async function projMeans(bytes, set) {
  const m = O.OnnxModel.parse(bytes);
  for (const l of [0, 1]) m.graph.output.push({ name: projInput(l), type: { tensor_type: { elem_type: 1 } } });
  const session = await ort.InferenceSession.create(m.encode());
  const means = [new Float64Array(WIDTH), new Float64Array(WIDTH)];
  let rows = 0;
  for (const s of set) {
    const out = await session.run(ortFeeds(s));
    for (const l of [0, 1]) {
      const x = out[projInput(l)].data;
      for (let i = 0; i < x.length; i++) means[l][i % WIDTH] += x[i];
    }
    rows += S;
  }
  return means.map((v) => v.map((x) => x / rows));
}

/** Mean over samples of the mean over real tokens of 1 − cos(row of a, row of b). */
async function distance(bytesA, bytesB, set) {
  const [a, b] = await Promise.all([bytesA, bytesB].map((x) => ort.InferenceSession.create(x)));
  let total = 0;
  for (const s of set) {
    const [x, y] = [(await a.run(ortFeeds(s))).last_hidden_state.data, (await b.run(ortFeeds(s))).last_hidden_state.data];
    let sum = 0, n = 0;
    for (let t = 0; t < S; t++) {
      if (s.feeds.attention_mask.data[t] === 0n) continue;
      let d = 0, nx = 0, ny = 0;
      for (let i = t * WIDTH; i < (t + 1) * WIDTH; i++) { d += x[i] * y[i]; nx += x[i] ** 2; ny += y[i] ** 2; }
      sum += 1 - d / Math.sqrt(nx * ny);
      n++;
    }
    total += sum / n / set.length;
  }
  return total;
}

/** The model with head `h` of `layer` answering its mean: its value weights zero, its value bias the mean. */
function ablatedByHand(bytes, layer, h, mean) {
  const m = O.OnnxModel.parse(bytes);
  const node = m.graph.node.find((n) => n.name === `${at(layer)}/self/value/MatMul`);
  const w = m.weight(node.input[1]);
  const wv = m.readFloat(w);
  for (let i = 0; i < WIDTH; i++) for (let j = h * HEAD; j < (h + 1) * HEAD; j++) wv[i * WIDTH + j] = 0;
  m.writeFloat(m.constants().get(node.input[1]).tensor, wv);
  const biasName = `bert.encoder.layer.${layer}.attention.self.value.bias`;
  const bias = m.readFloat(m.constants().get(biasName).tensor);
  for (let j = h * HEAD; j < (h + 1) * HEAD; j++) bias[j] = mean[j];
  m.writeFloat(m.constants().get(biasName).tensor, bias);
  return m.encode();
}

const unit = (layer, h, mean) => ({ consumers: [{ node: projNode(layer), input: projInput(layer), width: WIDTH, mean, positions: Array.from({ length: HEAD }, (_, i) => h * HEAD + i) }] });

test('a head\'s measured influence is the output change of that head answering its mean, as done by hand in the weights', async () => {
  const bytes = M.modelBytes('bert-torch');
  const set = samples(6, 3);
  const means = await projMeans(bytes, set);
  // (random weights: a head moves the normalized outputs by 3e-6 to 6e-6 of cosine; the figures agree to 1e-7 of themselves)
  const units = [[0, 0], [0, 3], [1, 1], [1, 2]];
  const measured = await O.headInfluence(O.OnnxModel.parse(bytes), runner, set, units.map(([l, h]) => unit(l, h, means[l])));
  for (const [k, [l, h]] of units.entries()) {
    const byHand = await distance(bytes, ablatedByHand(bytes, l, h, means[l]), set);
    assert.ok(byHand > 1e-6, `layer ${l} head ${h} changes the outputs (${byHand})`);
    assert.ok(Math.abs(measured[k] - byHand) <= 1e-3 * byHand, `layer ${l} head ${h}: measured ${measured[k]}, by hand ${byHand}`);
  }
  // The model is left as it was: same bytes after.
  const m = O.OnnxModel.parse(bytes);
  await O.headInfluence(m, runner, set, [unit(0, 1, means[0])]);
  assert.deepEqual(m.encode(), O.OnnxModel.parse(bytes).encode());
});

test('score influence removes the head the next LayerNorm erases, which fluctuation keeps; a bad score is refused', async () => {
  // Head 2 of each layer writes the same value into every feature of its output projection (its rows
  // constant along the outputs, and large): BERT's LayerNorm after the residual add subtracts the mean
  // over the features, so that head cannot change the outputs, while its share of the projection's
  // output fluctuation is the largest of the four.
  const src = O.OnnxModel.parse(M.modelBytes('bert-torch'));
  const r = G.rng(9);
  for (const l of [0, 1]) {
    const name = src.graph.node.find((n) => n.name === projNode(l)).input[1];
    const w = src.readFloat(src.weight(name));
    for (let i = 2 * HEAD; i < 3 * HEAD; i++) { const v = r() < 0.5 ? -1 : 1; for (let j = 0; j < WIDTH; j++) w[i * WIDTH + j] = v; }
    src.writeFloat(src.constants().get(name).tensor, w);
  }
  const bytes = src.encode();
  const removedHeads = async (score) => {
    const m = O.OnnxModel.parse(bytes);
    const heads = O.findChannelGroups(m).groups.filter((g) => g.prunable && g.channels === HEADS).map((g) => g.id);
    assert.equal(heads.length, 2);
    const rep = await O.removeChannelsCalibrated(m, { ort: runner, calibration: samples(8, 5), fraction: 0.25, roundTo: 1, method: 'wanda', score, apply: 'mask', filter: (g) => heads.includes(g.id) });
    assert.equal(rep.options.score, score);
    return [0, 1].map((l) => {
      const q = m.readFloat(m.weight(m.graph.node.find((n) => n.name === `${at(l)}/self/query/MatMul`).input[1]));
      return [0, 1, 2, 3].filter((h) => { for (let i = 0; i < WIDTH; i++) for (let j = h * HEAD; j < (h + 1) * HEAD; j++) if (q[i * WIDTH + j] !== 0) return false; return true; });
    });
  };
  assert.deepEqual(await removedHeads('influence'), [[2], [2]], 'influence: the erased head goes in each layer');
  const byFluctuation = await removedHeads('fluctuation');
  assert.ok(byFluctuation.every((hs) => hs.length === 1 && hs[0] !== 2), `fluctuation keeps it: removed ${JSON.stringify(byFluctuation)}`);
  await assert.rejects(O.removeChannelsCalibrated(O.OnnxModel.parse(bytes), { ort: runner, calibration: samples(2, 5), fraction: 0.25, score: 'influences' }), /score must be activations, weights, fluctuation or influence/);
});

test('influence is measured on the first samples, up to a count and, for token ids, up to a number of positions', () => {
  const windows = (count, len) => Array.from({ length: count }, (_, k) => ({ source: `w${k}`, feeds: { input_ids: { type: 'int64', data: new BigInt64Array(len), dims: [1, len] } } }));
  const names = (set) => set.map((s) => s.source);
  assert.deepEqual(names(O.influenceSamples(windows(32, 256), 64, 2048)), ['w0', 'w1', 'w2', 'w3', 'w4', 'w5', 'w6', 'w7'], '8 windows of 256 tokens');
  assert.equal(O.influenceSamples(windows(100, 32), 64, 2048).length, 64, '64 sentences of 32 tokens: the sample cap');
  assert.deepEqual(names(O.influenceSamples(windows(3, 4096), 64, 2048)), ['w0'], 'a window longer than the budget: still one sample');
  const images = Array.from({ length: 80 }, (_, k) => ({ source: `i${k}`, feeds: { pixel_values: { type: 'float32', data: new Float32Array(12), dims: [1, 3, 2, 2] } } }));
  assert.equal(O.influenceSamples(images, 64, 2048).length, 64, 'no token ids: the sample cap alone');
  assert.deepEqual(O.influenceSamples([], 64, 2048), []);
});
