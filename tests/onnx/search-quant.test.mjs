// The mixed search (issue 39, item 6): with quantization on, the sensitivity table also measures each
// layer dense and pruned at the job's bits and each embedding table at its bits, each cell with its
// fidelity and the served bytes of the tensors its form stores; the allocation picks one option per
// unit; the plan is a recipe with per-layer `quantize`, quantized and verified as written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import ort from 'onnxruntime-node';
import { build, CLI } from './build.mjs';
import { tinyDecoder } from './text-models.mjs';
import * as G from './graphs.mjs';

build();
const O = await import('#onnx-internal');
const { OnnxModel, sensitivity, compress, allocate, byteSizer, makeOrtRunner, makeInputSet, runJob, runSet, fidelity } = O;
const runner = () => makeOrtRunner(ort, { intraOpNumThreads: 1 });
const lm = () => tinyDecoder({ dim: 64, vocab: 300 });

test('allocate: costs rise along each chain of bits, not across them (a cheap int4 cell after costly float levels stays cheap)', () => {
  const cell = (level, fid, bytes, quantize) => ({ level, fidelity: fid, worst: 'y', removed: level === 'dense' ? 0 : 10, flops: 0, bytes, cosineLoss: 0, ...(quantize ? { quantize } : {}) });
  const table = { mode: 'sparsity', method: 'magnitude', levels: [0.5], baseline: 1, samples: 1, sessions: 0, runs: 0, ms: {},
    units: [{ name: 'a', op: 'MatMul', params: 10, cells: [cell(0.5, 0.5, 10), cell('dense', 0.999, 300, 'int4')] }] };
  // the int4 cell lost 0.001 alone: within a budget of 0.01 it is chosen (a running max over all cells would price it at 0.5)
  assert.deepEqual(allocate(table, 0.01, 'bytes').choice, [1]);
  // a quantized cell that removes no parameter still gains its bytes; under the params objective it gains nothing
  assert.deepEqual(allocate(table, 0.01, 'params').choice, [-1]);
});

test('sensitivity with quantize: dense and level cells at the bits, tables as units, bytes of the stored form', async () => {
  const model = OnnxModel.parse(lm());
  const set = makeInputSet(model, { count: 4, seed: 5 });
  const t = await sensitivity(model, { ort: runner(), eval: set, mode: 'sparsity', levels: [0.25, 0.5], measureBytes: await byteSizer(), quantize: { scheme: 'int4' } });
  const by = Object.fromEntries(t.units.map((u) => [u.name, u]));
  assert.deepEqual(Object.keys(by).sort(), ['head', 'pos', 'tok', 'w1']);
  assert.ok(by.tok.table && by.pos.table && by.tok.op === 'Gather');
  assert.deepEqual(by.tok.cells.map((c) => `${c.level}/${c.quantize}`), ['dense/int8', 'dense/int4']);
  // a layer: its float levels, dense at 8 bits, dense and each level at 4 bits (within 3x the float cells and one)
  assert.deepEqual(by.w1.cells.map((c) => `${c.level}/${c.quantize ?? 'float'}`), ['0.25/float', '0.5/float', 'dense/int8', 'dense/int4', '0.25/int4', '0.5/int4']);
  for (const u of t.units) {
    for (const c of u.cells.filter((x) => x.quantize)) {
      assert.ok(c.bytes > 0, `${u.name} ${c.level} ${c.quantize}: saves bytes`);
      assert.ok(c.fidelity <= 1 && c.fidelity >= 0);
    }
    const q = Object.fromEntries(u.cells.filter((c) => c.level === 'dense').map((c) => [c.quantize, c]));
    // 4-bit codes save more than 8-bit ones, and cost more fidelity (or the same)
    assert.ok(q.int4.bytes > q.int8.bytes, `${u.name}: ${q.int4.bytes} > ${q.int8.bytes}`);
    assert.ok(q.int4.cosineLoss >= q.int8.cosineLoss, u.name);
  }
  // the int8 scheme: no 4-bit cells
  const t8 = await sensitivity(model, { ort: runner(), eval: set, mode: 'sparsity', levels: [0.5], measureBytes: await byteSizer(), quantize: { scheme: 'int8' } });
  assert.ok(t8.units.every((u) => u.cells.every((c) => c.quantize !== 'int4')));
  assert.deepEqual(t8.units.find((u) => u.name === 'w1').cells.map((c) => `${c.level}/${c.quantize ?? 'float'}`), ['0.5/float', 'dense/int8', '0.5/int8']);
  await assert.rejects(sensitivity(model, { ort: runner(), eval: set, mode: 'channels', quantize: { scheme: 'int8' } }), /quantized cells/);
});

test('compress with quantize: a plan of per-layer bits that meets the floor, verified as written; its recipe gives the same model again', async () => {
  const bytes = lm();
  const model = OnnxModel.parse(bytes);
  const set = makeInputSet(model, { count: 6, seed: 9 });
  const F = 0.8;
  const res = await compress(model, { ort: runner(), eval: set, mode: 'sparsity', levels: [0.25, 0.5], minFidelity: F, objective: 'bytes', quantize: { options: { scheme: 'int4' } } });
  assert.ok(res.model && res.quantized, 'a plan met the floor');
  const layers = res.recipe.layers;
  assert.deepEqual(res.recipe.default, { quantize: 'float' });
  for (const s of Object.values(layers)) assert.ok(['int8', 'int4', 'float'].includes(s.quantize), JSON.stringify(s));
  assert.ok(Object.values(layers).some((s) => s.quantize !== 'float'), 'something is quantized');
  // the written forms are the plan's bits
  for (const l of res.quantized.report.layers) {
    const want = layers[l.name]?.quantize ?? 'float';
    assert.equal(l.form === 'float' ? 'float' : l.form.startsWith('int4') ? 'int4' : 'int8', want, l.name);
  }
  // verified independently: the quantized model's fidelity in a session of its own
  const ref = await runSet(runner(), bytes, set);
  const f = fidelity(ref, await runSet(runner(), res.model.encode(), set), { inputs: set }).score;
  assert.ok(Math.abs(f - res.fidelity.score) < 1e-6 && f >= F, `independent fidelity ${f}`);
  // the recipe applied by a job with the same quantization writes the same bytes
  const again = OnnxModel.parse(bytes);
  await runJob(again, { mode: { kind: 'recipe', recipe: res.recipe }, quantize: { scheme: 'int4', method: 'rtn' } }, {});
  assert.deepEqual(again.encode(), res.model.encode());
  await assert.rejects(compress(model, { ort: runner(), eval: set, mode: 'sparsity', minFidelity: F, quantize: { options: { scheme: 'int4' } } }), /objective bytes/);
});

test('runJob: a bytes search with quantize is the mixed search; the report says each layer\'s choice; recovery is refused with it', async () => {
  const bytes = lm();
  const model = OnnxModel.parse(bytes);
  const set = makeInputSet(model, { count: 6, seed: 9 });
  const { model: out, report } = await runJob(model, {
    mode: { kind: 'search', target: 'sparsity', minFidelity: 0.8, levels: [0.5], objective: 'bytes' }, eval: { samples: set }, quantize: { scheme: 'int8' },
  }, { ort });
  assert.equal(report.quantize.source, 'asked');
  const labels = Object.values(report.prune.recipe.settings);
  assert.ok(labels.every((l) => /^(float|int8|sparsity 0\.5\+(int8|float))$/.test(l)), labels.join());
  assert.ok(report.fidelity.score >= 0.8);
  assert.ok(out.graph.node.some((n) => n.op_type !== 'MatMul'));
  await assert.rejects(runJob(OnnxModel.parse(bytes), {
    mode: { kind: 'search', target: 'sparsity', minFidelity: 0.8, objective: 'bytes' }, eval: { samples: set }, calibration: { samples: set }, quantize: { scheme: 'int8' }, recover: true,
  }, { ort }), (e) => e.option === 'recover');
});

test('CLI: prune --min-fidelity --objective bytes --quantize int4 is the mixed search; it prints each layer\'s choice and --recipe of its report writes it again', () => {
  const dir = G.tmpDir('sk-mixq-');
  const file = path.join(dir, 'm.onnx');
  fs.writeFileSync(file, lm());
  const report = path.join(dir, 'r.json');
  const r = spawnSync(process.execPath, [CLI, 'prune', file, '-o', path.join(dir, 'o.onnx'), '--sparsity', 'auto', '--min-fidelity', '0.8',
    '--objective', 'bytes', '--quantize', 'int4', '--eval', 'synthetic', '--levels', '0.5', '--report', report], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /recipe \(weights, magnitude\): .*(int4|int8|float)/);
  assert.match(r.stdout, /tok +(int8|int4|float)/);
  const rep = JSON.parse(fs.readFileSync(report, 'utf8'));
  assert.ok(Object.values(rep.search.recipe.layers).every((s) => s.quantize));
  const again = spawnSync(process.execPath, [CLI, 'prune', file, '-o', path.join(dir, 'again.onnx'), '--recipe', report, '--quantize', 'int4'], { encoding: 'utf8' });
  assert.equal(again.status, 0, again.stderr);
  assert.deepEqual(fs.readFileSync(path.join(dir, 'again.onnx')), fs.readFileSync(path.join(dir, 'o.onnx')));
});
