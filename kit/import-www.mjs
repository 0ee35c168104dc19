// Imports a module of the playground (www/src, TypeScript) in Node, for the tests and bench scripts
// that share its code (deterministic inputs, output comparison, the pruning run): esbuild compiles
// it with its local imports into node_modules/.cache/sparsekit-www/ (the package and onnxruntime
// stay imports, resolved from the repository's node_modules), then it is imported from there.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** `rel`: a path under www/src, e.g. 'model-input.ts'. */
export async function importWww(rel) {
  const out = path.join(ROOT, 'node_modules/.cache/sparsekit-www', rel.replace(/\.ts$/, '.mjs'));
  await build({
    entryPoints: [path.join(ROOT, 'www/src', rel)], outfile: out, bundle: true, format: 'esm', platform: 'node', target: 'node20',
    external: ['sparsekit-wasm', 'sparsekit-wasm/*', 'onnxruntime-*'], logLevel: 'error',
  });
  return import(pathToFileURL(out).href);
}
