// The bench suite, shared by Node (bench/kernels/node.mjs) and the Chromium worker
// (bench/browser/worker.mjs). Records are plain objects; bench/kernels/report.mjs turns them into
// tables, bench/out/latest.json and bench/RESULTS.md.
import { makeCase, runJs } from './js-impl.mjs';
import { median } from '../lib/stats.mjs';

// `soft` is the Adam-conditioned soft threshold with the default method (Newton), `soft-bisection`
// the same call with method 'bisection' (the seed's loop): side by side, interleaved.
export const OPS = ['norms', 'hard', 'soft', 'soft-bisection', 'nm24'];
const isSoft = (op) => op === 'soft' || op === 'soft-bisection';
export const BLOCKS = ['1x16', '4x4', '32x32', '128x1', 'T4x4'];
export const SIZES = [[768, 768], [4096, 4096], [4096, 11008]];

const now = () => performance.now();
// `seconds` is the best repetition: on a shared machine noise only adds time, so the minimum
// estimates the code's own cost (as the bandwidth probe's best of 7 does); the median is kept.
const timing = (ts) => ({ seconds: Math.min(...ts) / 1e3, median_seconds: median(ts) / 1e3 });

/** The soft threshold of the largest size runs for the 4x4 blocks only (time budget). */
export const skipCell = (op, r, c, block) => isSoft(op) && r * c > (1 << 25) && block !== '4x4';

/**
 * Repetitions: more for small sizes; the soft thresholds 3. The cells the Adam-per-norm-pass
 * target divides (4096², 4x4: norms, soft) get 7 even in quick runs: a best of 2 norm passes
 * can be a slow one, and the ratio then flatters the soft threshold.
 */
export function repsFor(numel, op, quick, block) {
  if (numel === 4096 * 4096 && block === '4x4' && (op === 'norms' || op === 'soft')) return 7;
  let r = numel < (1 << 20) ? 9 : numel < (1 << 25) ? 5 : 3;
  if (isSoft(op)) r = 3;
  return quick ? Math.min(r, 2) : r;
}

/** Memory-read bandwidth inside wasm: 16-accumulator sum over 256 MiB, best of 7. */
export function wasmMembw(mod, env, variant) {
  const n = 64 << 20;
  mod.bench_bw_prepare(n);
  let best = Infinity;
  for (let i = 0; i < 7; i++) {
    const t = now();
    mod.bench_bw_sum();
    best = Math.min(best, now() - t);
  }
  mod.bench_bw_free();
  return { kind: 'membw', env, variant, bytes: n * 4, seconds: best / 1e3, gbps: (n * 4) / (best / 1e3) / 1e9 };
}

/**
 * Times every (size, op, block) for several variants *interleaved*: each repetition runs every
 * variant once, in turn, so the ratios between them are measured under the same machine load
 * (on a shared machine the load drifts within seconds). `variants`: `{ name, mod }` for a bench
 * wasm module (its exports), or `{ name: 'js' }` for the plain-JS baseline; `jsSkip(op, r, c)`
 * leaves the baseline out of the slowest cells. The plain-JS soft threshold runs once per cell
 * at the large sizes (it takes seconds), in the first round.
 */
export function runInterleaved(env, variants, { sizes = SIZES, quick = false, jsSkip = () => false, log = () => {} } = {}) {
  const out = [];
  const mutates = (op) => op === 'hard' || isSoft(op);
  for (const [r, c] of sizes) {
    const jsCase = variants.some((v) => v.name === 'js') ? makeCase(r, c) : null;
    for (const v of variants) if (v.mod) v.mod.bench_prepare(r, c);
    const run = (v, op, block) => {
      if (v.mod) {
        v.mod.bench_run(op, block);
      } else {
        runJs(jsCase, op, block);
      }
    };
    const restore = (v) => (v.mod ? v.mod.bench_restore() : jsCase.w.set(jsCase.backup));
    for (const op of OPS) {
      for (const block of op === 'nm24' ? ['-'] : BLOCKS) {
        if (skipCell(op, r, c, block)) continue;
        const reps = repsFor(r * c, op, quick, block);
        // The plain-JS soft threshold is the seed's bisection: timed once, in the `soft` cells.
        const active = variants.filter((v) => v.mod || (!jsSkip(op, r, c) && op !== 'soft-bisection'));
        const jsReps = (op === 'soft' && r * c >= (1 << 20)) || r * c > (1 << 24) ? 1 : Math.min(reps, 3);
        const ts = new Map(active.map((v) => [v.name, []]));
        for (const v of active) {
          if (v.mod) { // warm-up (also tier-up of the wasm code)
            run(v, op, block);
            if (mutates(op)) restore(v);
          }
        }
        for (let i = 0; i < reps; i++) {
          for (const v of active) {
            if (!v.mod && i >= jsReps) continue;
            const t = now();
            run(v, op, block);
            ts.get(v.name).push(now() - t);
            if (mutates(op)) restore(v);
          }
        }
        for (const v of active) {
          const rec = { kind: 'op', env, variant: v.name, op, rows: r, cols: c, block, reps: ts.get(v.name).length, ...timing(ts.get(v.name)) };
          out.push(rec);
          log(rec);
        }
      }
    }
    for (const v of variants) if (v.mod) v.mod.bench_free();
  }
  return out;
}
