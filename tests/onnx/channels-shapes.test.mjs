// Shapes the file does not record (channels/infer-shapes.ts) on a small attention block written the
// way transformers' export writes it: the head Reshape's shape is Concat(Unsqueeze(Gather(Shape(x))),
// …, [-1], [D]) over a value whose rank only inference tells, and the mask added to the scores either
// comes in with its shape or is Expand(m, Where(Equal(v, -1), 1, v)). The heads are removable exactly
// when the mask broadcasts over them (its head axis is 1); a mask with one plane per head keeps them.
// And a computed shape read by two groups: the group that is cut reads a private copy of the chain
// (channels/shape-copies.ts), the other one the original.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { build } from './build.mjs';

build();
const { OnnxModel, findChannelGroups, removeChannels } = await import('sparsekit-wasm/onnx');
const G = await import('./graphs.mjs');
const M = await import('./models.mjs');
const ort = (await import('onnxruntime-node')).default;

const C = 8, H = 2, D = 4;
const int = (values) => ({ dims: [values.length], int64: values });
const scalar = (v) => ({ dims: [], int64: [v] });

/**
 * x (b, s, 8) -> LayerNormalization (output shape not recorded) -> q / k / v MatMul -> heads ->
 * scores + mask -> Softmax -> ·V -> merge -> output MatMul -> y. `mask`: 'broadcast' (input (b, 1, s, s)),
 * 'per-head' (input (b, 2, s, s)), 'expand' (Expand of (b, 1, 1, s) to Where(Equal(v, -1), 1, v) with
 * v = [b, -1, s, s]), 'expand-heads' (the same with v = [b, 2, s, s]).
 */
function attention(mask) {
  const maskDims = { broadcast: ['b', 1, 's', 's'], 'per-head': ['b', H, 's', 's'] }[mask] ?? ['b', 1, 1, 's'];
  const inits = {
    'ln.s': { dims: [C], offset: 1, scale: 0.1 }, 'ln.b': { dims: [C], scale: 0.1 },
    wq: { dims: [C, C] }, wk: { dims: [C, C] }, wv: { dims: [C, C] }, wo: { dims: [C, C] }, 'wo.b': { dims: [C], scale: 0.1 },
    i0: scalar(0), i1: scalar(1), ax0: int([0]), minus1: int([-1]), headSize: int([D]), heads: int([H]),
    ones: int([1, 1, 1, 1]), negs: int([-1, -1, -1, -1]),
  };
  const nodes = [
    ['LayerNormalization', ['x', 'ln.s', 'ln.b'], ['h'], { axis: -1 }],
    ['Shape', ['h'], ['hs']],
    ['Gather', ['hs', 'i0'], ['b0']], ['Gather', ['hs', 'i1'], ['s0']],
    ['Unsqueeze', ['b0', 'ax0'], ['b1']], ['Unsqueeze', ['s0', 'ax0'], ['s1']],
    ['Concat', ['b1', 's1', 'minus1', 'headSize'], ['split'], { axis: 0 }],
    ['Concat', ['b1', 's1', 'minus1'], ['merge'], { axis: 0 }],
    ['MatMul', ['h', 'wq'], ['q']], ['MatMul', ['h', 'wk'], ['k']], ['MatMul', ['h', 'wv'], ['v']],
    ['Reshape', ['q', 'split'], ['qh']], ['Reshape', ['k', 'split'], ['kh']], ['Reshape', ['v', 'split'], ['vh']],
    ['Transpose', ['qh'], ['qt'], { perm: [0, 2, 1, 3] }], ['Transpose', ['kh'], ['kt'], { perm: [0, 2, 3, 1] }],
    ['Transpose', ['vh'], ['vt'], { perm: [0, 2, 1, 3] }],
    ['MatMul', ['qt', 'kt'], ['scores']],
  ];
  if (mask.startsWith('expand')) {
    nodes.push(
      ['Concat', ['b1', mask === 'expand' ? 'minus1' : 'heads', 's1', 's1'], ['want'], { axis: 0 }],
      ['Equal', ['want', 'negs'], ['isNeg']],
      ['Where', ['isNeg', 'ones', 'want'], ['to']],
      ['Expand', ['m', 'to'], ['mask']],
      ['Add', ['scores', 'mask'], ['masked']],
    );
  } else {
    nodes.push(['Add', ['scores', 'm'], ['masked']]);
  }
  nodes.push(
    ['Softmax', ['masked'], ['p'], { axis: -1 }],
    ['MatMul', ['p', 'vt'], ['ctx']],
    ['Transpose', ['ctx'], ['ct'], { perm: [0, 2, 1, 3] }],
    ['Reshape', ['ct', 'merge'], ['merged']],
    ['MatMul', ['merged', 'wo'], ['o']],
    ['Add', ['o', 'wo.b'], ['y']],
  );
  return G.makeModel({ inputs: [['x', ['b', 's', C]], ['m', maskDims]], outputs: [['y', ['b', 's', C]]], inits, nodes, opset: 17 });
}

const headsOf = (bytes) => findChannelGroups(OnnxModel.parse(bytes)).groups.find((g) => g.producers.includes('matmul_8'));

for (const mask of ['broadcast', 'expand']) {
  test(`attention with a computed head shape, mask ${mask}: the heads are one removable group; removed == masked in onnxruntime`, async () => {
    const bytes = attention(mask);
    const heads = headsOf(bytes);
    assert.ok(heads, 'the query projection starts a group');
    assert.equal(heads.prunable, true, heads.reason);
    assert.equal(heads.channels, H, 'one unit per head');
    assert.ok(['matmul_9', 'matmul_10'].every((p) => heads.producers.includes(p)), 'Q, K and V tied');
    const removed = OnnxModel.parse(bytes), masked = OnnxModel.parse(bytes);
    removeChannels(removed, { fraction: 0.5, roundTo: 1 });
    removeChannels(masked, { fraction: 0.5, roundTo: 1, apply: 'mask' });
    assert.deepEqual(removed.weight('wq').dims, [C, D], 'one head left');
    const r = G.rng(5);
    const [B, S] = [2, 3];
    const feeds = {
      x: new ort.Tensor('float32', Float32Array.from({ length: B * S * C }, () => r()), [B, S, C]),
      m: mask === 'broadcast'
        ? new ort.Tensor('float32', Float32Array.from({ length: B * S * S }, (_, i) => (i % S === S - 1 ? -1e4 : 0)), [B, 1, S, S])
        : new ort.Tensor('float32', Float32Array.from({ length: B * S }, (_, i) => (i % S === S - 1 ? -1e4 : 0)), [B, 1, 1, S]),
    };
    const [a, b] = [await M.runModel(removed.encode(), feeds), await M.runModel(masked.encode(), feeds)];
    assert.deepEqual(a.y.dims, [B, S, C]);
    assert.ok(G.maxAbsDiff(a.y.data, b.y.data) <= 1e-5, `max diff ${G.maxAbsDiff(a.y.data, b.y.data)}`);
  });
}

for (const mask of ['per-head', 'expand-heads']) {
  test(`attention whose mask has one plane per head (${mask}): the heads are kept, the mask Add named`, () => {
    const heads = headsOf(attention(mask));
    assert.equal(heads.prunable, false);
    assert.match(heads.reason, /Add add_\d+ combines the channels with a value that is not per channel/);
  });
}

/**
 * Two conv groups reshaped with ONE computed shape Concat(Unsqueeze(Gather(Shape(x), 0)), [8], [4], [4]):
 * x -> conv a (8) -> Reshape(shape) -> conv b (8 -> 4); x -> conv c (8) -> Reshape(shape) -> conv d (8 -> 4); y = b + d.
 */
const sharedShape = () => G.makeModel({
  inputs: [['x', ['n', 3, 4, 4]]], outputs: [['y', ['n', 4, 4, 4]]], opset: 13,
  inits: {
    'a.w': { dims: [8, 3, 1, 1] }, 'b.w': { dims: [4, 8, 1, 1] }, 'c.w': { dims: [8, 3, 1, 1] }, 'd.w': { dims: [4, 8, 1, 1] },
    i0: scalar(0), ax0: int([0]), eight: int([8]), four: int([4]),
  },
  nodes: [
    ['Shape', ['x'], ['xs']], ['Gather', ['xs', 'i0'], ['n0']], ['Unsqueeze', ['n0', 'ax0'], ['n1']],
    ['Concat', ['n1', 'eight', 'four', 'four'], ['shape'], { axis: 0 }],
    ['Conv', ['x', 'a.w'], ['a']], ['Reshape', ['a', 'shape'], ['ar']], ['Conv', ['ar', 'b.w'], ['b']],
    ['Conv', ['x', 'c.w'], ['c']], ['Reshape', ['c', 'shape'], ['cr']], ['Conv', ['cr', 'd.w'], ['d']],
    ['Add', ['b', 'd'], ['y']],
  ],
});

test('one computed shape read by two groups: cutting one group gives its Reshape a private copy of the chain', async () => {
  const bytes = sharedShape();
  const m = OnnxModel.parse(bytes), masked = OnnxModel.parse(bytes);
  const { groups } = findChannelGroups(m);
  const [ga, gc] = ['conv_4', 'conv_7'].map((p) => groups.find((g) => g.producers.includes(p)));
  for (const g of [ga, gc]) {
    assert.equal(g.prunable, true, g.reason);
    assert.ok(g.members.some((x) => x.tensor === 'eight' && x.kind === 'shape'));
  }
  const opts = { fraction: 0.5, roundTo: 1, filter: (g) => g.id === ga.id };
  removeChannels(m, opts);
  removeChannels(masked, { ...opts, apply: 'mask' });
  const node = (name) => m.graph.node.find((n) => n.name === name);
  const shapeOf = (reshape) => node(reshape).input[1];
  assert.notEqual(shapeOf('reshape_5'), 'shape', 'the cut group reads a copy of the Concat');
  assert.equal(shapeOf('reshape_8'), 'shape', 'the other group reads the original');
  const copy = m.graph.node.find((n) => n.output[0] === shapeOf('reshape_5'));
  assert.equal(copy.op_type, 'Concat');
  assert.deepEqual(m.readInts(m.constants().get(copy.input[1]).tensor), [4]);
  assert.deepEqual(m.readInts(m.constants().get('eight').tensor), [8]);
  const r = G.rng(9);
  const feeds = { x: new ort.Tensor('float32', Float32Array.from({ length: 2 * 3 * 16 }, () => r()), [2, 3, 4, 4]) };
  const [a, b] = [await M.runModel(m.encode(), feeds), await M.runModel(masked.encode(), feeds)];
  assert.deepEqual(a.y.dims, [2, 4, 4, 4]);
  assert.ok(G.maxAbsDiff(a.y.data, b.y.data) <= 1e-5);
});
