// Label-free fidelity of a pruned model: each output of the pruned model against the same output of
// the original on the same samples, measured the way its kind is used (class decisions, boxes,
// regions, decoded strings, or values), so that no metric needs labels and a collapse in a small part
// of an output cannot hide behind a large part. The model's fidelity is its worst output's.
import { OnnxError } from '../errors.js';
import type { Outputs } from './types.js';
import type { FidelityOptions, FidelityReport, KindResult, OutputFidelity, OutputKind, Pair } from './types.js';
import { detectKind } from './detect-kind.js';
import { genericFidelity } from './generic.js';
import { classificationFidelity } from './classification.js';
import { detectionFidelity } from './detection.js';
import { denseMapFidelity } from './dense-map.js';
import { sequenceFidelity } from './sequence.js';
import { languageModelFidelity } from './language-model.js';
import { embeddingFidelity } from './embedding.js';
import { tokenRows, type TokenRows } from './token-inputs.js';

export type { OutputKind, OutputFidelity, FidelityReport, FidelityOptions, DetectionOptions, DenseMapOptions, Pair, KindResult } from './types.js';
export { detectKind, yoloLayout } from './detect-kind.js';
export { genericFidelity, cosine, cosineOfRelError, channelAxis } from './generic.js';
export { classificationFidelity } from './classification.js';
export { detectionFidelity, decodeBoxes, matchBoxes, iou } from './detection.js';
export type { Box } from './detection.js';
export { denseMapFidelity, components, matchComponents } from './dense-map.js';
export type { RegionFilter } from './dense-map.js';
export { sequenceFidelity, greedyDecode, editDistance } from './sequence.js';
export { languageModelFidelity, LanguageModelTally } from './language-model.js';
export { embeddingFidelity, pooledRows, NEIGHBOURS } from './embedding.js';
export { tokenRows } from './token-inputs.js';
export type { TokenRows, SampleInputs, TokenFeed } from './token-inputs.js';
export type { TextContext } from './detect-kind.js';
export { wilsonLower, normalQuantile, lowerBound } from './confidence.js';
export type { BoundedFidelity } from './confidence.js';

export const OUTPUT_KINDS: readonly OutputKind[] = Object.freeze(['classification', 'detection', 'dense-map', 'sequence', 'language-model', 'embedding', 'generic']);

const bad = (msg: string) => new OnnxError('bad_calibration', msg, 'shape_mismatch');

/** The dims of one output array: its own `.dims` (runSet keeps them), else `shapes[name]`, else flat. */
export function dimsOf(a: Float32Array & { dims?: readonly number[] }, name: string, shapes?: Record<string, number[]>): number[] {
  const d = a.dims ?? shapes?.[name] ?? [a.length];
  const n = d.reduce((x, y) => x * y, 1);
  if (n !== a.length || d.some((x) => !Number.isInteger(x) || x < 0)) throw bad(`output "${name}": dims [${d.join(',')}] do not hold its ${a.length} values`);
  return [...d];
}

function measure(kind: OutputKind, pairs: Pair[], opts: FidelityOptions, tokens: (TokenRows | null)[]): KindResult {
  switch (kind) {
    case 'language-model': return languageModelFidelity(pairs, tokens);
    case 'embedding': return embeddingFidelity(pairs, tokens);
    case 'classification': return classificationFidelity(pairs);
    case 'detection': return detectionFidelity(pairs, opts.detection);
    case 'dense-map': return denseMapFidelity(pairs, opts.denseMap);
    case 'sequence': return sequenceFidelity(pairs, opts.blank ?? 0);
    default: return genericFidelity(pairs);
  }
}

/**
 * Fidelity of `outputs` (the pruned model's, one record per sample) against `reference` (the
 * original's on the same samples, same order). Every output of the reference is measured with its
 * kind (from `opts.kinds`, else detected from the first sample's shape and values) and reported; the
 * report's score is the worst output's. A pruned output with non-finite values scores 0 (generic),
 * or whatever its decisions give (other kinds: NaN never wins an argmax or passes a threshold).
 */
export function fidelity(reference: Outputs[], outputs: Outputs[], opts: FidelityOptions = {}): FidelityReport {
  if (reference.length !== outputs.length) throw bad(`fidelity compares the same samples: ${reference.length} reference against ${outputs.length} pruned`);
  if (!reference.length) throw bad('fidelity needs at least one sample');
  for (const [name, k] of Object.entries(opts.kinds ?? {})) {
    if (!OUTPUT_KINDS.includes(k)) throw new OnnxError('bad_calibration', `unknown output kind "${k}" for "${name}" (one of ${OUTPUT_KINDS.join(', ')})`, 'invalid_value');
    if (!(name in reference[0])) throw new OnnxError('bad_calibration', `no output named "${name}" (outputs: ${Object.keys(reference[0]).join(', ')})`, 'invalid_value');
  }
  if (opts.inputs && opts.inputs.length !== reference.length) throw bad(`fidelity's inputs are the samples of the outputs: ${opts.inputs.length} inputs for ${reference.length} samples`);
  const tokens = reference.map((_, i) => tokenRows(opts.inputs?.[i]));
  const text = tokens[0] ? { seqLen: tokens[0].seqLen, ...(opts.vocabSize !== undefined ? { vocabSize: opts.vocabSize } : {}) } : undefined;
  const report: OutputFidelity[] = [];
  for (const name of Object.keys(reference[0])) {
    const pairs: Pair[] = reference.map((r, i) => {
      const a = r[name], b = outputs[i][name];
      if (!a || !b) throw bad(`output "${name}" is missing from sample ${i} of the ${a ? 'pruned' : 'reference'} set`);
      if (a.length !== b.length) throw bad(`output "${name}", sample ${i}: ${a.length} values in the reference, ${b.length} in the pruned model's`);
      return { ref: a, out: b, dims: dimsOf(a, name, opts.shapes) };
    });
    const set = opts.kinds?.[name];
    const { kind, why } = set ? { kind: set, why: 'set by the caller' } : detectKind(name, pairs[0].dims, pairs[0].ref, text);
    const r = measure(kind, pairs, opts, tokens);
    report.push({ name, kind, score: r.score, metrics: r.metrics, detail: `${why}; ${r.detail ?? ''}`.replace(/; $/, ''), ...(r.decisions !== undefined ? { decisions: r.decisions } : {}) });
  }
  let worst = report[0];
  for (const o of report) if (!(o.score >= worst.score)) worst = o;
  return { score: worst.score, worst: worst.name, outputs: report, samples: reference.length };
}
