// Runs every case of ../shared/testdata/obs-cases (Hessian, Wanda, SparseGPT) through the
// public JS API of the built package, in Node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as sk from 'sparsekit-wasm';
import { runObsCases } from './obs-cases.mjs';

const DIR = new URL('../../../shared/testdata/obs-cases/', import.meta.url);

test('obs cases (Hessian, Wanda, SparseGPT) through the public JS API (Node)', () => {
  const index = JSON.parse(readFileSync(new URL('index.json', DIR), 'utf8'));
  assert.ok(index.length >= 150, `expected at least 150 cases, found ${index.length}`);
  const cases = index.map((e) => JSON.parse(readFileSync(new URL(`${e.id}.json`, DIR), 'utf8')));
  const { passed, failures } = runObsCases(sk, cases);
  console.log(`obs-cases(js, node): ${passed} passed, ${failures.length} failed, of ${cases.length}`);
  if (failures.length) console.log(failures.slice(0, 40).join('\n'));
  assert.equal(failures.length, 0, `${failures.length} obs cases failed`);
});
