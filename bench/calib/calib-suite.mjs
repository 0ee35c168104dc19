// Calibration part of the bench, shared by Node (bench/calib/calib-node.mjs) and the Chromium worker:
// Hessian accumulation and SparseGPT (sparsity 0.5, block 128) on 3072×768 and 768×3072 weights
// with 4096 calibration vectors, variants interleaved (each repetition runs every variant once,
// in turn, so their ratios see the same machine load). Also checks that every variant computes
// the same bits (bench_calib_digest).
import { median } from '../lib/stats.mjs';

export const CALIB_SHAPES = [[3072, 768], [768, 3072]];
export const NVEC = 4096;

const now = () => performance.now();

/** Useful flops of a Hessian update: the upper triangle incl. diagonal, a multiply and an add each. */
export const hessianFlops = (nvec, cols) => nvec * cols * (cols + 1);

export function runCalibInterleaved(env, variants, { quick = false, log = () => {} } = {}) {
  const out = [];
  const nvec = quick ? 1024 : NVEC;
  for (const [rows, cols] of CALIB_SHAPES) {
    for (const v of variants) v.mod.bench_calib_prepare(rows, cols, nvec);
    const digests = variants.map((v) => v.mod.bench_calib_digest());
    const check = { kind: 'calib-check', env, rows, cols, nvec, variants: variants.map((v) => v.name), digests, identical: digests.every((d) => d === digests[0]) };
    out.push(check);
    log(check);
    for (const op of ['hessian', 'sparsegpt']) {
      // cols = 3072 runs take tens of seconds (the O(cols³) factorization): one repetition, no
      // warm-up (a run that long tiers up within itself); the others 3 after a warm-up.
      const big = cols > 1024;
      const reps = quick || big ? 1 : 3;
      const ts = new Map(variants.map((v) => [v.name, []]));
      for (const v of big ? [] : variants) { // warm-up (tier-up)
        v.mod.bench_calib_run(op);
        v.mod.bench_calib_restore();
      }
      for (let i = 0; i < reps; i++) {
        for (const v of variants) {
          const t = now();
          v.mod.bench_calib_run(op);
          ts.get(v.name).push(now() - t);
          v.mod.bench_calib_restore();
        }
      }
      for (const v of variants) {
        const t = ts.get(v.name);
        const rec = { kind: 'calib', env, variant: v.name, op, rows, cols, nvec, block: 128, reps: t.length, seconds: Math.min(...t) / 1e3, median_seconds: median(t) / 1e3 };
        if (op === 'hessian') rec.gflops = hessianFlops(nvec, cols) / rec.seconds / 1e9;
        out.push(rec);
        log(rec);
      }
    }
    for (const v of variants) v.mod.bench_calib_free();
  }
  return out;
}
