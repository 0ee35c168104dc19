// Recovery of the text models (issue 37): a language model is distilled on the KL of its next-token
// distributions (a Softmax appended to the student, the teacher's logits as probabilities), an
// embedding on 1 - cosine; both bring what their fidelity kinds measure on held-out text (KL to the
// original's distributions, cosine) back towards the original. The tiny generated decoder and
// encoder of text-models.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import ort from 'onnxruntime-node';
import { build } from './build.mjs';
import { wordTokenizer, tinyDecoder, tinyEncoder } from './text-models.mjs';

build();
const O = await import('#onnx-internal');
const runner = O.makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });

const SENTENCES = ['the cat sat on the mat.', 'a dog ran to the park, and then slept.', 'the big red house under a small blue tree.', 'then the small dog sat under the tree.', 'a cat and a dog ran to the red house.', 'the blue mat, the big park.'];
const text = (n, shift) => Array.from({ length: n }, (_, i) => SENTENCES[(i * 5 + shift) % SENTENCES.length]).join(' ');

test('the loss per text kind: KL over the vocabulary for a language model (logits when asked), cosine for an embedding', () => {
  const dec = O.OnnxModel.parse(tinyDecoder());
  const s = O.trainSetup(dec, { logits: 'language-model' });
  assert.deepEqual(s.trained.map((t) => [t.tensor, t.loss, t.axis, t.softmax]), [['logits', 'kl', -1, true]]);
  assert.deepEqual(s.graph.outputs, ['logits::softmax']);
  const last = s.graph.nodes[s.graph.nodes.length - 1];
  assert.deepEqual([last.opType, last.inputs, last.attrs], ['Softmax', ['logits'], { axis: -1 }]);
  const asked = O.trainSetup(dec, { logits: 'language-model' }, 'logits');
  assert.deepEqual(asked.trained.map((t) => [t.tensor, t.loss]), [['logits', 'mse']]);
  assert.deepEqual(asked.graph.outputs, ['logits']);
  const enc = O.trainSetup(O.OnnxModel.parse(tinyEncoder()), { sentence_embedding: 'embedding' });
  assert.deepEqual(enc.trained.map((t) => t.loss), ['cosine']);
});

test('recover of a pruned decoder distils next-token distributions: the held-out KL to the original falls', async () => {
  const bytes = tinyDecoder({ dim: 24 });
  const teacher = O.OnnxModel.parse(bytes), pruned = O.OnnxModel.parse(bytes);
  const sets = (t, shift) => O.textSamples({ text: text(t, shift), tokenizer: wordTokenizer('bos'), seqLen: 16, inputs: teacher.inputs, outputs: teacher.outputs }).samples;
  const train = sets(60, 0), held = sets(24, 3);
  O.pruneSparsity(pruned, { sparsity: 0.7 });
  const rep = await O.recover(pruned, teacher, train, { ort: runner, evalSamples: held, steps: ['distill'], epochs: 12, lr: 3e-3, batchSize: 4 });
  assert.deepEqual(rep.distill.losses, { logits: { kind: 'language-model', loss: 'kl' } });
  // Random weights: the text's own perplexity says nothing here (the pruned model may even predict
  // it better); how far the next-token distributions are from the original's does.
  const kl = (r) => r.outputs[0].metrics.meanKL;
  assert.ok(kl(rep.before) > 0.05, `pruning moves the distributions: KL ${kl(rep.before)}`);
  assert.ok(kl(rep.after) < 0.7 * kl(rep.before), `mean KL ${kl(rep.before)} -> ${kl(rep.after)}`);
  assert.ok(rep.after.score >= rep.before.score);
  // the zeros stay zero
  const w = pruned.prunable().filter((p) => p.name === 'w1')[0];
  const zeros = pruned.readFloat(w).filter((x) => x === 0).length;
  assert.ok(zeros >= Math.floor(0.7 * w.numel), `${zeros} zeros of ${w.numel}`);
});

for (const torch of [false, true]) {
  // torch: the ops of the real all-MiniLM-L6-v2 export the training core once lacked (IsNaN, ReduceL2)
  test(`recover of a pruned encoder distils the embedding by its cosine${torch ? ' (torch export: IsNaN-masked attention, Normalize)' : ''}`, async () => {
    const bytes = tinyEncoder({ torch });
    const teacher = O.OnnxModel.parse(bytes), pruned = O.OnnxModel.parse(bytes);
    const lines = (n, shift) => Array.from({ length: n }, (_, i) => SENTENCES[(i + shift) % SENTENCES.length].split(' ').slice(i % 3).join(' '));
    const sets = (n, shift) => O.textSamples({ lines: lines(n, shift), tokenizer: wordTokenizer('bert'), seqLen: 12, inputs: teacher.inputs, outputs: teacher.outputs }).samples;
    O.pruneSparsity(pruned, { sparsity: 0.8 });
    const rep = await O.recover(pruned, teacher, sets(36, 0), { ort: runner, evalSamples: sets(12, 2), steps: ['distill'], epochs: 10, lr: 3e-3, batchSize: 4 });
    assert.deepEqual(rep.distill.losses, { sentence_embedding: { kind: 'embedding', loss: 'cosine' } });
    const cos = (r) => r.outputs[0].metrics.cosine;
    assert.ok(cos(rep.after) > cos(rep.before) + 0.25 * (1 - cos(rep.before)), `cosine ${cos(rep.before)} -> ${cos(rep.after)}`);
  });
}

test('the cut-down SmolLM2 export (RoPE tables from positions, Slice to INT64_MAX) recovers through the job', async () => {
  const dir = new URL('../data/', import.meta.url).pathname;
  const bytes = new Uint8Array(fs.readFileSync(`${dir}models/smollm2-tiny.onnx`));
  const tokenizer = JSON.parse(fs.readFileSync(`${dir}tokenizers/smollm2-135m.json`, 'utf8'));
  const lines = JSON.parse(fs.readFileSync(`${dir}text/lines.json`, 'utf8'));
  const model = O.OnnxModel.parse(bytes);
  const set = (from, to, limit) => O.textSamples({ text: lines.slice(from, to).join('\n'), tokenizer, seqLen: 32, inputs: model.inputs, outputs: model.outputs, limit }).samples;
  const { report } = await O.runJob(model, {
    mode: { kind: 'nm', nm: [2, 4] }, calibration: { samples: set(0, 200, 8) },
    eval: { samples: set(500, 700, 4), kinds: { logits: 'language-model' } }, recover: { epochs: 3, lr: 1e-3, steps: ['distill'] },
  }, { ort: runner });
  const r = report.recover;
  assert.deepEqual(r.distill.losses, { logits: { kind: 'language-model', loss: 'kl' } });
  assert.ok(r.distill.steps >= 3);
  // random weights: near-uniform distributions, so the KL is small; it still falls by a quarter
  assert.ok(r.after.outputs[0].metrics.meanKL < 0.9 * r.before.outputs[0].metrics.meanKL, `KL ${r.before.outputs[0].metrics.meanKL} -> ${r.after.outputs[0].metrics.meanKL}`);
});
