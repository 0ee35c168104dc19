// Per-op channel rules on small generated graphs: Slice of the channel axis and a Concat with an input
// that carries no channels; Gather / Unsqueeze / ReduceMean / Squeeze on other axes; Reshape shapes
// computed as Shape -> Gather -> Unsqueeze -> Concat (keeping the channel axis with a constant count,
// and flattening); attention heads as torch's SDPA export writes them. Groups found and removable; removed == masked in onnxruntime-node; outputs keep
// their shapes; the constants the shapes and bounds read are rewritten.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { build } from './build.mjs';

build();
const { OnnxModel, findChannelGroups, removeChannels } = await import('#onnx-internal');
const G = await import('./graphs.mjs');

const conv = (name, o, c, k = 1) => ({ [`${name}.w`]: { dims: [o, c, k, k] }, [`${name}.b`]: { dims: [o], scale: 0.1 } });

/** x -> conv a (8) -> Relu -> Slice channels [2, 6) -> Concat with x (3, not followed) -> conv b (7 -> 4); a -> conv d (8 -> 4); y = b + d */
const sliceConcat = () => G.makeModel({
  inputs: [['x', [1, 3, 8, 8]]], outputs: [['y', [1, 4, 8, 8]]], opset: 13,
  inits: { ...conv('a', 8, 3, 3), ...conv('b', 4, 7), ...conv('d', 4, 8), starts: { dims: [1], int64: [2] }, ends: { dims: [1], int64: [6] }, axes: { dims: [1], int64: [1] } },
  nodes: [
    ['Conv', ['x', 'a.w', 'a.b'], ['a'], { pads: [1, 1, 1, 1] }],
    ['Relu', ['a'], ['ar']],
    ['Slice', ['ar', 'starts', 'ends', 'axes'], ['s']],
    ['Concat', ['s', 'x'], ['cat'], { axis: 1 }],
    ['Conv', ['cat', 'b.w', 'b.b'], ['bo']],
    ['Conv', ['ar', 'd.w', 'd.b'], ['do']],
    ['Add', ['bo', 'do'], ['y']],
  ],
});

/** x -> conv a (6) -> Relu -> Gather(batch 0) -> Unsqueeze(0) -> ReduceMean(2, 3) -> Squeeze(2, 3) -> Gemm (6 -> 5) -> y */
const otherAxes = () => G.makeModel({
  inputs: [['x', [1, 3, 6, 6]]], outputs: [['y', [1, 5]]], opset: 13,
  inits: { ...conv('a', 6, 3, 3), zero: { dims: [], int64: [0] }, ax0: { dims: [1], int64: [0] }, ax23: { dims: [2], int64: [2, 3] }, 'fc.w': { dims: [5, 6] }, 'fc.b': { dims: [5] } },
  nodes: [
    ['Conv', ['x', 'a.w', 'a.b'], ['a'], { pads: [1, 1, 1, 1] }],
    ['Relu', ['a'], ['ar']],
    ['Gather', ['ar', 'zero'], ['g'], { axis: 0 }],
    ['Unsqueeze', ['g', 'ax0'], ['u']],
    ['ReduceMean', ['u'], ['m'], { axes: [2, 3], keepdims: 1 }],
    ['Squeeze', ['m', 'ax23'], ['q']],
    ['Gemm', ['q', 'fc.w', 'fc.b'], ['y'], { transB: 1 }],
  ],
});

/**
 * x (N, 3, 4, 4) -> conv a (6) -> Relu -> Reshape to (N, 6, -1) with the shape computed from Shape(.)[0]
 * and a constant 6 -> Unsqueeze(3) -> conv b (6 -> 4) -> Relu -> Reshape to (N, -1) computed -> Gemm (64 -> 5)
 */
const computedShapes = () => G.makeModel({
  inputs: [['x', ['N', 3, 4, 4]]], outputs: [['y', ['N', 5]]], opset: 13,
  inits: {
    ...conv('a', 6, 3, 3), ...conv('b', 4, 6), zero: { dims: [], int64: [0] }, ax0: { dims: [1], int64: [0] }, ax3: { dims: [1], int64: [3] },
    six: { dims: [1], int64: [6] }, minus1: { dims: [1], int64: [-1] }, minus1b: { dims: [1], int64: [-1] }, 'fc.w': { dims: [5, 64] }, 'fc.b': { dims: [5] },
  },
  nodes: [
    ['Conv', ['x', 'a.w', 'a.b'], ['a'], { pads: [1, 1, 1, 1] }],
    ['Relu', ['a'], ['ar']],
    ['Shape', ['ar'], ['sh']],
    ['Gather', ['sh', 'zero'], ['n'], { axis: 0 }],
    ['Unsqueeze', ['n', 'ax0'], ['n1']],
    ['Concat', ['n1', 'six', 'minus1'], ['shape1'], { axis: 0 }],
    ['Reshape', ['ar', 'shape1'], ['r']],
    ['Unsqueeze', ['r', 'ax3'], ['r4']],
    ['Conv', ['r4', 'b.w', 'b.b'], ['b']],
    ['Relu', ['b'], ['br']],
    ['Shape', ['br'], ['sh2']],
    ['Gather', ['sh2', 'zero'], ['n2'], { axis: 0 }],
    ['Unsqueeze', ['n2', 'ax0'], ['n21']],
    ['Concat', ['n21', 'minus1b'], ['shape2'], { axis: 0 }],
    ['Reshape', ['br', 'shape2'], ['f']],
    ['Gemm', ['f', 'fc.w', 'fc.b'], ['y'], { transB: 1 }],
  ],
});

/**
 * Attention as torch exports scaled_dot_product_attention (all-MiniLM-L6-v2, bench/models/minilm.py):
 * x (N, S, 8) -> q, k, v (8) -> heads (N, S, 2, 4) -> Softmax(q kᵀ) -> Where(IsNaN(p), 0, p) -> · v ->
 * Reshape to (Shape[0], -1, Shape[2], Shape[3]) (the channel axis inferred, the others copied) ->
 * heads merged (N, S, 8) -> o (8 -> 8) -> y.
 */
const sdpaHeads = () => G.makeModel({
  inputs: [['x', ['N', 'S', 8]]], outputs: [['y', ['N', 'S', 8]]], opset: 13,
  inits: {
    q: { dims: [8, 8] }, k: { dims: [8, 8] }, v: { dims: [8, 8] }, o: { dims: [8, 8] }, zerof: { dims: [], data: [0] },
    split: { dims: [4], int64: [0, 0, 2, 4] }, merge: { dims: [3], int64: [0, 0, 8] },
    i0: { dims: [], int64: [0] }, i2: { dims: [], int64: [2] }, i3: { dims: [], int64: [3] }, ax0: { dims: [1], int64: [0] }, minus1: { dims: [1], int64: [-1] },
  },
  nodes: [
    ['MatMul', ['x', 'q'], ['qx']], ['MatMul', ['x', 'k'], ['kx']], ['MatMul', ['x', 'v'], ['vx']],
    ['Reshape', ['qx', 'split'], ['qh']], ['Reshape', ['kx', 'split'], ['kh']], ['Reshape', ['vx', 'split'], ['vh']],
    ['Transpose', ['qh'], ['qt'], { perm: [0, 2, 1, 3] }], ['Transpose', ['kh'], ['kt'], { perm: [0, 2, 3, 1] }], ['Transpose', ['vh'], ['vt'], { perm: [0, 2, 1, 3] }],
    ['MatMul', ['qt', 'kt'], ['sc']],
    ['Softmax', ['sc'], ['p'], { axis: -1 }],
    ['IsNaN', ['p'], ['pn']],
    ['Where', ['pn', 'zerof', 'p'], ['pz']],
    ['MatMul', ['pz', 'vt'], ['a']],
    ['Shape', ['a'], ['sh']],
    ['Gather', ['sh', 'i0'], ['d0'], { axis: 0 }], ['Gather', ['sh', 'i2'], ['d2'], { axis: 0 }], ['Gather', ['sh', 'i3'], ['d3'], { axis: 0 }],
    ['Unsqueeze', ['d0', 'ax0'], ['u0']], ['Unsqueeze', ['d2', 'ax0'], ['u2']], ['Unsqueeze', ['d3', 'ax0'], ['u3']],
    ['Concat', ['u0', 'minus1', 'u2', 'u3'], ['view'], { axis: 0 }],
    ['Reshape', ['a', 'view'], ['av']],
    ['Transpose', ['av'], ['at'], { perm: [0, 2, 1, 3] }],
    ['Reshape', ['at', 'merge'], ['am']],
    ['MatMul', ['am', 'o'], ['y']],
  ],
});

const GRAPHS = { sliceConcat, otherAxes, computedShapes, sdpaHeads };
const INPUTS = { sliceConcat: { x: [1, 3, 8, 8] }, otherAxes: { x: [1, 3, 6, 6] }, computedShapes: { x: [2, 3, 4, 4] }, sdpaHeads: { x: [2, 5, 8] } };
const groupOf = (groups, producer) => groups.find((g) => g.producers.includes(producer));
const members = (g) => g.members.map((m) => `${m.tensor}:${m.axis}${m.kind === 'shape' ? ' (shape)' : ''}`).sort();

test('Slice of the channel axis and a Concat with an input that carries no channels', () => {
  const { groups, channelsOf } = findChannelGroups(OnnxModel.parse(sliceConcat()));
  const a = groupOf(groups, 'conv_0');
  assert.equal(a.prunable, true, a.reason);
  assert.deepEqual(members(a), ['a.b:0', 'a.w:0', 'b.w:1', 'd.w:1', 'ends:0 (shape)', 'starts:0 (shape)']);
  // Channels 2..5 are the slice: positions 0..3 of b's input; channels 0, 1 move both bounds.
  const pos = channelsOf.get(a.id).map((ch) => ch.slices.filter((s) => s.tensor === 'b.w').map((s) => s.pos));
  assert.deepEqual(pos, [[], [], [0], [1], [2], [3], [], []]);
  const bounds = channelsOf.get(a.id).map((ch) => ch.slices.filter((s) => s.kind === 'shape').map((s) => s.tensor).sort().join('+'));
  assert.deepEqual(bounds, ['ends+starts', 'ends+starts', 'ends', 'ends', 'ends', 'ends', '', '']);
});

test('Slice bounds are rewritten with the removal', () => {
  const m = OnnxModel.parse(sliceConcat());
  const a = groupOf(findChannelGroups(m).groups, 'conv_0');
  // Drop channels 0 (before the slice) and 3 (inside it): starts 2 -> 1, ends 6 -> 4.
  removeChannels(m, { fraction: 0.5, keep: new Map([[a.id, Uint8Array.from([0, 1, 1, 0, 1, 1, 1, 1])]]), filter: (g) => g.id === a.id });
  const ints = (n) => m.readInts(m.graph.initializer.find((t) => t.name === n));
  assert.deepEqual([ints('starts'), ints('ends')], [[1], [4]]);
  assert.deepEqual(m.weight('b.w').dims, [4, 6, 1, 1]);
});

test('Gather, Unsqueeze, ReduceMean and Squeeze on other axes move the channel axis along', () => {
  const { groups } = findChannelGroups(OnnxModel.parse(otherAxes()));
  const a = groupOf(groups, 'conv_0');
  assert.equal(a.prunable, true, a.reason);
  assert.deepEqual(members(a), ['a.b:0', 'a.w:0', 'fc.w:1']);
});

test('computed Reshape shapes: a constant channel count is a member; Shape(.)[0] with -1 flattens', () => {
  const { groups, channelsOf } = findChannelGroups(OnnxModel.parse(computedShapes()));
  const a = groupOf(groups, 'conv_0');
  assert.equal(a.prunable, true, a.reason);
  assert.deepEqual(members(a), ['a.b:0', 'a.w:0', 'b.w:1', 'six:0 (shape)']);
  const b = groupOf(groups, 'conv_8');
  assert.equal(b.prunable, true, b.reason);
  assert.deepEqual(channelsOf.get(b.id).map((ch) => ch.slices.find((s) => s.tensor === 'fc.w')).map((s) => [s.pos, s.rep]), [[0, 16], [16, 16], [32, 16], [48, 16]]);
});

test('heads through a Where(IsNaN(p), 0, p) and a view with the head axis inferred (torch SDPA export)', () => {
  const { groups } = findChannelGroups(OnnxModel.parse(sdpaHeads()));
  const h = groupOf(groups, 'matmul_0');
  assert.equal(h.prunable, true, h.reason);
  assert.equal(h.channels, 2);
  assert.deepEqual(['matmul_0', 'matmul_1', 'matmul_2'].every((p) => h.producers.includes(p)), true, h.producers.join());
});

for (const [name, make] of Object.entries(GRAPHS)) {
  for (const scope of ['layer', 'global']) {
    test(`removed == masked-not-removed to float rounding: ${name}, ${scope}`, async () => {
      const bytes = make();
      const removed = OnnxModel.parse(bytes), masked = OnnxModel.parse(bytes);
      const r = removeChannels(removed, { fraction: 0.5, scope, roundTo: 1 });
      removeChannels(masked, { fraction: 0.5, scope, roundTo: 1, apply: 'mask' });
      assert.ok(r.groups.removed.length > 0 && r.params.after < r.params.before);
      const feeds = G.feedsFor(null, INPUTS[name]);
      const [a, b, orig] = [await G.run(removed.encode(), feeds), await G.run(masked.encode(), feeds), await G.run(bytes, feeds)];
      for (const k of Object.keys(orig)) {
        assert.deepEqual(a[k].dims, orig[k].dims, 'graph output keeps its shape');
        const scale = Math.max(1e-3, ...Array.from(b[k].data, Math.abs));
        assert.ok(G.maxAbsDiff(a[k].data, b[k].data) <= 1e-5 * scale, `max diff ${G.maxAbsDiff(a[k].data, b[k].data)}`);
      }
    });
  }
}

test('a weight declaring 2^31 output channels over a few bytes is refused with a typed error, not looped over', async () => {
  const { ModelProto } = await import('#onnx-internal');
  const model = ModelProto.decode(otherAxes());
  model.graph.initializer.find((t) => t.name === 'a.w').dims = [2 ** 31, 3, 3, 3];
  const typed = (e) => e.name === 'OnnxError' && ['corrupt', 'truncated', 'size_mismatch'].includes(e.reason);
  let m;
  // The reader may refuse the file itself (a size check at load); else the analysis must.
  try { m = OnnxModel.parse(ModelProto.encode(model).finish()); } catch (e) { assert.ok(typed(e), String(e)); return; }
  assert.throws(() => findChannelGroups(m), typed);
});

test('a removal that cannot read a tensor it cuts (an int32 depthwise bias) is refused with the model untouched', async () => {
  // Found by the ONNX fuzzer: the removal wrote the depthwise weight, then failed on its int32
  // bias, leaving a Conv whose group no longer divided its weight (a file that would not load).
  const fs = await import('node:fs');
  const bytes = fs.readFileSync(new URL('../data/regressions/removal-int-bias.onnx', import.meta.url));
  for (const scope of ['layer', 'global']) {
    const m = OnnxModel.parse(bytes);
    const before = Buffer.from(m.encode());
    assert.throws(() => removeChannels(m, { fraction: 0.5, scope, roundTo: 1 }), (e) => e.name === 'OnnxError' && e.reason === 'unsupported');
    assert.ok(Buffer.from(m.encode()).equals(before), `${scope}: the model is as it was`);
  }
});
