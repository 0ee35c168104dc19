// Padded text batches cut to their longest real token (recover/trim-padding.ts): the same loss and the
// same step as the padded batch, on the tiny generated encoder of text-models.mjs and the committed
// BERT export; refused where cutting changes what the teacher computes; grouping by length.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import ort from 'onnxruntime-node';
import { build } from './build.mjs';
import { wordTokenizer, tinyEncoder } from './text-models.mjs';

build();
const O = await import('#onnx-internal');
const sk = await import('sparsekit-wasm');
const runner = O.makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });
const check = () => {};

const LINES = ['the cat sat on the mat.', 'a dog ran.', 'the big red house under a small blue tree.', 'then the dog sat.', 'a cat and a dog ran to the red house.', 'the blue mat.'];
const S = 12;
const samplesOf = (model, lines) => O.textSamples({ lines, tokenizer: wordTokenizer('bert'), seqLen: S, inputs: model.inputs, outputs: model.outputs }).samples;

/** A pruned encoder against its original, with `features`, its padding masked and trimming probed. */
async function setupOf(bytes, features, lines = LINES) {
  const teacher = O.OnnxModel.parse(bytes), student = O.OnnxModel.parse(bytes);
  O.pruneSparsity(student, { sparsity: 0.6 });
  const samples = samplesOf(teacher, lines);
  const setup = O.trainSetup(student, { sentence_embedding: 'embedding' });
  const tt = await O.teacherTargets(runner, teacher, setup, samples, check);
  const feats = await O.matchFeatures(runner, student, teacher, samples, { features, exclude: new Set(['sentence_embedding']), check });
  const { graph, losses } = O.withFeatures(setup.graph, O.lossesOf(setup), feats);
  const padding = O.maskPadding(samples, graph, losses, [...tt.dims, ...feats.map((f) => f.dims)], tt.values);
  const probed = await O.trimProbe(runner, teacher, setup, samples, tt.values);
  return { teacher, samples, setup, tt, feats, losses, padding, probed, trim: O.paddingTrim(samples, padding.graph.inputs, padding.mask, tt.dims.length, probed) };
}

test('a batch cut to its longest real token has the padded batch\'s loss and takes the same step', async () => {
  const { teacher, samples, tt, feats, losses, padding, probed, trim } = await setupOf(tinyEncoder(), ['t']);
  assert.equal(probed, true, 'the teacher gives the padded values on a cut sample');
  assert.ok(trim, 'trimming applies');
  const real = samples.map((s) => Array.from(s.feeds.attention_mask.data, Number).reduce((a, b) => a + b, 0));
  assert.deepEqual([...trim.lengths], real);
  assert.deepEqual([trim.perToken, trim.scaled], [[false, true], [false, true]], 'the embedding is pooled; the feature is a masked per-token MSE');
  // the short samples: their batch needs fewer tokens than the padding
  const idx = samples.map((_, k) => k).filter((k) => real[k] <= 6);
  const L = O.batchLength(trim, idx);
  assert.ok(idx.length >= 2 && L < S, `batch of ${idx.length}, ${L} tokens`);

  const ft = await O.FeatureTeacher.open(runner, teacher, feats);
  const padded = O.makeBatch(samples, padding.graph.inputs, idx, tt.values);
  padded.targets.push(...padding.features(await ft.batch(samples, idx), idx));
  const cut = O.trimBatch(O.makeBatch(samples, padding.graph.inputs, idx, tt.values), L, trim);
  const from = O.trimSamples(samples, idx, L, trim.tokens), j = idx.map((_, i) => i);
  cut.targets.push(...padding.features(await ft.batch(from, j), j, from));
  await ft.release();
  assert.deepEqual(cut.inputs.map((b) => b.shape), padded.inputs.map(() => [idx.length, L]));
  assert.deepEqual(cut.targets.map((t) => t.length), [padded.targets[0].length, padded.targets[1].length * L / S]);

  const a = new sk.Trainer(padding.graph, { lr: 1e-2, masked: false }), b = new sk.Trainer(padding.graph, { lr: 1e-2, masked: false });
  try {
    a.setLosses(losses); b.setLosses(O.trimmedLosses(losses, L, trim));
    const la = a.loss(padded.inputs, padded.targets), lb = b.loss(cut.inputs, cut.targets);
    assert.ok(Math.abs(la - lb) <= 1e-5 * la, `padded ${la} vs cut ${lb}`);
    // without the L / S weight the cut MSE is a mean over fewer elements: another loss
    b.setLosses(losses);
    const unscaled = b.loss(cut.inputs, cut.targets);
    assert.ok(Math.abs(unscaled - la) > 1e-3 * la, `unscaled ${unscaled} vs ${la}`);
    b.setLosses(O.trimmedLosses(losses, L, trim));
    // one step each: the same gradients, so the same parameters after it
    a.step(padded.inputs, padded.targets); b.step(cut.inputs, cut.targets);
    for (const n of a.paramNames) {
      const pa = a.param(n), pb = b.param(n);
      let d = 0, s = 0;
      for (let i = 0; i < pa.length; i++) { d = Math.max(d, Math.abs(pa[i] - pb[i])); s = Math.max(s, Math.abs(pa[i])); }
      assert.ok(d <= 1e-5 * s, `${n}: parameters differ by ${d} after one step`);
    }
  } finally { a.free(); b.free(); }
});

test('the committed BERT export: its last_hidden_state is the same on cut samples, so its batches are trimmed', async () => {
  const { modelBytes } = await import('./models.mjs');
  const bytes = modelBytes('bert-torch');
  const teacher = O.OnnxModel.parse(bytes), student = O.OnnxModel.parse(bytes);
  const lengths = [8, 5, 3, 6];
  const samples = lengths.map((n, k) => ({
    source: `s${k}`,
    feeds: {
      input_ids: { type: 'int64', dims: [1, 8], data: BigInt64Array.from({ length: 8 }, (_, i) => BigInt(i < n ? 1 + ((k * 37 + i * 101) % 998) : 0)) },
      attention_mask: { type: 'int64', dims: [1, 8], data: BigInt64Array.from({ length: 8 }, (_, i) => BigInt(i < n ? 1 : 0)) },
    },
  }));
  const setup = O.trainSetup(student, { last_hidden_state: 'embedding' });
  const tt = await O.teacherTargets(runner, teacher, setup, samples, check);
  assert.equal(await O.trimProbe(runner, teacher, setup, samples, tt.values), true);
  const padding = O.maskPadding(samples, setup.graph, O.lossesOf(setup), tt.dims, tt.values);
  const trim = O.paddingTrim(samples, padding.graph.inputs, padding.mask, tt.dims.length, true);
  assert.deepEqual([...trim.lengths], lengths);
  assert.equal(O.batchLength(trim, [1, 2]), 5);
});

test('no trimming where it would change what is computed or cannot be undone per batch', async () => {
  // attention over every position, the padded ones included (no key mask): a cut sample gives other values
  const unmasked = await setupOf(tinyEncoder({ torch: true }), ['t']);
  assert.equal(unmasked.probed, false);
  assert.equal(unmasked.trim, undefined);
  // a feature that is not per token (the pooled sum) cannot be cut with the batch
  const pooled = await setupOf(tinyEncoder(), ['t', 's']);
  assert.equal(pooled.probed, true);
  assert.equal(pooled.trim, undefined);
  // a left-padded sample
  const { samples, padding, tt } = await setupOf(tinyEncoder(), ['t']);
  const left = samples.map((s) => ({ ...s, feeds: { ...s.feeds, attention_mask: { ...s.feeds.attention_mask, data: s.feeds.attention_mask.data.slice().reverse() } } }));
  assert.equal(O.paddingTrim(left, padding.graph.inputs, padding.mask, tt.dims.length, true), undefined);
});

test('grouped by length: every sample once, batches of close lengths in a shuffled order; without lengths the order is unchanged', () => {
  const n = 400, size = 8;
  const lengths = Int32Array.from({ length: n }, (_, k) => 3 + ((k * 7919) % 29));
  const samples = Array.from({ length: n }, () => ({ source: '', feeds: { input_ids: { type: 'int64', dims: [1, 32], data: new BigInt64Array(32) } } }));
  const plain = O.epochBatches(samples, ['input_ids'], size, 1, 0), grouped = O.epochBatches(samples, ['input_ids'], size, 1, 0, lengths);
  assert.deepEqual(grouped.flat().sort((a, b) => a - b), samples.map((_, k) => k));
  assert.equal(grouped.length, plain.length);
  const tokens = (bs) => bs.reduce((a, b) => a + Math.max(...b.map((k) => lengths[k])) * b.length, 0) / n;
  assert.ok(tokens(grouped) < 0.8 * tokens(plain), `mean tokens per sample ${tokens(grouped)} grouped, ${tokens(plain)} not`);
  // not sorted over the epoch: the longest batches are not all first
  const maxOf = grouped.map((b) => Math.max(...b.map((k) => lengths[k])));
  assert.ok(maxOf.some((m, i) => i && m > maxOf[i - 1]), 'batch lengths are shuffled');
  assert.deepEqual(O.epochBatches(samples, ['input_ids'], size, 1, 0), plain, 'deterministic');
  assert.deepEqual(O.epochBatches(samples, ['input_ids'], size, 1, 3, lengths), O.epochBatches(samples, ['input_ids'], size, 1, 3, lengths));
});

test('recover refuses a trimPadding or groupByLength that is not a boolean, before anything runs', async () => {
  const bytes = tinyEncoder();
  const m = O.OnnxModel.parse(bytes);
  const samples = samplesOf(m, LINES);
  for (const bad of [{ trimPadding: 'yes' }, { groupByLength: 1 }]) {
    await assert.rejects(O.recover(O.OnnxModel.parse(bytes), m, samples, { ort: runner, ...bad }), (e) => e.code === 'invalid_value' && /must be true or false/.test(e.message));
  }
});

test('recover on padded text trims its batches and groups them by length by default; cut alone, it ends where the padded batches end', async () => {
  const bytes = tinyEncoder();
  const teacher = O.OnnxModel.parse(bytes);
  const lines = (n, shift) => Array.from({ length: n }, (_, i) => LINES[(i + shift) % LINES.length].split(' ').slice(i % 3).join(' '));
  const train = samplesOf(teacher, lines(24, 0)), held = samplesOf(teacher, lines(8, 2));
  const run = async (extra) => {
    const pruned = O.OnnxModel.parse(bytes);
    O.pruneSparsity(pruned, { sparsity: 0.8 });
    const rep = await O.recover(pruned, teacher, train, { ort: runner, evalSamples: held, steps: ['distill'], epochs: 3, lr: 3e-3, batchSize: 4, features: ['t'], ...extra });
    return { rep, w: pruned.readFloat(pruned.constants().get('w1').tensor) };
  };
  const cut = await run({ groupByLength: false }), padded = await run({ trimPadding: false }), grouped = await run({});
  assert.equal(padded.rep.distill.trimmed, undefined);
  assert.equal(cut.rep.distill.trimmed.tokens, S);
  assert.ok(cut.rep.distill.trimmed.meanTokens < S, `mean tokens ${cut.rep.distill.trimmed.meanTokens}`);
  assert.equal(cut.rep.distill.trimmed.grouped, false);
  assert.ok(grouped.rep.distill.trimmed.grouped && grouped.rep.distill.trimmed.meanTokens <= cut.rep.distill.trimmed.meanTokens);
  for (const k of ['teacherMs', 'stepMs', 'batchMs', 'scoreMs']) assert.ok(cut.rep.distill.timing[k] >= 0, k);
  // the same batches in the same order, the same steps: the same weights up to float rounding
  let d = 0, s = 0;
  for (let i = 0; i < cut.w.length; i++) { d = Math.max(d, Math.abs(cut.w[i] - padded.w[i])); s = Math.max(s, Math.abs(padded.w[i])); }
  assert.ok(d <= 1e-3 * s, `weights differ by ${d} (scale ${s})`);
  assert.equal(cut.rep.distill.history.length, padded.rep.distill.history.length);
});
