// Fidelity of class scores: does the pruned model pick the original's class? Rows are along the last
// axis (after dropping trailing 1s: (N, C, 1, 1) is (N, C)); rows that are not distributions are
// logits and get a softmax first (both models' rows, the same way).
import type { KindResult, Pair } from './types.js';
import { squeezeTrailing, isProbRows, forRows, softmaxRow, argmaxRow } from './rows.js';

/**
 * Over all rows of all samples: top-1 agreement (same argmax), top-5 agreement (the original's
 * top-1 among the pruned model's 5 highest; top-min(5, C)), and the mean KL divergence
 * KL(original || pruned) in nats. Score = top-1 agreement: the decisions, not the scores.
 */
export function classificationFidelity(pairs: Pair[]): KindResult {
  if (!pairs.length) return { score: 1, metrics: { rows: 0 }, detail: 'no samples' };
  const logits = !pairs.every(({ ref, dims }) => { const d = squeezeTrailing(dims); return isProbRows(ref, d, d.length - 1); });
  let rows = 0, top1 = 0, topk = 0, kl = 0, classes = 0;
  for (const { ref, out, dims } of pairs) {
    const d = squeezeTrailing(dims);
    const ax = d.length - 1;
    const c = d[ax];
    classes = c;
    const k = Math.min(5, c);
    const p = new Float64Array(c), q = new Float64Array(c);
    forRows(d, ax, (off, stride, len) => {
      const a = argmaxRow(ref, off, stride, len), b = argmaxRow(out, off, stride, len);
      rows++;
      if (a === b) top1++;
      // the original's class is in the pruned top-k when fewer than k classes score above it
      const sa = out[off + a * stride];
      let above = 0;
      for (let j = 0; j < len; j++) if (out[off + j * stride] > sa || Number.isNaN(sa)) above++;
      if (above < k) topk++;
      if (logits) { softmaxRow(ref, off, stride, len, p); softmaxRow(out, off, stride, len, q); }
      else for (let j = 0; j < len; j++) { p[j] = ref[off + j * stride]; q[j] = out[off + j * stride]; }
      let s = 0;
      for (let j = 0; j < len; j++) if (p[j] > 0) s += p[j] * Math.log(p[j] / Math.max(q[j], 1e-12));
      kl += Number.isFinite(s) ? Math.max(0, s) : 50;
    });
  }
  const t1 = top1 / rows, tk = topk / rows;
  return {
    score: t1,
    decisions: rows,
    metrics: { top1Agreement: t1, top5Agreement: tk, meanKL: kl / rows, rows, classes },
    detail: `${rows} row(s) over ${classes} classes${logits ? ' (logits: softmax applied)' : ''}; top-1 agreement ${(100 * t1).toFixed(1)}%`,
  };
}
