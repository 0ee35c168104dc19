// The bench suite, shared by Node (bench/node.mjs) and the Chromium worker
// (bench/browser/worker.mjs). Records are plain objects; bench/report.mjs turns them into
// tables, bench/out/latest.json and bench/RESULTS.md.
import { makeCase, runJs } from './js-impl.mjs';

export const OPS = ['norms', 'hard', 'soft', 'nm24'];
export const BLOCKS = ['1x16', '4x4', '32x32', '128x1', 'T4x4'];
export const SIZES = [[768, 768], [4096, 4096], [4096, 11008]];

const now = () => performance.now();
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };

/** The soft threshold of the largest size runs for the 4x4 blocks only (time budget). */
export const skipCell = (op, r, c, block) => op === 'soft' && r * c > (1 << 25) && block !== '4x4';

/** Repetitions: more for small sizes; the soft threshold (20 bisection passes) 3. */
export function repsFor(numel, op, quick) {
  let r = numel < (1 << 20) ? 9 : numel < (1 << 25) ? 5 : 3;
  if (op === 'soft') r = 3;
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

/** Times every (size, op, block) of a wasm variant. `mod` is the bench module's exports. */
export function runWasm(mod, env, variant, { sizes = SIZES, quick = false, log = () => {} } = {}) {
  const out = [];
  for (const [r, c] of sizes) {
    mod.bench_prepare(r, c);
    for (const op of OPS) {
      for (const block of op === 'nm24' ? ['-'] : BLOCKS) {
        if (skipCell(op, r, c, block)) continue;
        const reps = repsFor(r * c, op, quick);
        const ts = [];
        mod.bench_run(op, block); // warm-up (also tier-up of the wasm code)
        if (op === 'hard' || op === 'soft') mod.bench_restore();
        for (let i = 0; i < reps; i++) {
          const t = now();
          mod.bench_run(op, block);
          ts.push(now() - t);
          if (op === 'hard' || op === 'soft') mod.bench_restore();
        }
        const rec = { kind: 'op', env, variant, op, rows: r, cols: c, block, reps, seconds: median(ts) / 1e3 };
        out.push(rec);
        log(rec);
      }
    }
    mod.bench_free();
  }
  return out;
}

/** The plain-JS baseline. `skip(op, r, c)` leaves out the slowest cells. */
export function runPlainJs(env, { sizes = SIZES, quick = false, skip = () => false, log = () => {} } = {}) {
  const out = [];
  for (const [r, c] of sizes) {
    const cs = makeCase(r, c);
    for (const op of OPS) {
      for (const block of op === 'nm24' ? ['-'] : BLOCKS) {
        if (skip(op, r, c) || skipCell(op, r, c, block)) continue;
        // The JS soft threshold takes seconds at the large sizes: one repetition there.
        const big = r * c > (1 << 24) || (op === 'soft' && r * c >= (1 << 20));
        const reps = Math.max(1, Math.min(repsFor(r * c, op, quick), big ? 1 : 3));
        const ts = [];
        for (let i = 0; i < reps; i++) {
          const t = now();
          runJs(cs, op, block);
          ts.push(now() - t);
          if (op === 'hard' || op === 'soft') cs.w.set(cs.backup);
        }
        const rec = { kind: 'op', env, variant: 'js', op, rows: r, cols: c, block, reps, seconds: median(ts) / 1e3 };
        out.push(rec);
        log(rec);
      }
    }
  }
  return out;
}
