// The packed package as a user installs it: the `sparsekit-wasm/onnx` subpath and the
// `sparsekit-wasm` command (package.json `bin`) work from an empty project, offline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { packPackage, projectWith } from './util.mjs';
import { CLS } from '../e2e/helpers.mjs';


test('npm i of the tarball: `npx sparsekit-wasm` prunes a model, `sparsekit-wasm/onnx` reads it back', () => {
  const dir = projectWith(packPackage(), {
    'package.json': JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }),
    'check.mjs': `import { loadOnnx } from 'sparsekit-wasm/onnx';
const m = await loadOnnx(process.argv[2]);
let groups = 0, bad = 0;
for (const w of m.weights.filter((w) => w.op === 'Conv' && w.dims[1] % 4 === 0 && w.dims[1] > 1)) {
  const d = m.readFloat(w), [o, c] = w.dims, k = d.length / (o * c);
  for (let i = 0; i < o; i++) for (let s = 0; s < k; s++) for (let g = 0; g < c; g += 4) {
    let nz = 0; for (let j = g; j < g + 4; j++) nz += d[(i * c + j) * k + s] !== 0;
    groups++; bad += nz > 2;
  }
}
console.log(JSON.stringify({ groups, bad }));`,
  }, 'sk-onnx-');
  const bin = join(dir, 'node_modules', '.bin', 'sparsekit-wasm');
  assert.ok(existsSync(bin), 'the bin is linked');
  assert.match(execFileSync(bin, ['--help'], { encoding: 'utf8' }), /prune/);
  assert.match(execFileSync(bin, ['inspect', CLS], { encoding: 'utf8' }), /Conv/);
  const out = join(dir, 'cls-24.onnx');
  const run = spawnSync(bin, ['prune', CLS, '-o', out, '--nm', '2:4'], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const got = JSON.parse(execFileSync('node', ['check.mjs', out], { cwd: dir, encoding: 'utf8' }).trim());
  assert.ok(got.groups > 1000, `checked ${got.groups} groups of 4`);
  assert.equal(got.bad, 0, 'every group along the input channels keeps at most 2');
  const bad = spawnSync(bin, ['prune', join(dir, 'missing.onnx'), '-o', join(dir, 'x.onnx')], { encoding: 'utf8' });
  assert.notEqual(bad.status, 0);
  assert.equal(existsSync(join(dir, 'x.onnx')), false, 'a failed run leaves no output');
});
