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

// Token ids no text reaches (text/unreachable-tokens.ts): every entry the list leaves out that begins
// a word is produced by encoding the entry itself (a witness of its reachability); no id the list
// holds appears in the real lines' Python ids; the listed entries are those the pre-tokenizer cuts apart. A BPE vocabulary lists none and says why.
test('MiniLM: the unreachable token ids are those no text can produce', () => {
  const json = tokenizerJson('all-minilm-l6-v2');
  const { ids, vocabSize, why } = O.unreachableTokens(json);
  assert.equal(why, undefined);
  assert.equal(vocabSize, 30522);
  const tk = new Tokenizer(json, {});
  const set = new Set(ids);
  // every [unusedN] placeholder, a continued punctuation mark and CJK character (an uncased vocabulary has no upper-case entries)
  for (let i = 0; i < 994; i++) assert.ok(set.has(tk.token_to_id(`[unused${i}]`)), `[unused${i}]`);
  const entries = [...tk.get_vocab(true)].filter(([, id]) => set.has(id)).map(([e]) => e);
  for (const e of ['##!', '##下']) assert.ok(entries.includes(e), e);
  // specials are never listed ([CLS], [SEP], [PAD], [UNK], [MASK])
  for (const s of ['[CLS]', '[SEP]', '[PAD]', '[UNK]', '[MASK]']) assert.ok(!set.has(tk.token_to_id(s)), s);
  // reachable word-initial entries: the entry alone encodes to its own id
  const unwitnessed = [];
  for (const [entry, id] of tk.get_vocab(true)) {
    if (set.has(id) || entry.startsWith('##') || entry.startsWith('[')) continue;
    const got = tk.encode(entry, { add_special_tokens: false }).ids;
    if (got.length !== 1 || got[0] !== id) unwitnessed.push(entry);
  }
  assert.deepEqual(unwitnessed.slice(0, 5), [], `${unwitnessed.length} entries left out of the list that do not encode to themselves`);
  // and none of the listed ids in 1 000 real lines as Python tokenizes them
  const seen = pythonIds('all-minilm-l6-v2').flat().filter((id) => set.has(id));
  assert.deepEqual(seen, []);
  assert.ok(ids.length > 994 && ids.length < vocabSize / 10, `${ids.length} ids`);
});

test('SmolLM2: a byte-level BPE vocabulary lists no unreachable ids, and says why', () => {
  const { ids, why } = O.unreachableTokens(tokenizerJson('smollm2-135m'));
  assert.deepEqual(ids, []);
  assert.match(why, /BPE tokenizer: only WordPiece/);
});

test('a WordPiece vocabulary under a lowercasing, accent-stripping normalizer: its upper-case and accented entries are unreachable', () => {
  const json = JSON.parse(fs.readFileSync(path.join(DATA, 'models/tjs-bert/tokenizer.json'), 'utf8'));
  const next = Math.max(...Object.values(json.model.vocab)) + 1;
  const added = ['Hello', 'café', '##É', 'hello', '##ing'].filter((e) => !(e in json.model.vocab));
  added.forEach((e, i) => { json.model.vocab[e] = next + i; });
  const { ids } = O.unreachableTokens(json);
  const set = new Set(ids);
  const id = (e) => json.model.vocab[e];
  for (const e of ['Hello', 'café', '##É']) assert.ok(set.has(id(e)), `${e} listed`);
  for (const e of ['hello', '##ing']) assert.ok(!set.has(id(e)), `${e} not listed`);
});

test('a normalizer that rewrites every entry lists nothing, and says why', () => {
  const json = JSON.parse(fs.readFileSync(path.join(DATA, 'models/tjs-bert/tokenizer.json'), 'utf8'));
  json.normalizer = { type: 'Sequence', normalizers: [json.normalizer, { type: 'Prepend', prepend: '_' }] };
  const { ids, why } = O.unreachableTokens(json);
  assert.deepEqual(ids, []);
  assert.match(why, /would be unreachable.*nothing listed/);
});
