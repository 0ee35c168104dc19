// One source of error codes: the wasm module's errorCodes() (Rust ErrorKind::ALL). The package's
// ERROR_CODES, its generated `ErrorCode` union and the table of docs/errors.md must all hold
// exactly those codes (the two the JS layer throws itself are in the Rust list too): a kind added in
// Rust only fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as sk from 'sparsekit-wasm';
import { ROOT, PKG } from './util.mjs';

/** Thrown by the JS layer itself (a call before init() in a browser, a wasm trap), listed in Rust. */
const JS_ONLY = ['not_initialized', 'internal_error'];

const glue = await import(pathToFileURL(join(PKG, 'wasm/st/sparsekit_wasm.js')).href);
glue.initSync({ module: readFileSync(join(PKG, 'wasm/st/sparsekit_wasm_bg.wasm')) });
const RUST = glue.errorCodes();
const EXPECTED = [...RUST].sort();

test('errorCodes() lists distinct codes, the JS layer\'s own among them', () => {
  assert.ok(RUST.length >= 27, `only ${RUST.length} codes`);
  for (const c of JS_ONLY) assert.ok(RUST.includes(c), `${c} is not in Rust's list`);
  assert.equal(new Set(RUST).size, RUST.length);
});

test('ERROR_CODES of the package = errorCodes()', () => {
  assert.deepEqual([...sk.ERROR_CODES].sort(), EXPECTED);
});

test('the shipped ErrorCode type is exactly errorCodes() (checked by tsc)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sk-codes-'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(PKG, join(dir, 'node_modules/sparsekit-wasm'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(join(dir, 'codes.ts'), `import type { ErrorCode } from 'sparsekit-wasm';
const rust = ${JSON.stringify(RUST)} as const;
const jsOnly = ${JSON.stringify(JS_ONLY)} as const;
// every Rust code is an ErrorCode ...
export const all: readonly ErrorCode[] = [...rust, ...jsOnly];
// ... and ErrorCode holds nothing else
type Extra = Exclude<ErrorCode, (typeof rust)[number] | (typeof jsOnly)[number]>;
export const none: [Extra] extends [never] ? true : false = true;
`);
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '--strict', '--target', 'es2022', '--module', 'nodenext', '--noEmit', 'codes.ts'], { cwd: dir, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('the table of docs/errors.md documents exactly these codes', () => {
  const doc = readFileSync(join(ROOT, 'docs/errors.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Error classes and codes'));
  const table = section.slice(section.indexOf('| code |'), section.indexOf('\n\n', section.indexOf('| code |')));
  const rows = table.split('\n').slice(2);
  const documented = rows.flatMap((r) => [...r.split('|')[1].matchAll(/`([a-z0-9_]+)`/g)].map((m) => m[1]));
  assert.equal(new Set(documented).size, documented.length, 'a code is documented twice');
  assert.deepEqual([...documented].sort(), EXPECTED);
});
