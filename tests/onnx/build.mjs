// Compiles the onnx module (pkg-template/src/onnx/*.ts) and stages the CLI next to it in
// tests/onnx/.out, laid out as in the package (bin/, src/onnx/). Run before the tests (idempotent).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '../..');
export const OUT = path.join(HERE, '.out');
export const CLI = path.join(OUT, 'bin/sparsekit-wasm.js');

export function build() {
  execFileSync(path.join(ROOT, 'node_modules/.bin/tsc'), ['-p', path.join(HERE, 'tsconfig.json')], { stdio: 'inherit' });
  fs.mkdirSync(path.join(OUT, 'bin'), { recursive: true });
  for (const f of fs.readdirSync(path.join(ROOT, 'pkg-template/bin'))) {
    fs.copyFileSync(path.join(ROOT, 'pkg-template/bin', f), path.join(OUT, 'bin', f));
  }
  fs.writeFileSync(path.join(OUT, 'package.json'), '{"type":"module"}\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) build();
