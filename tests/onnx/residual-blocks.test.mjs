// Whole residual blocks (ShortGPT's layer removal, job mode `layers`, CLI `--channels layers:K`): the
// blocks of a Llama-style decoder are found in the torch export and in a plain-op graph; a block whose
// branches write zero has influence 0 (its output is its input), is the one chosen, and removing it
// leaves the outputs unchanged (onnxruntime-node); the job and the CLI refuse what does not apply by name.
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
const M = await import('./models.mjs');
const { llamaBlocks } = await import('../../kit/shared-graphs.mjs');

/** llamaBlocks with block `b`'s output projections (o, down) zero: that block is the identity. */
function withIdleBlock(b, blocks = 4) {
  const m = O.OnnxModel.parse(llamaBlocks({ blocks }));
  for (const w of [`b${b}.o`, `b${b}.down`]) m.writeFloat(m.weight(w), new Float32Array(m.weight(w).numel));
  m.refresh();
  return m;
}

const samples = (n, seed = 9) => {
  const r = G.rng(seed);
  return Array.from({ length: n }, () => ({ feeds: { x: { type: 'float32', data: Float32Array.from({ length: 12 * 16 }, () => r()), dims: [1, 12, 16] } } }));
};

test('blocks found: attention + MLP per layer, in the torch export and in a plain-op decoder', () => {
  const tiny = O.findResidualBlocks(O.OnnxModel.parse(M.modelBytes('smollm2-tiny-gqa')));
  assert.deepEqual(tiny.map((b) => b.adds), [0, 1].map((l) => [`/model/model/layers.${l}/Add`, `/model/model/layers.${l}/Add_1`]));
  // The torch export reads the stream through Cast: a block's input is that Cast, its output the MLP's Add.
  assert.equal(tiny[1].input, '/model/model/layers.1/input_layernorm/Cast_output_0');
  const plain = O.findResidualBlocks(O.OnnxModel.parse(llamaBlocks({ blocks: 3 })));
  assert.deepEqual(plain.map((b) => [b.input, b.output]), [['x', 'b0.r2'], ['b0.r2', 'b1.r2'], ['b1.r2', 'b2.r2']]);
});

test('a post-norm encoder (BERT export): a block ends at the LayerNorm after its MLP; removed, the next block reads the previous norm', async () => {
  const bytes = M.modelBytes('bert-torch');
  const emb = '/bert/embeddings/LayerNorm/LayerNormalization_output_0', l0 = '/bert/encoder/layer.0/output/LayerNorm/LayerNormalization_output_0';
  const blocks = O.findResidualBlocks(O.OnnxModel.parse(bytes));
  assert.deepEqual(blocks.map((b) => [b.input, b.output]), [[emb, l0], [l0, 'last_hidden_state']]);
  assert.deepEqual(blocks[0].adds, ['/bert/encoder/layer.0/attention/output/Add', '/bert/encoder/layer.0/output/Add']);
  const m = O.OnnxModel.parse(bytes);
  O.removeResidualBlocks(m, [0]);
  assert.ok(!m.graph.node.some((n) => n.name.startsWith('/bert/encoder/layer.0/')), 'layer 0 and its norms are gone');
  for (const p of ['query', 'key', 'value']) assert.equal(m.graph.node.find((n) => n.name === `/bert/encoder/layer.1/attention/self/${p}/MatMul`).input[0], emb);
  assert.equal(m.graph.node.find((n) => n.name === '/bert/encoder/layer.1/attention/output/Add').input.filter((i) => i === emb).length, 1, 'the residual reads the embeddings\' norm');
  const ids = BigInt64Array.from({ length: 7 }, (_, i) => BigInt(5 + 11 * i));
  const feeds = { input_ids: new ort.Tensor('int64', ids, [1, 7]), attention_mask: new ort.Tensor('int64', new BigInt64Array(7).fill(1n), [1, 7]) };
  const names = (await ort.InferenceSession.create(m.encode())).inputNames;
  const out = await M.runModel(m.encode(), Object.fromEntries(names.map((n) => [n, feeds[n] ?? new ort.Tensor('int64', new BigInt64Array(7), [1, 7])])));
  assert.ok(out.last_hidden_state.data.every(Number.isFinite));
  // the last block writes the graph output: found as one that cannot go, and refused by name when named
  assert.deepEqual(blocks.map((b) => [b.removable, b.why]), [[true, undefined], [false, 'writes graph output "last_hidden_state"']]);
  assert.throws(() => O.removeResidualBlocks(O.OnnxModel.parse(bytes), [1]), (e) => e instanceof O.OnnxError && /block 1 writes graph output "last_hidden_state"/.test(e.message));
});

test('influence: an identity block scores 0 and is the one removed; the outputs do not change', async () => {
  const m = withIdleBlock(2);
  const before = m.encode();
  const runner = O.makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });
  const infl = await O.blockInfluence(m, runner, samples(3));
  assert.equal(infl.length, 4);
  assert.ok(Math.abs(infl[2].influence) < 1e-6, `identity block: ${infl[2].influence}`);
  for (const k of [0, 1, 3]) assert.ok(infl[k].influence > 1e-4, `block ${k}: ${infl[k].influence}`);
  assert.equal(infl[0].tokens, 3 * 12);
  assert.deepEqual(O.leastInfluential(infl, 1), [2]);
  const { report } = await O.runJob(m, { mode: { kind: 'layers', count: 1 }, calibration: { samples: samples(3) } }, { ort });
  assert.deepEqual(report.layers.removed, [2]);
  assert.ok(report.layers.nodesAfter < report.layers.nodesBefore);
  assert.ok(!m.weights.some((w) => w.name.startsWith('b2.')), 'the removed block\'s weights are gone');
  const feeds = { x: new ort.Tensor('float32', samples(1, 4)[0].feeds.x.data, [1, 12, 16]) };
  const [a, b] = [await M.runModel(m.encode(), feeds), await M.runModel(before, feeds)];
  assert.ok(G.maxAbsDiff(a.y.data, b.y.data) <= 1e-5);
});

test('two blocks removed in a row: the later one reads the earlier one\'s input', async () => {
  const m = O.OnnxModel.parse(llamaBlocks({ blocks: 4 }));
  O.removeResidualBlocks(m, [1, 2]);
  const add = m.graph.node.find((n) => n.op_type === 'Add' && n.output[0] === 'b3.r1');
  assert.ok(add.input.includes('b0.r2'), 'block 3 reads block 0\'s output');
  const feeds = { x: new ort.Tensor('float32', samples(1)[0].feeds.x.data, [1, 12, 16]) };
  const out = await M.runModel(m.encode(), feeds);
  assert.deepEqual(out.y.dims, [1, 12, 16]);
});

test('layers: refusals name the option; the CLI --channels layers:K', async () => {
  const cases = [
    [{ mode: { kind: 'layers', count: 0 }, calibration: { samples: [{}] } }, 'mode.count'],
    [{ mode: { kind: 'layers', count: 1 } }, 'calibration.samples'],
    [{ mode: { kind: 'layers', count: 1 }, method: 'wanda', calibration: { samples: [{}] } }, 'method'],
  ];
  for (const [job, option] of cases) assert.throws(() => O.checkJob(job), (e) => e instanceof O.JobError && e.option === option, JSON.stringify(job));
  await assert.rejects(O.runJob(withIdleBlock(0, 2), { mode: { kind: 'layers', count: 2 }, calibration: { samples: samples(1) } }, { ort }), /cannot remove 2 of 2 blocks/);
  const dir = G.tmpDir('sk-layers-');
  const input = path.join(dir, 'llama.onnx'), out = path.join(dir, 'out.onnx');
  fs.writeFileSync(input, withIdleBlock(1, 3).encode());
  const cli = (...a) => spawnSync(process.execPath, [CLI, 'prune', input, '-o', out, ...a], { encoding: 'utf8' });
  const r = cli('--channels', 'layers:1', '--calib-count', '4', '-q');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /layers: 1 of 3 residual blocks removed/);
  const written = await O.loadOnnx(out);
  assert.ok(!written.weights.some((w) => w.name.startsWith('b1.')), 'the identity block went');
  const bad = cli('--channels', 'layers:0');
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--channels/);
  assert.match(cli('--channels', 'layers:1', '--round-to', '4').stderr, /--round-to does not apply to --channels layers:K/);
});

/** llamaBlocks with blocks `idle` the identity (their output projections zero). */
function withIdleBlocks(idle, blocks) {
  const m = O.OnnxModel.parse(llamaBlocks({ blocks }));
  for (const b of idle) for (const w of [`b${b}.o`, `b${b}.down`]) m.writeFloat(m.weight(w), new Float32Array(m.weight(w).numel));
  m.refresh();
  return m;
}

/** withIdleBlocks whose last block writes the graph output itself (no Identity after it), and blocks `more` write graph outputs too. */
function withOutputBlock(idle, blocks, more = []) {
  const m = withIdleBlocks(idle, blocks);
  m.graph.node = m.graph.node.filter((n) => n.op_type !== 'Identity' || n.output[0] !== 'y');
  m.graph.output[0].name = `b${blocks - 1}.r2`;
  for (const b of more) m.graph.output.push({ name: `b${b}.r2`, type: { tensor_type: { elem_type: 1 } } });
  m.refresh();
  return m;
}

test('layers:K skips a block that writes a graph output, however little it does; fewer removable blocks than K is refused by count', async () => {
  // blocks 0 and 3 are the identity; block 3 writes the graph output, so the next least influential goes
  const m = withOutputBlock([0, 3], 4);
  assert.deepEqual(O.findResidualBlocks(m).map((b) => b.removable), [true, true, true, false]);
  const job = { mode: { kind: 'layers', count: 1 }, calibration: { samples: samples(3) } };
  const { report } = await O.runJob(m, job, { ort });
  assert.deepEqual(report.layers.removed, [0]);
  assert.equal(report.layers.blocks[3].influence, 0, 'its influence is reported as measured');
  assert.match(report.layers.blocks[3].kept, /writes graph output/, 'and why it stayed');
  assert.equal(report.layers.blocks[0].kept, undefined);
  // two blocks write graph outputs: 2 of 4 may go, and 3 is refused naming both, before any change
  const two = withOutputBlock([0, 3], 4, [2]);
  const before = two.encode();
  await assert.rejects(O.runJob(two, { ...job, mode: { kind: 'layers', count: 3 } }, { ort }),
    (e) => e instanceof O.OnnxError && e.code === 'invalid_value' && /cannot remove 3 of 4 blocks \(at least 1, at most 2; 2 cannot be removed: block 2 writes graph output "b2\.r2", block 3 writes graph output "b3\.r2"\)/.test(e.message), 'refused');
  assert.deepEqual(two.encode(), before);
  assert.deepEqual((await O.runJob(two, { ...job, mode: { kind: 'layers', count: 2 } }, { ort })).report.layers.removed, [0, 1]);
});

test('the search over whole blocks: as many as the floor allows, least influential first, each count judged as written', async () => {
  const FLOOR = 0.999999;
  const src = withIdleBlocks([0, 2], 5);
  const bytes = src.encode();
  const held = samples(4, 21);
  const job = { mode: { kind: 'search', target: 'layers', minFidelity: FLOOR }, calibration: { samples: samples(3) }, eval: { samples: held } };
  const m = O.OnnxModel.parse(bytes);
  const { model, report } = await O.runJob(m, job, { ort });
  // the two identity blocks go and nothing else: a third block (the least influential real one) misses the floor
  assert.deepEqual(report.layers.removed, [0, 2]);
  const steps = report.layers.search.steps;
  assert.deepEqual(steps.map((s) => [s.count, s.pass]), [[1, true], [2, true], [4, false], [3, false]], JSON.stringify(steps));
  assert.equal(report.layers.search.minFidelity, FLOOR);
  // the chosen model computes what the original does; three blocks removed, judged on their own, do not
  const runner = O.makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });
  const judged = await O.evaluate(bytes, model, held, { ort: runner });
  assert.ok(judged.score >= FLOOR, `chosen: ${judged.score}`);
  const three = O.OnnxModel.parse(bytes);
  const infl = await O.blockInfluence(three, runner, samples(3));
  O.removeResidualBlocks(three, O.leastInfluential(infl, 3));
  const worse = await O.evaluate(bytes, three, held, { ort: runner });
  assert.ok(worse.score < FLOOR, `three blocks: ${worse.score}`);
  assert.ok(Math.abs(worse.score - steps.find((s) => s.count === 3).fidelity) < 1e-9, 'the step reports the fidelity of that very model');
  // no block removable at the floor: refused, nothing written
  const busy = O.OnnxModel.parse(llamaBlocks({ blocks: 3 }));
  const before = busy.encode();
  await assert.rejects(O.runJob(busy, { ...job, eval: { samples: held } }, { ort }), (e) => e instanceof O.FloorError && /even the least influential block misses the floor/.test(e.message));
  assert.deepEqual(busy.encode(), before);
  // a block that writes a graph output is never chosen, however little it does (here: the identity, last)
  const t = await O.runJob(withOutputBlock([0, 3], 4), job, { ort });
  assert.deepEqual(t.report.layers.removed, [0]);
  assert.equal(t.report.layers.blocks[3].influence, 0, 'its influence is reported as measured');
  // what does not apply is refused by name
  const cases = [
    [{ ...job, mode: { ...job.mode, levels: [0.5] } }, 'mode.levels'],
    [{ ...job, mode: { ...job.mode, objective: 'flops' } }, 'mode.objective'],
    [{ ...job, method: 'wanda' }, 'method'],
    [{ ...job, calibration: undefined }, 'calibration.samples'],
    [{ ...job, eval: undefined }, 'eval.samples'],
  ];
  for (const [j, option] of cases) assert.throws(() => O.checkJob(j), (e) => e instanceof O.JobError && e.option === option, option);
});

test('the CLI: --min-fidelity F --channels layers:auto', () => {
  const dir = G.tmpDir('sk-layers-auto-');
  const input = path.join(dir, 'llama.onnx'), out = path.join(dir, 'out.onnx');
  fs.writeFileSync(input, withIdleBlocks([1], 4).encode());
  const cli = (...a) => spawnSync(process.execPath, [CLI, 'prune', input, '-o', out, ...a], { encoding: 'utf8' });
  const r = cli('--channels', 'layers:auto', '--min-fidelity', '0.999999', '--calib-count', '4', '--eval', 'synthetic', '--eval-count', '4');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /1 blocks removed: fidelity 1\.0000 .* meets 0\.999999/);
  assert.match(r.stdout, /2 blocks removed: fidelity .* below 0\.999999/);
  assert.match(r.stdout, /layers: 1 of 4 residual blocks removed/);
  assert.match(cli('--channels', 'layers:auto', '--min-fidelity', '0.9', '--eval', 'synthetic', '--round-to', '4').stderr, /--round-to does not apply to --channels layers:auto/);
  assert.match(cli('--channels', 'layers:auto', '--calib-count', '4').stderr, /--channels layers:auto needs --min-fidelity F/);
});
