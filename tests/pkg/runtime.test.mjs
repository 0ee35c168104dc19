// Runtime variants: feature detection, the typed refusal of an engine without SIMD128 (through
// every entry: Node ESM, Node CJS, the browser entry), and init({ wasmPaths }) per variant.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as sk from 'sparsekit-wasm';
import { ROOT, PKG, JOB_SOURCE, expectedJob } from './util.mjs';

const NO_SIMD = pathToFileURL(join(ROOT, 'tests/pkg/no-simd-engine.mjs')).href;
const BROWSER = pathToFileURL(join(PKG, 'src/browser.js')).href;
const ST_WASM = join(PKG, 'wasm/st/sparsekit_wasm_bg.wasm');

/** Runs `source` as an ES module (or CommonJS) in a child Node; returns its last stdout line, parsed. */
function run(source, { noSimd = false, cjs = false } = {}) {
  const args = [...(noSimd ? ['--import', NO_SIMD] : []), `--input-type=${cjs ? 'commonjs' : 'module'}`, '-e', source];
  // A generous buffer: spawnSync kills a child whose output passes maxBuffer (status null).
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, `signal ${r.signal}, error ${r.error?.code}: ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

const PROBE = `
  out.variant = sk.variant();
  out.env = sk.environment();
  try { sk.Param.fromArray([1, 2], [2]); out.call = 'no error'; } catch (e) { out.call = [e instanceof sk.SparseKitError, e.code]; }
  try { await init(); out.init = 'resolved'; } catch (e) { out.init = [e instanceof sk.SparseKitError, e.code, e.message]; }
  try { sk.Param.fromArray([1, 2], [2]); out.after = 'no error'; } catch (e) { out.after = [e instanceof sk.SparseKitError, e.code]; }
  console.log(JSON.stringify(out));`;

function checkRefused(out) {
  assert.equal(out.variant, 'uninitialized');
  assert.equal(out.env.simd, false);
  assert.deepEqual(out.init.slice(0, 2), [true, 'unsupported_environment']);
  assert.match(out.init[2], /SIMD128/);
  assert.deepEqual(out.after, [true, 'unsupported_environment']);
}

test('this Node has SIMD128; the emulated engine without it really refuses the wasm build', () => {
  assert.equal(sk.environment().simd, true);
  assert.equal(sk.environment().worker, false);
  const raw = run(`
    import { readFileSync } from 'node:fs';
    const glue = await import(${JSON.stringify(pathToFileURL(join(PKG, 'wasm/st/sparsekit_wasm.js')).href)});
    let out;
    try { glue.initSync({ module: readFileSync(${JSON.stringify(ST_WASM)}) }); out = 'compiled'; } catch (e) { out = e.constructor.name; }
    console.log(JSON.stringify(out));`, { noSimd: true });
  assert.equal(raw, 'CompileError', 'the control: the raw glue fails with a CompileError there');
});

test('Node ESM entry without SIMD128: the import succeeds, init() and calls throw unsupported_environment', () => {
  const out = run(`import init, * as sk from 'sparsekit-wasm'; const out = {}; ${PROBE}`, { noSimd: true });
  checkRefused(out);
  assert.deepEqual(out.call, [true, 'unsupported_environment']);
});

test('Node CJS entry without SIMD128: the same', () => {
  const out = run(`const sk = require('sparsekit-wasm'); const init = sk.default; (async () => { const out = {}; ${PROBE} })();`, { noSimd: true, cjs: true });
  checkRefused(out);
  assert.deepEqual(out.call, [true, 'unsupported_environment']);
});

test('browser entry without SIMD128: init() rejects with unsupported_environment, later calls too', () => {
  const out = run(`import init, * as sk from ${JSON.stringify(BROWSER)}; const out = {}; ${PROBE}`, { noSimd: true });
  checkRefused(out);
  assert.deepEqual(out.call, [true, 'not_initialized']);
});

test('browser entry: init({ wasmPaths: { simd } }) loads the build from there; bad options are typed errors', () => {
  const out = run(`
    import { readFileSync } from 'node:fs';
    import init, * as sk from ${JSON.stringify(BROWSER)};
    ${JOB_SOURCE}
    const out = {};
    try { sk.Param.fromArray([1], [1]); } catch (e) { out.before = e.code; }
    for (const bad of [{ moduleOrPath: 'x.wasm' }, { wasmPaths: { simd: 42 } }, { wasmPaths: { gpu: 'x' } }, 'simd']) {
      try { await init(bad); out.bad = (out.bad ?? []).concat('resolved'); } catch (e) { out.bad = (out.bad ?? []).concat(e instanceof sk.SparseKitError && e.code); }
    }
    await init({ wasmPaths: { simd: readFileSync(${JSON.stringify(ST_WASM)}), threads: 'never-loaded.wasm' } });
    out.variant = sk.variant();
    out.threads = await sk.initThreadPool(2);
    out.job = job(sk);
    console.log(JSON.stringify(out));`);
  assert.equal(out.before, 'not_initialized');
  assert.deepEqual(out.bad, ['invalid_arguments', 'invalid_arguments', 'invalid_arguments', 'invalid_arguments']);
  assert.equal(out.variant, 'simd');
  assert.equal(out.threads, false);
  const exp = expectedJob();
  assert.equal(out.job.nnz, exp.nnz);
  assert.equal(out.job.kept24, exp.kept24);
  assert.ok(Math.abs(out.job.checksum - exp.checksum) < 1e-2);
});
