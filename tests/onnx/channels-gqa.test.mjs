// Grouped-query attention heads as channel groups (rules/repeat.ts and the rules it meets): the K/V
// repeat (Unsqueeze -> Expand -> Reshape), query head h tied to KV head h div n_rep in Q·Kᵀ and P·V,
// rotate-half RoPE with computed Slice bounds (the torch export, smollm2-tiny-gqa.onnx: 4 query heads
// over 2 KV heads), interleaved RoPE with a KV cache in a torch export (gqa-interleaved-cache.onnx,
// bench/models/gqa_interleaved.py) and in a plain-op block (kit/decoder-graphs.mjs).
// A KV head and its query heads are one unit; removing a unit whose weights are zero leaves the
// outputs as they were (onnxruntime-node); removed == masked otherwise; the cache's declared shapes
// follow the kept KV heads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import ort from 'onnxruntime-node';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { build, CLI } from './build.mjs';

build();
const { OnnxModel, findChannelGroups, removeChannels } = await import('#onnx-internal');
const G = await import('./graphs.mjs');
const M = await import('./models.mjs');
const { gqaDecoder } = await import('../../kit/decoder-graphs.mjs');

const attentionGroups = (groups, isQuery) => groups.filter((g) => g.producers.some(isQuery));
const onlyAttention = (isQuery) => (g) => g.producers.some(isQuery);

function lmFeeds(S = 7, seed = 3) {
  const r = G.rng(seed);
  const ids = BigInt64Array.from({ length: S }, () => BigInt(Math.floor((r() + 1) * 500)));
  return {
    input_ids: new ort.Tensor('int64', ids, [1, S]),
    attention_mask: new ort.Tensor('int64', BigInt64Array.from({ length: S }, () => 1n), [1, S]),
    position_ids: new ort.Tensor('int64', BigInt64Array.from({ length: S }, (_, i) => BigInt(i)), [1, S]),
  };
}

function decoderFeeds({ tokens = 5, half = 2, kvHeads = 2, past = 0, D = 4, dim = 16, seed = 5 }) {
  const r = G.rng(seed);
  const t = (dims) => new ort.Tensor('float32', Float32Array.from({ length: dims.reduce((a, b) => a * b, 1) }, () => r()), dims);
  const feeds = { x: t([1, tokens, dim]), cos: t([1, 1, tokens, half]), sin: t([1, 1, tokens, half]) };
  if (past) { feeds.past_key = t([1, kvHeads, past, D]); feeds.past_value = t([1, kvHeads, past, D]); }
  return feeds;
}

/** The KV heads `keep` of a (1, KV, T, D) cache tensor. */
function keepHeads(t, keep) {
  const [, , T, D] = t.dims;
  const data = new Float32Array(keep.length * T * D);
  keep.forEach((h, i) => data.set(t.data.subarray(h * T * D, (h + 1) * T * D), i * T * D));
  return new ort.Tensor('float32', data, [1, keep.length, T, D]);
}

test('smollm2-tiny-gqa (torch export, rotate-half RoPE, computed shapes): one unit per KV head with its query heads', () => {
  const m = OnnxModel.parse(M.modelBytes('smollm2-tiny-gqa'));
  const { groups, channelsOf } = findChannelGroups(m);
  const node = (name) => m.graph.node.find((n) => n.name === name);
  for (const layer of [0, 1]) {
    const at = `/model/model/layers.${layer}/self_attn`;
    const [g] = attentionGroups(groups, (p) => p === `${at}/q_proj/MatMul`);
    assert.equal(g.prunable, true, g.reason);
    assert.equal(g.channels, 2, 'one unit per KV head');
    for (const p of ['k_proj', 'v_proj']) assert.ok(g.producers.includes(`${at}/${p}/MatMul`), p);
    // KV head u reads query heads 2u and 2u + 1: 8 consecutive q_proj columns and o_proj rows (head_dim 4).
    const cover = (w, axis) => channelsOf.get(g.id).map((ch) => ch.slices.filter((s) => s.tensor === w && s.axis === axis)
      .flatMap((s) => Array.from({ length: s.rep }, (_, i) => s.pos + i)).sort((a, b) => a - b));
    const range = (a, n) => Array.from({ length: n }, (_, i) => a + i);
    assert.deepEqual(cover(node(`${at}/q_proj/MatMul`).input[1], 1), [range(0, 8), range(8, 8)]);
    assert.deepEqual(cover(node(`${at}/o_proj/MatMul`).input[1], 0), [range(0, 8), range(8, 8)]);
    assert.deepEqual(cover(node(`${at}/k_proj/MatMul`).input[1], 1), [range(0, 4), range(4, 4)]);
  }
});

test('smollm2-tiny-gqa: removing the KV groups whose weights are zero leaves the logits as they were', async () => {
  const m = OnnxModel.parse(M.modelBytes('smollm2-tiny-gqa'));
  const node = (name) => m.graph.node.find((n) => n.name === name);
  const isQuery = (p) => /q_proj\/MatMul$/.test(p);
  // Zero KV head 1 of layer 0 and KV head 0 of layer 1: their k / v columns, their query heads' q columns and o rows.
  const zero = (w, axis, from, to) => {
    const t = m.weight(w);
    const [rows, cols] = t.dims;
    const data = m.readFloat(t).slice();
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) if ((axis === 1 ? c : r) >= from && (axis === 1 ? c : r) < to) data[r * cols + c] = 0;
    m.writeFloat(t, data);
  };
  for (const [layer, kv] of [[0, 1], [1, 0]]) {
    const at = `/model/model/layers.${layer}/self_attn`;
    zero(node(`${at}/q_proj/MatMul`).input[1], 1, 8 * kv, 8 * kv + 8);
    zero(node(`${at}/o_proj/MatMul`).input[1], 0, 8 * kv, 8 * kv + 8);
    for (const p of ['k_proj', 'v_proj']) zero(node(`${at}/${p}/MatMul`).input[1], 1, 4 * kv, 4 * kv + 4);
  }
  m.refresh();
  const zeroed = m.encode();
  const r = removeChannels(m, { fraction: 0.5, roundTo: 1, filter: onlyAttention(isQuery) });
  assert.equal(r.groups.removed.length, 2);
  assert.deepEqual(m.weight(node('/model/model/layers.0/self_attn/q_proj/MatMul').input[1]).dims, [16, 8]);
  assert.deepEqual(m.weight(node('/model/model/layers.1/self_attn/k_proj/MatMul').input[1]).dims, [16, 4]);
  const feeds = lmFeeds();
  const [a, b] = [await M.runModel(m.encode(), feeds), await M.runModel(zeroed, feeds)];
  assert.deepEqual(a.logits.dims, b.logits.dims);
  const diff = G.maxAbsDiff(a.logits.data, b.logits.data);
  assert.ok(diff <= 1e-5, `max |removed - zeroed| = ${diff}`);
});

test('smollm2-tiny-gqa: removed == masked-not-removed (every group, layer scope)', async () => {
  const bytes = M.modelBytes('smollm2-tiny-gqa');
  const removed = OnnxModel.parse(bytes), masked = OnnxModel.parse(bytes);
  const opts = { fraction: 0.5, roundTo: 1 };
  const r = removeChannels(removed, opts);
  const rm = removeChannels(masked, { ...opts, apply: 'mask' });
  assert.deepEqual(r.groups.removed, rm.groups.removed);
  assert.equal(r.groups.removed.length, 4, 'two attention groups and two FFN groups');
  const feeds = lmFeeds(9, 4);
  const [a, b] = [await M.runModel(removed.encode(), feeds), await M.runModel(masked.encode(), feeds)];
  const scale = Math.max(1e-3, ...Array.from(b.logits.data, Math.abs));
  assert.ok(G.maxAbsDiff(a.logits.data, b.logits.data) <= 1e-4 * scale);
});

for (const past of [0, 3]) {
  test(`plain-op block, interleaved RoPE${past ? ', KV cache' : ''}: KV groups found; removing a zeroed one changes nothing${past ? ', past / present shrink with it' : ''}`, async () => {
    const bytes = gqaDecoder({ past, zeroHeads: [0] });
    const m = OnnxModel.parse(bytes);
    const { groups } = findChannelGroups(m);
    const [g] = attentionGroups(groups, (p) => p === 'matmul_0');
    assert.equal(g.prunable, true, g.reason);
    assert.equal(g.channels, 2);
    assert.deepEqual(g.producers.slice().sort(), ['matmul_0', 'matmul_1', 'matmul_2']);
    const members = new Set(g.members.map((x) => `${x.tensor}:${x.axis}:${x.kind}`));
    // The constant shapes that count heads: the head split, the interleaved pairs, the repeat.
    for (const s of ['shape.q:2', 'shape.kv:2', 'shape.q2:1', 'shape.k2:1', 'shape.expand:1', 'shape.rep:1', 'shape.out:2']) assert.ok(members.has(`${s}:shape`), s);
    if (past) for (const s of ['past_key:1', 'past_value:1', 'present_key:1', 'present_value:1']) assert.ok(members.has(`${s}:io`), s);
    removeChannels(m, { fraction: 0.5, roundTo: 1, filter: (x) => x.id === g.id });
    assert.deepEqual(m.weight('q.w').dims, [16, 8]);
    assert.deepEqual(m.weight('k.w').dims, [16, 4]);
    const declared = (list, name) => list.find((v) => v.name === name)?.type.tensor_type.shape.dim.map((d) => Number(d.dim_value));
    if (past) {
      assert.deepEqual(declared(m.graph.input, 'past_key'), [1, 1, past, 4]);
      assert.deepEqual(declared(m.graph.output, 'present_value'), [1, 1, past + 5, 4]);
    }
    const feeds = decoderFeeds({ past });
    const orig = await M.runModel(bytes, feeds);
    const cut = { ...feeds };
    if (past) { cut.past_key = keepHeads(feeds.past_key, [1]); cut.past_value = keepHeads(feeds.past_value, [1]); }
    const out = await M.runModel(m.encode(), cut);
    assert.ok(G.maxAbsDiff(out.y.data, orig.y.data) <= 1e-5, 'y unchanged');
    if (past) {
      for (const k of ['present_key', 'present_value']) {
        assert.deepEqual(out[k].dims, [1, 1, past + 5, 4]);
        assert.ok(G.maxAbsDiff(out[k].data, keepHeads(new ort.Tensor('float32', orig[k].data, orig[k].dims), [1]).data) <= 1e-6, k);
      }
    }
  });
}

test('torch export, interleaved RoPE (strided Slice, stack, flatten) and a KV cache: removed == masked, the cache follows', async () => {
  const bytes = M.modelBytes('gqa-interleaved-cache');
  const m = OnnxModel.parse(bytes), masked = OnnxModel.parse(bytes);
  const { groups } = findChannelGroups(m);
  const heads = groups.find((x) => x.members.some((y) => y.tensor === 'past_key'));
  assert.ok(heads && heads.prunable, heads?.reason);
  assert.equal(heads.channels, 2, 'one unit per KV head');
  const kinds = new Set(heads.members.filter((x) => x.kind === 'io').map((x) => x.tensor));
  assert.deepEqual([...kinds].sort(), ['past_key', 'past_value', 'present_key', 'present_value']);
  const opts = { fraction: 0.5, roundTo: 1, filter: (x) => x.id === heads.id };
  const r = removeChannels(m, opts);
  removeChannels(masked, { ...opts, apply: 'mask' });
  assert.equal(r.groups.removed.length, 1);
  // The cache's declared head count follows (its sequence axis is symbolic and stays so).
  const headDim = (list, name) => Number(list.find((v) => v.name === name).type.tensor_type.shape.dim[1].dim_value);
  assert.equal(headDim(m.graph.input, 'past_key'), 1);
  assert.equal(headDim(m.graph.output, 'present_value'), 1);
  // Which KV head stayed: the one whose k columns are left (the removed one's are zero in the masked model).
  const kMasked = masked.graph.node.find((n) => n.op_type === 'MatMul' && heads.producers.includes(n.name) && masked.weight(n.input[1]).dims[1] === 16);
  const kw = masked.readFloat(masked.weight(kMasked.input[1]));
  const keep = [0, 1].filter((h) => Array.from({ length: 32 * 8 }, (_, i) => kw[Math.floor(i / 8) * 16 + h * 8 + (i % 8)]).some((v) => v !== 0));
  assert.equal(keep.length, 1);
  const r4 = G.rng(8);
  const t = (dims) => new ort.Tensor('float32', Float32Array.from({ length: dims.reduce((a, b) => a * b, 1) }, () => r4()), dims);
  const feeds = { h: t([1, 6, 32]), cos: t([1, 1, 6, 8]), sin: t([1, 1, 6, 8]), past_key: t([1, 2, 4, 8]), past_value: t([1, 2, 4, 8]) };
  const full = await M.runModel(masked.encode(), feeds);
  const cut = await M.runModel(m.encode(), { ...feeds, past_key: keepHeads(feeds.past_key, keep), past_value: keepHeads(feeds.past_value, keep) });
  assert.ok(G.maxAbsDiff(cut.y.data, full.y.data) <= 1e-5, 'y as the masked model computes it');
  for (const k of ['present_key', 'present_value']) {
    assert.deepEqual(cut[k].dims, [1, 1, 10, 8]);
    assert.ok(G.maxAbsDiff(cut[k].data, keepHeads(new ort.Tensor('float32', full[k].data, full[k].dims), keep).data) <= 1e-6, k);
  }
});

test('rules: a constant Expand shape that counts the heads is rewritten; one that broadcasts a single head is refused', () => {
  const m = OnnxModel.parse(gqaDecoder({ heads: 6, kvHeads: 3 }));
  const { groups, channelsOf } = findChannelGroups(m);
  const [g] = attentionGroups(groups, (p) => p === 'matmul_0');
  assert.equal(g.channels, 3);
  // The repeats' Reshape (K's and V's, one constant) writes Hq = 6: KV head u counts for 2 of it (span n_rep = 2).
  const rep = channelsOf.get(g.id).map((ch) => ch.slices.filter((s) => s.tensor === 'shape.rep').map((s) => s.rep));
  assert.deepEqual(rep, [[2, 2], [2, 2], [2, 2]]);
  removeChannels(m, { fraction: 0.34, roundTo: 1, filter: (x) => x.id === g.id });
  const ints = (n) => m.readInts(m.graph.initializer.find((t) => t.name === n));
  assert.deepEqual(ints('shape.expand'), [1, 2, 2, 5, 4]);
  assert.deepEqual(ints('shape.rep'), [1, 4, 5, 4]);
  // One KV head: the Expand may broadcast it into copies of itself; its group is not removable.
  const one = findChannelGroups(OnnxModel.parse(gqaDecoder({ heads: 2, kvHeads: 1 })));
  const [k] = attentionGroups(one.groups, (p) => p === 'matmul_1');
  assert.equal(k.prunable, false);
});

// heads 'query': the K/V heads stay whole and the unit is a query head, marked with its KV group;
// every group keeps as many, so that n_rep shrinks (the Expand's copies, the merged count, torch's factor).

/** Zeroes query head h's q columns and o rows of a gqaDecoder (head width D). */
function zeroQueryHeads(m, hs, D = 4) {
  for (const [w, axis] of [['q.w', 1], ['o.w', 0]]) {
    const t = m.weight(w);
    const [rows, cols] = t.dims.map(Number);
    const data = m.readFloat(t).slice();
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) if (hs.includes(Math.floor((axis === 1 ? c : r) / D))) data[r * cols + c] = 0;
    m.writeFloat(t, data);
  }
}

test('heads "query", plain-op block with a KV cache: each KV group drops its own weakest query head; n_rep 2 -> 1; the cache stays', async () => {
  const bytes0 = gqaDecoder({ heads: 6, kvHeads: 3, past: 3 });
  const zeroed = OnnxModel.parse(bytes0);
  // Group 0 (heads 0, 1) loses head 1, group 1 (2, 3) head 2, group 2 (4, 5) head 5: not the same place in each.
  zeroQueryHeads(zeroed, [1, 2, 5]);
  const bytes = zeroed.encode();
  const m = OnnxModel.parse(bytes);
  const plan = findChannelGroups(m, 'query');
  const [q] = attentionGroups(plan.groups, (p) => p === 'matmul_0');
  assert.equal(q.prunable, true, q.reason);
  assert.deepEqual([q.channels, q.runs], [6, 3]);
  assert.deepEqual(plan.channelsOf.get(q.id).map((ch) => ch.run), [0, 0, 1, 1, 2, 2]);
  assert.deepEqual(q.producers, ['matmul_0']);
  for (const p of ['matmul_1', 'matmul_2']) {
    const [kv] = attentionGroups(plan.groups, (x) => x === p);
    assert.equal(kv.prunable, false);
    assert.match(kv.reason, /K\/V heads stay whole/);
  }
  removeChannels(m, { fraction: 0.5, roundTo: 1, heads: 'query', filter: (x) => x.id === q.id });
  assert.deepEqual(m.weight('q.w').dims, [16, 12]);
  assert.deepEqual(m.weight('o.w').dims, [12, 16]);
  assert.deepEqual(m.weight('k.w').dims, [16, 12]);
  const ints = (n) => m.readInts(m.graph.initializer.find((t) => t.name === n));
  assert.deepEqual(ints('shape.expand'), [1, 3, 1, 8, 4]);
  assert.deepEqual(ints('shape.rep'), [1, 3, 8, 4]);
  assert.deepEqual(ints('shape.q'), [1, 5, 3, 4]);
  const declared = (list, name) => list.find((v) => v.name === name)?.type.tensor_type.shape.dim.map((d) => Number(d.dim_value));
  assert.deepEqual(declared(m.graph.input, 'past_key'), [1, 3, 3, 4]);
  const feeds = decoderFeeds({ past: 3, kvHeads: 3 });
  const [orig, out] = [await M.runModel(bytes, feeds), await M.runModel(m.encode(), feeds)];
  assert.ok(G.maxAbsDiff(out.y.data, orig.y.data) <= 1e-5, 'y unchanged: the removed heads were the zero ones');
  for (const k of ['present_key', 'present_value']) assert.ok(G.maxAbsDiff(out[k].data, orig[k].data) <= 1e-6, k);
});

test('heads "query", torch export (computed shapes, n_rep as a factor): removed == masked; the K/V projections keep their columns', async () => {
  const bytes = M.modelBytes('smollm2-tiny-gqa');
  const removed = OnnxModel.parse(bytes), masked = OnnxModel.parse(bytes);
  const plan = findChannelGroups(removed, 'query');
  const queryGroups = plan.groups.filter((g) => g.runs);
  assert.equal(queryGroups.length, 2, 'one per layer');
  for (const g of queryGroups) assert.deepEqual([g.prunable, g.channels, g.runs], [true, 4, 2], g.reason);
  const opts = { fraction: 0.5, roundTo: 1, heads: 'query', filter: (g) => !!g.runs };
  const r = removeChannels(removed, opts, plan);
  removeChannels(masked, { ...opts, apply: 'mask' });
  assert.deepEqual(r.groups.removed.map((g) => g.channelsAfter), [2, 2]);
  const node = (name) => removed.graph.node.find((n) => n.name === name);
  for (const layer of [0, 1]) {
    const at = `/model/model/layers.${layer}/self_attn`;
    assert.deepEqual(removed.weight(node(`${at}/q_proj/MatMul`).input[1]).dims.map(Number), [16, 8]);
    assert.deepEqual(removed.weight(node(`${at}/k_proj/MatMul`).input[1]).dims.map(Number), [16, 8]);
    assert.deepEqual(removed.weight(node(`${at}/o_proj/MatMul`).input[1]).dims.map(Number), [8, 16]);
  }
  const feeds = lmFeeds(9, 4);
  const [a, b, dense] = [await M.runModel(removed.encode(), feeds), await M.runModel(masked.encode(), feeds), await M.runModel(bytes, feeds)];
  const scale = Math.max(1e-3, ...Array.from(b.logits.data, Math.abs));
  assert.ok(G.maxAbsDiff(a.logits.data, b.logits.data) <= 1e-4 * scale);
  assert.ok(G.maxAbsDiff(a.logits.data, dense.logits.data) > 1e-3 * scale, 'heads did go');
});

test('heads "query", torch export with interleaved RoPE and a KV cache: removed == masked, the cache as it was', async () => {
  const bytes = M.modelBytes('gqa-interleaved-cache');
  const m = OnnxModel.parse(bytes), masked = OnnxModel.parse(bytes);
  const plan = findChannelGroups(m, 'query');
  const [q] = plan.groups.filter((g) => g.runs);
  assert.ok(q?.prunable, q?.reason);
  assert.deepEqual([q.channels, q.runs], [4, 2]);
  assert.ok(!q.members.some((x) => x.kind === 'io'), 'the cache is not a member');
  const opts = { fraction: 0.5, roundTo: 1, heads: 'query', filter: (x) => x.id === q.id };
  removeChannels(m, opts, plan);
  removeChannels(masked, { ...opts, apply: 'mask' });
  const r4 = G.rng(8);
  const t = (dims) => new ort.Tensor('float32', Float32Array.from({ length: dims.reduce((a, b) => a * b, 1) }, () => r4()), dims);
  const feeds = { h: t([1, 6, 32]), cos: t([1, 1, 6, 8]), sin: t([1, 1, 6, 8]), past_key: t([1, 2, 4, 8]), past_value: t([1, 2, 4, 8]) };
  const [cut, full] = [await M.runModel(m.encode(), feeds), await M.runModel(masked.encode(), feeds)];
  assert.ok(G.maxAbsDiff(cut.y.data, full.y.data) <= 1e-5, 'y as the masked model computes it');
  for (const k of ['present_key', 'present_value']) assert.deepEqual(cut[k].dims, [1, 2, 10, 8]);
});

test('heads "query": a decision must leave every KV group the same count; influence is refused; bad values are typed errors', async () => {
  const m = OnnxModel.parse(gqaDecoder({ heads: 6, kvHeads: 3 }));
  const plan = findChannelGroups(m, 'query');
  const [q] = attentionGroups(plan.groups, (p) => p === 'matmul_0');
  const uneven = new Map([[q.id, Uint8Array.from([1, 0, 1, 1, 1, 0])]]);
  assert.throws(() => removeChannels(m, { fraction: 0.5, heads: 'query', keep: uneven, filter: (x) => x.id === q.id }, plan),
    (e) => e.code === 'invalid_arguments' && /same number of query heads/.test(e.message));
  const none = new Map([[q.id, Uint8Array.from([0, 0, 1, 1, 1, 1])]]);
  assert.throws(() => removeChannels(m, { fraction: 0.5, heads: 'query', keep: none, filter: (x) => x.id === q.id }, plan), /at least one/);
  assert.throws(() => removeChannels(m, { fraction: 0.5, heads: 'kv' }), (e) => e.code === 'invalid_arguments');
  assert.throws(() => removeChannels(m, { fraction: 0.5 }, plan), /made with heads "query"/, 'a plan of the other unit is refused');
  const { removeChannelsCalibrated } = await import('#onnx-internal');
  await assert.rejects(removeChannelsCalibrated(OnnxModel.parse(M.modelBytes('smollm2-tiny-gqa')), { fraction: 0.5, heads: 'query', score: 'influence', calibration: [lmFeeds()], ort }),
    (e) => e.code === 'invalid_arguments' && /fluctuation/.test(e.message));
});

test('heads "query" through the job and the CLI (--channels query:F): the same removal; refusals by name', async () => {
  const bytes = M.modelBytes('smollm2-tiny-gqa');
  const { runJob, checkJob, JobError } = await import('#onnx-internal');
  const mode = { kind: 'channels', fraction: 0.5, roundTo: 1, heads: 'query' };
  const res = await runJob(OnnxModel.parse(bytes), { mode });
  const direct = OnnxModel.parse(bytes);
  removeChannels(direct, { fraction: 0.5, roundTo: 1, heads: 'query' });
  const dims = (m) => m.weights.map((w) => `${w.name}:${w.dims}`).join(' ');
  assert.equal(dims(res.model), dims(direct));
  assert.ok(res.model.weights.some((w) => String(w.dims) === '16,8'), 'query heads went');
  assert.equal(res.report.prune.queryGroups, 2, 'both layers\' query heads are units within KV groups');
  for (const [bad, option] of [[{ ...mode, heads: 'kv' }, 'mode.heads'], [{ ...mode, score: 'influence' }, 'mode.score']]) {
    assert.throws(() => checkJob({ mode: bad, method: 'sparsegpt' }), (e) => e instanceof JobError && e.option === option, JSON.stringify(bad));
  }
  const dir = G.tmpDir('sk-query-');
  const input = path.join(dir, 'in.onnx'), out = path.join(dir, 'out.onnx');
  fs.writeFileSync(input, bytes);
  const r = spawnSync(process.execPath, [CLI, 'prune', input, '-o', out, '--channels', 'query:0.5', '--round-to', '1', '-q'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(dims(await (await import('#onnx-internal')).loadOnnx(out)), dims(direct));
  // On multi-head attention without a KV repeat the unit is the head: the command says so.
  const mha = path.join(dir, 'mha.onnx');
  fs.writeFileSync(mha, M.modelBytes('bert-style'));
  const says = (args) => spawnSync(process.execPath, [CLI, 'prune', ...args, '-o', path.join(dir, 'o.onnx'), '--round-to', '1'], { encoding: 'utf8' });
  const plain = says([mha, '--channels', 'query:0.5']);
  assert.equal(plain.status, 0, plain.stderr);
  assert.match(plain.stdout, /no grouped-query attention in this model.*removed whole heads, as --channels F does/);
  const gqa = says([input, '--channels', 'query:0.5']);
  assert.equal(gqa.status, 0, gqa.stderr);
  assert.doesNotMatch(gqa.stdout, /no grouped-query attention/);
});

test('heads "query" in the search and its recipe: query heads chosen per layer to the floor, K/V kept; the recipe replays it', async () => {
  const O = await import('#onnx-internal');
  const bytes = M.modelBytes('smollm2-tiny-gqa');
  const base = OnnxModel.parse(bytes);
  const samples = O.makeInputSet(base, { count: 3, set: 'eval' });
  const mode = { kind: 'search', target: 'channels', minFidelity: 0.2, heads: 'query', levels: [0.5], roundTo: 1 };
  const res = await O.runJob(OnnxModel.parse(bytes), { mode, eval: { samples } }, { ort: O.makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 }) });
  const recipe = res.report.search.recipe;
  assert.equal(recipe.heads, 'query');
  const q = (m, layer) => m.weight(m.graph.node.find((n) => n.name === `/model/model/layers.${layer}/self_attn/q_proj/MatMul`).input[1]).dims.map(Number);
  const k = (m, layer) => m.weight(m.graph.node.find((n) => n.name === `/model/model/layers.${layer}/self_attn/k_proj/MatMul`).input[1]).dims.map(Number);
  const cut = [0, 1].filter((l) => q(res.model, l)[1] < 16);
  assert.ok(cut.length > 0, `some layer lost query heads: ${JSON.stringify(recipe.layers)}`);
  for (const l of [0, 1]) assert.deepEqual(k(res.model, l), k(base, l), 'K heads kept');
  const replay = await O.runJob(OnnxModel.parse(bytes), { mode: { kind: 'recipe', recipe } });
  assert.equal(replay.model.weights.map((w) => `${w.name}:${w.dims}`).join(' '), res.model.weights.map((w) => `${w.name}:${w.dims}`).join(' '));
  assert.throws(() => O.checkJob({ mode: { ...mode, target: 'sparsity', levels: undefined, roundTo: undefined } }), (e) => e.option === 'mode.heads');
  assert.throws(() => O.parseRecipe({ default: { sparsity: 0.5 }, heads: 'query' }), /"heads" applies to channels recipes/);
});

test('a channels recipe and the channels mode make the same calibrated removal on a language model (the same score and refit)', async () => {
  const O = await import('#onnx-internal');
  const bytes = M.modelBytes('smollm2-tiny-gqa');
  const samples = O.makeInputSet(OnnxModel.parse(bytes), { count: 4 });
  const runner = O.makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });
  for (const heads of ['groups', 'query']) {
    const job = (mode) => O.runJob(OnnxModel.parse(bytes), { mode, method: 'sparsegpt', calibration: { samples } }, { ort: runner });
    const a = await job({ kind: 'channels', fraction: 0.5, roundTo: 1, heads });
    const b = await job({ kind: 'recipe', recipe: { default: { channels: 0.5 }, roundTo: 1, heads } });
    assert.equal(a.report.prune.options.score, 'fluctuation');
    assert.equal(b.report.prune.options.score, 'fluctuation', 'a language model\'s channel score, as the channels mode uses');
    for (const w of a.model.weights) {
      assert.deepEqual(b.model.readFloat(b.model.weight(w.name)), a.model.readFloat(w), `${heads}: ${w.name}`);
    }
  }
});

test('CLI sensitivity --channels query:L: the query heads are the units (no K/V in them)', async () => {
  const { writeNpy } = await import('./npy.mjs');
  const dir = G.tmpDir('sk-query-sens-');
  const input = path.join(dir, 'in.onnx');
  fs.writeFileSync(input, M.modelBytes('smollm2-tiny-gqa'));
  const evalDir = path.join(dir, 'eval');
  for (let k = 0; k < 3; k++) {
    const s = path.join(evalDir, `s${k}`);
    fs.mkdirSync(s, { recursive: true });
    const f = lmFeeds(7, 10 + k);
    for (const [name, t] of Object.entries(f)) writeNpy(path.join(s, `${name}.npy`), t.data, t.dims);
  }
  const table = (channels) => {
    const json = path.join(dir, `${channels.replace(/\W/g, '_')}.json`);
    const r = spawnSync(process.execPath, [CLI, 'sensitivity', input, '--eval', evalDir, '--channels', channels, '--round-to', '1', '--report', json, '-q'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(fs.readFileSync(json, 'utf8')).units;
  };
  const q = table('query:0.5'), g = table('0.5');
  const unit = (units) => units.find((u) => u.name === '/model/model/layers.0/self_attn/q_proj/MatMul');
  assert.ok(unit(q) && unit(g));
  assert.ok(unit(q).params < unit(g).params, `query heads (q, o: ${unit(q).params}) against a KV group (q, k, v, o: ${unit(g).params})`);
});
