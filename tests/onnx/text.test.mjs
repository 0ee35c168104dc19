// Text in (issue 37): text + tokenizer -> samples for decoder and encoder models, the model kind
// detected from the graph, .txt / .jsonl files, transformers.js folders, and the samples run in
// onnxruntime on the tiny text models.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { Tokenizer } from '@huggingface/tokenizers';
import { OnnxModel, OnnxError, textSamples, loadTokenizer, detectTextModel, parseText, readTextSamples, resolveTextModel } from '#onnx-internal';
import { tmpDir } from './graphs.mjs';
import { wordTokenizer, tinyDecoder, tinyEncoder, VOCAB } from './text-models.mjs';

const ids = (feed) => Array.from(feed.data, Number);
const TEXT = 'The cat sat on the mat. A dog ran to the park, and then slept.\nThe big red house. The small blue tree.\n\nA cat slept under the tree.';

test('loadTokenizer reads the post-processor: BOS before a sequence, [CLS] / [SEP] around it', () => {
  const dec = loadTokenizer(wordTokenizer('bos'));
  assert.deepEqual(dec.prefix, [4]);
  assert.deepEqual(dec.suffix, []);
  const enc = loadTokenizer(wordTokenizer('bert'));
  assert.deepEqual(enc.prefix, [2]);
  assert.deepEqual(enc.suffix, [3]);
  assert.equal(enc.padId, 0);
  assert.equal(enc.vocabSize, VOCAB);
  // an already built library Tokenizer is taken as it is
  assert.deepEqual(loadTokenizer(new Tokenizer(wordTokenizer('bert'), {})).prefix, [2]);
  assert.throws(() => loadTokenizer({ model: {} }), (e) => e instanceof OnnxError && e.reason === 'bad_calibration' && /tokenizer\.json/.test(e.message));
});

test('decoder: the running text tokenized once, cut into windows of seqLen with position_ids; the tail left out', () => {
  const model = OnnxModel.parse(tinyDecoder());
  const tk = new Tokenizer(wordTokenizer('bos'), {});
  const all = tk.encode(TEXT).ids;
  const set = textSamples({ text: TEXT, tokenizer: wordTokenizer('bos'), seqLen: 8, inputs: model.inputs, outputs: model.outputs });
  assert.equal(set.kind, 'decoder');
  assert.match(set.why, /vocabulary/);
  assert.equal(set.samples.length, Math.floor(all.length / 8));
  assert.equal(set.dropped, all.length % 8);
  assert.equal(all[0], 4, 'the BOS the template adds');
  set.samples.forEach((s, w) => {
    assert.deepEqual(Object.keys(s.feeds).sort(), ['attention_mask', 'input_ids', 'position_ids']);
    assert.deepEqual(ids(s.feeds.input_ids), all.slice(8 * w, 8 * w + 8));
    assert.deepEqual(ids(s.feeds.attention_mask), new Array(8).fill(1));
    assert.deepEqual(ids(s.feeds.position_ids), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.equal(s.feeds.input_ids.type, 'int64');
    assert.deepEqual(s.feeds.input_ids.dims, [1, 8]);
  });
  assert.equal(textSamples({ lines: TEXT.split('\n'), tokenizer: wordTokenizer('bos'), seqLen: 8, inputs: model.inputs, outputs: model.outputs, limit: 2 }).samples.length, 2);
  assert.throws(() => textSamples({ text: 'the cat', tokenizer: wordTokenizer('bos'), seqLen: 8, inputs: model.inputs, outputs: model.outputs }), /fewer than one window/);
});

test('encoder: one sample per non-empty line, [CLS] text [SEP] padded to seqLen; long lines truncated before [SEP]', () => {
  const model = OnnxModel.parse(tinyEncoder());
  const tk = new Tokenizer(wordTokenizer('bert'), {});
  const set = textSamples({ text: TEXT, tokenizer: wordTokenizer('bert'), seqLen: 10, inputs: model.inputs, outputs: model.outputs });
  assert.equal(set.kind, 'encoder');
  const lines = TEXT.split('\n').filter((l) => l.trim());
  assert.equal(set.samples.length, lines.length);
  set.samples.forEach((s, i) => {
    const want = tk.encode(lines[i]).ids;
    const got = ids(s.feeds.input_ids), mask = ids(s.feeds.attention_mask);
    const n = mask.reduce((a, b) => a + b, 0);
    assert.equal(got.length, 10);
    assert.deepEqual(mask, Array.from({ length: 10 }, (_, k) => (k < n ? 1 : 0)));
    assert.deepEqual(got.slice(n), new Array(10 - n).fill(0), 'padding is [PAD]');
    assert.deepEqual(ids(s.feeds.token_type_ids), new Array(10).fill(0));
    if (want.length <= 10) assert.deepEqual(got.slice(0, n), want);
    else assert.deepEqual(got, [...want.slice(0, 9), 3], 'truncated with its [SEP] kept');
  });
  assert.equal(set.dropped, lines.filter((l) => tk.encode(l).ids.length > 10).length);
  assert.ok(set.dropped >= 1, 'the first line is longer than 10 tokens');
});

test('the kind: from the logits width, from the inputs when dims are dynamic; override; refusals are typed', () => {
  const dec = OnnxModel.parse(tinyDecoder()), enc = OnnxModel.parse(tinyEncoder());
  assert.equal(detectTextModel(dec, VOCAB).kind, 'decoder');
  assert.equal(detectTextModel(enc, VOCAB).kind, 'encoder');
  // token states [B, S, D] narrower than the vocabulary: an encoder
  assert.equal(detectTextModel({ inputs: dec.inputs, outputs: [{ name: 'h', elemType: 1, dims: ['b', 's', 16], rank: 3 }] }, VOCAB).kind, 'encoder');
  assert.equal(detectTextModel({ inputs: dec.inputs, outputs: [{ name: 'h', elemType: 1, dims: ['b', 's', 'v'], rank: 3 }] }, VOCAB).kind, 'decoder');
  const forced = textSamples({ text: TEXT, tokenizer: wordTokenizer('bos'), seqLen: 12, inputs: dec.inputs, kind: 'encoder' });
  assert.equal(forced.kind, 'encoder');
  assert.equal(forced.why, 'set by the caller');
  const kv = [...dec.inputs, { name: 'past_key_values.0.key', elemType: 1, dims: [1, 2, 'p', 8], rank: 4 }];
  assert.throws(() => textSamples({ text: TEXT, tokenizer: wordTokenizer('bos'), seqLen: 8, inputs: kv, kind: 'decoder' }), (e) => e instanceof OnnxError && /KV-cache/.test(e.message));
  assert.throws(() => textSamples({ text: TEXT, tokenizer: wordTokenizer('bos'), seqLen: 1, inputs: dec.inputs }), (e) => e instanceof OnnxError && /seqLen/.test(e.message));
  assert.throws(() => textSamples({ text: TEXT, tokenizer: wordTokenizer('bert'), seqLen: 2, inputs: enc.inputs, kind: 'encoder' }), /no room/);
});

test('.jsonl records: one encoder sample each; joined by a blank line for a decoder; bad records refused by line', () => {
  const jsonl = '{"text": "The cat sat."}\n\n{"text": "A dog ran.", "id": 2}\n';
  assert.deepEqual(parseText(jsonl, 'jsonl'), { records: ['The cat sat.', 'A dog ran.'], joined: 'The cat sat.\n\nA dog ran.' });
  assert.throws(() => parseText('{"text": 1}', 'jsonl', 'f.jsonl'), (e) => e instanceof OnnxError && /f\.jsonl, line 1/.test(e.message));
  assert.throws(() => parseText('not json', 'jsonl'), /not JSON/);
  assert.throws(() => parseText(' \n\n', 'txt'), /no text/);
});

test('files: a transformers.js folder resolves to its model and tokenizer; .txt / .jsonl read into samples that onnxruntime runs', async () => {
  const dir = tmpDir('sk-text-');
  fs.mkdirSync(path.join(dir, 'onnx'));
  fs.writeFileSync(path.join(dir, 'onnx', 'model.onnx'), tinyEncoder());
  fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(wordTokenizer('bert')));
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_type: 'bert', vocab_size: VOCAB }));
  const files = await resolveTextModel(dir);
  assert.equal(files.model, path.join(dir, 'onnx', 'model.onnx'));
  assert.equal(files.tokenizer, path.join(dir, 'tokenizer.json'));
  assert.equal(files.config.model_type, 'bert');
  await assert.rejects(resolveTextModel(path.join(dir, 'nothing')), (e) => e instanceof OnnxError && e.reason === 'no_file');
  fs.mkdirSync(path.join(dir, 'empty'));
  await assert.rejects(resolveTextModel(path.join(dir, 'empty')), /onnx\/model\.onnx/);
  const model = OnnxModel.parse(fs.readFileSync(files.model));
  fs.writeFileSync(path.join(dir, 'held.jsonl'), '{"text": "the red tree."}\n{"text": "a small dog slept."}\n');
  const set = await readTextSamples(path.join(dir, 'held.jsonl'), { tokenizer: files.tokenizer, seqLen: 8, inputs: model.inputs, outputs: model.outputs });
  assert.equal(set.samples.length, 2);
  await assert.rejects(readTextSamples(path.join(dir, 'config.json'), { tokenizer: files.tokenizer, seqLen: 8, inputs: model.inputs }), /\.txt or \.jsonl/);
  const s = await ort.InferenceSession.create(fs.readFileSync(files.model), { logSeverityLevel: 3 });
  for (const { feeds } of set.samples) {
    const out = await s.run(Object.fromEntries(Object.entries(feeds).map(([k, f]) => [k, new ort.Tensor(f.type, f.data, f.dims)])));
    assert.deepEqual(out.sentence_embedding.dims, [1, 24]);
    assert.ok(out.sentence_embedding.data.every(Number.isFinite));
  }
  await s.release();
  fs.rmSync(dir, { recursive: true, force: true });
});
