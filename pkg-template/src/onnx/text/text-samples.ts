// Text -> the InputSample[] that calibration, evaluation, sensitivity, search and recovery take.
// Decoder language models read windows of a running text, as SparseGPT (Frantar & Alistarh 2023,
// datautils.py: WikiText-2 joined by "\n\n", tokenized once, cut into seqlen windows) and Wanda (Sun
// et al. 2023, lib/data.py: C4 windows of 2048 tokens) calibrate and evaluate; encoders read one
// sentence per sample, padded or truncated to a fixed length as sentence-transformers batches them.
import type { ValueInfo } from '../model.js';
import { OnnxError } from '../errors.js';
import type { FeedTensor, InputSample } from '../calib/inputs.js';
import { ORT_TYPES } from '../calib/inputs.js';
import { loadTokenizer, type TextTokenizer, type TokenizerSource } from './tokenizer.js';
import { parseText, type TextFormat } from './text-source.js';
import { detectTextModel, textInputs, type TextInput, type TextModelKind } from './model-kind.js';

/** Options of {@link textSamples}. */
export interface TextSampleOptions {
  /** The text: a whole file's contents (with `format`), or records / lines already split. */
  text?: string;
  lines?: string[];
  /** Of `text`: 'txt' (default) or 'jsonl' (one {"text": ...} per line). */
  format?: TextFormat;
  /** A parsed tokenizer.json, a loaded @huggingface/tokenizers Tokenizer, or loadTokenizer's result. */
  tokenizer: TokenizerSource | TextTokenizer;
  /** Tokens per sample (the window of a decoder, the padded length of an encoder's sentence). */
  seqLen: number;
  /** The model's inputs (`model.inputs`): names and element types of the feeds. */
  inputs: readonly ValueInfo[];
  /** The model's outputs (`model.outputs`), to detect the kind when `kind` is not given. */
  outputs?: readonly ValueInfo[];
  /** 'decoder' | 'encoder'; default: detected from `outputs` and `inputs` (detectTextModel). */
  kind?: TextModelKind;
  /** At most this many samples (the first ones). */
  limit?: number;
}

/** What {@link textSamples} returns: the samples, how they were cut, and the token count. */
export interface TextSampleSet {
  samples: InputSample[];
  kind: TextModelKind;
  /** Why this kind (detected, or 'set by the caller'). */
  why: string;
  /** Tokens that are not padding, over all samples. */
  tokens: number;
  /** Encoder: sentences truncated to seqLen. Decoder: tokens at the end, shorter than a window, left out. */
  dropped: number;
  vocabSize: number;
}

const bad = (msg: string) => new OnnxError('bad_calibration', msg, 'invalid_value');

const isTextTokenizer = (t: unknown): t is TextTokenizer =>
  !!t && typeof (t as TextTokenizer).encode === 'function' && Array.isArray((t as TextTokenizer).prefix) && typeof (t as TextTokenizer).vocabSize === 'number';

/** One feed of ids as the input's element type wants them (int64 or int32). */
function idFeed(values: ArrayLike<number>, elemType: number, seqLen: number): FeedTensor {
  const data = elemType === 7 ? BigInt64Array.from(Array.from(values, (v) => BigInt(v))) : Int32Array.from(values);
  return { type: ORT_TYPES[elemType], data, dims: [1, seqLen] };
}

function feedsOf(cols: { name: TextInput; elemType: number }[], ids: number[], mask: number[], positions: number[], seqLen: number): Record<string, FeedTensor> {
  const feeds: Record<string, FeedTensor> = {};
  for (const { name, elemType } of cols) {
    const v = name === 'input_ids' ? ids : name === 'attention_mask' ? mask : name === 'position_ids' ? positions : new Array<number>(seqLen).fill(0);
    feeds[name] = idFeed(v, elemType, seqLen);
  }
  return feeds;
}

/**
 * Samples of `text` / `lines` for a text model (batch 1, `seqLen` tokens each):
 * - decoder: the running text (a .txt as is, .jsonl records or `lines` joined by a blank line)
 *   tokenized once with the tokenizer's special tokens (a BOS where its post-processor adds one)
 *   and cut into consecutive windows of `seqLen`; the last partial window is left out. input_ids,
 *   attention_mask all 1, position_ids 0..seqLen-1 where the model takes them.
 * - encoder: one sample per non-empty line / record, with the special tokens around it ([CLS] ...
 *   [SEP]), the sentence truncated so that they fit, padded with the tokenizer's pad id; the mask is
 *   0 on padding; token_type_ids 0 (one segment).
 */
export function textSamples(opts: TextSampleOptions): TextSampleSet {
  const { seqLen } = opts;
  if (!Number.isSafeInteger(seqLen) || seqLen < 2) throw bad(`seqLen must be an integer >= 2 (got ${String(seqLen)})`);
  if (opts.limit !== undefined && !(Number.isSafeInteger(opts.limit) && opts.limit > 0)) throw bad(`limit must be a positive integer (got ${String(opts.limit)})`);
  if ((opts.text === undefined) === (opts.lines === undefined)) throw bad('give either text or lines');
  const tk = isTextTokenizer(opts.tokenizer) ? opts.tokenizer : loadTokenizer(opts.tokenizer);
  const cols = textInputs(opts.inputs);
  const detected = opts.kind ? { kind: opts.kind, why: 'set by the caller' } : detectTextModel({ inputs: [...opts.inputs], outputs: [...(opts.outputs ?? [])] }, tk.vocabSize);
  if (detected.kind !== 'decoder' && detected.kind !== 'encoder') throw bad(`kind must be decoder or encoder (got ${String(detected.kind)})`);
  const src = opts.text !== undefined
    ? parseText(opts.text, opts.format ?? 'txt')
    : { records: opts.lines!.filter((l) => l.trim().length > 0), joined: opts.lines!.join('\n\n') };
  if (!src.records.length) throw bad('the text holds no non-empty line');
  const limit = opts.limit ?? Infinity;
  const positions = Array.from({ length: seqLen }, (_, i) => i);
  const samples: InputSample[] = [];
  let tokens = 0, dropped = 0;
  if (detected.kind === 'decoder') {
    const ids = tk.encode(src.joined, true);
    const windows = Math.floor(ids.length / seqLen);
    if (!windows) throw bad(`the text is ${ids.length} tokens, fewer than one window of ${seqLen}`);
    const ones = new Array<number>(seqLen).fill(1);
    for (let w = 0; w < windows && samples.length < limit; w++) {
      samples.push({ feeds: feedsOf(cols, ids.slice(w * seqLen, (w + 1) * seqLen), ones, positions, seqLen), source: `window ${w} (tokens ${w * seqLen}..${(w + 1) * seqLen - 1})` });
      tokens += seqLen;
    }
    dropped = ids.length - windows * seqLen;
  } else {
    const room = seqLen - tk.prefix.length - tk.suffix.length;
    if (room < 1) throw bad(`seqLen ${seqLen} leaves no room for text between the tokenizer's ${tk.prefix.length + tk.suffix.length} special tokens`);
    src.records.forEach((line, i) => {
      if (samples.length >= limit) return;
      let body = tk.encode(line, false);
      if (body.length > room) { body = body.slice(0, room); dropped++; }
      const ids = [...tk.prefix, ...body, ...tk.suffix];
      const n = ids.length;
      const mask = Array.from({ length: seqLen }, (_, k) => (k < n ? 1 : 0));
      while (ids.length < seqLen) ids.push(tk.padId);
      samples.push({ feeds: feedsOf(cols, ids, mask, positions, seqLen), source: `record ${i + 1}` });
      tokens += n;
    });
  }
  return { samples, kind: detected.kind, why: detected.why, tokens, dropped, vocabSize: tk.vocabSize };
}
