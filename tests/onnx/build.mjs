// Where the tests find the ONNX module and the CLI: in the built package (pkg/, compiled by
// scripts/build.sh; imported as `sparsekit-wasm/onnx`). No second compile: the tests run what ships.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '../..');
export const PKG = process.env.SPARSEKIT_PKG || path.join(ROOT, 'pkg');
export const CLI = path.join(PKG, 'bin/sparsekit-wasm.js');

/** Fails (never skips) when the package or its ONNX module is not built. */
export function build() {
  for (const f of [CLI, path.join(PKG, 'src/onnx/index.js')]) {
    if (!fs.existsSync(f)) throw new Error(`${f} is missing: build the package first (npm run build)`);
  }
}
