// proxPrune (and `prune --prox`): block sparsity reached by proximal sparse training. The ramp; the
// proximal phase zeroing blocks on its own before the cut; every layer at exactly the target after it
// (the blocks pruneSparsity would count), kept through the masked recovery; against a one-shot cut of
// the same sparsity, a better fidelity; an abort that leaves the model untouched; the CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { build, CLI } from './build.mjs';

build();
const { OnnxModel, makeInputSet, proxPrune, recover, rampTarget, pruneSparsity, makeOrtRunner, runSet, compareSets, CancelledError, OnnxError } = await import('#onnx-internal');
const { tmpDir, convNet } = await import('./graphs.mjs');

const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });

/** x -> conv 3x3 (16) -> Relu -> conv 1x1 (16) -> Relu -> conv 3x3 (8) -> y: every weight tiles into 4x4 blocks. */
const net = () => convNet({ inChannels: 4, size: 10, seed: 5 });

const kinds = { y: 'generic' };

/** Zero 4x4 blocks of a weight on its (outputs, inputs) view, and all of its blocks. */
function zeroBlocks(model, name) {
  const w = model.weight(name);
  const v = model.readFloat(w);
  const R = w.dims[0], C = v.length / R;
  let zero = 0, all = 0;
  for (let r0 = 0; r0 < R; r0 += 4) {
    for (let c0 = 0; c0 < C; c0 += 4) {
      let nz = false;
      for (let r = r0; r < r0 + 4; r++) for (let c = c0; c < c0 + 4; c++) if (v[r * C + c] !== 0) nz = true;
      all++; if (!nz) zero++;
    }
  }
  return { zero, all };
}

test('the ramp: 0 at the start, cubic, the target from `ramp` of the steps on', () => {
  assert.equal(rampTarget(0.5, 0, 100, 0.75), 0);
  assert.ok(Math.abs(rampTarget(0.5, 75, 100, 0.75) - 0.5) < 1e-12);
  assert.equal(rampTarget(0.5, 100, 100, 0.75), 0.5);
  const mid = rampTarget(0.5, 37.5, 100, 0.75);
  assert.ok(Math.abs(mid - 0.5 * (1 - 0.5 ** 3)) < 1e-12, `${mid}`);
});

test('proxPrune: blocks zeroed by the proximal steps, exactly the target after the cut, kept by the recovery, better than a one-shot cut', async (t) => {
  const bytes = net();
  const model = OnnxModel.parse(bytes);
  const samples = makeInputSet(model, { count: 32 });
  const evalSamples = makeInputSet(model, { count: 8, set: 'heldOut' });
  const progress = [];
  const rep = await proxPrune(model, samples, {
    ort: runner, evalSamples, kinds, sparsity: 0.5, block: [4, 4], epochs: 6, recoverEpochs: 2, lr: 3e-3, batchSize: 4,
    onProgress: (p) => progress.push(p),
  });
  // The proximal phase zeroed blocks by itself (before any cut).
  assert.ok(rep.reached >= 0.3, `blocks zero before the cut: ${rep.reached}`);
  assert.ok(progress.some((p) => p.phase === 'prox' && p.target > 0 && p.sparsity > 0));
  // Every layer at exactly 50% of its 4x4 blocks, in the caller's model (written at the end).
  for (const name of ['a.w', 'b.w', 'c.w']) {
    const { zero, all } = zeroBlocks(model, name);
    assert.equal(zero, all / 2, `${name}: ${zero}/${all} zero blocks`);
  }
  assert.ok(Math.abs(rep.projected.sparsity - 0.5) < 1e-9);
  assert.ok(rep.recovered, 'the masked recovery ran');
  assert.ok(rep.fidelity >= rep.projected.fidelity - 1e-9, `recovery kept the best: ${rep.projected.fidelity} -> ${rep.fidelity}`);
  // Against the one-shot magnitude cut at the same sparsity and block, measured the same way.
  const oneShot = OnnxModel.parse(bytes);
  pruneSparsity(oneShot, { sparsity: 0.5, block: [4, 4] });
  const ref = await runSet(runner, bytes, evalSamples);
  const cut = compareSets(ref, await runSet(runner, oneShot.encode(), evalSamples), { kinds }).fidelity.score;
  const ours = compareSets(ref, await runSet(runner, model.encode(), evalSamples), { kinds }).fidelity.score;
  t.diagnostic(`prox: zero before the cut ${rep.reached.toFixed(3)}, after the cut ${rep.projected.fidelity.toFixed(4)}, recovered ${rep.fidelity.toFixed(4)}; one-shot ${cut.toFixed(4)}; history ${JSON.stringify(rep.history.map((h) => [h.sparsity.toFixed(2), h.fidelity.toFixed(3)]))}`);
  assert.ok(Math.abs(ours - rep.fidelity) < 1e-6, `the report's fidelity is the model's: ${ours} vs ${rep.fidelity}`);
  assert.ok(ours > cut, `prox ${ours} <= one-shot ${cut}`);
});

test('proxPrune: an abort leaves the model as it was; bad options are refused before anything runs', async () => {
  const bytes = net();
  const model = OnnxModel.parse(bytes);
  const samples = makeInputSet(model, { count: 8 });
  const ac = new AbortController();
  await assert.rejects(proxPrune(model, samples, {
    ort: runner, kinds, sparsity: 0.5, epochs: 3, batchSize: 2, signal: ac.signal,
    onProgress: (p) => { if (p.phase === 'prox' && p.step >= 2) ac.abort(); },
  }), (e) => e instanceof CancelledError);
  assert.deepEqual(Buffer.from(model.encode()), Buffer.from(OnnxModel.parse(bytes).encode()), 'the model is untouched');
  await assert.rejects(proxPrune(model, samples, { ort: runner, sparsity: 1 }), /sparsity must be in \(0, 1\)/);
  await assert.rejects(proxPrune(model, samples, { ort: runner, sparsity: 0.5, block: [0, 4] }), /block must be two positive integers/);
  // An unknown loss is refused as recover refuses it (the same typed error), before any run.
  const phases = [];
  for (const fn of [(o) => proxPrune(model, samples, { ort: runner, sparsity: 0.5, ...o }), (o) => recover(model, model, samples, { ort: runner, ...o })]) {
    await assert.rejects(fn({ softmaxLoss: 'mse', epochs: 1, onProgress: (p) => phases.push(p.phase) }),
      (e) => e instanceof OnnxError && e.reason === 'bad_calibration' && e.code === 'invalid_value' && /softmaxLoss must be logits or kl \(got mse\)/.test(e.message));
  }
  assert.deepEqual(phases, [], 'refused before anything ran');
  assert.deepEqual(Buffer.from(model.encode()), Buffer.from(OnnxModel.parse(bytes).encode()), 'the model is untouched');
});

test('CLI prune --prox: writes the model at the target block sparsity; usage errors exit 2 with no file', () => {
  const dir = tmpDir('sk-prox-');
  const input = path.join(dir, 'net.onnx');
  fs.writeFileSync(input, net());
  const out = path.join(dir, 'out.onnx');
  const r = spawnSync(process.execPath, [CLI, 'prune', input, '-o', out, '--prox', '--sparsity', '0.5', '--block', '4x4', '--epochs', '2', '--calib-count', '16', '--batch', '4', '-q'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /cut to 50\.0% of 4x4 blocks/);
  const m = OnnxModel.parse(fs.readFileSync(out));
  for (const name of ['a.w', 'b.w', 'c.w']) { const { zero, all } = zeroBlocks(m, name); assert.equal(zero, all / 2, name); }
  for (const args of [['--sparsity', '1.5'], ['--sparsity', '0.5', '--block', '4by4'], ['--sparsity', '0.5', '--epochs', '0'], []]) {
    const out2 = path.join(dir, `bad-${args.join('_')}.onnx`);
    const b = spawnSync(process.execPath, [CLI, 'prune', input, '-o', out2, '--prox', ...args], { encoding: 'utf8' });
    assert.equal(b.status, 2, `${args}: ${b.stderr}`);
    assert.equal(b.stderr.trim().split('\n').length, 1, b.stderr);
    assert.ok(!fs.existsSync(out2));
  }
});

test('proxPrune, global scope: one threshold over the model, exactly the target share of all blocks, layers at different shares', async () => {
  const bytes = net();
  const model = OnnxModel.parse(bytes);
  const samples = makeInputSet(model, { count: 16 });
  const rep = await proxPrune(model, samples, { ort: runner, kinds, sparsity: 0.5, scope: 'global', epochs: 4, recoverEpochs: 1, lr: 3e-3, batchSize: 4 });
  const per = ['a.w', 'b.w', 'c.w'].map((n) => zeroBlocks(model, n));
  const zero = per.reduce((a, p) => a + p.zero, 0), all = per.reduce((a, p) => a + p.all, 0);
  assert.equal(zero, all / 2, `${zero}/${all} zero blocks over the model`);
  assert.ok(new Set(per.map((p) => p.zero / p.all)).size > 1, `layers keep different shares: ${JSON.stringify(per)}`);
  assert.ok(rep.reached > 0.3, `the proximal phase zeroed ${rep.reached}`);
});
