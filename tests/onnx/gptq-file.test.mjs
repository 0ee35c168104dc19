// GPTQ in the file quantizer (issue 39), on the committed SmolLM2-shaped decoder
// (tests/data/models/smollm2-tiny.onnx) and real text: the job's quantize step compensates each
// layer through its Hessian, layer after layer, and writes the same MatMulNBits / integer forms;
// its calibration error is below round-to-nearest's on the same passes; the codes in the file are
// the solver's; pruned zeros stay exact zeros (joint SparseGPT, and GPTQ after magnitude pruning);
// the 4-bit embedding table computes what its dequantized rows say; refusals are typed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import ort from 'onnxruntime-node';
import { build, CLI, ROOT } from './build.mjs';

build();
const O = await import('#onnx-internal');
const { OnnxModel, OnnxError, JobError, runJob, quantizeModel, dequantizeModel, plannedGrids, calibratePrune, rtnQuantize, dequantizeView, pruneSparsity, textSamples } = O;
const G = await import('./graphs.mjs');

const MODEL = path.join(ROOT, 'tests/data/models/smollm2-tiny.onnx');
const TOKENIZER = path.join(ROOT, 'tests/data/tokenizers/smollm2-135m.json');
const bytes = fs.readFileSync(MODEL);
const lines = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/data/text/lines.json'), 'utf8'));
const tokenizer = JSON.parse(fs.readFileSync(TOKENIZER, 'utf8'));
const m0 = OnnxModel.parse(bytes);
const samples = (from, to, n) => textSamples({ text: lines.slice(from, to).join('\n'), tokenizer, seqLen: 32, inputs: m0.inputs, outputs: m0.outputs, limit: n }).samples;
const calib = samples(0, 300, 16);
const held = samples(500, 800, 4);
const env = { ort, sessionOptions: { logSeverityLevel: 3 } };

async function logits(modelBytes, set = held) {
  const s = await ort.InferenceSession.create(modelBytes, { logSeverityLevel: 3 });
  const out = [];
  for (const { feeds } of set) {
    const f = {};
    for (const [k, v] of Object.entries(feeds)) f[k] = new ort.Tensor(v.type, v.data, v.dims);
    out.push((await s.run(f)).logits.data);
  }
  await s.release?.();
  return out;
}

/** The float weights a quantized file stands for, by original weight name (dequantizeModel's view). */
function readBack(modelBytes) {
  const m = OnnxModel.parse(modelBytes);
  const rec = dequantizeModel(m);
  return { m, rec, values: new Map(m.prunable().map((w) => [w.name, m.readFloat(w)])) };
}

/** Per-layer codes of a calibrated quantize-only pass (GPTQ or round-to-nearest) over `modelBytes`. */
async function pass(modelBytes, set, grids, method) {
  const rep = await calibratePrune(OnnxModel.parse(modelBytes), { ...env, calibration: set, quantize: { grids, method } });
  assert.equal(rep.quantized.size, grids.size);
  return rep.quantized;
}

test('GPTQ beats round-to-nearest on each layer\'s calibration error, on the same sequential passes (BERT export, 64- and 256-input layers)', async () => {
  const bert = fs.readFileSync(path.join(ROOT, 'tests/data/models/bert-torch.onnx'));
  const set = O.makeInputSet(OnnxModel.parse(bert), { count: 32 });
  for (const opts of [{ scheme: 'int4', group: 32 }, { scheme: 'int8' }]) {
    const grids = plannedGrids(OnnxModel.parse(bert), opts);
    assert.ok(grids.size >= 12, `${grids.size} weights planned`);
    const [rtn, gptq] = [await pass(bert, set, grids, 'rtn'), await pass(bert, set, grids, 'gptq')];
    let better = 0, sumG = 0, sumR = 0;
    for (const [name, g] of gptq) {
      const r = rtn.get(name);
      assert.equal(g.method, 'gptq', `${name}: ${g.notes}`);
      assert.equal(r.method, 'rtn');
      sumG += g.relError; sumR += r.relError;
      if (g.relError < r.relError) better++;
    }
    const label = JSON.stringify(opts);
    assert.ok(sumG < 0.8 * sumR, `${label}: GPTQ's calibration error ${sumG.toFixed(4)} against round-to-nearest's ${sumR.toFixed(4)}`);
    assert.ok(better >= 0.9 * gptq.size, `${label}: GPTQ lower on ${better} of ${gptq.size} layers`);
  }
});

test('GPTQ through the file path: the job writes MatMulNBits holding the solver\'s codes, and the file runs', async () => {
  const grids = plannedGrids(m0, { scheme: 'int4', group: 16 });
  assert.ok(grids.size >= 14, `${grids.size} MatMul weights planned`);
  const errs = { gptq: await pass(bytes, calib, grids, 'gptq') };

  // The job: its quantize step runs the same solver and writes MatMulNBits (a language model's default
  // int4 form) with exactly those codes.
  const m = OnnxModel.parse(bytes);
  const { report } = await runJob(m, { mode: { kind: 'sparsity', sparsity: 0 }, calibration: { samples: calib }, quantize: { scheme: 'int4', group: 16 } }, env);
  assert.deepEqual(report.quantize.gptq && report.quantize.gptq.pass, 'after');
  const gq = report.quantize.layers.filter((l) => l.form === 'int4-nbits');
  assert.equal(gq.length, grids.size);
  assert.ok(gq.every((l) => l.method === 'gptq' && l.relError > 0), JSON.stringify(gq.map((l) => [l.name, l.method, l.relError])));
  const file = m.encode();
  const { values } = readBack(file);
  for (const [name, c] of errs.gptq) {
    const w = m0.weight(name);
    // The solver's codes times its scales rounded to float16, as the file stores them (quant/half-scales.ts).
    const want = dequantizeView({ ...c.qv, scales: O.halfArrayToFloat(O.floatArrayToHalf(c.qv.scales)) }); // view layout: rows = N, cols = K
    const got = values.get(name); // stored (K, N)
    const [k, n] = w.dims;
    for (let r = 0; r < n; r++) for (let j = 0; j < k; j++) assert.equal(got[j * n + r], want[r * k + j], `${name}[${j}, ${r}]`);
  }
  // It runs in onnxruntime-node and stays closer to the float model than round-to-nearest's file.
  const rtn = OnnxModel.parse(bytes);
  const rr = await runJob(rtn, { mode: { kind: 'sparsity', sparsity: 0 }, quantize: { scheme: 'int4', group: 16 } }, env);
  assert.equal(rr.report.quantize.gptq, undefined);
  assert.ok(rr.report.quantize.layers.every((l) => l.method === 'rtn'));
  const [ref, outG, outR] = [await logits(bytes), await logits(file), await logits(rtn.encode())];
  const cos = (outs) => outs.reduce((a, o, i) => a + G.cosine(ref[i], o), 0) / outs.length;
  assert.ok(outG.every((o) => o.every(Number.isFinite)));
  assert.ok(cos(outG) > 0.9, `GPTQ logits cosine ${cos(outG)}`);
  assert.ok(cos(outR) > 0.5, `round-to-nearest logits cosine ${cos(outR)}`);
});

test('pruned zeros stay exact zeros: joint SparseGPT 50% and 2:4 with int4, GPTQ after magnitude pruning, int8', async () => {
  for (const [label, job] of [
    ['joint 50%', { mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'sparsegpt', quantize: { scheme: 'int4', group: 16 } }],
    ['joint 2:4', { mode: { kind: 'nm', nm: [2, 4] }, method: 'sparsegpt', quantize: { scheme: 'int4', group: 16 } }],
    ['magnitude then GPTQ', { mode: { kind: 'sparsity', sparsity: 0.5 }, quantize: { scheme: 'int4', group: 16 } }],
    ['int8 after wanda', { mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'wanda', quantize: { scheme: 'int8' } }],
  ]) {
    const m = OnnxModel.parse(bytes);
    const { report } = await runJob(m, { ...job, calibration: { samples: calib } }, env);
    assert.equal(report.quantize.gptq.pass, job.method === 'sparsegpt' ? 'joint' : 'after', label);
    const file = m.encode();
    const { values } = readBack(file);
    // the language-model head stays dense (the job's default, as SparseGPT and Wanda leave it): quantized, not pruned
    const head = new Set(report.keptDense.map((k) => k.name));
    assert.equal(head.size, 1, label);
    // ... and compensated like every other layer, in the joint pass too (not rounded to nearest).
    const headQ = report.quantize.layers.find((l) => head.has(l.name));
    assert.equal(headQ.method, 'gptq', `${label}: the head is quantized by ${headQ.method}`);
    if (job.method === 'sparsegpt') assert.ok(!report.prune.layers.some((l) => head.has(l.name)), `${label}: the pruning's report lists only what it pruned`);
    for (const [name, v] of values) {
      if (!name.startsWith('onnx::MatMul') || head.has(name)) continue;
      const w = m0.weight(name);
      const [k, n] = w.dims;
      let zeros = 0;
      for (const x of v) if (x === 0) zeros++;
      assert.ok(zeros >= v.length / 2, `${label} ${name}: ${zeros} zeros of ${v.length}`);
      if (job.mode.kind === 'nm') {
        for (let r = 0; r < n; r++) for (let j = 0; j < k; j += 4) {
          let z = 0;
          for (let t = 0; t < 4; t++) if (v[(j + t) * n + r] === 0) z++;
          assert.ok(z >= 2, `${label} ${name}: row ${r} group ${j} keeps ${4 - z} of 4`);
        }
      }
    }
    if (label === 'magnitude then GPTQ') {
      // GPTQ's updates never fill a zero of the magnitude mask in.
      const p = OnnxModel.parse(bytes);
      pruneSparsity(p, { sparsity: 0.5, layerTarget: (w) => (head.has(w.name) ? null : undefined) });
      for (const w of p.prunable()) {
        if (!values.has(w.name)) continue;
        const before = p.readFloat(w), after = values.get(w.name);
        for (let i = 0; i < before.length; i++) if (before[i] === 0) assert.equal(after[i], 0, `${w.name}[${i}]`);
      }
    }
    const out = await logits(file);
    assert.ok(out.every((o) => o.every(Number.isFinite)), label);
  }
});

test('the 4-bit embedding table computes its dequantized rows (a padded last block too)', async () => {
  const m = OnnxModel.parse(bytes);
  const table = m.weights.find((w) => w.consumers.includes('Gather#0') && w.dims.length === 2);
  const rep = quantizeModel(m, { scheme: 'int4', group: 16, layers: (w) => w.name === table.name });
  assert.deepEqual(rep.layers.filter((l) => l.form !== 'float').map((l) => [l.name, l.form]), [[table.name, 'int4-gather']]);
  const [v, k] = table.dims;
  assert.ok(k % 16 !== 0, 'the rows are shorter than a block: the last block is padded');
  // The float model with the table replaced by its own dequantized rows computes the same logits.
  const f = OnnxModel.parse(bytes);
  const q0 = rtnQuantize(f.readFloat(f.weight(table.name)), v, k, { bits: 4, group: 16 });
  const qv = { ...q0, scales: O.halfArrayToFloat(O.floatArrayToHalf(q0.scales)) }; // stored float16 (quant/half-scales.ts)
  f.writeFloat(f.weight(table.name), dequantizeView(qv));
  const [a, b] = [await logits(f.encode()), await logits(m.encode())];
  for (let i = 0; i < a.length; i++) {
    let d = 0;
    for (let j = 0; j < a[i].length; j++) d = Math.max(d, Math.abs(a[i][j] - b[i][j]));
    assert.ok(d < 1e-4, `window ${i}: max difference ${d}`);
  }
  // One block of 16 per row (8 bytes of codes) and its scale in float16.
  assert.equal(rep.layers.find((l) => l.name === table.name).scales, 'float16');
  assert.equal(rep.layers.find((l) => l.name === table.name).bytesAfter, v * (8 + 2));
});

test('impossible requests are refused, typed, naming the option, before any change', async () => {
  const refuses = (job, option) => assert.throws(() => O.checkJob(job), (e) => e instanceof JobError && e.option === option && e.message.includes(option), option);
  refuses({ mode: { kind: 'sparsity', sparsity: 0 }, quantize: { scheme: 'int4', method: 'gptq' } }, 'quantize.method');
  refuses({ mode: { kind: 'sparsity', sparsity: 0 }, calibration: { samples: calib }, quantize: { scheme: 'int4', method: 'optimal' } }, 'quantize.method');
  refuses({ mode: { kind: 'sparsity', sparsity: 0 }, quantize: { scheme: 'int4', group: 24 } }, 'quantize.group');
  refuses({ mode: { kind: 'sparsity', sparsity: 0 }, quantize: { scheme: 'int4', embeddings: 'int2' } }, 'quantize.embeddings');
  refuses({ mode: { kind: 'sparsity', sparsity: 0 }, quantize: { scheme: 'int4', int4MatMul: 'nibbles' } }, 'quantize.int4MatMul');
  refuses({ mode: { kind: 'sparsity', sparsity: 0 }, quantize: { scheme: 'int8', int4MatMul: 'dynamic' } }, 'quantize.int4MatMul');
  refuses({ mode: { kind: 'sparsity', sparsity: 0 }, calibration: { samples: calib, actOrder: 'yes' }, quantize: { scheme: 'int4' } }, 'calibration.actOrder');
  refuses({ mode: { kind: 'sparsity', sparsity: 0 }, calibration: { samples: calib, scaleSearch: 1 }, quantize: { scheme: 'int4' } }, 'calibration.scaleSearch');
  const m = OnnxModel.parse(bytes);
  const before = m.encode();
  assert.throws(() => quantizeModel(m, { scheme: 'int4', embeddings: 'int2' }), (e) => e instanceof OnnxError && /embeddings must be int8, int4, int3 or float/.test(e.message));
  await assert.rejects(runJob(m, { mode: { kind: 'sparsity', sparsity: 0 }, quantize: { scheme: 'int4', method: 'gptq' } }, env), (e) => e instanceof JobError && e.option === 'quantize.method');
  assert.deepEqual(m.encode(), before);
  const layer = O.findLayers(m)[0];
  assert.throws(() => O.quantizeLayer({ layer, stored: m.readFloat(layer.weight), bits: 4, target: { sparsity: 0.5 }, keep: new Uint8Array(layer.rows * layer.cols) }), (e) => e instanceof OnnxError && /not both/.test(e.message));
});

test('CLI: --quantize int4 with --calib compensates (GPTQ in the report); without --calib rounds to nearest', () => {
  const dir = G.tmpDir('sk-gptqfile-');
  const calibTxt = path.join(dir, 'calib.txt');
  fs.writeFileSync(calibTxt, lines.slice(0, 300).join('\n'));
  const run = (...extra) => {
    const out = path.join(dir, `${extra.length}.onnx`);
    const r = spawnSync(process.execPath, [CLI, 'prune', MODEL, '-o', out, '--sparsity', '0', '--quantize', 'int4', '--group', '16', '--report', `${out}.json`, '-q', ...extra], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(fs.readFileSync(`${out}.json`, 'utf8'));
  };
  const g = run('--calib', calibTxt, '--tokenizer', TOKENIZER, '--seq-len', '32', '--calib-count', '8');
  assert.equal(g.quantize.gptq.pass, 'after');
  assert.ok(g.quantize.layers.some((l) => l.method === 'gptq'));
  const r = run();
  assert.equal(r.quantize.gptq, undefined);
  assert.ok(r.quantize.layers.every((l) => l.method === 'rtn'));
});

test("quantize.keptDense 'int8': the head the pruning keeps dense is written at 8 bits per channel (GPTQ in the joint pass), the rest at 4; a bad value is refused", async () => {
  const m = OnnxModel.parse(bytes);
  const job = { mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'sparsegpt', quantize: { scheme: 'int4', group: 16, keptDense: 'int8' }, calibration: { samples: calib } };
  const { report } = await runJob(m, job, env);
  const head = new Set(report.keptDense.map((k) => k.name));
  assert.equal(head.size, 1);
  for (const l of report.quantize.layers.filter((x) => x.op === 'MatMul')) {
    assert.equal(l.form, head.has(l.name) ? 'int8-dq' : 'int4-nbits', l.name);
    assert.equal(l.method, 'gptq', l.name);
  }
  // Read back from the file: the head is an int8 DequantizeLinear form, the others MatMulNBits, and
  // the head's values are within the report's largest rounding error of the pruning's dense head.
  const file = m.encode();
  const { rec, values } = readBack(file);
  const name = [...head][0];
  const forms = new Map(rec.layers.map((e) => [e.name, e.form]));
  assert.equal(forms.get(name), 'int8-dq');
  assert.ok([...forms].filter(([k]) => k !== name && k.startsWith('onnx::MatMul')).every(([, f]) => f === 'int4-nbits'));
  const w0 = m0.readFloat(m0.weight(name));
  const dist = (v) => { let e = 0; for (let i = 0; i < v.length; i++) e += (v[i] - w0[i]) ** 2; return Math.sqrt(e); };
  // The default keeps the scheme's bits for the head, which then lies farther from the original.
  const d = OnnxModel.parse(bytes);
  const { report: r2 } = await runJob(d, { ...job, quantize: { scheme: 'int4', group: 16 } }, env);
  assert.equal(r2.quantize.layers.find((l) => l.name === name).form, 'int4-nbits');
  const [e8, e4] = [dist(values.get(name)), dist(readBack(d.encode()).values.get(name))];
  assert.ok(e8 > 0 && e8 < e4 / 4, `|head - original|: int8 ${e8}, int4 ${e4}`);
  for (const bad of [{ quantize: { scheme: 'int4', keptDense: 'int2' } }, { quantize: { scheme: 'int8', keptDense: 'int8' } }, { mode: { kind: 'channels', fraction: 0.2 }, quantize: { scheme: 'int4', keptDense: 'int8' } }]) {
    await assert.rejects(runJob(OnnxModel.parse(bytes), { ...job, ...bad }, env), (e) => e instanceof JobError && /quantize\.keptDense/.test(e.message), JSON.stringify(bad));
  }
});
