// Fidelity of a language model's next-token logits [B, S, V]: does the pruned model predict the
// original's next token, and how much likelihood of the real text does it lose? Perplexity is the
// measure SparseGPT (Frantar & Alistarh 2023) and Wanda (Sun et al. 2023) report: exp of the mean
// next-token cross-entropy over all predicted tokens of the held-out windows (their eval loops sum
// the windows' losses weighted by token count); here padding (attention mask 0) neither predicts nor
// is predicted.
import type { KindResult, Pair } from './types.js';
import type { TokenRows } from './token-inputs.js';

/** log(sum(exp(row))) of one row, stable; NaN / Infinity in the row propagate. */
function logSumExp(v: Float32Array, off: number, len: number): number {
  let m = -Infinity;
  for (let j = 0; j < len; j++) if (v[off + j] > m || Number.isNaN(v[off + j])) m = v[off + j];
  if (!Number.isFinite(m)) return m;
  let s = 0;
  for (let j = 0; j < len; j++) s += Math.exp(v[off + j] - m);
  return m + Math.log(s);
}

/**
 * The sums behind {@link languageModelFidelity}, one sample at a time: a held-out judge that streams
 * its samples (calib/evaluate.ts) adds each and lets it go, where the whole set of a language
 * model's logits is samples × tokens × vocabulary floats. The same sums in the same order.
 */
export class LanguageModelTally {
  private positions = 0; private same = 0; private kl = 0; private predicted = 0;
  private nllRef = 0; private nllOut = 0; private vocab = 0;

  add({ ref, out, dims }: Pair, tk: TokenRows | null): void {
    if (dims.length < 2) return;
    const v = dims[dims.length - 1];
    const s = dims.length >= 3 ? dims[dims.length - 2] : 1;
    const rows = ref.length / v;
    this.vocab = v;
    const fits = tk !== null && tk.ids.length === rows && tk.seqLen === s;
    const on = (r: number) => !fits || !tk!.mask || tk!.mask[r] !== 0;
    for (let r = 0; r < rows; r++) {
      if (!on(r)) continue;
      const off = r * v;
      let a = 0, b = 0, av = -Infinity, bv = -Infinity;
      for (let j = 0; j < v; j++) {
        if (ref[off + j] > av) { av = ref[off + j]; a = j; }
        if (out[off + j] > bv) { bv = out[off + j]; b = j; }
      }
      this.positions++;
      if (a === b && bv > -Infinity) this.same++;
      const lr = logSumExp(ref, off, v), lo = logSumExp(out, off, v);
      let d = 0;
      for (let j = 0; j < v; j++) {
        const lp = ref[off + j] - lr;
        d += Math.exp(lp) * (lp - (out[off + j] - lo));
      }
      // a pruned row that is not finite has lost the distribution: a large, finite KL keeps the mean readable
      this.kl += Number.isFinite(d) ? Math.max(0, d) : 50;
      // the next token of the same sequence (not across the rows of a batch)
      if (fits && (r + 1) % s !== 0 && on(r + 1)) {
        const t = tk!.ids[r + 1];
        if (t >= 0 && t < v) {
          this.predicted++;
          this.nllRef += lr - ref[off + t];
          this.nllOut += lo - out[off + t];
        }
      }
    }
  }

  result(): KindResult {
    const { positions, same, kl, predicted, nllRef, nllOut, vocab } = this;
    const top1 = positions ? same / positions : 1;
    const metrics: Record<string, number> = { top1Agreement: top1, meanKL: positions ? kl / positions : 0, positions, vocab };
    let ppl = '';
    if (predicted) {
      const pr = Math.exp(nllRef / predicted), po = Number.isFinite(nllOut) ? Math.exp(nllOut / predicted) : Infinity;
      Object.assign(metrics, { perplexityOriginal: pr, perplexityPruned: po, perplexityRatio: po / pr, predictedTokens: predicted });
      ppl = `; perplexity ${pr.toFixed(2)} -> ${po.toFixed(2)} (x${(po / pr).toFixed(3)}) over ${predicted} next tokens`;
    }
    return {
      score: top1,
      decisions: positions,
      metrics,
      detail: `${positions} position(s) over ${vocab} tokens; next-token top-1 agreement ${(100 * top1).toFixed(1)}%, KL ${(metrics.meanKL).toFixed(4)}${ppl || ' (no input_ids given: no perplexity)'}`,
    };
  }
}

/**
 * Over every unmasked position of every sample: next-token top-1 agreement (same argmax of the
 * logits), mean KL(original || pruned) of the softmaxed rows in nats; with the samples' token ids
 * (`tokens[i]`, aligned with `pairs[i]`), the perplexity of each model on the text (the logits at t
 * scored against the id at t+1, both unmasked) and their ratio. Score = top-1 agreement: a share of
 * counted decisions in [0, 1], 1 when the pruned model predicts every next token as the original
 * does (so a floor and its Wilson bound read as for a classifier); the perplexity ratio is reported
 * beside it, for the comparison with the papers.
 */
export function languageModelFidelity(pairs: Pair[], tokens: readonly (TokenRows | null)[] = []): KindResult {
  const tally = new LanguageModelTally();
  pairs.forEach((p, i) => tally.add(p, tokens[i] ?? null));
  return tally.result();
}
