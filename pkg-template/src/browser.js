// Browser entry: `await init()` loads the threaded build when the page is cross-origin isolated
// (SharedArrayBuffer available), else the single-threaded SIMD128 build. Same API either way.
import { bind, variant } from './api.js';

export * from './api.js';

let ready = null;
let glue = null;

/**
 * Threads need cross-origin isolation (SharedArrayBuffer) and this package's files served as
 * they ship: wasm-bindgen-rayon's workers re-import the glue module by its own URL, which a
 * bundler's chunks do not provide. Bundled copies therefore use the single-threaded build.
 */
function canUseThreads() {
  const unbundled = /\/src\/browser\.js$/.test(new URL(import.meta.url).pathname);
  return unbundled && globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function';
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
    })();
    ready.catch(() => {
      ready = null;
    });
  }
  return ready;
}

/**
 * Starts `n` rayon workers (default: navigator.hardwareConcurrency) in the threaded build.
 * A documented no-op returning false when the page is not cross-origin isolated (the
 * single-threaded SIMD build is used then). Resolves to whether threads are active.
 */
export async function initThreadPool(n) {
  await init();
  if (variant() !== 'threads') return false;
  const count = n ?? (globalThis.navigator && navigator.hardwareConcurrency) ?? 2;
  if (glue.numThreads() <= 1) await glue.initThreadPool(count);
  return glue.numThreads() > 1;
}
