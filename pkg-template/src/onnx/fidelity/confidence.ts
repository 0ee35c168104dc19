// A fidelity floor that holds on samples not yet seen. A score measured on n held-out samples is an
// estimate: a plan chosen because it just meets a floor on those samples sits, on average, at the
// floor on others, and half the time below it (a cls plan at 0.990 agreement on 512 crops flipped
// 1.1% of a separate set). Where a score is a share of counted decisions (rows that keep their
// class, symbols of a decode, matched boxes or regions), the lower end of its Wilson score interval
// at a chosen confidence is the figure a floor can be held to. Generic scores (cosines, errors) are
// not shares of anything counted: their bound is the score itself.
import { OnnxError } from '../errors.js';
import type { FidelityReport } from './types.js';

/** The standard normal quantile: z with P(Z <= z) = p, by bisection on the normal CDF below. */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new OnnxError('unsupported', `a quantile needs 0 < p < 1 (got ${String(p)})`, 'invalid_arguments');
  let lo = -40, hi = 40;
  for (let i = 0; i < 100 && hi - lo > 1e-12; i++) {
    const mid = (lo + hi) / 2;
    if (normalCdf(mid) < p) lo = mid; else hi = mid;
  }
  return (lo + hi) / 2;
}

/** P(Z <= z) from erf by Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7). */
function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-x * x);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/**
 * The one-sided lower bound at `confidence` of the Wilson score interval of a share `p` of `n`
 * decisions. With no decisions the share says nothing, and the bound is 0.
 */
export function wilsonLower(p: number, n: number, confidence: number): number {
  if (!(n > 0)) return 0;
  const z = normalQuantile(confidence);
  const z2 = z * z;
  const centre = p + z2 / (2 * n);
  const spread = z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return Math.max(0, Math.min(1, (centre - spread) / (1 + z2 / n)));
}

/** A report's score held to a confidence: each output's lower bound, and the worst of them. */
export interface BoundedFidelity {
  /** The worst output's lower bound. */
  score: number;
  /** The output it belongs to. */
  worst: string;
  confidence: number;
  /** Every output's bound, by name. */
  outputs: Record<string, number>;
}

/** The lower confidence bound of every output's score (Wilson, where the score is a share of counted decisions). */
export function lowerBound(report: FidelityReport, confidence: number): BoundedFidelity {
  if (!(confidence > 0 && confidence < 1)) throw new OnnxError('unsupported', `confidence must be in (0, 1) (got ${String(confidence)})`, 'invalid_arguments');
  const outputs: Record<string, number> = {};
  let worst = '', score = Infinity;
  for (const o of report.outputs) {
    const b = o.decisions === undefined ? o.score : wilsonLower(o.score, o.decisions, confidence);
    outputs[o.name] = b;
    if (!(b >= score)) { score = b; worst = o.name; }
  }
  return { score, worst, confidence, outputs };
}
