// Sensitivity: every cell of the table equals the fidelity of the model with that one layer (or
// channel group) pruned at that level, computed independently (prune a fresh copy, run it in its own
// session); weights are swapped into one session (the counts say so) and the model is left as it was.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { build, CLI } from './build.mjs';
import { writeNpy } from './npy.mjs';

build();
const O = await import('sparsekit-wasm/onnx');
const G = await import('./graphs.mjs');

let dir, evalDir, calibDir;
const SAMPLES = 6;
before(() => {
  dir = G.tmpDir('sk-sens-');
  evalDir = path.join(dir, 'eval');
  calibDir = path.join(dir, 'calib');
  fs.mkdirSync(evalDir); fs.mkdirSync(calibDir);
  const r = G.rng(5);
  for (let i = 0; i < SAMPLES; i++) writeNpy(path.join(evalDir, `e${i}.npy`), Float32Array.from({ length: 4 * 64 }, () => r()), [1, 4, 8, 8]);
  for (let i = 0; i < 4; i++) writeNpy(path.join(calibDir, `c${i}.npy`), Float32Array.from({ length: 4 * 64 }, () => r()), [1, 4, 8, 8]);
});

const runner = () => O.makeOrtRunner(ort, { intraOpNumThreads: 1 });

/** The fidelity of `pruned` (bytes) against `bytes` on the eval set, each in its own session. */
async function independent(bytes, pruned, set) {
  const ref = await O.runSet(runner(), bytes, set);
  const out = await O.runSet(runner(), pruned, set);
  return O.fidelity(ref, out).score;
}

test('weights mode: each cell is the fidelity of that layer alone pruned; one swap session', async () => {
  for (const store of ['raw', 'constant']) {
    const bytes = G.residual(store);
    const model = O.OnnxModel.parse(bytes);
    const set = await O.readCalibrationDir(evalDir, model);
    const snapshot = model.prunable().map((w) => Array.from(model.readFloat(w)));
    const res = await O.sensitivity(model, { ort: runner(), eval: set, mode: 'sparsity', levels: [0.9, 0.5] });
    assert.deepEqual(res.levels, [0.5, 0.9], 'levels sorted');
    assert.deepEqual(res.units.map((u) => u.name), model.prunable().map((w) => w.name));
    assert.deepEqual(model.prunable().map((w) => Array.from(model.readFloat(w))), snapshot, 'the model is left as it was');
    for (const u of res.units) {
      for (const c of u.cells) {
        const m = O.OnnxModel.parse(bytes);
        O.pruneSparsity(m, { layerTarget: (w) => (w.name === u.name ? c.level : null) });
        const want = await independent(bytes, m.encode(), set);
        assert.ok(Math.abs(c.fidelity - want) < 1e-4, `${store} ${u.name} @ ${c.level}: ${c.fidelity} vs ${want}`);
        assert.ok(c.removed > 0 && c.removed <= Math.ceil(c.level * u.params));
      }
    }
    const cells = res.units.reduce((a, u) => a + u.cells.filter((c) => c.removed > 0).length, 0);
    // Initializers or Constant nodes alike: the positions probe + the swap session; runs: probe 1,
    // reference SAMPLES, SAMPLES per cell.
    assert.equal(res.sessions, 2, store);
    assert.equal(res.runs, 1 + SAMPLES * (1 + cells), store);
    assert.ok(res.ms.model > 0 && res.ms.total >= res.ms.model);
  }
});

test('nm and sparsegpt cells: N:M per layer, SparseGPT on statistics of the unpruned model', async () => {
  const bytes = G.residual();
  const model = O.OnnxModel.parse(bytes);
  const set = await O.readCalibrationDir(evalDir, model);
  const calibration = await O.readCalibrationDir(calibDir, model);
  const nm = await O.sensitivity(model, { ort: runner(), eval: set, mode: 'nm', nm: [2, 4] });
  assert.deepEqual(nm.levels, ['2:4']);
  for (const u of nm.units) {
    const m = O.OnnxModel.parse(bytes);
    O.pruneNm(m, { layerTarget: (w) => (w.name === u.name ? [2, 4] : null) });
    const want = await independent(bytes, m.encode(), set);
    assert.ok(Math.abs(u.cells[0].fidelity - want) < 1e-4, `${u.name}: ${u.cells[0].fidelity} vs ${want}`);
  }
  const sg = await O.sensitivity(model, { ort: runner(), eval: set, calibration, mode: 'sparsity', levels: [0.5], method: 'sparsegpt' });
  for (const u of sg.units) {
    // One layer pruned by calibratePrune from the unpruned model's statistics (one pass) is the same cell.
    const m = O.OnnxModel.parse(bytes);
    await O.calibratePrune(m, { ort: runner(), calibration, sparsity: 0.5, sequential: false, criterion: (l) => (l.name === u.name ? 'sparsegpt' : 'dense') });
    const want = await independent(bytes, m.encode(), set);
    assert.ok(Math.abs(u.cells[0].fidelity - want) < 1e-4, `${u.name}: ${u.cells[0].fidelity} vs ${want}`);
  }
});

test('channels mode: each cell is the model with that group alone removed', async () => {
  const bytes = G.residual();
  const model = O.OnnxModel.parse(bytes);
  const set = await O.readCalibrationDir(evalDir, model);
  const res = await O.sensitivity(model, { ort: runner(), eval: set, mode: 'channels', levels: [0.5], roundTo: 1 });
  const groups = O.findChannelGroups(model).groups.filter((g) => g.prunable);
  assert.equal(res.units.length, groups.length);
  for (const u of res.units) {
    const m = O.OnnxModel.parse(bytes);
    const rep = O.removeChannels(m, { fraction: 0.5, roundTo: 1, filter: (g) => g.producers[0] === u.name });
    assert.equal(u.cells[0].removed, rep.params.before - rep.params.after);
    const want = await independent(bytes, m.encode(), set);
    assert.ok(Math.abs(u.cells[0].fidelity - want) < 1e-4, `${u.name}: ${u.cells[0].fidelity} vs ${want}`);
  }
  // The cells are masked copies fed to one session (channel-feeds.ts), not a session per cell; a
  // session per cell (maskCells: false) gives the same table.
  assert.ok(res.sessions <= 2, `${res.sessions} sessions for ${res.units.length} cells`);
  const each = await O.sensitivity(model, { ort: runner(), eval: set, mode: 'channels', levels: [0.5], roundTo: 1, maskCells: false });
  assert.equal(each.sessions, 1 + each.units.length + 1);
  res.units.forEach((u, i) => {
    assert.equal(u.cells[0].removed, each.units[i].cells[0].removed);
    assert.ok(Math.abs(u.cells[0].fidelity - each.units[i].cells[0].fidelity) < 1e-4);
    assert.ok(Math.abs(u.cells[0].cosineLoss - each.units[i].cells[0].cosineLoss) < 1e-5);
  });
});

test('channels with measureLatency: each removing cell timed against the original in its own session, counted as onnxruntime time', async () => {
  const bytes = G.residual();
  const model = O.OnnxModel.parse(bytes);
  const set = await O.readCalibrationDir(evalDir, model);
  const res = await O.sensitivity(model, { ort: runner(), eval: set, mode: 'channels', levels: [0.5], roundTo: 1, measureLatency: true, latencyRuns: 1 });
  const timed = res.units.filter((u) => u.cells[0].removed > 0);
  assert.ok(timed.length > 0);
  for (const u of res.units) assert.equal(typeof u.cells[0].latencyMs, 'number', u.name);
  // positions + the swap session + the probe's original + one per timed cell (fidelity from the masks)
  assert.equal(res.sessions, 3 + timed.length);
  assert.ok(res.ms.model > 0 && res.ms.model <= res.ms.total);
  // Cells below stopBelow are of no use to a plan: not timed (no session), no gain.
  const none = await O.sensitivity(model, { ort: runner(), eval: set, mode: 'channels', levels: [0.5], roundTo: 1, measureLatency: true, latencyRuns: 1, stopBelow: 1.01 });
  assert.equal(none.sessions, 3);
  for (const u of none.units) assert.equal(u.cells[0].latencyMs, 0);
});

test('bad options are refused before any run', async () => {
  const model = O.OnnxModel.parse(G.residual());
  const set = await O.readCalibrationDir(evalDir, model);
  await assert.rejects(O.sensitivity(model, { ort: runner(), eval: set, mode: 'sparsity', levels: [0, 0.5] }), /level must be in/);
  await assert.rejects(O.sensitivity(model, { ort: runner(), eval: set, mode: 'channels', levels: [1] }), /level must be in/);
  await assert.rejects(O.sensitivity(model, { ort: runner(), eval: [], mode: 'sparsity' }), /at least one eval sample/);
  await assert.rejects(O.sensitivity(model, { ort: runner(), eval: set, mode: 'sparsity', method: 'sparsegpt' }), /needs calibration samples/);
});

test('CLI: a layers x levels chart, the JSON table; --eval sharing files with --calib is refused', () => {
  const input = path.join(dir, 'residual.onnx');
  fs.writeFileSync(input, G.residual());
  const json = path.join(dir, 'sens.json');
  const r = spawnSync(process.execPath, [CLI, 'sensitivity', input, '--eval', evalDir, '--sparsity', '0.5,0.9', '--report', json, '-q'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^layer\s+params\s+0\.5\s+0\.9/m);
  assert.match(r.stdout, /^A\.w\s+288\s/m);
  assert.match(r.stdout, /onnxruntime sessions/);
  const t = JSON.parse(fs.readFileSync(json, 'utf8'));
  assert.equal(t.units.length, 4);
  assert.equal(t.units[0].cells.length, 2);
  const bad = spawnSync(process.execPath, [CLI, 'sensitivity', input, '--eval', evalDir, '--calib', evalDir, '--method', 'wanda', '--sparsity', '0.5'], { encoding: 'utf8' });
  assert.equal(bad.status, 2, bad.stderr);
  assert.match(bad.stderr, /--eval and --calib name the same directory: held-out samples must not be calibration samples/);
  assert.equal(bad.stderr.trim().split('\n').length, 1);
  const noEval = spawnSync(process.execPath, [CLI, 'sensitivity', input, '--sparsity', '0.5'], { encoding: 'utf8' });
  assert.equal(noEval.status, 2);
  assert.match(noEval.stderr, /--eval DIR/);
});
