// Fidelity of an output with no known meaning (embeddings, regression, mixed heads): the cosine of
// each sample's output with the original's, and the worst relative error of any one channel. The
// cosine alone lets a large part of an output hide a collapsed small part (box pixels next to class
// probabilities: cosine 0.995 with the classes gone); a channel's error relative to its own energy
// cannot be hidden that way.
import type { KindResult, Pair } from './types.js';

/**
 * The axis whose entries are "channels": the last one for (N, D); for rank >= 3 the smaller of axis 1
 * and the last axis (NCHW's C, NHWC's C, YOLO's 4+C in either layout), axis 1 on a tie; none (the
 * whole output one channel) for rank <= 1.
 */
export function channelAxis(dims: readonly number[]): number {
  const r = dims.length;
  if (r <= 1) return -1;
  if (r === 2) return 1;
  return dims[r - 1] < dims[1] ? r - 1 : 1;
}

/** Cosine similarity; 1 when both are zero, 0 when only one is or a value is not finite. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let d = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) { d += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i]; }
  if (!Number.isFinite(d) || !Number.isFinite(na) || !Number.isFinite(nb)) return 0;
  if (na === 0 && nb === 0) return 1;
  if (na === 0 || nb === 0) return 0;
  return Math.max(-1, Math.min(1, d / Math.sqrt(na * nb)));
}

/**
 * The cosine an output would have if its error, orthogonal to it, were `rel` of its norm:
 * 1 / sqrt(1 + rel^2). Puts a relative error on the cosine's scale (0.99 <-> 14% error).
 */
export const cosineOfRelError = (rel: number): number => (Number.isFinite(rel) ? 1 / Math.sqrt(1 + rel * rel) : 0);

/**
 * Per sample cosine (mean and minimum over samples) and, per channel over all samples and positions,
 * ||out_c - ref_c|| / ||ref_c||. Score = min(mean cosine, cosineOfRelError(worst channel error)):
 * both on the cosine's scale, so a floor such as 0.99 reads the same for the whole output and for its
 * weakest channel. Channels the original leaves at zero count by their absolute error against a
 * floor of 1e-12 of the mean channel energy (float32 noise), not divided by zero.
 */
export function genericFidelity(pairs: Pair[]): KindResult {
  const cos: number[] = [];
  const err: number[] = [];
  const energy: number[] = [];
  for (const { ref, out, dims } of pairs) {
    cos.push(cosine(ref, out));
    const ax = channelAxis(dims);
    const c = ax < 0 ? 1 : dims[ax];
    const inner = ax < 0 ? 1 : dims.slice(ax + 1).reduce((a, b) => a * b, 1);
    while (err.length < c) { err.push(0); energy.push(0); }
    for (let i = 0; i < ref.length; i++) {
      const ch = ax < 0 ? 0 : Math.floor(i / inner) % c;
      const d = out[i] - ref[i];
      err[ch] += d * d;
      energy[ch] += ref[i] * ref[i];
    }
  }
  const meanEnergy = energy.reduce((a, b) => a + b, 0) / Math.max(1, energy.length);
  const floor = Math.max(1e-12 * meanEnergy, Number.MIN_VALUE);
  let worst = 0, worstCh = 0;
  for (let ch = 0; ch < err.length; ch++) {
    const rel = Number.isFinite(err[ch]) ? Math.sqrt(err[ch] / Math.max(energy[ch], floor)) : Infinity;
    if (!(rel <= worst)) { worst = rel; worstCh = ch; }
  }
  const meanCos = cos.reduce((a, b) => a + b, 0) / Math.max(1, cos.length);
  const minCos = cos.length ? Math.min(...cos) : 1;
  const score = Math.max(0, Math.min(meanCos, cosineOfRelError(worst)));
  return {
    score,
    metrics: { cosine: meanCos, minCosine: minCos, worstChannelRelError: worst, worstChannel: worstCh, channels: err.length },
    detail: `cosine ${meanCos.toFixed(4)}, worst of ${err.length} channel(s) #${worstCh} off by ${(100 * worst).toFixed(1)}%`,
  };
}
