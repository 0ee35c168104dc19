// Browser entry: `await init()` loads the threaded build where threads can run (see
// canUseThreads), else the single-threaded SIMD128 build. Same API and results either way.
import { bind, variant } from './api.js';
import { bindCalib } from './calib.js';

export * from './api.js';
export { Hessian, wandaScores, sparseGpt, relReconError } from './calib.js';

let ready = null;
let glue = null;
let poolStarted = null;

/**
 * Threads need three things: cross-origin isolation (SharedArrayBuffer), a Web Worker (rayon
 * blocks while it waits for its workers, and browsers forbid blocking the main thread), and this
 * package's files served as they ship (wasm-bindgen-rayon's workers re-import the glue module by
 * its own URL, which a bundler's chunks do not provide). Anywhere else the single-threaded SIMD
 * build is used.
 */
function canUseThreads() {
  const unbundled = /\/src\/browser\.js$/.test(new URL(import.meta.url).pathname);
  const inWorker = typeof WorkerGlobalScope !== 'undefined' && globalThis instanceof WorkerGlobalScope;
  return unbundled && inWorker && globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function';
}

/**
 * Loads and instantiates the wasm module once (later calls return the same promise).
 * `opts.threads = false` forces the single-threaded build.
 */
export default function init(opts = {}) {
  if (!ready) {
    ready = (async () => {
      const threaded = opts.threads !== false && canUseThreads();
      glue = threaded ? await import('../wasm/mt/sparsekit_wasm.js') : await import('../wasm/st/sparsekit_wasm.js');
      await glue.default(opts.moduleOrPath ? { module_or_path: opts.moduleOrPath } : undefined);
      bind(glue, threaded ? 'threads' : 'simd');
      bindCalib(glue);
    })();
    ready.catch(() => {
      ready = null;
    });
  }
  return ready;
}

/**
 * Starts `n` rayon workers (default: navigator.hardwareConcurrency) in the threaded build.
 * A documented no-op resolving to false where threads cannot run (not cross-origin isolated,
 * not in a Web Worker, or a bundled copy of the package): the single-threaded SIMD build is
 * used then, with the same results. Resolves to whether threads are active.
 */
export async function initThreadPool(n) {
  await init();
  if (variant() !== 'threads') return false;
  const count = n ?? (globalThis.navigator && navigator.hardwareConcurrency) ?? 2;
  if (!poolStarted) {
    poolStarted = glue.initThreadPool(count).then(() => glue.markThreadPoolReady());
  }
  await poolStarted;
  return glue.numThreads() > 1;
}
