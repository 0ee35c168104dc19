// Node ESM entry: the single-threaded SIMD128 build, instantiated synchronously on import. Where
// the engine lacks SIMD128 the import still succeeds and every call (and init()) throws
// `unsupported_environment`.
import { readFileSync } from 'node:fs';
import * as glue from '../wasm/st/sparsekit_wasm.js';
import { SparseKitError } from './errors.js';
import { bind, R, requireSimd, type InitOptions } from './runtime.js';

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

/** Threads are not used in Node: resolves to false. */
export async function initThreadPool(_n?: number): Promise<boolean> {
  return false;
}
