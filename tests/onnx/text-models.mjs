// Tiny text models and tokenizers for the text tests, generated in memory (deterministic weights):
// - a decoder language model: token + position embeddings -> MatMul -> Tanh -> output head, logits
//   [B, S, V] (no attention: what the text kinds read is the logits' layout, not how they are made);
// - an encoder with mean pooling in the graph (as sentence-transformers exports have it): token +
//   type embeddings -> MatMul -> Tanh -> sum over unmasked positions / mask count -> [B, D];
// - WordPiece tokenizer.json objects with a decoder template (BOS) and a BERT template ([CLS] [SEP]).
import { makeModel } from './graphs.mjs';
import { DT } from '#onnx-internal';

export const WORDS = ['the', 'cat', 'sat', 'on', 'mat', 'a', 'dog', 'ran', 'to', 'park', 'and', 'then', 'slept', 'big', 'small', 'red', 'blue', 'house', 'tree', 'under', '.', ','];

/** A WordPiece tokenizer.json over WORDS; `template` 'bos' (<s> first) or 'bert' ([CLS] A [SEP]). */
export function wordTokenizer(template) {
  const specials = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '<s>'];
  const vocab = Object.fromEntries([...specials, ...WORDS].map((w, i) => [w, i]));
  const tok = (t) => ({ id: t, ids: [vocab[t]], tokens: [t] });
  const single = template === 'bert'
    ? [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }]
    : [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }];
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: specials.map((content) => ({ id: vocab[content], content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
    normalizer: { type: 'Lowercase' },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing', single, pair: single,
      special_tokens: template === 'bert' ? { '[CLS]': tok('[CLS]'), '[SEP]': tok('[SEP]') } : { '<s>': tok('<s>') },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

export const VOCAB = 5 + WORDS.length;

/** The decoder LM: inputs input_ids, attention_mask, position_ids [B, S] int64; output logits [B, S, vocab]. */
export function tinyDecoder({ vocab = VOCAB, dim = 16, maxPos = 64, seed = 11, positionIds = true } = {}) {
  const ids = (n) => [n, ['batch', 'seq'], DT.INT64];
  return makeModel({
    inputs: [ids('input_ids'), ids('attention_mask'), ...(positionIds ? [ids('position_ids')] : [])],
    outputs: [['logits', ['batch', 'seq', vocab]]],
    nodes: [
      ['Gather', ['tok', 'input_ids'], ['e']],
      ...(positionIds ? [['Gather', ['pos', 'position_ids'], ['p']], ['Add', ['e', 'p'], ['h']]] : [['Identity', ['e'], ['h']]]),
      ['MatMul', ['h', 'w1'], ['a']],
      ['Tanh', ['a'], ['t']],
      ['MatMul', ['t', 'head'], ['logits']],
    ],
    inits: { tok: { dims: [vocab, dim], scale: 1 }, pos: { dims: [maxPos, dim], scale: 0.3 }, w1: { dims: [dim, dim], scale: 0.8 }, head: { dims: [dim, vocab], scale: 1.5 } },
    seed,
  });
}

/**
 * The encoder with mean pooling: inputs input_ids, attention_mask, token_type_ids; output
 * sentence_embedding [B, dim]. `torch`: as torch exports all-MiniLM-L6-v2 (bench/models/minilm.py),
 * with a self-attention whose Softmax is masked by Where(IsNaN(p), 0, p) (scaled_dot_product_attention's
 * export) and sentence-transformers' Normalize at the end (x / Clip(ReduceL2(x), eps)).
 */
export function tinyEncoder({ vocab = VOCAB, dim = 24, seed = 13, torch = false } = {}) {
  const ids = (n) => [n, ['batch', 'seq'], DT.INT64];
  const attention = [
    ['Transpose', ['t'], ['tt'], { perm: [0, 2, 1] }],
    ['MatMul', ['t', 'tt'], ['sc']],
    ['Softmax', ['sc'], ['p'], { axis: -1 }],
    ['IsNaN', ['p'], ['pn']],
    ['Where', ['pn', 'zero', 'p'], ['pz']],
    ['MatMul', ['pz', 't'], ['x']],
  ];
  const normalize = [
    ['ReduceL2', ['pooled'], ['l2'], { axes: [1], keepdims: 1 }],
    ['Clip', ['l2', 'eps'], ['l2c']],
    ['Div', ['pooled', 'l2c'], ['sentence_embedding']],
  ];
  return makeModel({
    inputs: [ids('input_ids'), ids('attention_mask'), ids('token_type_ids')],
    outputs: [['sentence_embedding', ['batch', dim]]],
    nodes: [
      ['Gather', ['tok', 'input_ids'], ['e']],
      ['Gather', ['typ', 'token_type_ids'], ['ty']],
      ['Add', ['e', 'ty'], ['h']],
      ['MatMul', ['h', 'w1'], ['a']],
      ['Tanh', ['a'], ['t']],
      ...(torch ? attention : [['Identity', ['t'], ['x']]]),
      ['Cast', ['attention_mask'], ['m'], { to: DT.FLOAT }],
      ['Unsqueeze', ['m', 'axis_last'], ['m3']],
      ['Mul', ['x', 'm3'], ['tm']],
      ['ReduceSum', ['tm', 'axis_seq'], ['s'], { keepdims: 0 }],
      ['ReduceSum', ['m3', 'axis_seq'], ['n'], { keepdims: 0 }],
      ['Div', ['s', 'n'], [torch ? 'pooled' : 'sentence_embedding']],
      ...(torch ? normalize : []),
    ],
    inits: {
      tok: { dims: [vocab, dim], scale: 1 }, typ: { dims: [2, dim], scale: 0.1 }, w1: { dims: [dim, dim], scale: 0.8 },
      axis_last: { dims: [1], int64: [-1] }, axis_seq: { dims: [1], int64: [1] },
      ...(torch ? { zero: { dims: [], data: [0] }, eps: { dims: [], data: [1e-12] } } : {}),
    },
    seed,
  });
}
