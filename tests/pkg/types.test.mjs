// `tsc --noEmit --strict` compiles an example that uses every public member of the package's
// types, and a deliberately wrong call fails to type-check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './util.mjs';

const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const DIR = join(ROOT, 'tests/types');

function tsc(args) {
  return spawnSync(process.execPath, [TSC, ...args], { cwd: DIR, encoding: 'utf8' });
}

test('the public types compile under --strict', () => {
  const r = tsc(['-p', 'tsconfig.json']);
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('a wrong call does not type-check', () => {
  const r = tsc(['-p', 'tsconfig.json', '--noEmit']);
  assert.equal(r.status, 0);
  const w = spawnSync(process.execPath, [TSC, '--noEmit', '--strict', '--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--target', 'ES2022', '--lib', 'ES2022,DOM,ESNext.Disposable', 'wrong.ts'], { cwd: DIR, encoding: 'utf8' });
  assert.notEqual(w.status, 0, 'wrong.ts type-checked');
  assert.match(w.stdout, /wrong\.ts\(5,20\): error TS2345: Argument of type 'string' is not assignable/);
});
