// The language fidelity kinds (issue 37): language-model (next-token logits [B, S, V]: perplexity of
// both models, their ratio, top-1 agreement, KL) against values worked out by hand, and embedding
// (cosine per sample, nearest neighbours kept); detected on the tiny text models run through
// onnxruntime, and flowing through evaluate() and sensitivity().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import ort from 'onnxruntime-node';
import { build } from './build.mjs';
import { wordTokenizer, tinyDecoder, tinyEncoder, VOCAB } from './text-models.mjs';

build();
const O = await import('#onnx-internal');

const t = (dims, values) => Object.assign(Float32Array.from(values), { dims });
const close = (a, b, eps = 1e-9) => assert.ok(Math.abs(a - b) <= eps, `${a} != ${b}`);
const ids64 = (v) => ({ type: 'int64', data: BigInt64Array.from(v.map(BigInt)), dims: [1, v.length] });
// ln 3 as the float32 logits hold it: the hand values below are exact in reals, so they hold to float32 rounding (1e-6)
const L3 = Math.log(3);

test('language-model: perplexity by hand on a fixed tiny example; padding neither predicts nor is predicted', () => {
  // V = 2, S = 4. Softmax rows: [0, ln 3] -> (1/4, 3/4); [ln 3, 0] -> (3/4, 1/4).
  // ids [0, 1, 1, 0], mask [1, 1, 1, 0]: position 0 predicts ids[1] = 1 (p = 3/4), position 1 predicts
  // ids[2] = 1 (p = 1/4); position 2's next token is padding, position 3 is padding.
  // perplexity = exp(-(ln 3/4 + ln 1/4) / 2) = sqrt(16 / 3)
  const ref = t([1, 4, 2], [0, L3, L3, 0, 0, 0, 100, -100]);
  // the pruned model: uniform rows, so perplexity 2 and top-1 agreement on no row with a clear
  // argmax except ties broken to index 0 (rows 1 and 2: the original's argmax is 0 there)
  const out = t([1, 4, 2], [0, 0, 0, 0, 0, 0, 7, 7]);
  const inputs = [{ feeds: { input_ids: ids64([0, 1, 1, 0]), attention_mask: ids64([1, 1, 1, 0]) } }];
  const r = O.fidelity([{ logits: ref }], [{ logits: out }], { kinds: { logits: 'language-model' }, inputs });
  const o = r.outputs[0];
  assert.equal(o.kind, 'language-model');
  close(o.metrics.perplexityOriginal, Math.sqrt(16 / 3), 1e-6);
  close(o.metrics.perplexityPruned, 2, 1e-12);
  close(o.metrics.perplexityRatio, 2 / Math.sqrt(16 / 3), 1e-6);
  assert.equal(o.metrics.predictedTokens, 2);
  // 3 unmasked positions; argmax ref: 1, 0, 0; argmax pruned (ties to the first): 0, 0, 0
  assert.equal(o.metrics.positions, 3);
  close(o.score, 2 / 3);
  assert.equal(o.decisions, 3);
  // KL((1/4, 3/4) || (1/2, 1/2)) twice, KL(uniform || uniform) once, over 3 positions
  const kl = 0.25 * Math.log(0.5) + 0.75 * Math.log(1.5);
  close(o.metrics.meanKL, (2 * kl) / 3, 1e-6);
  // the same model: ratio 1, score 1, KL 0
  const same = O.fidelity([{ logits: ref }], [{ logits: ref }], { kinds: { logits: 'language-model' }, inputs }).outputs[0];
  assert.equal(same.score, 1);
  close(same.metrics.perplexityRatio, 1, 1e-12);
  close(same.metrics.meanKL, 0, 1e-12);
});

test('language-model: a batch of two sequences does not predict across their boundary; no ids, no perplexity', () => {
  // B = 2, S = 2, V = 2: row (b=0, t=1) must not be scored against (b=1, t=0)
  const ref = t([2, 2, 2], [0, L3, 0, 100, L3, 0, 0, 0]);
  const inputs = [{ feeds: { input_ids: { type: 'int64', data: BigInt64Array.from([0n, 1n, 0n, 0n]), dims: [2, 2] } } }];
  const o = O.fidelity([{ logits: ref }], [{ logits: ref }], { kinds: { logits: 'language-model' }, inputs }).outputs[0];
  // predicted: (0,0) -> ids[1] = 1 with p 3/4; (1,0) -> ids[3] = 0 with p 3/4
  assert.equal(o.metrics.predictedTokens, 2);
  close(o.metrics.perplexityOriginal, 4 / 3, 1e-6);
  const bare = O.fidelity([{ logits: ref }], [{ logits: ref }], { kinds: { logits: 'language-model' } }).outputs[0];
  assert.equal(bare.metrics.perplexityOriginal, undefined);
  assert.match(bare.detail, /no input_ids/);
  assert.throws(() => O.fidelity([{ logits: ref }], [{ logits: ref }], { inputs: [...inputs, ...inputs] }), /inputs are the samples/);
});

test('embedding: cosine per sample, neighbours kept, and [B, S, D] mean-pooled over the mask, by hand', () => {
  // 5 samples in 2-D; k = min(10, floor(4 / 2)) = 2 neighbours each
  const pts = [[1, 0], [0.9, 0.1], [0, 1], [0.1, 0.9], [1, 1]];
  const ref = pts.map((p) => ({ e: t([1, 2], p) }));
  const same = O.fidelity(ref, ref, { kinds: { e: 'embedding' } }).outputs[0];
  assert.equal(same.score, 1);
  assert.equal(same.metrics.neighbours, 2);
  assert.equal(same.metrics.neighboursKept, 1);
  // swap the axes of the last point only: its cosine stays 1 (it is on the diagonal), nothing moves
  // but a rotation of everything by 90 degrees keeps every neighbour and loses the cosine
  const rot = pts.map(([x, y]) => ({ e: t([1, 2], [-y, x]) }));
  const r = O.fidelity(ref, rot, { kinds: { e: 'embedding' } }).outputs[0];
  assert.equal(r.metrics.neighboursKept, 1);
  close(r.metrics.cosine, 0, 1e-12);
  assert.equal(r.score, 0);
  // mean pooling over the mask: [B=1, S=3, D=2], the last position padding
  const states = t([1, 3, 2], [1, 2, 3, 4, 100, 100]);
  const pooled = O.pooledRows({ ref: states, out: states, dims: [1, 3, 2] }, O.tokenRows({ feeds: { input_ids: ids64([5, 6, 0]), attention_mask: ids64([1, 1, 0]) } }));
  assert.deepEqual(Array.from(pooled.ref[0]), [2, 3]);
});

/** Both models over the samples in onnxruntime, as evaluate() does. */
async function runBoth(original, pruned, samples, opts = {}) {
  return O.evaluate(original, pruned, samples, { ort, sessionOptions: { logSeverityLevel: 3 }, ...opts });
}

const TEXT = Array.from({ length: 12 }, (_, i) => ['the cat sat on the mat.', 'a dog ran to the park, and then slept.', 'the big red house under a small blue tree.'][i % 3]).join(' ');

test('tiny decoder LM in onnxruntime: language-model detected from token inputs; pruning raises perplexity; the same model scores 1', async () => {
  const bytes = tinyDecoder();
  const model = O.OnnxModel.parse(bytes);
  const { samples } = O.textSamples({ text: TEXT, tokenizer: wordTokenizer('bos'), seqLen: 16, inputs: model.inputs, outputs: model.outputs });
  assert.ok(samples.length >= 4);
  const same = await runBoth(bytes, bytes, samples);
  assert.equal(same.outputs[0].kind, 'language-model');
  assert.equal(same.score, 1);
  assert.ok(same.outputs[0].metrics.perplexityOriginal > 1);
  assert.equal(same.outputs[0].metrics.perplexityRatio, 1);
  const pruned = O.OnnxModel.parse(bytes);
  O.pruneSparsity(pruned, { sparsity: 0.7 });
  const r = await runBoth(bytes, pruned, samples);
  const m = r.outputs[0].metrics;
  assert.ok(r.score < 1 && r.score > 0, `top-1 agreement ${r.score}`);
  assert.notEqual(m.perplexityRatio, 1);
  assert.ok(m.meanKL > 0);
  assert.equal(m.predictedTokens, samples.length * 15);
  // an image-free model without token inputs keeps the generic reading of the same logits
  const generic = O.fidelity([{ logits: t([1, 2, VOCAB], new Array(2 * VOCAB).fill(0)) }], [{ logits: t([1, 2, VOCAB], new Array(2 * VOCAB).fill(0)) }]);
  assert.equal(generic.outputs[0].kind, 'generic');
});

test('tiny encoder with mean pooling in onnxruntime: embedding detected; pruning loses cosine and neighbours', async () => {
  const bytes = tinyEncoder();
  const model = O.OnnxModel.parse(bytes);
  const lines = ['the cat sat on the mat.', 'a dog ran to the park.', 'the big red house.', 'a small blue tree.', 'the dog slept under the tree.', 'then the cat ran.', 'a red mat.', 'the park and the house.', 'big dog, small cat.', 'the blue house.', 'a tree, a mat.', 'the cat slept.'];
  const { samples } = O.textSamples({ lines, tokenizer: wordTokenizer('bert'), seqLen: 12, inputs: model.inputs, outputs: model.outputs });
  const same = await runBoth(bytes, bytes, samples);
  assert.equal(same.outputs[0].kind, 'embedding');
  assert.equal(same.score, 1);
  assert.equal(same.outputs[0].metrics.neighbours, 5);
  const pruned = O.OnnxModel.parse(bytes);
  O.pruneSparsity(pruned, { sparsity: 0.8 });
  const r = await runBoth(bytes, pruned, samples);
  const m = r.outputs[0].metrics;
  assert.ok(m.cosine < 1 && m.neighboursKept <= 1);
  close(r.score, Math.min(m.cosine, m.neighboursKept), 1e-12);
});

test('sensitivity reads the text kinds: the cells of the tiny decoder are scored by next-token agreement', async () => {
  const bytes = tinyDecoder();
  const model = O.OnnxModel.parse(bytes);
  const { samples } = O.textSamples({ text: TEXT, tokenizer: wordTokenizer('bos'), seqLen: 16, inputs: model.inputs, outputs: model.outputs });
  const res = await O.sensitivity(model, { ort, mode: 'sparsity', eval: samples.slice(0, 3), levels: [0.9], sessionOptions: { logSeverityLevel: 3 } });
  assert.ok(res.units.length >= 2);
  // a cell's fidelity is a share of 3 windows x 16 positions
  for (const u of res.units) for (const c of u.cells) assert.ok(Number.isInteger(Math.round(c.fidelity * 48)) && Math.abs(c.fidelity * 48 - Math.round(c.fidelity * 48)) < 1e-9, `${c.fidelity}`);
});

test('the tiny SmolLM2 export with its real tokenizer: decoder detected, windows of real text, perplexity of both models', async () => {
  const fs = await import('node:fs');
  const path = await import('node:path');
  const { HERE } = await import('./build.mjs');
  const bytes = new Uint8Array(fs.readFileSync(path.resolve(HERE, '../data/models/smollm2-tiny.onnx')));
  const tokenizer = JSON.parse(fs.readFileSync(path.resolve(HERE, '../data/tokenizers/smollm2-135m.json'), 'utf8'));
  const lines = JSON.parse(fs.readFileSync(path.resolve(HERE, '../data/text/lines.json'), 'utf8'));
  const model = O.OnnxModel.parse(bytes);
  const set = O.textSamples({ lines: lines.slice(0, 60), tokenizer, seqLen: 32, inputs: model.inputs, outputs: model.outputs, limit: 4 });
  assert.equal(set.kind, 'decoder');
  assert.deepEqual(Object.keys(set.samples[0].feeds).sort(), ['attention_mask', 'input_ids', 'position_ids']);
  const pruned = O.OnnxModel.parse(bytes);
  O.pruneSparsity(pruned, { sparsity: 0.5 });
  const r = await runBoth(bytes, pruned, set.samples, { vocabSize: set.vocabSize });
  const o = r.outputs[0];
  assert.equal(o.kind, 'language-model');
  assert.equal(o.metrics.predictedTokens, 4 * 31);
  // random weights: close to uniform over the vocabulary, so the perplexity is of its order
  assert.ok(o.metrics.perplexityOriginal > 1000 && o.metrics.perplexityOriginal < 5 * 49152, `${o.metrics.perplexityOriginal}`);
  assert.ok(Number.isFinite(o.metrics.perplexityRatio));
});
