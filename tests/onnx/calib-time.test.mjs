// Where a calibrated prune spends its time (CalibTime): every phase present, the phases no more than
// the wall time, prune the sum of its parts, and the progress callback carrying the running figures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import ort from 'onnxruntime-node';
import { build } from './build.mjs';

build();
const O = await import('#onnx-internal');
const { llamaBlocks } = await import('../../kit/shared-graphs.mjs');
const G = await import('./graphs.mjs');
const runner = O.makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });
const PHASES = ['model', 'cut', 'capture', 'statistics', 'prune'];

for (const [name, make, opts] of [
  ['Llama-shaped, sparsegpt', () => llamaBlocks({ blocks: 2 }), { sparsity: 0.5, criterion: 'sparsegpt', minVectors: 0 }],
  ['residual CNN, wanda, one pass', () => G.residual(), { sparsity: 0.5, criterion: 'wanda', sequential: false }],
]) {
  test(`time per phase: ${name}`, async () => {
    const bytes = make();
    const m = O.OnnxModel.parse(bytes);
    const calibration = O.makeInputSet(m, { count: 6 });
    const seen = [];
    const t0 = performance.now();
    const rep = await O.calibratePrune(m, { ort: runner, calibration, ...opts, onProgress: (p) => seen.push(p) });
    const wall = performance.now() - t0;
    const t = rep.time;
    for (const k of [...PHASES, 'library', 'solve', 'write', 'report']) assert.ok(Number.isFinite(t[k]) && t[k] >= 0, `${k}: ${t[k]}`);
    assert.ok(t.model > 0 && t.statistics > 0 && t.solve > 0, JSON.stringify(t));
    const sum = PHASES.reduce((a, k) => a + t[k], 0);
    assert.ok(sum <= wall, `phases ${sum} ms <= wall ${wall} ms`);
    assert.ok(sum <= rep.ms + 1, `phases ${sum} ms <= report ${rep.ms} ms`);
    assert.ok(Math.abs(t.prune - (t.solve + t.write + t.report)) < 1e-6);
    assert.ok(Math.abs(t.model + t.library - rep.ms) <= 1, 'model + library = total');
    // The progress figures only grow, and the last one is the report's.
    assert.ok(seen.length > 2 && seen.every((p) => p.time));
    for (let i = 1; i < seen.length; i++) for (const k of PHASES) assert.ok(seen[i].time[k] >= seen[i - 1].time[k], `${k} grows`);
    assert.equal(seen.at(-1).phase, 'done');
    for (const k of PHASES) assert.ok(seen.at(-1).time[k] <= t[k] + 1e-9);
  });
}
