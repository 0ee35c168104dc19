// Quantization held through recovery (quant/held-codes.ts, src/train/grid.rs): with `quantize` and
// `recover` in one job, the codes come first and recovery trains on their grids, so the written file
// is the model recovery judged — its held-out fidelity is recovery's final figure — and recovery
// raises the quantized model's fidelity; the pruning's zeros stay zero; the report says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { build, CLI } from './build.mjs';

build();
const O = await import('#onnx-internal');
const G = await import('./graphs.mjs');

const runner = O.makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });

async function job(bytes, extra) {
  const model = O.OnnxModel.parse(bytes);
  const calibration = O.makeInputSet(model, { count: 32 });
  const held = O.makeInputSet(model, { count: 8, set: 'heldOut' });
  const r = await O.runJob(model, {
    calibration: { samples: calibration }, eval: { samples: held }, recover: { epochs: 6, lr: 2e-3, batchSize: 4 }, ...extra,
  }, { ort: runner });
  return { ...r, held };
}

for (const [label, bytes, quantize] of [
  ['Conv layers at 4 bits per channel (int4-dq)', G.convNet({ size: 8 }), { scheme: 'int4' }],
  ['MatMul layers at 4 bits in blocks (MatMulNBits)', G.GRAPHS.mlp(), { scheme: 'int4', group: 16, int4MatMul: 'nbits' }],
]) {
  test(`quantize + recover: ${label}, joint SparseGPT 50%, the file is the recovered model`, async () => {
    const { model, report, held } = await job(bytes, { mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'sparsegpt', quantize });
    if (process.env.SK_SHOW) console.log(JSON.stringify({ q: report.quantize.layers.map((l) => [l.name, l.form, l.zeros, l.params, l.maxAbsError]), b: report.recover.before.score, a: report.recover.after.score, d: report.recover.distill?.history, f: report.fidelity.score }));
    assert.equal(report.quantize.heldThroughRecovery, true);
    assert.equal(report.quantize.gptq.pass, 'joint');
    const rec = report.recover;
    // training on the grids raised the quantized model's fidelity
    assert.ok(rec.after.score > rec.before.score, `recovery on the grids: ${rec.before.score} -> ${rec.after.score}`);
    // the written file, run by onnxruntime, is what recovery judged last
    const written = await O.heldOut(runner, O.OnnxModel.parse(bytes), held, {});
    const judged = await written.judge(O.OnnxModel.parse(model.encode()));
    assert.ok(Math.abs(judged.score - rec.after.score) < 1e-4, `written ${judged.score} vs recovered ${rec.after.score}`);
    assert.equal(report.fidelity.score, judged.score);
    for (const l of report.quantize.layers.filter((x) => x.form !== 'float')) {
      assert.ok(l.zeros >= 0.5 * l.params - 2, `${l.name}: ${l.zeros} zeros of ${l.params}`);
      assert.equal(l.maxAbsError, 0, `${l.name}: the trained values are its codes`);
    }
  });
}

// A quantized model as input, pruned and recovered: its weights go back to their own forms, held on
// those grids while recovery trains (before: recovered in float, then rounded again, which the
// written file's fidelity would show as a drop below recovery's last figure).
for (const [label, bytes, quantize] of [
  ['int8 per channel (Conv, DequantizeLinear form)', G.convNet({ size: 8 }), { scheme: 'int8' }],
  ['4-bit blocks (MatMulNBits)', G.GRAPHS.mlp(), { scheme: 'int4', group: 16, int4MatMul: 'nbits' }],
]) {
  test(`a quantized input (${label}), 50% and recovered: written in its own forms, the file is the recovered model`, async () => {
    const q = O.OnnxModel.parse(bytes);
    const forms = new Map(O.quantizeModel(q, quantize).layers.filter((l) => l.form !== 'float').map((l) => [l.name, l.form]));
    assert.ok(forms.size > 0);
    const input = q.encode();
    const { model, report, held } = await job(input, { mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'sparsegpt' });
    assert.equal(report.quantize.source, 'input');
    assert.equal(report.quantize.heldThroughRecovery, true);
    const rec = report.recover;
    assert.ok(rec.after.score > rec.before.score, `recovery on the grids: ${rec.before.score} -> ${rec.after.score}`);
    // the reference is the quantized input; the written file scores what recovery judged last
    const written = await O.heldOut(runner, O.OnnxModel.parse(input), held, {});
    const judged = await written.judge(O.OnnxModel.parse(model.encode()));
    assert.ok(Math.abs(judged.score - rec.after.score) < 1e-4, `written ${judged.score} vs recovered ${rec.after.score}`);
    const out = report.quantize.layers.filter((x) => x.form !== 'float');
    assert.deepEqual(new Map(out.map((l) => [l.name, l.form])), forms, 'each layer in the form it came in');
    for (const l of out) {
      assert.ok(l.zeros >= 0.5 * l.params - 2, `${l.name}: ${l.zeros} zeros of ${l.params}`);
      assert.equal(l.maxAbsError, 0, `${l.name}: the trained values are its codes`);
    }
  });
}

// recover() on a quantized student (a file pruned and quantized earlier, the original as teacher):
// it stays in its forms, trained on their grids; the float original is the teacher.
test('recover() of a quantized pruned student keeps its forms and trains on their grids; a float student gets no quantize report', async () => {
  const bytes = G.GRAPHS.mlp();
  const teacher = O.OnnxModel.parse(bytes);
  const calibration = O.makeInputSet(teacher, { count: 32 });
  const held = O.makeInputSet(teacher, { count: 8, set: 'heldOut' });
  const student = O.OnnxModel.parse(bytes);
  await O.runJob(student, { mode: { kind: 'sparsity', sparsity: 0.5 }, quantize: { scheme: 'int4', group: 16, int4MatMul: 'nbits', method: 'rtn' } }, { ort: runner });
  const kinds = (m) => O.detectQuantized(m).sites.map((s) => s.kind).sort();
  const forms = kinds(student);
  assert.ok(forms.length > 0);
  const report = await O.recover(student, teacher, calibration, { ort: runner, evalSamples: held, epochs: 6, lr: 2e-3, batchSize: 4, steps: ['distill'] });
  assert.ok(report.after.score > report.before.score, `recovery on the grids: ${report.before.score} -> ${report.after.score}`);
  assert.deepEqual(kinds(student), forms, 'the same forms');
  for (const l of report.quantize.layers.filter((x) => x.form !== 'float')) {
    assert.equal(l.form, 'int4-nbits');
    assert.equal(l.maxAbsError, 0, `${l.name}: the trained values are its codes`);
    assert.ok(l.zeros >= 0.5 * l.params - 2, `${l.name}: ${l.zeros} zeros of ${l.params}`);
  }
  const judged = await (await O.heldOut(runner, teacher, held, {})).judge(O.OnnxModel.parse(student.encode()));
  assert.ok(Math.abs(judged.score - report.after.score) < 1e-4, `written ${judged.score} vs recovered ${report.after.score}`);
  // a float student is recover/'s own: no quantize report
  const plain = O.OnnxModel.parse(bytes);
  O.pruneSparsity(plain, { sparsity: 0.5 });
  assert.equal((await O.recover(plain, teacher, calibration, { ort: runner, evalSamples: held, epochs: 1, steps: ['distill'] })).quantize, undefined);
});

test('CLI: recover of a quantized pruned file writes it in its forms again and says so', async () => {
  const dir = G.tmpDir('sk-qrec-');
  const t = path.join(dir, 't.onnx'), p = path.join(dir, 'p.onnx'), out = path.join(dir, 'out.onnx');
  const bytes = G.GRAPHS.mlp();
  const student = O.OnnxModel.parse(bytes);
  await O.runJob(student, { mode: { kind: 'sparsity', sparsity: 0.5 }, quantize: { scheme: 'int4', group: 16, int4MatMul: 'nbits', method: 'rtn' } }, { ort: runner });
  fs.writeFileSync(t, bytes); fs.writeFileSync(p, student.encode());
  const r = spawnSync(process.execPath, [CLI, 'recover', p, '--teacher', t, '-o', out, '--calib-count', '16', '--eval', 'synthetic', '--eval-count', '4', '--epochs', '2', '--lr', '2e-3', '--batch', '4', '-q'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /quantized again in the input's forms: \d+ x int4-nbits; recovery trained on their grids/);
  const kinds = (m) => O.detectQuantized(m).sites.map((s) => s.kind).sort();
  assert.deepEqual(kinds(O.OnnxModel.parse(fs.readFileSync(out))), kinds(student));
});
