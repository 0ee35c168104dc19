// Fidelity of per-step class scores (CTC text recognisers, taggers): does the pruned model read the
// same string? Layout (N, T, C): batch, steps, classes; rows along the last axis.
import type { KindResult, Pair } from './types.js';
import { squeezeTrailing, argmaxRow } from './rows.js';

/** Levenshtein distance of two integer sequences (two rows of the table). */
export function editDistance(a: readonly number[], b: readonly number[]): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}

/** Greedy CTC decode: argmax per step, repeats collapsed, blanks dropped. */
export function greedyDecode(steps: readonly number[], blank: number): number[] {
  const out: number[] = [];
  let last = -1;
  for (const s of steps) {
    if (s !== last && s !== blank) out.push(s);
    last = s;
  }
  return out;
}

/**
 * Per-step argmax agreement, and the edit distance of the greedy decodes (the pruned model's string
 * against the original's, as a CER with the original as the truth). Score = 1 - total edits / total
 * length of the original's strings (at least 1), floored at 0: a score of 0.99 is a CER of 1% against
 * the original.
 */
export function sequenceFidelity(pairs: Pair[], blank = 0): KindResult {
  let steps = 0, same = 0, edits = 0, refLen = 0, seqs = 0, exact = 0;
  for (const { ref, out, dims } of pairs) {
    const d = squeezeTrailing(dims);
    if (d.length < 2) continue;
    const c = d[d.length - 1], t = d[d.length - 2];
    const n = ref.length / (c * t);
    for (let s = 0; s < n; s++) {
      const a: number[] = [], b: number[] = [];
      for (let k = 0; k < t; k++) {
        const off = (s * t + k) * c;
        a.push(argmaxRow(ref, off, 1, c)); b.push(argmaxRow(out, off, 1, c));
        if (a[k] === b[k]) same++;
      }
      steps += t;
      const da = greedyDecode(a, blank), db = greedyDecode(b, blank);
      const e = editDistance(da, db);
      edits += e; refLen += da.length; seqs++;
      if (e === 0) exact++;
    }
  }
  const cer = edits / Math.max(1, refLen);
  return {
    score: Math.max(0, 1 - cer),
    decisions: refLen,
    metrics: { stepAgreement: steps ? same / steps : 1, editDistance: edits, referenceLength: refLen, cerVsOriginal: cer, exactMatch: seqs ? exact / seqs : 1, sequences: seqs },
    detail: `${seqs} sequence(s), greedy decodes (blank ${blank}) differ by ${edits} edit(s) over ${refLen} symbol(s)`,
  };
}
