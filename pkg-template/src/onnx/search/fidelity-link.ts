// The one place the search takes its fidelity measure from. Until the fidelity module (branch
// `fidelity`: pkg-template/src/onnx/fidelity/) is merged, this is an interim measure with its
// signature: per output, the minimum over samples of the cosine and of 1 - the worst per-channel
// relative error is not attempted; only the per-sample cosine of each output, its minimum over the
// samples, and the model's score is its worst output's.
import type { Outputs } from '../calib/evaluate.js';

export interface OutputFidelity { name: string; kind: string; score: number }
export interface FidelityReport { score: number; worst: string; outputs: OutputFidelity[]; samples: number }

function cos(a: Float32Array, b: Float32Array): number {
  let d = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) { d += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i]; }
  if (na === 0 && nb === 0) return 1;
  if (na === 0 || nb === 0 || !Number.isFinite(d)) return 0;
  return Math.max(0, d / Math.sqrt(na * nb));
}

export function fidelity(reference: Outputs[], outputs: Outputs[], _opts?: object): FidelityReport {
  const names = reference.length ? Object.keys(reference[0]) : [];
  const per = names.map((name) => ({ name, kind: 'cosine', score: Math.min(...reference.map((r, i) => cos(r[name], outputs[i][name]))) }));
  const worst = per.reduce((a, b) => (b.score < a.score ? b : a), per[0] ?? { name: '', kind: 'cosine', score: 1 });
  return { score: worst.score, worst: worst.name, outputs: per, samples: reference.length };
}
