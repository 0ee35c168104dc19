// The CLI with and without threads: `prune --method sparsegpt --calib synthetic` on a committed
// decoder runs the threaded build by default (SPARSEKIT_THREADS=2 here, whatever the core count)
// and the single-threaded one with SPARSEKIT_THREADS=1; the two files are the same bytes, and
// the threaded run says nothing of a fallback. A bad SPARSEKIT_THREADS is a usage error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build, CLI, ROOT } from './build.mjs';

build();
const MODEL = path.join(ROOT, 'tests/data/models/smollm2-tiny-gqa.onnx');

function prune(threads, out) {
  const args = [CLI, 'prune', MODEL, '-o', out, '--sparsity', '0.5', '--method', 'sparsegpt', '--calib', 'synthetic', '--calib-count', '8', '-q'];
  return spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 120_000, env: { ...process.env, SPARSEKIT_THREADS: threads } });
}

test('prune --method sparsegpt: the same bytes with threads (SPARSEKIT_THREADS=2) and without (=1)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-cli-threads-'));
  const mt = prune('2', path.join(dir, 'mt.onnx'));
  assert.equal(mt.signal, null, 'the threaded run exits by itself');
  assert.equal(mt.status, 0, mt.stderr);
  assert.doesNotMatch(mt.stderr, /threads could not start/);
  const st = prune('1', path.join(dir, 'st.onnx'));
  assert.equal(st.status, 0, st.stderr);
  assert.ok(fs.readFileSync(path.join(dir, 'mt.onnx')).equals(fs.readFileSync(path.join(dir, 'st.onnx'))), 'identical output bytes');
});

test('SPARSEKIT_THREADS that is not a positive integer: exit 2, one line naming it', () => {
  const r = prune('two', path.join(os.tmpdir(), 'never-written.onnx'));
  assert.equal(r.status, 2);
  assert.match(r.stderr, /SPARSEKIT_THREADS must be a positive integer/);
});
