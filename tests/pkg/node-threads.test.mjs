// The threaded build in Node: initThreadPool(2) starts two rayon workers over worker_threads, a
// Hessian and a SparseGPT solve give the bits of the single-threaded build (the kernels' contract:
// bits do not depend on the thread count), and the process exits by itself (the workers, blocked
// in their rayon loop for good, do not keep it alive). Each build runs in its own child process;
// in the single-threaded one, initThreadPool after the first object keeps that build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { PKG } from './util.mjs';

/** The child: a seeded job on one build; prints what it saw and the digest of every result. */
const CHILD = (threads) => `
import * as sk from ${JSON.stringify(join(PKG, 'src', 'node.js'))};
const active = ${threads ? 'await sk.initThreadPool(2)' : 'false'};
let s = 7;
const rand = (n) => Float32Array.from({ length: n }, () => { s = (s * 1103515245 + 12345) >>> 0; return s / 2 ** 32 - 0.5; });
const hex = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('hex');
const h = new sk.Hessian(512);
h.addRows(rand(3000 * 512), 3000);
const w = sk.Param.fromArray(rand(512 * 512), [512, 512]);
const mask = sk.sparseGpt(w, h, { sparsity: 0.5 });
// once an object exists its build stays: a late initThreadPool keeps it and says so
const late = ${threads ? 'null' : 'await sk.initThreadPool(2)'};
console.log(JSON.stringify({ active, late, variant: sk.variant(), numThreads: sk.numThreads(), workers: sk.probeThreads(64),
  hessian: hex(h.matrix()), mask: hex(mask), weights: hex(w.toArray()) }));
`;

function run(threads) {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD(threads)], { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 << 20 });
  assert.equal(r.signal, null, `the child was killed (${r.signal}): it did not exit by itself`);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('initThreadPool(2) in Node: two workers, the single-threaded bits, and the process exits', () => {
  const mt = run(true);
  const st = run(false);
  assert.equal(mt.active, true);
  assert.equal(mt.variant, 'threads');
  assert.equal(mt.numThreads, 2);
  assert.equal(mt.workers, 2, 'rayon ran the probe on both workers');
  assert.equal(st.late, false, 'initThreadPool after the first object resolves to false');
  assert.equal(st.variant, 'simd');
  assert.equal(st.numThreads, 1);
  const digest = (x) => createHash('sha256').update(x).digest('hex');
  for (const key of ['hessian', 'mask', 'weights']) assert.equal(digest(mt[key]), digest(st[key]), key);
});
