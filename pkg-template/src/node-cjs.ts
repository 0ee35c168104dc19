// Source of dist/index.cjs (bundled by esbuild): the Node entry for require().
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as glue from '../wasm/st/sparsekit_wasm.js';
import { SparseKitError } from './errors.js';
import { bind, R, requireSimd, type InitOptions } from './runtime.js';

export * from './api.js';

declare const __dirname: string;

try {
  requireSimd();
  glue.initSync({ module: readFileSync(join(__dirname, '..', 'wasm', 'st', 'sparsekit_wasm_bg.wasm')) });
  bind(glue, 'simd');
} catch (e) {
  // requireSimd() recorded its typed error, which R() throws on first use; anything else is a bug
  if (!(e instanceof SparseKitError)) throw e;
}

/** Node is ready on import; kept for code shared with browsers (rejects as every call would). */
export default async function init(_opts?: InitOptions): Promise<void> {
  R();
}

/**
 * The CommonJS entry stays single-threaded (resolves to false): the threaded build's glue is an ES
 * module its workers import by URL, which this bundled file does not carry. The ESM entry has threads.
 */
export async function initThreadPool(_n?: number): Promise<boolean> {
  return false;
}
