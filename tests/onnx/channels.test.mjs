// Structured channel removal: dependency groups on small generated graphs, and the removed model's
// outputs against the masked-but-not-removed model (removing zeroed channels must change nothing).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { build } from './build.mjs';

build();
const { OnnxModel } = await import('#onnx-internal');
const { findChannelGroups, removeChannels } = await import('#onnx-internal');
const G = await import('./graphs.mjs');

const INPUTS = {
  residual: { x: [1, 4, 8, 8] }, concat: { x: [1, 3, 8, 8] }, depthwise: { x: [1, 4, 6, 6] },
  flattenGemm: { x: [1, 3, 4, 4] }, mlp: { x: [1, 10, 16] }, unhandled: { x: [1, 3, 5, 5] },
  convTranspose: { x: [1, 3, 4, 4] },
};

const groupOf = (groups, producer) => groups.find((g) => g.producers.some((p) => p.startsWith(producer)));
const members = (g) => g.members.map((m) => `${m.tensor}:${m.axis}`).sort();

test('residual: the Add couples both convs; BN, biases and consumers follow; GAP->Flatten->Gemm ends a group', () => {
  const { groups } = findChannelGroups(OnnxModel.parse(G.residual()));
  const ab = groupOf(groups, 'conv_0');
  assert.ok(ab.producers.some((p) => p.startsWith('conv_3')), 'conv A and conv B in one group');
  assert.equal(ab.channels, 8);
  assert.equal(ab.prunable, true);
  assert.deepEqual(members(ab), ['A.b:0', 'A.w:0', 'B.b:0', 'B.w:0', 'B.w:1', 'C.w:1', 'bn.b:0', 'bn.m:0', 'bn.s:0', 'bn.v:0']);
  const c = groupOf(groups, 'conv_6');
  assert.deepEqual(members(c), ['C.b:0', 'C.w:0', 'fc.w:1']);
  const fc = groupOf(groups, 'gemm_9');
  assert.equal(fc.prunable, false);
  assert.match(fc.reason, /graph output "y"/);
});

test('concat: each producer is a group with its offset range in the consumer', () => {
  const m = OnnxModel.parse(G.concat());
  const { groups, channelsOf } = findChannelGroups(m);
  const c1 = groupOf(groups, 'conv_0');
  const c2 = groupOf(groups, 'conv_1');
  assert.deepEqual([c1.channels, c2.channels], [4, 6]);
  assert.deepEqual(members(c1), ['c1.b:0', 'c1.w:0', 'c3.w:1']);
  const pos = (g) => channelsOf.get(g.id).map((ch) => ch.slices.find((s) => s.tensor === 'c3.w').pos);
  assert.deepEqual(pos(c1), [0, 1, 2, 3]);
  assert.deepEqual(pos(c2), [4, 5, 6, 7, 8, 9]);
});

test('depthwise: couples its input and output channels; per-channel Mul constant and Pad follow', () => {
  const { groups } = findChannelGroups(OnnxModel.parse(G.depthwise()));
  const g = groupOf(groups, 'conv_0');
  assert.equal(g.prunable, true, g.reason);
  assert.deepEqual(members(g), ['dw.b:0', 'dw.w:0', 'k:1', 'pw1.b:0', 'pw1.w:0', 'pw2.w:1']);
});

test('flatten->gemm: a channel is spatial-size consecutive rows of the Gemm weight', () => {
  const m = OnnxModel.parse(G.flattenGemm());
  const { groups, channelsOf } = findChannelGroups(m);
  const g = groupOf(groups, 'conv_0');
  assert.deepEqual(members(g), ['c.b:0', 'c.w:0', 'fc.w:0']);
  const sl = channelsOf.get(g.id).map((ch) => ch.slices.find((s) => s.tensor === 'fc.w'));
  assert.deepEqual(sl.map((s) => [s.pos, s.rep]), [0, 1, 2, 3, 4, 5].map((c) => [16 * c, 16]));
});

test('MatMul chain: hidden features with their bias and the next weight rows', () => {
  const { groups } = findChannelGroups(OnnxModel.parse(G.mlp()));
  const g = groupOf(groups, 'matmul_0');
  assert.equal(g.prunable, true, g.reason);
  assert.deepEqual(members(g), ['W1:1', 'W2:0', 'b1:0']);
});

test('ConvTranspose: input channels on weight axis 0, output channels on axis 1', () => {
  const { groups } = findChannelGroups(OnnxModel.parse(G.convTranspose()));
  assert.deepEqual(members(groupOf(groups, 'conv_0')), ['c1.b:0', 'c1.w:0', 'ct.w:0']);
  const t = groupOf(groups, 'convtranspose_2');
  assert.equal(t.prunable, true, t.reason);
  assert.deepEqual(members(t), ['c2.w:1', 'ct.b:0', 'ct.w:1']);
});

test('an unhandled op keeps its group whole, with the reason', () => {
  const { groups } = findChannelGroups(OnnxModel.parse(G.unhandled()));
  const g = groupOf(groups, 'conv_0');
  assert.equal(g.prunable, false);
  assert.match(g.reason, /Softmax/);
});

// Folding a removed channel's constant into the consumers' biases is exact where no consumer is a
// zero-padded kxk conv: there the removed model computes what the model with only those channels'
// filters zeroed (each then outputs a constant) computes.
for (const name of ['concat', 'flattenGemm', 'mlp']) {
  test(`removed == filters-zeroed (constant channels) where the fold is exact: ${name}`, async () => {
    const bytes = G.GRAPHS[name]('raw');
    const removed = OnnxModel.parse(bytes);
    const constant = OnnxModel.parse(bytes);
    const r = removeChannels(removed, { fraction: 0.5, scope: 'layer' });
    removeChannels(constant, { fraction: 0.5, scope: 'layer', apply: 'constant' });
    assert.ok(r.groups.removed.length > 0);
    const feeds = G.feedsFor(null, INPUTS[name]);
    const a = await G.run(removed.encode(), feeds);
    const b = await G.run(constant.encode(), feeds);
    for (const k of Object.keys(a)) {
      const scale = Math.max(1e-3, ...Array.from(b[k].data, Math.abs));
      assert.ok(G.maxAbsDiff(a[k].data, b[k].data) <= 1e-5 * scale, `max diff ${G.maxAbsDiff(a[k].data, b[k].data)}`);
    }
  });
}

for (const [name, make] of Object.entries(G.GRAPHS)) {
  for (const scope of ['layer', 'global']) {
    for (const store of ['raw', 'fp16']) {
      test(`removed == masked-not-removed to float rounding: ${name}, ${scope}, ${store}`, async () => {
        const bytes = make(store);
        const removed = OnnxModel.parse(bytes);
        const masked = OnnxModel.parse(bytes);
        const r = removeChannels(removed, { fraction: 0.5, scope });
        const rm = removeChannels(masked, { fraction: 0.5, scope, apply: 'mask' });
        assert.deepEqual(r.groups.removed, rm.groups.removed, 'same decisions');
        const feeds = G.feedsFor(null, INPUTS[name]);
        const a = await G.run(removed.encode(), feeds);
        const b = await G.run(masked.encode(), feeds);
        const orig = await G.run(bytes, feeds);
        for (const k of Object.keys(orig)) {
          assert.deepEqual(a[k].dims, orig[k].dims, 'graph output keeps its shape');
          const scale = Math.max(1e-3, ...Array.from(b[k].data, Math.abs));
          assert.ok(G.maxAbsDiff(a[k].data, b[k].data) <= 1e-5 * scale, `max diff ${G.maxAbsDiff(a[k].data, b[k].data)}`);
        }
        if (name === 'unhandled') {
          assert.equal(r.params.after, r.params.before, 'nothing removed');
        } else {
          assert.ok(r.params.after < r.params.before, `${r.params.after} < ${r.params.before}`);
          assert.ok(r.groups.removed.length > 0);
          assert.ok(r.groups.removed.every((g) => g.channelsAfter >= 1 && g.channelsAfter < g.channelsBefore));
          // The file really is smaller.
          assert.ok(removed.encode().length < bytes.length);
        }
      });
    }
  }
}

test('layer scope removes round(fraction * channels) of each prunable group, and keeps one at least', () => {
  const m = OnnxModel.parse(G.residual());
  const r = removeChannels(m, { fraction: 0.3 });
  const byFirst = Object.fromEntries(r.groups.removed.map((g) => [g.producers[0], [g.channelsBefore, g.channelsAfter]]));
  assert.deepEqual(byFirst.conv_0, [8, 6]); // floor(0.7 * 8 + 0.5) = 6
  assert.deepEqual(byFirst.conv_6, [6, 4]);
  assert.deepEqual(m.weight('A.w').dims, [6, 4, 3, 3]);
  assert.deepEqual(m.weight('B.w').dims, [6, 6, 3, 3]);
  assert.deepEqual(m.weight('C.w').dims, [4, 6, 1, 1]);
  assert.deepEqual(m.weight('fc.w').dims, [5, 4]);
  const m2 = OnnxModel.parse(G.residual());
  const r2 = removeChannels(m2, { fraction: 0.99 });
  assert.ok(r2.groups.removed.every((g) => g.channelsAfter === 1));
});

test('kept channels round to a multiple of roundTo (default 8): 32 hidden features at 0.3 keep 24, exact keeps 22', () => {
  const a = OnnxModel.parse(G.mlp());
  removeChannels(a, { fraction: 0.3 });
  assert.deepEqual(a.weight('W1').dims, [16, 24]);
  assert.deepEqual(a.weight('W2').dims, [24, 8]);
  const b = OnnxModel.parse(G.mlp());
  removeChannels(b, { fraction: 0.3, roundTo: 1 });
  assert.deepEqual(b.weight('W1').dims, [16, 22]);
  assert.throws(() => removeChannels(OnnxModel.parse(G.mlp()), { fraction: 0.3, roundTo: 0 }), (e) => e.code === 'invalid_value');
});

test('filter: only the accepted groups lose channels', () => {
  const m = OnnxModel.parse(G.residual());
  const r = removeChannels(m, { fraction: 0.5, filter: (g) => g.producers.includes('conv_6') });
  assert.deepEqual(r.groups.removed.map((g) => g.producers), [['conv_6']]);
  assert.deepEqual(m.weight('A.w').dims, [8, 4, 3, 3]);
  assert.deepEqual(m.weight('C.w').dims, [3, 8, 1, 1]);
  assert.deepEqual(m.weight('fc.w').dims, [5, 3]);
});

test('channel removal on external data: written back external, same outputs as in memory', async () => {
  const fs = await import('node:fs');
  const path = await import('node:path');
  const { ModelProto, loadOnnx, saveOnnx } = await import('#onnx-internal');
  const dir = G.tmpDir();
  const src = path.join(dir, 'm.onnx');
  const model = ModelProto.decode(G.concat());
  const parts = [];
  let off = 0;
  for (const t of model.graph.initializer) {
    parts.push(Buffer.from(t.raw_data));
    t.external_data = [{ key: 'location', value: 'w.bin' }, { key: 'offset', value: String(off) }, { key: 'length', value: String(t.raw_data.length) }];
    t.data_location = 1;
    t.raw_data = new Uint8Array(0);
    off += parts.at(-1).length;
  }
  fs.writeFileSync(path.join(dir, 'w.bin'), Buffer.concat(parts));
  fs.writeFileSync(src, ModelProto.encode(model).finish());
  const ext = await loadOnnx(src);
  removeChannels(ext, { fraction: 0.5 });
  await saveOnnx(ext, path.join(dir, 'out.onnx'));
  const back = await loadOnnx(path.join(dir, 'out.onnx'));
  assert.equal(back.weight('c3.w').storage, 'external');
  assert.deepEqual(back.weight('c3.w').dims, [3, 5, 1, 1]);
  const mem = OnnxModel.parse(G.concat());
  removeChannels(mem, { fraction: 0.5 });
  const feeds = G.feedsFor(null, INPUTS.concat);
  const a = await G.run(path.join(dir, 'out.onnx'), feeds);
  const b = await G.run(mem.encode(), feeds);
  assert.equal(G.maxAbsDiff(a.y.data, b.y.data), 0);
});

// Subgraphs are walked: a value read inside an If branch is followed there, and the If's output
// carries channels when both branches give the same ones (else they are kept whole).
for (const [elseInput, prunable] of [['a', true], ['x', false]]) {
  test(`a value read implicitly by If branches: ${prunable ? 'followed across the If' : 'kept whole when the branches differ'}`, async () => {
    const { ModelProto } = await import('#onnx-internal');
    const model = ModelProto.decode(G.unhandled());
    const g = model.graph;
    // replace the Softmax by If(cond) { Identity(a) } else { Identity(elseInput) }
    const branch = (name, input) => ({ name, node: [{ op_type: 'Identity', input: [input], output: [`${name}_out`] }], output: [{ name: `${name}_out` }] });
    const i = g.node.findIndex((n) => n.op_type === 'Softmax');
    g.node[i] = ModelProto.lookupType('onnx.NodeProto').fromObject({
      op_type: 'If', name: 'if_1', input: ['cond'], output: ['s'],
      attribute: [{ name: 'then_branch', type: 5, g: branch('then', 'a') }, { name: 'else_branch', type: 5, g: branch('else', elseInput) }],
    });
    g.input.push({ name: 'cond', type: { tensor_type: { elem_type: 9, shape: { dim: [] } } } });
    const m = OnnxModel.parse(ModelProto.encode(model).finish());
    const { groups } = findChannelGroups(m);
    const c1 = groupOf(groups, 'conv_0');
    assert.equal(c1.prunable, prunable, c1.reason);
    if (prunable) assert.deepEqual(members(c1), ['c1.b:0', 'c1.w:0', 'c2.w:1']);
    else assert.match(c1.reason, /If if_1/);
  });
}
