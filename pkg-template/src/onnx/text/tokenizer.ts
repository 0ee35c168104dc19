// A Hugging Face tokenizer (the tokenizer.json every transformers.js model folder ships) behind the
// few calls text sampling needs, over @huggingface/tokenizers (pure JS: the same ids in a page, a
// worker and Node; checked id for id against Python `tokenizers` by bench/text/check-tokenizers.mjs).
import { Tokenizer } from '@huggingface/tokenizers';
import { OnnxError } from '../errors.js';

/** What text sampling needs of a tokenizer. */
export interface TextTokenizer {
  /** Token ids of `text`, with the special tokens the tokenizer's post-processor adds when `special`. */
  encode(text: string, special: boolean): number[];
  /** One more than the largest id (added tokens included). */
  vocabSize: number;
  /** The id padded positions get (their attention mask is 0, so the value only has to be a valid id). */
  padId: number;
  /**
   * Where the post-processor puts a single sequence: the ids before it (BERT's [CLS], Llama's BOS)
   * and after it (BERT's [SEP]). Read off by encoding a probe with and without special tokens,
   * so any single-sequence template works without reading its format here.
   */
  prefix: number[];
  suffix: number[];
}

/**
 * What is read of an already loaded @huggingface/tokenizers Tokenizer. Typed here rather than
 * imported so that the package's declarations do not pull in that library's, which a consumer's
 * `tsc --strict --module nodenext` without skipLibCheck rejects (extensionless relative imports).
 */
export interface LoadedTokenizer {
  encode(text: string, options: { add_special_tokens: boolean }): { ids: number[] };
  token_to_id(token: string): number | undefined;
  get_vocab(withAddedTokens?: boolean): Map<string, number>;
}

/** A parsed tokenizer.json, or an already loaded @huggingface/tokenizers Tokenizer. */
export type TokenizerSource = Record<string, unknown> | LoadedTokenizer;

const bad = (msg: string) => new OnnxError('bad_calibration', msg, 'invalid_value');

/** The tokenizer.json fields the library needs before it can build one (it throws plain Errors otherwise). */
const REQUIRED = ['model', 'decoder', 'post_processor', 'pre_tokenizer', 'normalizer', 'added_tokens'];

/** The @huggingface/tokenizers Tokenizer of `src` (built from a tokenizer.json, or `src` itself). */
export function buildTokenizer(src: TokenizerSource, config: Record<string, unknown> = {}): LoadedTokenizer {
  if (src instanceof Tokenizer) return src as Tokenizer;
  if (!src || typeof src !== 'object' || Array.isArray(src)) throw bad('the tokenizer is not a parsed tokenizer.json object');
  const missing = REQUIRED.filter((k) => !(k in src));
  if (missing.length) throw bad(`the tokenizer object has no ${missing.join(', ')}: is it a Hugging Face tokenizer.json?`);
  try {
    return new Tokenizer(src, config);
  } catch (e) {
    throw bad(`the tokenizer could not be built: ${(e as Error).message}`);
  }
}

/** One past the largest id of a vocabulary (`get_vocab(true)`: added tokens included): a token table's row count. */
export function vocabSizeOf(vocab: ReadonlyMap<string, number>): number {
  let size = 0;
  for (const id of vocab.values()) size = Math.max(size, id + 1);
  return size;
}

/** The id of the first of these tokens the vocabulary has. */
function firstId(tk: LoadedTokenizer, names: string[]): number | undefined {
  for (const n of names) { const id = tk.token_to_id(n); if (id !== undefined) return id; }
  return undefined;
}

/**
 * Loads a tokenizer. `config` is tokenizer_config.json when there is one (transformers.js passes it
 * for a few legacy options; tokenizer.json alone is enough for the models here).
 */
export function loadTokenizer(src: TokenizerSource, config: Record<string, unknown> = {}): TextTokenizer {
  const tk = buildTokenizer(src, config);
  const encode = (text: string, special: boolean) => tk.encode(text, { add_special_tokens: special }).ids;
  const vocabSize = vocabSizeOf(tk.get_vocab(true));
  if (!vocabSize) throw bad('the tokenizer has an empty vocabulary');
  const json = src instanceof Tokenizer ? undefined : (src as { padding?: { pad_id?: unknown } | null });
  const declared = json?.padding?.pad_id;
  const padId = typeof declared === 'number' ? declared : firstId(tk, ['[PAD]', '<pad>', '<|padding|>', '<|endoftext|>', '</s>', '<unk>']) ?? 0;
  // The probe is a word every vocabulary splits into ordinary tokens; the special tokens are what
  // the post-processor puts around it.
  const plain = encode('hello', false), full = encode('hello', true);
  const at = indexOfRun(full, plain);
  if (at < 0) throw bad('the tokenizer\'s post-processor changes the tokens of a sequence (not only around it): not supported');
  return { encode, vocabSize, padId, prefix: full.slice(0, at), suffix: full.slice(at + plain.length) };
}

function indexOfRun(hay: number[], needle: number[]): number {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}
