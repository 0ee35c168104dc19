// The token ids a tokenizer can never produce, and their rows of the model's token embedding
// written as zeros: rows no text reaches cost bytes in every download and nothing else.
//
// Why a WordPiece vocabulary has such entries: the model matches vocabulary entries inside the
// pieces that its pre-tokenizer cuts from the *normalized* text (greedy longest match, a `##`
// prefix for a piece that continues a word). An entry that the normalizer would change — an
// upper-case or accented entry under BERT's lowercasing, accent-stripping normalizer — or that the
// pre-tokenizer would cut apart — BERT's `[unusedN]` placeholders (the brackets are punctuation),
// a `##` continuation of a punctuation mark or of a CJK character (both always stand alone) — can
// never match, so its embedding row is never gathered. The test below runs the tokenizer's own
// normalizer and pre-tokenizer on each entry, so it holds for any WordPiece tokenizer.json, not
// only BERT's settings. Vocabulary trimming as TextPruner (Yang et al. 2022) does it drops the rows
// of rare tokens too, at a cost in coverage; this drops none that any text can reach, so the
// model's output for every text the tokenizer encodes stays the same bit for bit.
// BPE and Unigram vocabularies (GPT-2's byte level, Llama's, SentencePiece) are not read here:
// whether a merge result is ever produced depends on the merge order, not on one entry alone;
// their entries all count as reachable.
import { DT, attrInt, type NodeProto, type OnnxModel } from '../model.js';
import { buildTokenizer, vocabSizeOf, type TokenizerSource } from './tokenizer.js';

/** Token ids no text can make, out of a vocabulary of `vocabSize` ids (added tokens included). */
export interface UnreachableTokens {
  ids: number[];
  vocabSize: number;
  /** Why none are listed, when the tokenizer is not one whose vocabulary is read here. */
  why?: string;
}

/** What {@link zeroUnreachableRows} wrote: each token table and its rows set to zero. */
export interface UnreachableRowsReport {
  /** Ids the tokenizer cannot produce (out of `vocabSize`). */
  tokens: number;
  vocabSize: number;
  /** Tables whose rows were zeroed: the unreachable ids' rows, and the rows past the vocabulary (a padded table). */
  tables: { name: string; rows: number }[];
  /** Tables of vocabulary size left as they were, and why. */
  left: { name: string; why: string }[];
  why?: string;
}

/** The part of a loaded @huggingface/tokenizers Tokenizer this reads (typed here, see tokenizer.ts). */
interface Inner {
  normalizer?: { normalize(text: string): string } | null;
  pre_tokenizer?: { pre_tokenize(text: string | string[]): string[] } | null;
  model?: { config?: { type?: string; continuing_subword_prefix?: string } } | null;
  get_vocab(withAddedTokens?: boolean): Map<string, number>;
  get_added_tokens_decoder?(): Map<number, unknown>;
}

/** The ids of a WordPiece tokenizer's vocabulary entries that no text can produce (see the file's comment). */
export function unreachableTokens(src: TokenizerSource): UnreachableTokens {
  const tk = buildTokenizer(src) as unknown as Inner;
  const vocab = tk.get_vocab(true);
  const vocabSize = vocabSizeOf(vocab);
  const config = tk.model?.config;
  if (config?.type !== 'WordPiece') return { ids: [], vocabSize, why: `a ${config?.type ?? 'unknown'} tokenizer: only WordPiece vocabularies are read for entries no text reaches` };
  // added tokens (specials such as [CLS], [UNK]) are matched on the raw text, or made by the post-processor
  const added = new Set(tk.get_added_tokens_decoder?.().keys() ?? []);
  const prefix = config.continuing_subword_prefix ?? '##';
  const pieces = (s: string) => {
    const normal = tk.normalizer ? tk.normalizer.normalize(s) : s;
    return tk.pre_tokenizer ? tk.pre_tokenizer.pre_tokenize(normal) : [normal];
  };
  // An entry is reachable when it survives as one whole piece: the entry itself for a word's first
  // piece; after a letter for a continuation, which must be able to follow one inside a word.
  const whole = (s: string) => { const p = pieces(s); return p.length === 1 && p[0] === s; };
  const ids: number[] = [];
  for (const [entry, id] of vocab) {
    if (added.has(id)) continue;
    const continues = entry.startsWith(prefix) && entry.length > prefix.length;
    if (!(continues ? whole(`a${entry.slice(prefix.length)}`) : whole(entry))) ids.push(id);
  }
  ids.sort((a, b) => a - b);
  // A normalizer that rewrites every entry (one that prepends a marker, say) would list the whole
  // vocabulary: past this share the reading is not trusted and nothing is listed.
  if (ids.length > MAX_SHARE * vocab.size) return { ids: [], vocabSize, why: `${ids.length} of ${vocab.size} entries would be unreachable: this tokenizer's normalizer or pre-tokenizer is not read right here; nothing listed` };
  return { ids, vocabSize };
}

/** The largest share of a vocabulary listed as unreachable (BERT's: under 5%). */
const MAX_SHARE = 0.25;

/**
 * A table of more rows than the vocabulary by at most this (or 1% of it) is the vocabulary's, padded
 * (to a multiple of 64 or 128, as training frameworks do); a larger one is not this tokenizer's.
 */
const PAD_ROWS = 512;

/**
 * Zeroes, in every token embedding of `model`, the rows of the ids `src` cannot produce and the rows
 * past its vocabulary. A token embedding here: a float32 2-D initializer that only Gather nodes read
 * (axis 0) with indices that are graph inputs, whose rows are the vocabulary's (padded or not). A
 * table also read another way (an output head tied to it) is left whole: its rows make outputs too.
 */
export function zeroUnreachableRows(model: OnnxModel, src: TokenizerSource): UnreachableRowsReport {
  const { ids, vocabSize, why } = unreachableTokens(src);
  const report: UnreachableRowsReport = { tokens: ids.length, vocabSize, tables: [], left: [], ...(why ? { why } : {}) };
  // inputs fed at run time (an IR 3 file lists its initializers among the inputs too)
  const constants = model.constants();
  const graphInputs = new Set<string>(model.graph.input.map((i: { name: string }) => i.name).filter((n: string) => !constants.has(n)));
  for (const w of model.weights) {
    if (w.dims.length !== 2 || !w.consumers.includes('Gather#0')) continue;
    const rows = w.dims[0];
    if (rows < vocabSize) continue; // a position or segment table, or not this tokenizer's
    const leave = (reason: string) => void report.left.push({ name: w.name, why: reason });
    if (rows - vocabSize > Math.max(PAD_ROWS, Math.ceil(vocabSize / 100))) { leave(`${rows} rows against the tokenizer's ${vocabSize} ids: not this tokenizer's table?`); continue; }
    const readers = model.graph.node.filter((n: NodeProto) => n.input.includes(w.name));
    const other = readers.find((n: NodeProto) => n.op_type !== 'Gather' || n.input[0] !== w.name || attrInt(n, 'axis', 0) !== 0 || !graphInputs.has(n.input[1]));
    if (other) { leave(`also read by ${other.op_type} "${other.name || other.output[0]}" (not a Gather of input ids): its rows make outputs too`); continue; }
    if (w.dtype !== DT.FLOAT) { leave(`${w.dtypeName} table: rows are zeroed in float32 tables only`); continue; }
    const cols = w.dims[1];
    const values = model.readFloat(w);
    let zeroed = 0;
    const zero = (r: number) => { values.fill(0, r * cols, (r + 1) * cols); zeroed++; };
    for (const id of ids) zero(id);
    for (let r = vocabSize; r < rows; r++) zero(r);
    if (!zeroed) continue;
    model.writeFloat(w, values);
    report.tables.push({ name: w.name, rows: zeroed });
  }
  if (ids.length && !report.tables.length && !report.left.length) {
    report.why = `no token table of this model matches the tokenizer (a Gather of an input ids tensor, ${vocabSize} rows or a few more)`;
  }
  return report;
}
