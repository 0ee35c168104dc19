// Node ESM entry: the single-threaded SIMD128 build, instantiated synchronously on import; the
// threaded build replaces it when initThreadPool() starts workers (before any object is made).
// Where the engine lacks SIMD128 the import still succeeds and every call (and init()) throws
// `unsupported_environment`.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import * as glue from '../wasm/st/sparsekit_wasm.js';
import { argError, SparseKitError } from './errors.js';
import { bind, objectsMade, R, requireSimd, startPool, threads, type InitOptions } from './runtime.js';
import { importWithSelf, withWebWorkers } from './node-worker.js';

export * from './api.js';

try {
  requireSimd();
  glue.initSync({ module: readFileSync(new URL('../wasm/st/sparsekit_wasm_bg.wasm', import.meta.url)) });
  bind(glue, 'simd');
} catch (e) {
  // requireSimd() recorded its typed error, which R() throws on first use; anything else is a bug
  if (!(e instanceof SparseKitError)) throw e;
}

/** Node is ready on import; kept for code shared with browsers (rejects as every call would). */
export default async function init(_opts?: InitOptions): Promise<void> {
  R();
}

let pool: Promise<boolean> | null = null;

/**
 * Starts `n` rayon workers (default: `os.availableParallelism()`) on worker_threads and switches
 * to the threaded build; the calling thread waits in its calls while they work (Node allows it
 * to block). Resolves to whether threads are active, and to `false`, the single-threaded build
 * staying in use with the same API and bits, when `n` is 1, when objects were already made (they
 * belong to the build that made them), or when the threaded build cannot start here. The first
 * call decides; the workers do not keep the process alive.
 */
export async function initThreadPool(n?: number): Promise<boolean> {
  R();
  const count = n ?? availableParallelism();
  if (!Number.isInteger(count) || count < 1) throw argError(`initThreadPool: n must be a positive integer (got ${String(n)})`);
  if (!pool) {
    if (count < 2 || objectsMade()) return false;
    // whatever stops the start (no shared memory, a worker that failed), the SIMD build stays
    // bound, for good: a second start would meet the first one's half-built pool in the module
    pool = startThreads(count).catch(() => false);
  }
  return pool;
}

async function startThreads(count: number): Promise<boolean> {
  const mt = await importWithSelf(() => import('../wasm/mt/sparsekit_wasm.js'));
  mt.initSync({ module: await compileOptimized(readFileSync(new URL('../wasm/mt/sparsekit_wasm_bg.wasm', import.meta.url))) });
  const workers = await withWebWorkers(() => startPool(mt, count));
  for (const w of workers) w.unref();
  if (objectsMade()) return false; // made while the pool started: they keep the SIMD build
  bind(mt, 'threads');
  return threads();
}

/**
 * Compiles the threaded build with V8's optimizing compiler only, every function at once. Under
 * Node 20's V8 (11.3) the baseline compiler's code of this build (as wasm-opt -O3 leaves it) never
 * lets a pool of two or more workers start: the caller waits for the workers' start forever while
 * they spin. The same module runs under TurboFan in Node and in Chromium's newer V8, and unoptimized
 * it runs under Liftoff too (bench/RESULTS.md, "Threads in Node"). The flags are process-wide, so
 * they are set for this compilation only and put back (to what the command line gave, else V8's
 * defaults); eager compilation makes sure no function of this module is compiled later by Liftoff.
 */
async function compileOptimized(bytes: Uint8Array<ArrayBuffer>): Promise<WebAssembly.Module> {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  const flags = [['--liftoff', '--no-liftoff'], ['--wasm-lazy-compilation', '--no-wasm-lazy-compilation']];
  for (const [, off] of flags) setFlagsFromString(off);
  // a pending compilation does not keep Node's event loop alive: without this handle a script
  // awaiting initThreadPool() at its top level could end (exit code 13) while V8 compiles
  const alive = setInterval(() => {}, 60_000);
  try {
    return await WebAssembly.compile(bytes);
  } finally {
    clearInterval(alive);
    for (const [on, off] of flags) setFlagsFromString(given.includes(off) ? off : on);
  }
}
