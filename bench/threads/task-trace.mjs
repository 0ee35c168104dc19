// Where a threaded call's time goes, from the traced build (`mttrace`: RUSTFLAGS
// `--cfg sparsekit_task_trace`, src/kernels/task_trace.rs), which records the worker and the span of every task
// of the core's parallel loops. Run by the threads probe after its own measurement
// (bench/threads/threads-suite.mjs), in the same page: the single-threaded call, then the traced one,
// interleaved. Per call, in ms:
//   start      call start -> the first task starts (allocation, waking the pool);
//   late       how much later the last worker started its first task than the first worker
//              (a worker the OS did not run promptly; the other one steals its share meanwhile);
//   work       the tasks' summed durations / workers: the call's time if nothing else cost;
//   imbalance  the last task's end - the first worker to run out of tasks;
//   end        the last task's end -> the call returns (waking the caller);
//   stall      time tasks took beyond 1.5x the median task of the cell (a worker descheduled
//              mid-task, or sharing a core), summed over the call's tasks.
// `task_vs_single` compares the median task with the single-threaded call split into as many
// pieces: above 1, the tasks themselves run slower side by side (shared memory bandwidth, or
// cores that are not really two).
import { sorted, quantile as q } from '../lib/stats.mjs';


/** One traced call (`{call_ms, spans: [[task, worker, start, end]]}`) split into the parts above. */
export function decompose({ call_ms: call, spans }, workers, medianTask) {
  const byWorker = new Map();
  for (const [, w, a, b] of spans) {
    const s = byWorker.get(w) ?? { first: Infinity, last: -Infinity };
    s.first = Math.min(s.first, a);
    s.last = Math.max(s.last, b);
    byWorker.set(w, s);
  }
  const ws = [...byWorker.values()];
  const firstStart = Math.min(...ws.map((w) => w.first));
  const lastEnd = Math.max(...ws.map((w) => w.last));
  // A worker that ran no task at all joined no earlier than the end.
  const late = (ws.length < workers ? lastEnd : Math.max(...ws.map((w) => w.first))) - firstStart;
  const durs = spans.map(([, , a, b]) => b - a);
  return {
    call, start: firstStart, late,
    work: durs.reduce((s, d) => s + d, 0) / workers,
    imbalance: ws.length < workers ? lastEnd - firstStart : lastEnd - Math.min(...ws.map((w) => w.last)),
    end: call - lastEnd,
    stall: durs.reduce((s, d) => s + Math.max(0, d - 1.5 * medianTask), 0),
    tasks: spans.length,
  };
}

/** Medians, p75 and p90 of each part over the calls of one cell. */
export function summarize(calls, workers, singleMedian) {
  const medianTask = q(sorted(calls.flatMap((c) => c.spans.map(([, , a, b]) => b - a))), 0.5);
  const parts = calls.map((c) => decompose(c, workers, medianTask));
  const out = { median_task_ms: medianTask };
  for (const k of Object.keys(parts[0])) {
    const s = sorted(parts.map((p) => p[k]));
    out[k] = { median: q(s, 0.5), p75: q(s, 0.75), p90: q(s, 0.9) };
  }
  out.task_vs_single = medianTask / (singleMedian / out.tasks.median);
  return out;
}

/** The probe's cells, single-threaded (`st`) and traced (`traced`, pool started), interleaved. */
export function runTraceProbe(env, st, traced, cells, [rows, cols], { quick = false, log = () => {} } = {}) {
  const workers = JSON.parse(traced.bench_info()).nthreads;
  st.bench_prepare(rows, cols);
  traced.bench_prepare(rows, cols);
  for (const [op, block] of cells) {
    const mutates = op === 'soft';
    const reps = quick ? 5 : op === 'soft' ? 15 : 41;
    const single = [];
    const calls = [];
    for (let i = -1; i < reps; i++) {
      const t = performance.now();
      st.bench_run(op, block);
      const dt = performance.now() - t;
      if (mutates) st.bench_restore();
      const c = JSON.parse(traced.bench_trace(op, block));
      if (mutates) traced.bench_restore();
      if (i >= 0) { single.push(dt); calls.push(c); }
    }
    const singleMedian = q(sorted(single), 0.5);
    log({ kind: 'threads-trace', env, workers, op, block, rows, cols, reps, single_median_ms: singleMedian, ...summarize(calls, workers, singleMedian) });
  }
  st.bench_free();
  traced.bench_free();
}
