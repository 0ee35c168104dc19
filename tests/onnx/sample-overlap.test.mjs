// The held-out / calibration overlap check compares samples (all inputs together), not files: padded
// sentences of the same length share their attention mask byte for byte, and must not be flagged
// (issue 37: "--eval s0000/attention_mask.npy is a copy of --calib s0237/attention_mask.npy").
import test from 'node:test';
import assert from 'node:assert/strict';
import { OnnxModel, OnnxError, textSamples, findSharedSample, checkDisjointSamples } from '#onnx-internal';
import { wordTokenizer, tinyEncoder } from './text-models.mjs';

const model = OnnxModel.parse(tinyEncoder());
const encode = (lines) => textSamples({ lines, tokenizer: wordTokenizer('bert'), seqLen: 12, inputs: model.inputs, outputs: model.outputs }).samples;

test('padded sentences of the same length share their mask and token types, and are not copies', () => {
  const calib = encode(['the cat sat on the mat.', 'a dog ran to the park.', 'the big red house.']);
  const held = encode(['the dog sat on the mat.', 'a cat ran to the tree.', 'the small blue tree.']);
  // the regression: every held-out mask (and token_type_ids) equals a calibration one, byte for byte
  for (const s of held) {
    assert.ok(calib.some((c) => Buffer.from(c.feeds.attention_mask.data.buffer).equals(Buffer.from(s.feeds.attention_mask.data.buffer))));
    assert.ok(calib.some((c) => Buffer.from(c.feeds.token_type_ids.data.buffer).equals(Buffer.from(s.feeds.token_type_ids.data.buffer))));
  }
  assert.equal(findSharedSample(calib, held), null);
  assert.doesNotThrow(() => checkDisjointSamples(calib, held));
});

test('a held-out sample equal to a calibration sample in all its inputs is refused, named by both sources', () => {
  const calib = encode(['the cat sat on the mat.', 'a dog ran to the park.', 'the big red house.']);
  const held = encode(['the small blue tree.', 'a dog ran to the park.']);
  assert.deepEqual(findSharedSample(calib, held), { heldOut: 1, calibration: 1 });
  assert.throws(() => checkDisjointSamples(calib, held), (e) => e instanceof OnnxError && e.reason === 'bad_calibration' && /held-out sample record 2 is a copy of calibration sample record 2/.test(e.message));
  // same ids but another type: not the same sample
  const as32 = held.map((s) => ({ ...s, feeds: Object.fromEntries(Object.entries(s.feeds).map(([k, f]) => [k, { ...f, type: 'int32', data: Int32Array.from(f.data, Number) }])) }));
  assert.equal(findSharedSample(calib, as32), null);
});
