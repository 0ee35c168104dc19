// The package's generated types as a new user meets them: `npm pack`, a fresh consumer project,
// `npm i` of the tarball, then the project's own tsc with a default setting
// (`--strict --target es2022 --module nodenext`, no `lib`), and again with esnext.disposable.
// The example uses every export; a wrong call must still fail; `using` frees at run time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import * as sk from 'sparsekit-wasm';
import { ROOT, packPackage, projectWith } from './util.mjs';

const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const SOURCES = join(ROOT, 'tests/types');
const DEFAULT = ['--strict', '--target', 'es2022', '--module', 'nodenext'];
const files = Object.fromEntries(['example.ts', 'wrong.ts', 'using.ts', 'entries.ts', 'require.cts', 'onnx-job.ts'].map((f) => [f, readFileSync(join(SOURCES, f), 'utf8')]));

const dir = projectWith(packPackage(), {
  'package.json': JSON.stringify({ name: 'ts-consumer', version: '1.0.0', private: true, type: 'module' }),
  ...files,
});

// onnx-job.ts imports the runtimes a user installs beside the package (it depends on neither): the
// repository's copies, linked in (their types import onnxruntime-common, found from the real path).
for (const rt of ['onnxruntime-node', 'onnxruntime-web']) symlinkSync(join(ROOT, 'node_modules', rt), join(dir, 'node_modules', rt), 'dir');

function tsc(args) {
  const r = spawnSync(process.execPath, [TSC, ...args], { cwd: dir, encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

test('every export of the package is used by tests/types/example.ts', () => {
  const names = Object.keys(sk).filter((k) => k !== 'default');
  assert.ok(names.length > 30, `only ${names.length} exports`);
  const missing = names.filter((k) => !new RegExp(`\\b${k}\\b`).test(files['example.ts']));
  assert.deepEqual(missing, [], 'exports not exercised by example.ts');
});

test('a default consumer project (no lib) compiles the example and the entry check', () => {
  const r = tsc([...DEFAULT, '--noEmit', 'example.ts', 'entries.ts']);
  assert.equal(r.status, 0, r.out);
});

test('the same with esnext.disposable in lib, and with target esnext', () => {
  const withLib = tsc([...DEFAULT, '--lib', 'es2022,dom,esnext.disposable', '--noEmit', 'example.ts', 'entries.ts']);
  assert.equal(withLib.status, 0, withLib.out);
  const esnext = tsc(['--strict', '--target', 'esnext', '--module', 'nodenext', '--noEmit', 'example.ts']);
  assert.equal(esnext.status, 0, esnext.out);
});

test('a Node project without the DOM lib (lib es2022, @types/node) compiles the example', () => {
  const r = tsc([...DEFAULT, '--lib', 'es2022', '--typeRoots', join(ROOT, 'node_modules/@types'), '--types', 'node', '--noEmit', 'example.ts', 'entries.ts']);
  assert.equal(r.status, 0, r.out);
});

test("README's job example type-checks with onnxruntime-node's and -web's own namespaces as `ort`", () => {
  const r = tsc([...DEFAULT, '--noEmit', 'onnx-job.ts']);
  assert.equal(r.status, 0, r.out);
});

test('a wrong call does not type-check', () => {
  const r = tsc([...DEFAULT, '--noEmit', 'wrong.ts']);
  assert.notEqual(r.status, 0, 'wrong.ts type-checked');
  assert.match(r.out, /wrong\.ts\(5,20\): error TS2345: Argument of type 'string' is not assignable/);
});

test('`using` frees a Param at the end of its block (compiled, then run in Node)', () => {
  const r = tsc([...DEFAULT, '--lib', 'es2022,dom,esnext.disposable', '--outDir', 'out', 'using.ts']);
  assert.equal(r.status, 0, r.out);
  const run = spawnSync(process.execPath, [join(dir, 'out/using.js')], { cwd: dir, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), 'use_after_free');
});

test('a CommonJS consumer (require) type-checks and runs', () => {
  const r = tsc([...DEFAULT, '--outDir', 'out', 'require.cts']);
  assert.equal(r.status, 0, r.out);
  const run = spawnSync(process.execPath, [join(dir, 'out/require.cjs')], { cwd: dir, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), { variant: 'simd', size: 8, code: 'shape_mismatch', kept: 4 });
});
