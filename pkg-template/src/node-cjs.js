// Source of dist/index.cjs (bundled by esbuild): the Node entry for require().
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as glue from '../wasm/st/sparsekit_wasm.js';
import { bind } from './api.js';
import { bindCalib } from './calib.js';

glue.initSync({ module: readFileSync(join(__dirname, '..', 'wasm', 'st', 'sparsekit_wasm_bg.wasm')) });
bind(glue, 'simd');
bindCalib(glue);

export * from './api.js';
export { Hessian, wandaScores, sparseGpt, relReconError } from './calib.js';
export default async function init() {}
export async function initThreadPool() {
  return false;
}
