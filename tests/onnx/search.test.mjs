// Compression to a fidelity floor: the allocation is the optimum of its knapsack (checked against
// brute force), the chosen plan's fidelity is verified (recomputed here independently) and meets the
// floor, and the saved recipe applied with `prune --recipe` gives the same model.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { build, CLI } from './build.mjs';
import { writeNpy } from './npy.mjs';

build();
const O = await import('#onnx-internal');
const G = await import('./graphs.mjs');

let dir, evalDir;
before(() => {
  dir = G.tmpDir('sk-search-');
  evalDir = path.join(dir, 'eval');
  fs.mkdirSync(evalDir);
  const r = G.rng(11);
  for (let i = 0; i < 6; i++) writeNpy(path.join(evalDir, `e${i}.npy`), Float32Array.from({ length: 4 * 64 }, () => r()), [1, 4, 8, 8]);
});
const runner = () => O.makeOrtRunner(ort, { intraOpNumThreads: 1 });

test('allocate: the largest gain within the budget (brute force on small tables)', () => {
  const r = G.rng(4);
  for (let trial = 0; trial < 40; trial++) {
    const levels = [0.25, 0.5, 0.75];
    const units = Array.from({ length: 4 }, (_, u) => ({
      name: `u${u}`, op: 'Conv', params: 100,
      cells: levels.map((level, k) => ({ level, fidelity: 1 - Math.abs(r()) * 0.02 * (k + 1), worst: 'y', removed: Math.round(100 * level * (1 + Math.abs(r()))), flops: 0 })),
    }));
    const table = { mode: 'sparsity', method: 'magnitude', levels, units, baseline: 1, samples: 1, sessions: 0, runs: 0, ms: {} };
    const budget = Math.abs(r()) * 0.05;
    const a = O.allocate(table, budget, 'params', 4000);
    // Brute force over every combination, with the costs as allocate sees them (non-decreasing per unit).
    const cost = units.map((u) => { let w = 0; return u.cells.map((c) => (w = Math.max(w, 1 - c.fidelity))); });
    let best = 0;
    const rec = (i, c, g) => {
      if (c > budget + 1e-12) return;
      if (i === units.length) { best = Math.max(best, g); return; }
      rec(i + 1, c, g);
      units[i].cells.forEach((cell, k) => rec(i + 1, c + cost[i][k], g + cell.removed));
    };
    rec(0, 0, 0);
    assert.ok(a.cost <= budget + 1e-9, `within budget: ${a.cost} <= ${budget}`);
    const got = a.choice.reduce((s, k, i) => s + (k >= 0 ? units[i].cells[k].removed : 0), 0);
    assert.equal(got, a.gain);
    // Costs are rounded up to budget/4000 steps: the optimum may lose a combination right at the edge.
    assert.ok(got >= best * 0.97, `gain ${got} vs optimum ${best}`);
  }
});

test('compress: the plan meets the floor (verified independently) and its recipe gives the same model', async () => {
  const bytes = G.residual();
  const model = O.OnnxModel.parse(bytes);
  const set = await O.readCalibrationDir(evalDir, model);
  const F = 0.9;
  const res = await O.compress(model, { ort: runner(), eval: set, mode: 'sparsity', levels: [0.25, 0.5, 0.75, 0.9], minFidelity: F });
  assert.ok(res.model, 'a plan met the floor');
  assert.ok(res.fidelity.score >= F);
  assert.ok(res.steps.some((s) => s.pass));
  for (const s of res.steps) assert.equal(s.pass, s.fidelity >= F);
  // Independent: the recipe applied to a fresh copy, run in its own session.
  const again = O.OnnxModel.parse(bytes);
  await O.applyRecipe(again, res.recipe);
  for (const w of again.prunable()) assert.deepEqual(Array.from(again.readFloat(w)), Array.from(res.model.readFloat(res.model.weight(w.name))), w.name);
  const ref = await O.runSet(runner(), bytes, set);
  const out = await O.runSet(runner(), again.encode(), set);
  const f = O.fidelity(ref, out).score;
  assert.ok(Math.abs(f - res.fidelity.score) < 1e-4 && f >= F, `independent fidelity ${f}`);
  // The chosen plan removes at least what the best uniform level meeting the floor removes
  // (a uniform plan is one of the allocations the search can reach only approximately, so this is a check on this graph).
  assert.ok(res.report.zeros > 0);
  // The input model is untouched.
  assert.deepEqual(Array.from(model.readFloat(model.weight('A.w'))), Array.from(O.OnnxModel.parse(bytes).readFloat(O.OnnxModel.parse(bytes).weight('A.w'))));
});

test('compress with channels: removes channels, meets the floor; latency objective needs channels', async () => {
  const bytes = G.residual();
  const model = O.OnnxModel.parse(bytes);
  const set = await O.readCalibrationDir(evalDir, model);
  const res = await O.compress(model, { ort: runner(), eval: set, mode: 'channels', levels: [0.25, 0.5], roundTo: 1, minFidelity: 0.5, maxSteps: 4 });
  if (res.model) {
    assert.ok(res.fidelity.score >= 0.5);
    assert.ok(res.report.params.after <= res.report.params.before);
  } else assert.ok(res.steps.every((s) => !s.pass));
  await assert.rejects(O.compress(model, { ort: runner(), eval: set, mode: 'sparsity', objective: 'latency', minFidelity: 0.9 }), /latency needs channel removal/);
  await assert.rejects(O.compress(model, { ort: runner(), eval: set, mode: 'sparsity', minFidelity: 1.5 }), /minFidelity/);
  await assert.rejects(O.compress(model, { ort: runner(), eval: set, mode: 'sparsity', minFidelity: 0.9, tableSamples: 0 }), /tableSamples/);
});

test('compress with tableSamples: the table on the first N eval samples, every plan verified on all of them', async () => {
  const bytes = G.residual();
  const model = O.OnnxModel.parse(bytes);
  const set = await O.readCalibrationDir(evalDir, model);
  const F = 0.9;
  const res = await O.compress(model, { ort: runner(), eval: set, mode: 'sparsity', levels: [0.25, 0.5, 0.75, 0.9], minFidelity: F, tableSamples: 2 });
  assert.equal(res.table.samples, 2);
  assert.equal(res.fidelity.samples, set.length);
  const alone = await O.sensitivity(model, { ort: runner(), eval: set.slice(0, 2), mode: 'sparsity', levels: [0.25, 0.5, 0.75, 0.9], stopBelow: Math.max(0, 2 * F - 1 - 0.05) });
  assert.deepEqual(res.table.units.map((u) => u.cells.map((c) => c.fidelity)), alone.units.map((u) => u.cells.map((c) => c.fidelity)));
  if (res.model) {
    const ref = await O.runSet(runner(), bytes, set);
    const f = O.fidelity(ref, await O.runSet(runner(), res.model.encode(), set)).score;
    assert.ok(f >= F && Math.abs(f - res.fidelity.score) < 1e-4, `independent fidelity on all ${set.length} samples: ${f}`);
  }
});

test('compress with confidence: the floor is held to the lower bound of each output\'s fidelity', async () => {
  const bytes = G.residual();
  const model = O.OnnxModel.parse(bytes);
  const set = await O.readCalibrationDir(evalDir, model);
  const ref = await O.runSet(runner(), bytes, set);
  const name = Object.keys(ref[0])[0];
  // The output read as class scores along its last axis: a share of counted rows, which the bound applies to.
  const fidelityOptions = { kinds: { [name]: 'classification' } };
  const F = 0.8, confidence = 0.9;
  const res = await O.compress(model, { ort: runner(), eval: set, mode: 'sparsity', levels: [0.25, 0.5, 0.75, 0.9], minFidelity: F, confidence, fidelityOptions });
  for (const s of res.steps) {
    assert.ok(s.bound <= s.fidelity, `bound ${s.bound} <= fidelity ${s.fidelity}`);
    assert.equal(s.pass, s.bound >= F);
  }
  if (res.model) {
    const out = await O.runSet(runner(), res.model.encode(), set);
    const f = O.fidelity(ref, out, fidelityOptions);
    const rows = f.outputs[0].decisions;
    assert.ok(rows > 0);
    assert.ok(Math.abs(res.bound.score - O.wilsonLower(f.score, rows, confidence)) < 1e-9 && res.bound.score >= F);
    assert.equal(res.recipe.meta.confidence, confidence);
    assert.equal(res.recipe.meta.fidelityBound, res.bound.score);
  }
  // The same floor without the bound keeps a plan at least as large.
  const plain = await O.compress(model, { ort: runner(), eval: set, mode: 'sparsity', levels: [0.25, 0.5, 0.75, 0.9], minFidelity: F, fidelityOptions, table: res.table });
  assert.equal(plain.bound, null);
  if (res.model) assert.ok(plain.report.zeros >= res.report.zeros);
  await assert.rejects(O.compress(model, { ort: runner(), eval: set, mode: 'sparsity', minFidelity: F, confidence: 1, table: res.table }), /confidence must be in \(0, 1\)/);
});

test('CLI: prune --sparsity auto --min-fidelity … --report, then prune --recipe of that report gives the same weights', async () => {
  const input = path.join(dir, 'residual.onnx');
  fs.writeFileSync(input, G.residual());
  const out1 = path.join(dir, 'auto.onnx'), out2 = path.join(dir, 'again.onnx'), recipe = path.join(dir, 'plan.json');
  const r = spawnSync(process.execPath, [CLI, 'prune', input, '-o', out1, '--sparsity', 'auto', '--levels', '0.25,0.5,0.75', '--min-fidelity', '0.9', '--eval', evalDir, '--report', recipe, '-q'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /chosen plan: fidelity (\S+)/);
  assert.ok(Number(/chosen plan: fidelity (\S+)/.exec(r.stdout)[1]) >= 0.9);
  const plan = JSON.parse(fs.readFileSync(recipe, 'utf8')).search.recipe;
  assert.equal(plan.sparsekit, 'recipe/1');
  assert.equal(plan.meta.minFidelity, 0.9);
  const r2 = spawnSync(process.execPath, [CLI, 'prune', input, '-o', out2, '--recipe', recipe, '-q'], { encoding: 'utf8' });
  assert.equal(r2.status, 0, r2.stderr);
  const a = await O.loadOnnx(out1), b = await O.loadOnnx(out2);
  for (const w of a.prunable()) assert.deepEqual(Array.from(a.readFloat(w)), Array.from(b.readFloat(b.weight(w.name))), w.name);
  // Usage errors: auto without --min-fidelity's partner, a number instead of auto.
  const bad = spawnSync(process.execPath, [CLI, 'prune', input, '-o', path.join(dir, 'x.onnx'), '--sparsity', '0.5', '--min-fidelity', '0.9', '--eval', evalDir], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /takes "auto"/);
  assert.ok(!fs.existsSync(path.join(dir, 'x.onnx')));
  // --table-samples: the table on the first N eval samples (the report says so), plans verified on all.
  const rep = path.join(dir, 'rep.json');
  const r3 = spawnSync(process.execPath, [CLI, 'prune', input, '-o', path.join(dir, 'few.onnx'), '--sparsity', 'auto', '--levels', '0.25,0.5', '--min-fidelity', '0.9', '--eval', evalDir, '--table-samples', '2', '--report', rep, '-q'], { encoding: 'utf8' });
  assert.equal(r3.status, 0, r3.stderr);
  const j = JSON.parse(fs.readFileSync(rep, 'utf8'));
  assert.equal(j.search.table.samples, 2);
  assert.ok(j.fidelity.samples > 2);
  const bad2 = spawnSync(process.execPath, [CLI, 'prune', input, '-o', path.join(dir, 'y.onnx'), '--sparsity', 'auto', '--min-fidelity', '0.9', '--eval', evalDir, '--table-samples', '0'], { encoding: 'utf8' });
  assert.equal(bad2.status, 2);
  // --confidence: every step and the chosen plan report the bound the floor was held to (a generic
  // output: no counted decisions, so the bound is the measured score), and the recipe records it.
  const rc = path.join(dir, 'conf.json');
  const r4 = spawnSync(process.execPath, [CLI, 'prune', input, '-o', path.join(dir, 'conf.onnx'), '--sparsity', 'auto', '--levels', '0.25,0.5', '--min-fidelity', '0.9', '--eval', evalDir, '--confidence', '0.9', '--report', rc, '-q'], { encoding: 'utf8' });
  assert.equal(r4.status, 0, r4.stderr);
  assert.match(r4.stdout, /lower bound \S+ \(\S+\) at 0\.9 (meets|below) 0\.9/);
  const m4 = /chosen plan: fidelity (\S+), its lower bound at confidence 0\.9 (\S+)/.exec(r4.stdout);
  assert.ok(m4 && Number(m4[2]) === Number(m4[1]) && Number(m4[2]) >= 0.9, r4.stdout);
  const plan4 = JSON.parse(fs.readFileSync(rc, 'utf8')).search.recipe;
  assert.equal(plan4.meta.confidence, 0.9);
  const bad3 = spawnSync(process.execPath, [CLI, 'prune', input, '-o', path.join(dir, 'z.onnx'), '--sparsity', 'auto', '--min-fidelity', '0.9', '--eval', evalDir, '--confidence', '95'], { encoding: 'utf8' });
  assert.equal(bad3.status, 2);
  assert.match(bad3.stderr, /--confidence must be in \(0, 1\)/);
  assert.ok(!fs.existsSync(path.join(dir, 'z.onnx')));
  assert.ok(!fs.existsSync(path.join(dir, 'y.onnx')));
});
