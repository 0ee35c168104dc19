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

const STAMP = path.join(OUT, '.stamp');
const LOCK = path.join(HERE, '.out.lock');

function sourcesNewest() {
  const dirs = [path.join(ROOT, 'pkg-template/src/onnx'), path.join(ROOT, 'pkg-template/bin')];
  return Math.max(...dirs.flatMap((d) => fs.readdirSync(d).map((f) => fs.statSync(path.join(d, f)).mtimeMs)));
}
const upToDate = () => fs.existsSync(STAMP) && fs.statSync(STAMP).mtimeMs >= sourcesNewest();

/** Builds when a source is newer than the last build; test files running in parallel wait for one build. */
export function build() {
  if (upToDate()) return;
  try {
    fs.mkdirSync(LOCK);
  } catch {
    const t0 = Date.now();
    while (!upToDate() && fs.existsSync(LOCK) && Date.now() - t0 < 120_000) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    if (upToDate()) return;
    fs.rmSync(LOCK, { recursive: true, force: true });
    fs.mkdirSync(LOCK);
  }
  try {
    execFileSync(path.join(ROOT, 'node_modules/.bin/tsc'), ['-p', path.join(HERE, 'tsconfig.json')], { stdio: 'inherit' });
    fs.mkdirSync(path.join(OUT, 'bin'), { recursive: true });
    for (const f of fs.readdirSync(path.join(ROOT, 'pkg-template/bin'))) {
      fs.copyFileSync(path.join(ROOT, 'pkg-template/bin', f), path.join(OUT, 'bin', f));
    }
    fs.writeFileSync(path.join(OUT, 'package.json'), '{"type":"module"}\n');
    fs.writeFileSync(STAMP, '');
  } finally {
    fs.rmSync(LOCK, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) build();
