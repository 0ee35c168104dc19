// Node ESM entry: the single-threaded SIMD128 build, instantiated synchronously on import.
import { readFileSync } from 'node:fs';
import * as glue from '../wasm/st/sparsekit_wasm.js';
import { bind } from './api.js';
import { bindCalib } from './calib.js';

glue.initSync({ module: readFileSync(new URL('../wasm/st/sparsekit_wasm_bg.wasm', import.meta.url)) });
bind(glue, 'simd');
bindCalib(glue);

export * from './api.js';
export { Hessian, wandaScores, sparseGpt, relReconError } from './calib.js';

/** Node is ready on import; kept for code shared with browsers. */
export default async function init() {}

/** Threads are not used in Node: resolves to false. */
export async function initThreadPool() {
  return false;
}
