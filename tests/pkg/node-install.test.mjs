// `npm pack` of the built package installs into an empty Node project that uses it through
// `require` and through `import`, offline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { packPackage, projectWith, JOB_SOURCE, expectedJob } from './util.mjs';

function checkJob(got) {
  const exp = expectedJob();
  assert.ok(Math.abs(got.normsBefore - exp.normsBefore) < 1e-2, `norms ${got.normsBefore} vs ${exp.normsBefore}`);
  assert.equal(got.nnz, exp.nnz);
  assert.equal(got.kept24, exp.kept24);
  assert.ok(Math.abs(got.checksum - exp.checksum) < 1e-2, `checksum ${got.checksum} vs ${exp.checksum}`);
}

test('npm pack installs into an empty Node project: require and import', () => {
  const tgz = packPackage();
  const dir = projectWith(tgz, {
    'package.json': JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }),
    'use.cjs': `${JOB_SOURCE}\nconst sk = require('sparsekit-wasm');\nconsole.log(JSON.stringify({ variant: sk.variant(), ...job(sk), isErr: (() => { try { new sk.View(sk.Param.fromArray(new Float32Array(4), [4]), [5], [1]); } catch (e) { return e instanceof sk.SparseKitError && e.code; } })() }));`,
    'use.mjs': `${JOB_SOURCE}\nimport init, * as sk from 'sparsekit-wasm';\nawait init();\nconsole.log(JSON.stringify({ variant: sk.variant(), ...job(sk) }));`,
  });
  for (const file of ['use.cjs', 'use.mjs']) {
    const out = JSON.parse(execFileSync('node', [file], { cwd: dir, encoding: 'utf8' }).trim());
    assert.equal(out.variant, 'simd', file);
    checkJob(out);
    if (file === 'use.cjs') assert.equal(out.isErr, 'view_out_of_bounds');
    console.log(`${file}: ${JSON.stringify(out)}`);
  }
});
