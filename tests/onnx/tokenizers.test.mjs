// Real tokenizers, id for id: 1 000 lines of real English (Debian package descriptions and license
// text, tests/data/text/lines.json) tokenized by @huggingface/tokenizers give the ids Python's
// `tokenizers` gave (tests/data/text/<name>.ids.jsonl, written by bench/text/check-tokenizers.mjs
// --write-fixture), for all-MiniLM-L6-v2's WordPiece and SmolLM2-135M's byte-level BPE; and the text
// samples built on them carry those ids.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { build, HERE } from './build.mjs';

build();
const O = await import('#onnx-internal');
const DATA = path.resolve(HERE, '../data');
const lines = JSON.parse(fs.readFileSync(path.join(DATA, 'text/lines.json'), 'utf8'));
const tokenizerJson = (name) => JSON.parse(fs.readFileSync(path.join(DATA, 'tokenizers', `${name}.json`), 'utf8'));
const pythonIds = (name) => fs.readFileSync(path.join(DATA, 'text', `${name}.ids.jsonl`), 'utf8').trim().split('\n').map((l) => JSON.parse(l));

for (const name of ['all-minilm-l6-v2', 'smollm2-135m']) {
  test(`${name}: ${lines.length} real lines give Python tokenizers' ids exactly`, () => {
    const want = pythonIds(name);
    assert.equal(want.length, lines.length);
    const tk = new Tokenizer(tokenizerJson(name), {});
    const bad = [];
    lines.forEach((l, i) => { if (JSON.stringify(tk.encode(l).ids) !== JSON.stringify(want[i])) bad.push(i); });
    assert.deepEqual(bad.map((i) => lines[i]).slice(0, 5), [], `${bad.length} line(s) differ`);
  });
}

test('MiniLM: encoder samples are [CLS] ids [SEP] + padding, as Python tokenizes each line', () => {
  const want = pythonIds('all-minilm-l6-v2');
  const inputs = ['input_ids', 'attention_mask', 'token_type_ids'].map((name) => ({ name, elemType: 7, dims: ['b', 's'], rank: 2 }));
  const tk = O.loadTokenizer(tokenizerJson('all-minilm-l6-v2'));
  assert.deepEqual([tk.prefix, tk.suffix, tk.padId, tk.vocabSize], [[101], [102], 0, 30522]);
  const { samples, kind } = O.textSamples({ lines: lines.slice(0, 50), tokenizer: tk, seqLen: 128, inputs, kind: 'encoder' });
  assert.equal(kind, 'encoder');
  samples.forEach((s, i) => {
    const n = want[i].length;
    assert.deepEqual(Array.from(s.feeds.input_ids.data.slice(0, n), Number), want[i]);
    assert.equal(Array.from(s.feeds.attention_mask.data, Number).reduce((a, b) => a + b, 0), n);
  });
});

test('SmolLM2: decoder windows are the running text as Python tokenizes it (no BOS: its post-processor adds none)', () => {
  const json = tokenizerJson('smollm2-135m');
  const inputs = ['input_ids', 'attention_mask'].map((name) => ({ name, elemType: 7, dims: ['b', 's'], rank: 2 }));
  const outputs = [{ name: 'logits', elemType: 1, dims: ['b', 's', 49152], rank: 3 }];
  const tk = O.loadTokenizer(json);
  const { samples, kind } = O.textSamples({ lines: lines.slice(0, 200), tokenizer: tk, seqLen: 64, inputs, outputs });
  assert.equal(kind, 'decoder');
  const all = new Tokenizer(json, {}).encode(lines.slice(0, 200).join('\n\n')).ids;
  assert.deepEqual(samples.flatMap((s) => Array.from(s.feeds.input_ids.data, Number)), all.slice(0, samples.length * 64));
  assert.deepEqual(tk.prefix, all.slice(0, tk.prefix.length));
});
