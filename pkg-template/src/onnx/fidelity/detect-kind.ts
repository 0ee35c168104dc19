// Which kind of output a tensor is, from its shape and the original model's values (the first
// sample). The rules are conservative: anything they do not recognise is 'generic', whose metric
// holds for every output; a user who knows better sets the kind (--metric OUTPUT=KIND).
import type { OutputKind } from './types.js';
import { squeezeTrailing, isProbRows, inUnit } from './rows.js';

/** Names that say "class scores" for a rank-2 output whose rows are not distributions (logits). */
const CLASS_NAME = /logit|prob|softmax|class|cls|score|pred/i;

/** The YOLO-style layout of a rank-3 output, or null: anchors A, per-anchor length K = 4 (+1) + C. */
export function yoloLayout(dims: readonly number[], v?: Float32Array): { channelsFirst: boolean; anchors: number; k: number } | null {
  const d = squeezeTrailing(dims);
  if (d.length !== 3) return null;
  const channelsFirst = d[1] < d[2];
  const k = Math.min(d[1], d[2]), anchors = Math.max(d[1], d[2]);
  if (k < 5 || anchors < 64 || anchors < 2 * k) return null;
  if (!v) return { channelsFirst, anchors, k };
  // box columns (cx, cy, w, h) are coordinates: (almost) never below -1, in pixels, larger than any
  // score; the rest are probabilities
  let boxNeg = 0, boxN = 0, boxMax = -Infinity, scoreMax = -Infinity;
  const n = v.length / (k * anchors);
  for (let b = 0; b < n; b++) {
    for (let a = 0; a < anchors; a++) {
      for (let j = 0; j < k; j++) {
        const x = v[b * k * anchors + (channelsFirst ? j * anchors + a : a * k + j)];
        if (j < 4) { boxN++; if (x < -1) boxNeg++; boxMax = Math.max(boxMax, x); }
        else { if (!(x >= -1e-4 && x <= 1 + 1e-4)) return null; scoreMax = Math.max(scoreMax, x); }
      }
    }
  }
  // pixel coordinates (> 1): normalised boxes next to scores are too easily confused with a score
  // tensor (N, A, C) whose first columns happen to be larger; those are set by hand
  if (boxNeg > 0.01 * boxN || !(boxMax > 1) || !(boxMax > scoreMax)) return null;
  return { channelsFirst, anchors, k };
}

/** Names of token states / sentence vectors in Hugging Face and sentence-transformers exports. */
const EMBEDDING_NAME = /embed|pool|hidden|sentence/i;

/**
 * What is known of the inputs of a text model (token ids [B, S]): only then are outputs read as
 * language-model logits or embeddings, so image and audio models keep their kinds.
 */
export interface TextContext {
  /** S of the samples' input_ids. */
  seqLen: number;
  /** The tokenizer's vocabulary size, when known. */
  vocabSize?: number;
}

/** The kind of an output and why (one phrase for the report). */
export function detectKind(name: string, dims: readonly number[], v: Float32Array, text?: TextContext): { kind: OutputKind; why: string } {
  const d = squeezeTrailing(dims);
  const r = d.length;
  if (r <= 1 || v.length <= 1) return { kind: 'generic', why: 'scalar or vector' };
  if (r === 2 && d[1] >= 2) {
    if (isProbRows(v, d, 1)) return { kind: 'classification', why: 'rows are distributions over classes' };
    if (CLASS_NAME.test(name)) return { kind: 'classification', why: `rank 2, named like class scores` };
    if (text && d[1] >= 16) return { kind: 'embedding', why: `one ${d[1]}-vector per token sequence` };
    return { kind: 'generic', why: 'rank 2, rows are not distributions (set the kind for logits)' };
  }
  if (r === 3) {
    if (d[2] >= 2 && isProbRows(v, d, 2)) {
      return d[1] === 1 ? { kind: 'classification', why: 'one row of class probabilities' } : { kind: 'sequence', why: 'per-step distributions over classes' };
    }
    if (text && d[1] === text.seqLen) {
      const vocab = text.vocabSize !== undefined ? d[2] >= text.vocabSize : /logit/i.test(name);
      if (vocab) return { kind: 'language-model', why: `[B, S, ${d[2]}] over the token ids: next-token logits` };
      if (EMBEDDING_NAME.test(name)) return { kind: 'embedding', why: `[B, S, ${d[2]}] token states, mean-pooled over the attention mask` };
    }
    const y = yoloLayout(d, v);
    if (y) return { kind: 'detection', why: `YOLO-style head, ${y.anchors} anchors x ${y.k} (${y.channelsFirst ? 'channels first' : 'anchors first'})` };
    return { kind: 'generic', why: 'rank 3, neither per-step distributions nor a YOLO-style head' };
  }
  if (r === 4 && d[2] >= 8 && d[3] >= 8) {
    if (d[1] === 1 && inUnit(v)) return { kind: 'dense-map', why: 'one probability map per image' };
    if (d[1] > 1 && isProbRows(v, d, 1)) return { kind: 'dense-map', why: `per-pixel distributions over ${d[1]} classes` };
  }
  return { kind: 'generic', why: `rank ${r}, no decision structure recognised` };
}
