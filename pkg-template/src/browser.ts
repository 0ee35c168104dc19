// Browser entry: `await init()` loads the threaded build where threads can run, else the
// single-threaded SIMD128 build. Same API and results either way.
import { argError, convertError, SparseKitError } from './errors.js';
import { optsObject, checkKeys } from './convert.js';
import { bind, bindFailure, environment, requireSimd, startPool, variant, type Glue, type InitOptions, type WasmSource } from './runtime.js';

export * from './api.js';

let ready: Promise<void> | null = null;
let glue: Glue | null = null;
let poolStarted: Promise<void> | null = null;

/**
 * Threads need shared memory (a cross-origin isolated page), a Web Worker (rayon blocks while it
 * waits for its workers, and browsers forbid blocking the main thread), and this package's files
 * served as they ship (wasm-bindgen-rayon's workers re-import the glue module by its own URL,
 * which a bundler's chunks do not provide). Anywhere else the single-threaded SIMD build is used.
 */
function canUseThreads(): boolean {
  const unbundled = /\/src\/browser\.js$/.test(new URL(import.meta.url).pathname);
  const env = environment();
  return unbundled && env.worker && env.sharedMemory;
}

function source(x: unknown, what: string): WasmSource | undefined {
  if (x === undefined || x === null) return undefined;
  const ok = typeof x === 'string' || x instanceof URL || x instanceof ArrayBuffer || ArrayBuffer.isView(x)
    || x instanceof WebAssembly.Module || (typeof Response === 'function' && x instanceof Response);
  if (!ok) throw argError(`${what} must be a URL, path, Response, bytes or WebAssembly.Module`);
  return x as WasmSource;
}

/**
 * Loads and instantiates the wasm module once (later calls return the same promise). Rejects
 * with `unsupported_environment` where WebAssembly SIMD128 is missing (both builds need it).
 * `opts.threads = false` forces the single-threaded build; `opts.wasmPaths` says where each
 * build's `.wasm` is (default: next to the package's glue modules).
 */
export default function init(opts?: InitOptions): Promise<void> {
  if (!ready) {
    ready = (async () => {
      const o = optsObject(opts, 'init options');
      checkKeys(o, ['threads', 'wasmPaths'], 'init options');
      const paths = optsObject(o.wasmPaths, 'wasmPaths');
      checkKeys(paths, ['simd', 'threads'], 'wasmPaths');
      requireSimd();
      const threaded = o.threads !== false && canUseThreads();
      const where = source(threaded ? paths.threads : paths.simd, threaded ? 'wasmPaths.threads' : 'wasmPaths.simd');
      try {
        const g = threaded ? await import('../wasm/mt/sparsekit_wasm.js') : await import('../wasm/st/sparsekit_wasm.js');
        await g.default(where === undefined ? undefined : { module_or_path: where });
        glue = g;
        bind(g, threaded ? 'threads' : 'simd');
      } catch (e) {
        if (e instanceof SparseKitError) throw e;
        // a CompileError/LinkError here is an engine without a feature the build uses
        const err = typeof WebAssembly === 'object' && (e instanceof WebAssembly.CompileError || e instanceof WebAssembly.LinkError)
          ? new SparseKitError('unsupported_environment', `sparsekit-wasm could not compile its ${threaded ? 'threaded' : 'SIMD'} build here: ${(e as Error).message}`)
          : convertError(e);
        bindFailure(err);
        throw err;
      }
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
export async function initThreadPool(n?: number): Promise<boolean> {
  await init();
  if (variant() !== 'threads' || !glue || !glue.initThreadPool) return false;
  const g = glue;
  const nav = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator;
  const count = n ?? nav?.hardwareConcurrency ?? 2;
  if (!poolStarted) {
    poolStarted = startPool(g, count);
  }
  await poolStarted;
  return g.numThreads() > 1;
}
