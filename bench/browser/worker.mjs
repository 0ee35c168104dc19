// Chromium part of the bench (a Web Worker of a cross-origin-isolated page): the SIMD128 and
// threaded bench wasm, the plain-JS baseline and the wasm memory-read bandwidth.
import { runInterleaved, wasmMembw, SIZES } from '../kernels/suite.mjs';
import { runCalibInterleaved } from '../calib/calib-suite.mjs';
import { runThreadsProbe, PROBE_CELLS, PROBE_SIZE } from '../threads/threads-suite.mjs';
import { runTraceProbe } from '../threads/task-trace.mjs';

onmessage = async (e) => {
  const { quick, threads, calib, probe } = e.data;
  const sizes = quick ? SIZES.slice(0, 2) : SIZES;
  const log = (record) => postMessage({ record });
  try {
    const variants = [];
    for (const variant of ['simd', 'mt']) {
      const glue = await import(`../out/wasm/${variant}/bench.js`);
      await glue.default();
      if (variant === 'mt') {
        await glue.initThreadPool(threads);
        // Until this is called the core's loops stay sequential (see src/threads.rs).
        glue.markThreadPoolReady();
      }
      const info = JSON.parse(glue.bench_info());
      if (variant === 'mt' && info.nthreads !== threads) {
        throw new Error(`threaded bench build runs on ${info.nthreads} thread(s), expected ${threads}`);
      }
      log({ kind: 'info', env: 'chromium', variant, crossOriginIsolated, ...info });
      if (variant === 'simd') log(wasmMembw(glue, 'chromium', variant));
      variants.push({ name: variant, mod: glue });
    }
    if (probe) {
      // Threads probe only (bench/threads/threads-suite.mjs): st vs mt on the target cells, ceilings.
      runThreadsProbe('chromium', variants[0].mod, variants[1].mod, { quick, log });
      // Then where the threaded calls' time goes (bench/threads/task-trace.mjs), from the traced build.
      const traced = await import('../out/wasm/mttrace/bench.js');
      await traced.default();
      await traced.initThreadPool(threads);
      traced.markThreadPoolReady();
      runTraceProbe('chromium', variants[0].mod, traced, PROBE_CELLS, PROBE_SIZE, { quick, log });
      postMessage({ done: true });
      return;
    }
    if (calib) {
      // Calibration kernels only (bench/calib/calib-suite.mjs): SIMD128 single-threaded vs threaded.
      runCalibInterleaved('chromium', variants, { quick, log });
      postMessage({ done: true });
      return;
    }
    // The JS soft threshold of the largest size alone takes about a minute: left out here.
    runInterleaved('chromium', [...variants, { name: 'js' }], {
      sizes, quick, log, jsSkip: (op, r, c) => op === 'soft' && r * c > (1 << 25),
    });
  } catch (err) {
    postMessage({ error: String(err && err.stack || err) });
  }
  postMessage({ done: true });
};
