// Runs every conformance case of ../shared/testdata/sparsekit-cases through the public JS API
// of the built package (imported as a user would), in Node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import * as sk from 'sparsekit-wasm';
import { runCases } from './conformance-runner.mjs';

export const CASES_DIR = new URL('../../../shared/testdata/sparsekit-cases/', import.meta.url);

test('conformance cases through the public JS API (Node)', () => {
  const files = readdirSync(CASES_DIR).filter((f) => /^[a-z]+-\d+-.*\.json$/.test(f)).sort();
  assert.ok(files.length >= 601, `expected at least 601 cases, found ${files.length}`);
  const cases = files.map((f) => JSON.parse(readFileSync(new URL(f, CASES_DIR), 'utf8')));
  const { passed, failures } = runCases(sk, cases);
  console.log(`conformance(js, node): ${passed} passed, ${failures.length} failed, of ${files.length}`);
  if (failures.length) console.log(failures.slice(0, 40).join('\n'));
  assert.equal(failures.length, 0, `${failures.length} conformance cases failed`);
});
