// Padded text in a distillation (recover/token-mask.ts): a per-token loss counts the real tokens
// only. The tiny generated encoder of text-models.mjs, samples padded to 12 tokens.
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
/** The teacher's targets as arrays of their own (per trained tensor, per sample), to be zeroed in place. */
const copies = (values) => Array.from({ length: values.outputs }, (_, o) => values.perSample(o).map((v) => Float32Array.from(v)));

const LINES = ['the cat sat on the mat.', 'a dog ran.', 'the big red house under a small blue tree.', 'then the dog sat.', 'a cat and a dog ran to the red house.', 'the blue mat.'];
const samplesOf = (model, lines, seqLen = 12) => O.textSamples({ lines, tokenizer: wordTokenizer('bert'), seqLen, inputs: model.inputs, outputs: model.outputs }).samples;

/** A pruned tiny encoder against its original, with a per-token tensor (before the mask) and the pooled sum as features. */
async function setupOf() {
  const bytes = tinyEncoder();
  const teacher = O.OnnxModel.parse(bytes), student = O.OnnxModel.parse(bytes);
  O.pruneSparsity(student, { sparsity: 0.6 });
  const samples = samplesOf(teacher, LINES);
  const setup = O.trainSetup(student, { sentence_embedding: 'embedding' });
  const tt = await O.teacherTargets(runner, teacher, setup, samples, check);
  const features = await O.matchFeatures(runner, student, teacher, samples, { features: ['t', 's'], exclude: new Set(['sentence_embedding']), check });
  return { teacher, student, samples, setup, tt, features };
}

test('a per-token loss of padded text ignores the padded tokens on both sides; other losses and unpadded text are untouched', async () => {
  const { teacher, samples, setup, tt, features } = await setupOf();
  assert.ok(samples.some((s) => s.feeds.attention_mask.data.some((v) => Number(v) === 0)), 'some sample pads');
  // the hidden state before pooling is per-token (and not zero at padded tokens), the pooled sum is not
  assert.deepEqual(features.map((f) => [f.name, f.dims]), [['t', [1, 12, 24]], ['s', [1, 24]]]);
  const { graph, losses } = O.withFeatures(setup.graph, O.lossesOf(setup), features);
  const dims = [...tt.dims, ...features.map((f) => f.dims)];
  const masked = O.maskPadding(samples, graph, losses, dims, copies(tt.values));
  assert.equal(masked.mask?.input, 'attention_mask');
  // the embedding's cosine and the pooled feature are not per-token; the hidden state is
  assert.deepEqual(masked.mask.masked, [false, true, false]);

  const ft = await O.FeatureTeacher.open(runner, teacher, features);
  try {
    const idx = samples.map((_, k) => k);
    const inputs = graph.inputs.map((name) => {
      const parts = idx.map((k) => Float32Array.from(samples[k].feeds[name].data, Number));
      const out = new Float32Array(parts.reduce((a, p) => a + p.length, 0));
      parts.reduce((o, p) => (out.set(p, o), o + p.length), 0);
      const d = [...samples[0].feeds[name].dims]; d[0] = idx.length;
      return { values: out, shape: d };
    });
    const stack = (per) => { const out = new Float32Array(per.reduce((a, p) => a + p.length, 0)); per.reduce((o, p) => (out.set(p, o), o + p.length), 0); return out; };
    const featureTargets = await ft.batch(samples, idx);
    const plain = new sk.Trainer(graph, { masked: false }), withMask = new sk.Trainer(masked.graph, { masked: false });
    try {
      plain.setLosses(losses); withMask.setLosses(losses);
      const emb = stack(tt.values.perSample(0));
      const maskedTargets = masked.features(featureTargets.map((v) => Float32Array.from(v)), idx);
      const lossMasked = withMask.loss(inputs, [emb, ...maskedTargets]);
      // The same loss without the mask, where the targets at padded tokens are the student's own values
      // there: the padded tokens then add nothing, as the mask makes them add nothing.
      const student = plain.forward(inputs).slice(1).map((b) => b.values);
      const own = featureTargets.map((t, j) => {
        const out = Float32Array.from(t), per = out.length / idx.length, width = per / 12;
        if (!masked.mask.masked[1 + j]) return out;
        idx.forEach((k, i) => samples[k].feeds.attention_mask.data.forEach((m, tok) => {
          if (Number(m) === 0) out.set(student[j].subarray(i * per + tok * width, i * per + (tok + 1) * width), i * per + tok * width);
        }));
        return out;
      });
      const lossOwn = plain.loss(inputs, [emb, ...own]);
      assert.ok(Math.abs(lossMasked - lossOwn) <= 1e-5 * Math.abs(lossOwn), `masked ${lossMasked} vs own-valued padding ${lossOwn}`);
      // and without the mask the padded tokens do count: the loss is larger
      const lossPlain = plain.loss(inputs, [emb, ...featureTargets]);
      assert.ok(lossPlain > lossOwn * (1 + 1e-3), `unmasked ${lossPlain} vs ${lossOwn}`);
    } finally { plain.free(); withMask.free(); }
  } finally { await ft.release(); }

  // Nothing to mask: text that fills every window (no 0 in any mask), or only the embedding's cosine.
  const full = samplesOf(teacher, LINES, 4);
  assert.ok(full.every((s) => s.feeds.attention_mask.data.every((v) => Number(v) === 1)));
  const noPad = O.maskPadding(full, graph, losses, dims, []);
  assert.equal(noPad.mask, undefined);
  assert.equal(noPad.graph, graph);
  assert.equal(O.maskPadding(samples, setup.graph, O.lossesOf(setup), tt.dims, tt.values).mask, undefined);
});

test('recover with features on padded text reports the mask it used, and still brings the embedding back', async () => {
  const bytes = tinyEncoder();
  const teacher = O.OnnxModel.parse(bytes), pruned = O.OnnxModel.parse(bytes);
  O.pruneSparsity(pruned, { sparsity: 0.8 });
  const lines = (n, shift) => Array.from({ length: n }, (_, i) => LINES[(i + shift) % LINES.length].split(' ').slice(i % 3).join(' '));
  const rep = await O.recover(pruned, teacher, samplesOf(teacher, lines(36, 0)), { ort: runner, evalSamples: samplesOf(teacher, lines(12, 2)), steps: ['distill'], epochs: 10, lr: 3e-3, batchSize: 4, features: 2 });
  assert.equal(rep.distill.paddingMasked, 'attention_mask');
  const cos = (r) => r.outputs[0].metrics.cosine;
  assert.ok(cos(rep.after) > cos(rep.before), `cosine ${cos(rep.before)} -> ${cos(rep.after)}`);
});

test('per-token states under a cosine loss (a BERT export\'s last_hidden_state): only the targets are masked, the loss is the real tokens\' mean', async () => {
  const { modelBytes } = await import('./models.mjs');
  const bytes = modelBytes('bert-torch');
  const teacher = O.OnnxModel.parse(bytes), student = O.OnnxModel.parse(bytes);
  O.pruneSparsity(student, { sparsity: 0.6 });
  const S = 8, lengths = [8, 5, 3, 6];
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const samples = lengths.map((n, k) => ({
    source: `s${k}`,
    feeds: {
      input_ids: { type: 'int64', dims: [1, S], data: BigInt64Array.from({ length: S }, (_, i) => BigInt(i < n ? 1 + Math.floor(rnd() * 998) : 0)) },
      attention_mask: { type: 'int64', dims: [1, S], data: BigInt64Array.from({ length: S }, (_, i) => BigInt(i < n ? 1 : 0)) },
    },
  }));
  const setup = O.trainSetup(student, { last_hidden_state: 'embedding' });
  const tt = await O.teacherTargets(runner, teacher, setup, samples, check);
  const losses = O.lossesOf(setup);
  assert.deepEqual(losses.map((l) => l.kind), ['cosine']);
  assert.deepEqual(tt.dims, [[1, S, 64]]);
  const zeroed = copies(tt.values);
  const masked = O.maskPadding(samples, setup.graph, losses, tt.dims, zeroed);
  assert.deepEqual([masked.mask?.masked, masked.mask?.inGraph], [[true], [false]]);
  assert.equal(masked.graph, setup.graph, 'a cosine needs no change to the graph');
  const idx = samples.map((_, k) => k);
  const inputs = setup.graph.inputs.map((name) => {
    const out = new Float32Array(idx.length * S);
    idx.forEach((k) => out.set(Float32Array.from(samples[k].feeds[name].data, Number), k * S));
    return { values: out, shape: [idx.length, S] };
  });
  const stack = (per) => { const out = new Float32Array(per.length * per[0].length); per.forEach((p, k) => out.set(p, k * p.length)); return out; };
  const trainer = new sk.Trainer(setup.graph, { masked: false });
  try {
    trainer.setLosses(losses);
    const y = trainer.forward(inputs)[0].values, t = stack(tt.values.perSample(0));
    // 1 - cosine per row, averaged over the real tokens only, and over all rows
    let real = 0, nReal = 0, all = 0;
    for (let r = 0; r < idx.length * S; r++) {
      let yy = 0, tq = 0, yt = 0;
      for (let i = r * 64; i < (r + 1) * 64; i++) { yy += y[i] * y[i]; tq += t[i] * t[i]; yt += y[i] * t[i]; }
      const c = 1 - yt / Math.sqrt(yy * tq);
      all += c;
      if (r % S < lengths[Math.floor(r / S)]) { real += c; nReal++; }
    }
    const lossMasked = trainer.loss(inputs, [stack(zeroed[0])]), lossPlain = trainer.loss(inputs, [t]);
    assert.ok(Math.abs(lossMasked - real / nReal) <= 1e-5 * (real / nReal), `masked ${lossMasked} vs real tokens' mean ${real / nReal}`);
    assert.ok(Math.abs(lossPlain - all / (idx.length * S)) <= 1e-5 * lossPlain, `unmasked ${lossPlain} vs all rows' mean ${all / (idx.length * S)}`);
    assert.ok(Math.abs(lossPlain - lossMasked) > 1e-4 * lossPlain, 'the padded rows change the unmasked loss');
  } finally { trainer.free(); }
});
