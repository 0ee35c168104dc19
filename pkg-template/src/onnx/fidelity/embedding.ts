// Fidelity of a sentence embedding: an embedding is used through its neighbours (retrieval,
// clustering, kNN classification), so beside the cosine of each sample's vector with the original's,
// the share of each sample's nearest neighbours (within the held-out set, by cosine similarity) that
// the pruned model keeps; the measure of neighbourhood preservation used for embedding compression
// (e.g. the "kNN recall" of dimensionality-reduction studies). Pooled output [B, D], or token states
// [B, S, D] mean-pooled over the attention mask as sentence-transformers' mean pooling does
// (sentence_transformers/models/Pooling.py).
import type { KindResult, Pair } from './types.js';
import type { TokenRows } from './token-inputs.js';
import { cosine } from './generic.js';

/** Neighbours compared per sample: 10 (as the measure), at most (n - 1) / 2 so that keeping them is not automatic in a small set. */
export const NEIGHBOURS = 10;

/** The sample vectors of one pair: rows of [B, D], or [B, S, D] mean-pooled over unmasked positions. */
export function pooledRows(p: Pair, tk: TokenRows | null): { ref: Float64Array[]; out: Float64Array[] } {
  const d = p.dims;
  const dim = d[d.length - 1];
  const ref: Float64Array[] = [], out: Float64Array[] = [];
  if (d.length === 3) {
    const [b, s] = d;
    const fits = tk?.mask && tk.mask.length === b * s;
    for (let i = 0; i < b; i++) {
      const x = new Float64Array(dim), y = new Float64Array(dim);
      let n = 0;
      for (let t = 0; t < s; t++) {
        if (fits && tk!.mask![i * s + t] === 0) continue;
        n++;
        const off = (i * s + t) * dim;
        for (let j = 0; j < dim; j++) { x[j] += p.ref[off + j]; y[j] += p.out[off + j]; }
      }
      for (let j = 0; j < dim; j++) { x[j] /= Math.max(1, n); y[j] /= Math.max(1, n); }
      ref.push(x); out.push(y);
    }
  } else {
    const rows = p.ref.length / dim;
    for (let i = 0; i < rows; i++) {
      ref.push(Float64Array.from(p.ref.subarray(i * dim, (i + 1) * dim)));
      out.push(Float64Array.from(p.out.subarray(i * dim, (i + 1) * dim)));
    }
  }
  return { ref, out };
}

/** Indices of the k rows most cosine-similar to row i (itself excluded; ties to the lower index). */
function nearest(unit: Float64Array[], i: number, k: number): number[] {
  const sims: [number, number][] = [];
  for (let j = 0; j < unit.length; j++) {
    if (j === i) continue;
    let s = 0;
    for (let c = 0; c < unit[i].length; c++) s += unit[i][c] * unit[j][c];
    sims.push([Number.isFinite(s) ? s : -Infinity, j]);
  }
  sims.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  return sims.slice(0, k).map((x) => x[1]);
}

const normalized = (v: Float64Array) => {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  return n > 0 ? v.map((x) => x / n) : v;
};

/**
 * Mean (and minimum) cosine of each sample's vector with the original's, and the share of each
 * sample's k nearest neighbours among the other held-out samples (k = min(10, floor((n - 1) / 2)))
 * that are still among its k nearest in the pruned model. Score = min(mean cosine, neighbour share):
 * both are 1 when the embedding is unchanged, and either falls when what the embedding is used for
 * does; where the neighbour share is the lower, it is a share of n * k counted neighbours (decisions,
 * for the Wilson bound). With fewer than 3 samples there are no neighbours to keep: the cosine alone.
 */
export function embeddingFidelity(pairs: Pair[], tokens: readonly (TokenRows | null)[] = []): KindResult {
  const ref: Float64Array[] = [], out: Float64Array[] = [];
  pairs.forEach((p, i) => { const r = pooledRows(p, tokens[i] ?? null); ref.push(...r.ref); out.push(...r.out); });
  const n = ref.length;
  const cos = ref.map((r, i) => cosine(r, out[i]));
  const meanCos = n ? cos.reduce((a, b) => a + b, 0) / n : 1;
  const minCos = n ? Math.min(...cos) : 1;
  const k = Math.min(NEIGHBOURS, Math.floor((n - 1) / 2));
  const metrics: Record<string, number> = { cosine: meanCos, minCosine: minCos, samples: n, dim: ref[0]?.length ?? 0 };
  if (k < 1) {
    return { score: Math.max(0, meanCos), metrics, detail: `${n} vector(s): cosine ${meanCos.toFixed(4)} (too few samples for neighbours)` };
  }
  const ru = ref.map(normalized), ou = out.map(normalized);
  let kept = 0;
  for (let i = 0; i < n; i++) {
    const a = new Set(nearest(ru, i, k));
    for (const j of nearest(ou, i, k)) if (a.has(j)) kept++;
  }
  const share = kept / (n * k);
  Object.assign(metrics, { neighboursKept: share, neighbours: k });
  const score = Math.max(0, Math.min(meanCos, share));
  return {
    score,
    ...(share <= meanCos ? { decisions: n * k } : {}),
    metrics,
    detail: `${n} vector(s) of ${metrics.dim}: cosine ${meanCos.toFixed(4)} (min ${minCos.toFixed(4)}), ${(100 * share).toFixed(1)}% of ${k} nearest neighbours kept`,
  };
}
