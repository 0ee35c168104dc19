// The hostile corpus (tests/data/hostile, written by tests/gen/hostile.mjs) through every stage:
// loadOnnx, findChannelGroups, pruneSparsity, pruneNm, removeChannels, the writer, and the CLI
// (inspect, prune --sparsity / --nm / --channels) under a 512 MB heap. A refused file gives a typed
// OnnxError of the expected reason quickly (the CLI: exit 1, one line, no output file); a valid
// file gives a result or a typed error at every stage, and writes a model that loads again.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { SparseKitError } from 'sparsekit-wasm';
import { OnnxModel, OnnxError, loadOnnx, findChannelGroups, pruneSparsity, pruneNm, removeChannels } from 'sparsekit-wasm/onnx';
import { build, CLI, ROOT } from './build.mjs';
import { writeCorpus } from '../gen/hostile.mjs';

build();
const DIR = path.join(ROOT, 'tests/data/hostile');
const CASES = JSON.parse(fs.readFileSync(path.join(DIR, 'cases.json'), 'utf8'));
/** A refusal is a check over the bytes present: far below this even on a loaded machine. */
const REFUSE_MS = 3000;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-hostile-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const load = (c) => (c.limits
  ? Promise.resolve().then(() => OnnxModel.parse(fs.readFileSync(path.join(DIR, c.file)), { limits: c.limits }))
  : loadOnnx(path.join(DIR, c.file)));

test('the committed corpus is what tests/gen/hostile.mjs writes', () => {
  const again = path.join(tmp, 'regen');
  const manifest = writeCorpus(again);
  assert.deepEqual(manifest, CASES);
  for (const f of fs.readdirSync(again)) {
    assert.ok(fs.readFileSync(path.join(again, f)).equals(fs.readFileSync(path.join(DIR, f))), `${f} differs from the generator's`);
  }
  assert.ok(CASES.length >= 40 && CASES.every((c) => c.bytes <= 256 * 1024), 'many cases, each small');
});

for (const c of CASES) {
  test(`${c.file}: ${c.expect === 'ok' ? 'valid, every stage answers' : `refused at load (${c.expect})`}`, async () => {
    if (c.expect !== 'ok') {
      const t0 = performance.now();
      await assert.rejects(load(c), (e) => {
        assert.ok(e instanceof OnnxError && e instanceof SparseKitError, `typed error, got ${e?.name}: ${e?.message}`);
        assert.equal(e.reason, c.expect, e.message);
        assert.equal(e.code, 'invalid_value');
        assert.ok(e.message.length > 10 && !e.message.includes('\n'), 'a one-line message');
        return true;
      });
      assert.ok(performance.now() - t0 < REFUSE_MS, `refused in ${(performance.now() - t0).toFixed(0)} ms`);
      return;
    }
    const stages = {
      findChannelGroups: (m) => findChannelGroups(m),
      pruneSparsity: (m) => pruneSparsity(m, { sparsity: 0.5 }),
      pruneNm: (m) => pruneNm(m, { nm: [2, 4] }),
      removeChannels: (m) => removeChannels(m, { fraction: 0.3, roundTo: 1 }),
    };
    for (const [name, run] of Object.entries(stages)) {
      const m = await load(c);
      try {
        run(m);
      } catch (e) {
        assert.ok(e instanceof SparseKitError, `${name}: a typed error, got ${e?.name}: ${e?.message}`);
        continue;
      }
      // Written and read again: the same bytes once more.
      const chunks = [];
      const sink = (b) => chunks.push(b.slice());
      const bytes = m.encode({ location: 'out.onnx.data', sink });
      const data = Buffer.concat(chunks);
      const again = OnnxModel.parse(bytes, { externalFiles: { 'out.onnx.data': data }, limits: c.limits });
      assert.deepEqual(again.encode({ location: 'out.onnx.data', sink: () => {} }), bytes, `${name}: round trip`);
    }
    assert.doesNotThrow(() => findChannelGroups(OnnxModel.parse(fs.readFileSync(path.join(DIR, c.file)), { externalFiles: externalOf(c.file), limits: c.limits })));
  });
}

function externalOf(file) {
  const data = path.join(DIR, `${file}.data`);
  return fs.existsSync(data) ? { [`${file}.data`]: fs.readFileSync(data) } : {};
}

/** Runs the CLI with a 512 MB heap; resolves {code, signal, out, err, ms}. */
function cli(args) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const p = spawn(process.execPath, ['--max-old-space-size=512', CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    const timer = setTimeout(() => p.kill('SIGKILL'), 60_000);
    p.on('close', (code, signal) => { clearTimeout(timer); resolve({ code, signal, out, err, ms: Date.now() - t0 }); });
  });
}

test('CLI: inspect and prune --sparsity / --nm / --channels on every file, heap capped at 512 MB', async () => {
  const runs = [];
  for (const c of CASES) {
    const expect = c.limits ? c.expectDefault : c.expect;
    const input = path.join(DIR, c.file);
    runs.push({ c, expect, args: ['inspect', input] });
    for (const mode of [['--sparsity', '0.5'], ['--nm', '2:4'], ['--channels', '0.3']]) {
      const out = path.join(tmp, `${c.file.replace(/\W/g, '_')}${mode[0]}.onnx`);
      runs.push({ c, expect, out, args: ['prune', input, '-o', out, '-q', ...mode] });
    }
  }
  const failures = [];
  const queue = runs.slice();
  const worker = async () => {
    for (let r = queue.shift(); r; r = queue.shift()) {
      const res = await cli(r.args);
      const lines = res.err.trimEnd().split('\n');
      const label = `${r.args[0]} ${r.c.file} ${r.args.slice(-2).join(' ')}`;
      const problems = [];
      if (res.signal || res.code > 2) problems.push(`crashed (code ${res.code}, signal ${res.signal})`);
      if (r.expect === 'ok') {
        if (r.args[0] === 'inspect' && res.code !== 0) problems.push(`inspect exit ${res.code}: ${res.err}`);
        if (res.code === 1 && (lines.length !== 1 || !lines[0].startsWith('sparsekit-wasm: '))) problems.push(`not one line: ${res.err}`);
        if (res.code === 0 && r.out && !fs.existsSync(r.out)) problems.push('exit 0 without the output file');
      } else {
        if (res.code !== 1) problems.push(`exit ${res.code} (expected 1): ${res.err.slice(0, 300)}`);
        if (lines.length !== 1 || !lines[0].startsWith('sparsekit-wasm: ')) problems.push(`not one stderr line: ${res.err.slice(0, 300)}`);
        if (!lines[0].includes(`, ${r.expect}]`)) problems.push(`reason ${r.expect} not in: ${lines[0]}`);
        if (r.out && (fs.existsSync(r.out) || fs.existsSync(`${r.out}.data`))) problems.push('an output file was left');
      }
      if (problems.length) failures.push(`${label}: ${problems.join('; ')}`);
    }
  };
  await Promise.all([worker(), worker(), worker()]);
  assert.deepEqual(failures, []);
  assert.deepEqual(fs.readdirSync(tmp).filter((f) => f.includes('.tmp-')), [], 'no temporary files left');
});

// A valid model may declare any input size (declarations are not bounded at load); generating a
// sample of it is where the memory would go. Issue 24: a typed error and one CLI line, never an abort.
test('a valid model declaring a huge input: generated samples are refused (bad_dims), the CLI exits 1 with no file', async () => {
  const { makeModel } = await import('./graphs.mjs');
  const { makeInputSet } = await import('sparsekit-wasm/onnx');
  const bytes = makeModel({
    inputs: [['x', [1, 3, 1 << 20, 1 << 20]]], outputs: [['y', [1, 4, 1 << 20, 1 << 20]]],
    nodes: [['Conv', ['x', 'w', 'b'], ['y'], { pads: [1, 1, 1, 1] }]],
    inits: { w: { dims: [4, 3, 3, 3] }, b: { dims: [4] } },
  });
  const file = path.join(tmp, 'huge-input.onnx');
  fs.writeFileSync(file, bytes);
  const model = OnnxModel.parse(bytes);
  assert.throws(() => makeInputSet(model, { count: 2 }), (e) => e instanceof OnnxError && e.reason === 'bad_dims' && /beyond/.test(e.message));
  const out = path.join(tmp, 'huge-input-out.onnx');
  const res = await cli(['prune', file, '-o', out, '-q', '--sparsity', '0.5', '--method', 'wanda', '--calib', 'synthetic']);
  assert.equal(res.code, 1, res.err);
  const lines = res.err.trimEnd().split('\n');
  assert.equal(lines.length, 1, res.err);
  assert.match(lines[0], /^sparsekit-wasm: .*bad_dims\]/);
  assert.ok(!fs.existsSync(out));
});
