// Quantization held through recovery (quant/held-codes.ts, src/train/grid.rs): with `quantize` and
// `recover` in one job, the codes come first and recovery trains on their grids, so the written file
// is the model recovery judged — its held-out fidelity is recovery's final figure — and recovery
// raises the quantized model's fidelity; the pruning's zeros stay zero; the report says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import ort from 'onnxruntime-node';
import { build } from './build.mjs';

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
