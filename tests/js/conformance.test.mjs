// The Node run of the one conformance harness: every case of every folder
// tests/data/*-cases (or SPARSEKIT_TESTDATA) through the public JS API of the built package (imported as a user
// would), dispatched by op (tests/support/cases.mjs); an op no runner knows fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as sk from 'sparsekit-wasm';
import { loadCaseFolders, runFolders } from '../support/cases.mjs';
import { fsCaseIO } from '../support/cases-fs.mjs';
import { RUNNERS, setSoftMethod } from './conformance-runner.mjs';

test('conformance cases of every folder through the public JS API (Node)', async () => {
  const folders = await loadCaseFolders(fsCaseIO);
  assert.ok(folders.length > 0, 'no *-cases folder found');
  const r = await runFolders(sk, folders, RUNNERS);
  for (const f of r.failures.slice(0, 40)) console.log(`FAIL ${f}`);
  for (const line of r.lines) console.log(line);
  assert.equal(r.failed, 0, `${r.failed} conformance case(s) failed`);
});

test("soft-threshold cases with method: 'bisection' too (the default is 'newton')", async () => {
  const folders = (await loadCaseFolders(fsCaseIO))
    .filter((f) => f.name === 'sparsekit-cases')
    .map((f) => ({ ...f, problems: [], cases: f.cases.filter((c) => c.op.endsWith('soft_threshold')) }));
  assert.ok(folders.length === 1 && folders[0].cases.some((c) => c.args.conditioners), 'no conditioned soft-threshold case');
  setSoftMethod('bisection');
  try {
    const r = await runFolders(sk, folders, RUNNERS);
    for (const f of r.failures.slice(0, 40)) console.log(`FAIL ${f}`);
    assert.equal(r.failed, 0, `${r.failed} soft-threshold case(s) failed with the bisection`);
  } finally {
    setSoftMethod(undefined);
  }
});
