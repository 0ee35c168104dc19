// Threads in Node (issue 40, "Threads where the user is"): the package's threaded build with 2
// rayon workers over worker_threads against its single-threaded build, on the calibration kernels
// the CLI runs (Hessian accumulation over 8192 rows of 576 and 1536 inputs; SparseGPT 50% of
// [1536, 576] and [576, 1536] weights), each build in its own process, reps interleaved. Beside
// them the ceiling of the moment: two single-threaded processes running the same cell at once,
// their throughput over one process alone (two vCPUs that are hyperthreads of one host core, or
// other load, lower it for the kernels as much). Target: >= 1.7x, or >= 0.9 of that ceiling.
//   node bench/threads/node-threads.mjs [--reps N]    (writes bench/out/threads-node.json)
import { fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg, cpus } from 'node:os';
import { sorted, quantile } from '../lib/stats.mjs';

const reps = Number(process.argv[process.argv.indexOf('--reps') + 1] || 0) || 7;
const CHILD = new URL('./node-threads-child.mjs', import.meta.url);

function start(mode) {
  const p = fork(CHILD, [mode], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    p.once('message', (m) => resolve({ p, info: m }));
    p.once('exit', (c) => reject(new Error(`${mode} child exited ${c}`)));
  });
}
const ask = (c, cell, cols) => new Promise((resolve) => { c.p.once('message', (m) => resolve(m.ms)); c.p.send({ cell, cols }); });
const now = () => performance.now();

const load = [loadavg()[0]];
const [st, st2, mt] = await Promise.all([start('st'), start('st'), start('mt')]);
console.error(`[threads-node] ${cpus().length} cpus, load ${load[0].toFixed(2)}; threaded build started in ${mt.info.startMs.toFixed(0)} ms (${mt.info.numThreads} workers)`);
const CELLS = [['hessian', 576], ['hessian', 1536], ['sparsegpt', 576], ['sparsegpt', 1536]];
for (const [cell, cols] of CELLS) { await ask(st, cell, cols); await ask(mt, cell, cols); } // warm-up (tier-up, first allocations)

const t = Object.fromEntries(CELLS.map(([c, k]) => [`${c}-${k}`, { st: [], mt: [], pair: [] }]));
for (let r = 0; r < reps; r++) {
  for (const [cell, cols] of CELLS) {
    const m = t[`${cell}-${cols}`];
    m.st.push(await ask(st, cell, cols));
    m.mt.push(await ask(mt, cell, cols));
    const t0 = now();
    await Promise.all([ask(st, cell, cols), ask(st2, cell, cols)]);
    m.pair.push(now() - t0);
  }
  load.push(loadavg()[0]);
}
for (const c of [st, st2, mt]) c.p.kill();

const med = (a) => quantile(sorted(a), 0.5);
const rows = Object.entries(t).map(([name, m]) => {
  const speedup = med(m.st) / med(m.mt);
  // two single-threaded runs in the time of `pair`: their throughput over one run alone
  const ceiling = (2 * med(m.st)) / med(m.pair);
  return { cell: name, st_ms: med(m.st), mt_ms: med(m.mt), pair_ms: med(m.pair), speedup, ceiling, of_ceiling: speedup / ceiling,
    target_met: speedup >= 1.7 || speedup / ceiling >= 0.9, st_reps: m.st, mt_reps: m.mt, pair_reps: m.pair };
});
const out = { when: new Date().toISOString(), node: process.version, cpus: cpus().length, reps, load_1min: load, start_ms: mt.info.startMs, rows };
mkdirSync(new URL('../out/', import.meta.url), { recursive: true });
writeFileSync(new URL('../out/threads-node.json', import.meta.url), `${JSON.stringify(out, null, 1)}\n`);
console.log('| cell | 1 thread (ms) | 2 workers (ms) | speed-up | ceiling (2 processes) | of ceiling | target |');
console.log('|---|---:|---:|---:|---:|---:|---|');
for (const r of rows) console.log(`| ${r.cell} | ${r.st_ms.toFixed(0)} | ${r.mt_ms.toFixed(0)} | ${r.speedup.toFixed(2)}x | ${r.ceiling.toFixed(2)}x | ${r.of_ceiling.toFixed(2)} | ${r.target_met ? 'met' : 'missed'} |`);
console.log(`load (1 min) ${load.map((l) => l.toFixed(2)).join(' ')}; threaded build start ${mt.info.startMs.toFixed(0)} ms`);
