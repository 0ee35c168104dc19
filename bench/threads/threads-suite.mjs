// The threads probe (Chromium worker, `node bench/kernels/chromium.mjs --threads`): what the 2-worker
// build gains over the single-threaded one on the two target cells (4096², 4×4 blocks: L2 norms
// and the Adam soft threshold), measured in one run and interleaved, next to the ceilings that
// bound it: the memory-read bandwidth of one thread and of all workers reading at once, and the
// cost of one empty parallel region (pool wake-up and join), and, interleaved with the cells,
// what 2 workers gain at that moment on pure arithmetic, latency-bound and throughput-bound (the
// cores are shared with other processes and the vCPUs with other guests: those ratios are the
// ceilings of the kernels' ratios in the same run).
import { sorted, quantile as q } from '../lib/stats.mjs';

const now = () => performance.now();
const stats = (ts) => { const s = sorted(ts); return { reps: s.length, median_ms: q(s, 0.5), p90_ms: q(s, 0.9), best_ms: s[0] }; };

export const PROBE_CELLS = [['norms', '4x4'], ['soft', '4x4']];
export const PROBE_SIZE = [4096, 4096];

/** `st`, `mt`: bench modules (exports); `mt` has its pool started. */
export function runThreadsProbe(env, st, mt, { quick = false, log = () => {} } = {}) {
  const nthreads = JSON.parse(mt.bench_info()).nthreads;
  // Bandwidth: 256 MiB, best of 7, one thread (SIMD build) vs every worker of the threaded build.
  const n = 64 << 20;
  st.bench_bw_prepare(n);
  mt.bench_bw_prepare(n);
  const bw = { st: [], mt1: [], mt: [] };
  for (let i = 0; i < 7; i++) {
    let t = now(); st.bench_bw_sum(); bw.st.push(now() - t);
    t = now(); mt.bench_bw_sum(); bw.mt1.push(now() - t);
    t = now(); mt.bench_bw_sum_par(); bw.mt.push(now() - t);
  }
  st.bench_bw_free();
  mt.bench_bw_free();
  const gbps = (ts) => (n * 4) / (Math.min(...ts) / 1e3) / 1e9;
  log({ kind: 'threads-bw', env, nthreads, st_gbps: gbps(bw.st), mt_one_thread_gbps: gbps(bw.mt1), mt_all_workers_gbps: gbps(bw.mt) });

  // Pool: empty parallel regions (one task per worker), microseconds each.
  const regions = 2000;
  mt.bench_par_empty(regions); // warm-up
  const pool = [];
  for (let i = 0; i < 5; i++) {
    const t = now();
    mt.bench_par_empty(regions);
    pool.push(((now() - t) * 1e3) / regions);
  }
  const ps = sorted(pool);
  log({ kind: 'threads-pool', env, nthreads, region_us_median: q(ps, 0.5), region_us_best: ps[0] });

  // The machine's ceiling now: pure arithmetic, one task per worker, st (in turn) vs mt; a
  // dependent integer chain (latency-bound) and independent SIMD multiply-adds (throughput-bound:
  // two vCPUs that are hyperthreads of one host core share those pipes, as the kernels do).
  const sized = (spinner) => { // iterations for a single-threaded run of 20-40 ms
    let iters = 1 << 12;
    while (iters < 2 ** 30) {
      const t = now();
      spinner(st, iters);
      if (now() - t > 20) break;
      iters *= 2;
    }
    return iters;
  };
  const intSpin = (v, it) => v.bench_spin(nthreads, it);
  const fpSpin = (v, it) => v.bench_spin_fp(nthreads, it);
  const [iters, itersFp] = [sized(intSpin), sized(fpSpin)];
  const ratioOf = (spinner, it) => {
    let t = now(); spinner(st, it); const a = now() - t;
    t = now(); spinner(mt, it); return a / (now() - t);
  };
  const spin = () => [ratioOf(intSpin, iters), ratioOf(fpSpin, itersFp)];

  // The target cells, interleaved: each repetition runs st then mt.
  const [r, c] = PROBE_SIZE;
  st.bench_prepare(r, c);
  mt.bench_prepare(r, c);
  for (const [op, block] of PROBE_CELLS) {
    const mutates = op === 'soft';
    const reps = quick ? 3 : op === 'soft' ? 9 : 21;
    const ts = { st: [], mt: [] };
    const ceiling = [];
    const ceilingFp = [];
    for (const v of [st, mt]) { v.bench_run(op, block); if (mutates) v.bench_restore(); }
    for (let i = 0; i < reps; i++) {
      for (const [name, v] of [['st', st], ['mt', mt]]) {
        const t = now();
        v.bench_run(op, block);
        ts[name].push(now() - t);
        if (mutates) v.bench_restore();
      }
      const [ci, cf] = spin();
      ceiling.push(ci);
      ceilingFp.push(cf);
    }
    const s = stats(ts.st);
    const m = stats(ts.mt);
    const same = st.bench_digest(op, block) === mt.bench_digest(op, block);
    log({
      kind: 'threads-op', env, nthreads, op, block, rows: r, cols: c, st: s, mt: m,
      ratio_median: s.median_ms / m.median_ms, ratio_best: s.best_ms / m.best_ms, identical: same,
      ceiling_median: q(sorted(ceiling), 0.5), ceiling_best: Math.max(...ceiling),
      ceiling_fp_median: q(sorted(ceilingFp), 0.5), ceiling_fp_best: Math.max(...ceilingFp),
      // Per repetition: the ratio over the ceiling measured right after it (1 = all the machine gave).
      efficiency_median: q(sorted(ts.st.map((a, i) => a / ts.mt[i] / ceiling[i])), 0.5),
      efficiency_fp_median: q(sorted(ts.st.map((a, i) => a / ts.mt[i] / ceilingFp[i])), 0.5),
    });
  }
  st.bench_free();
  mt.bench_free();
}
