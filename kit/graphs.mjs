// Small ONNX graphs generated for the tests (residual, concat, depthwise, flatten->gemm, MatMul, an
// unhandled op), with deterministic weights, and helpers to run them in onnxruntime-node.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { ModelProto, DT, floatToHalf } from '#onnx-internal';

/** Deterministic pseudo-random numbers in [-1, 1). */
export function rng(seed = 1) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return (s / 2 ** 31) - 1;
  };
}

const FLOAT_ATTRS = new Set(['alpha', 'beta', 'epsilon', 'min', 'max', 'momentum']);

function attribute(name, v) {
  if (Array.isArray(v)) return { name, type: 7, ints: v };
  if (FLOAT_ATTRS.has(name)) return { name, type: 1, f: v };
  return { name, type: 2, i: v };
}

const vi = (name, dims, elem = DT.FLOAT) => ({
  name, type: { tensor_type: { elem_type: elem, shape: { dim: dims.map((d) => (typeof d === 'string' ? { dim_param: d } : { dim_value: d })) } } },
});

/**
 * Builds a model. `inits`: {name: {dims, data?: number[] | Float32Array, int64?: number[]}}; float
 * tensors without data get random values. `store`: 'raw' (default), 'float_data', 'fp16', 'constant'
 * (weights as Constant nodes).
 */
export function makeModel({ inputs, outputs, nodes, inits = {}, seed = 7, store = 'raw', opset = 13 }) {
  const r = rng(seed);
  const tensors = Object.entries(inits).map(([name, t]) => {
    if (t.int64) return { name, dims: t.dims, data_type: DT.INT64, raw_data: new Uint8Array(BigInt64Array.from(t.int64.map(BigInt)).buffer) };
    const n = t.dims.reduce((a, b) => a * b, 1);
    const data = t.data ? Float32Array.from(t.data) : Float32Array.from({ length: n }, () => r() * (t.scale ?? 0.5) + (t.offset ?? 0));
    if (store === 'float_data') return { name, dims: t.dims, data_type: DT.FLOAT, float_data: Array.from(data) };
    if (store === 'fp16') {
      const h = Uint16Array.from(data, (v) => floatToHalf(v));
      return { name, dims: t.dims, data_type: DT.FLOAT16, raw_data: new Uint8Array(h.buffer) };
    }
    return { name, dims: t.dims, data_type: DT.FLOAT, raw_data: new Uint8Array(data.buffer) };
  });
  const graphNodes = nodes.map(([op, input, output, attrs = {}], i) => ({
    op_type: op, input, output, name: `${op.toLowerCase()}_${i}`,
    attribute: Object.entries(attrs).map(([k, v]) => attribute(k, v)),
  }));
  let initializer = tensors;
  if (store === 'constant') {
    graphNodes.unshift(...tensors.map((t) => ({ op_type: 'Constant', input: [], output: [t.name], name: `const_${t.name}`, attribute: [{ name: 'value', type: 4, t }] })));
    initializer = [];
  }
  if (store === 'fp16') {
    // float16 weights cast to float before use, as fp16 exports do
    const casted = new Set(tensors.filter((t) => t.data_type === DT.FLOAT16).map((t) => t.name));
    for (const n of graphNodes) n.input = n.input.map((x) => (casted.has(x) ? `${x}_f32` : x));
    graphNodes.unshift(...[...casted].map((x) => ({ op_type: 'Cast', input: [x], output: [`${x}_f32`], name: `cast_${x}`, attribute: [{ name: 'to', type: 2, i: 1 }] })));
  }
  const model = {
    ir_version: 8, producer_name: 'sparsekit-wasm tests', opset_import: [{ domain: '', version: opset }],
    graph: { name: 'g', node: graphNodes, initializer, input: inputs.map(([n, d, e]) => vi(n, d, e)), output: outputs.map(([n, d]) => vi(n, d)) },
  };
  return ModelProto.encode(ModelProto.fromObject(model)).finish();
}

const conv = (name, o, c, k = 3, extra = {}) => ({
  [`${name}.w`]: { dims: [o, c, k, k] },
  [`${name}.b`]: { dims: [o], scale: 0.1 },
  ...extra,
});
const bn = (name, c) => ({
  [`${name}.s`]: { dims: [c], scale: 0.3, offset: 1 }, [`${name}.b`]: { dims: [c], scale: 0.2 },
  [`${name}.m`]: { dims: [c], scale: 0.1 }, [`${name}.v`]: { dims: [c], scale: 0.2, offset: 1 },
});

/** x -> convA -> BN -> Relu -> convB -> Add(relu) -> Relu -> convC -> GAP -> Flatten -> Gemm(transB) -> y */
export const residual = (store) => makeModel({
  store,
  inputs: [['x', [1, 4, 8, 8]]], outputs: [['y', [1, 5]]],
  inits: { ...conv('A', 8, 4), ...bn('bn', 8), ...conv('B', 8, 8), ...conv('C', 6, 8, 1), 'fc.w': { dims: [5, 6] }, 'fc.b': { dims: [5] } },
  nodes: [
    ['Conv', ['x', 'A.w', 'A.b'], ['a'], { pads: [1, 1, 1, 1] }],
    ['BatchNormalization', ['a', 'bn.s', 'bn.b', 'bn.m', 'bn.v'], ['a_bn']],
    ['Relu', ['a_bn'], ['a_r']],
    ['Conv', ['a_r', 'B.w', 'B.b'], ['b'], { pads: [1, 1, 1, 1] }],
    ['Add', ['b', 'a_r'], ['s']],
    ['Relu', ['s'], ['s_r']],
    ['Conv', ['s_r', 'C.w', 'C.b'], ['c']],
    ['GlobalAveragePool', ['c'], ['p']],
    ['Flatten', ['p'], ['f']],
    ['Gemm', ['f', 'fc.w', 'fc.b'], ['y'], { transB: 1 }],
  ],
});

/** x -> conv1 (4), conv2 (6) -> Concat -> HardSwish -> MaxPool -> conv3 (10 -> 3) -> y */
export const concat = (store) => makeModel({
  store,
  inputs: [['x', [1, 3, 8, 8]]], outputs: [['y', [1, 3, 4, 4]]],
  inits: { ...conv('c1', 4, 3), ...conv('c2', 6, 3), ...conv('c3', 3, 10, 1) },
  nodes: [
    ['Conv', ['x', 'c1.w', 'c1.b'], ['a'], { pads: [1, 1, 1, 1] }],
    ['Conv', ['x', 'c2.w', 'c2.b'], ['b'], { pads: [1, 1, 1, 1] }],
    ['Concat', ['a', 'b'], ['cat'], { axis: 1 }],
    ['HardSwish', ['cat'], ['h']],
    ['MaxPool', ['h'], ['mp'], { kernel_shape: [2, 2], strides: [2, 2] }],
    ['Conv', ['mp', 'c3.w', 'c3.b'], ['y']],
  ],
  opset: 14,
});

/** x -> pw1 (8) -> Relu -> depthwise (group 8) -> Clip -> Mul(per-channel const) -> Pad -> pw2 (8 -> 4) -> y */
export const depthwise = (store) => makeModel({
  store,
  inputs: [['x', [1, 4, 6, 6]]], outputs: [['y', [1, 4, 8, 8]]],
  inits: {
    ...conv('pw1', 8, 4, 1), 'dw.w': { dims: [8, 1, 3, 3] }, 'dw.b': { dims: [8], scale: 0.1 },
    'k': { dims: [1, 8, 1, 1], offset: 1, scale: 0.3 }, 'pads': { dims: [8], int64: [0, 0, 1, 1, 0, 0, 1, 1] },
    'lo': { dims: [], data: [0] }, 'hi': { dims: [], data: [6] }, ...conv('pw2', 4, 8, 1),
  },
  nodes: [
    ['Conv', ['x', 'pw1.w', 'pw1.b'], ['a']],
    ['Relu', ['a'], ['a_r']],
    ['Conv', ['a_r', 'dw.w', 'dw.b'], ['d'], { group: 8, pads: [1, 1, 1, 1] }],
    ['Clip', ['d', 'lo', 'hi'], ['d_c']],
    ['Mul', ['d_c', 'k'], ['m']],
    ['Pad', ['m', 'pads'], ['pd']],
    ['Conv', ['pd', 'pw2.w', 'pw2.b'], ['y']],
  ],
});

/** x -> conv (6) -> Relu -> Flatten -> Gemm (96 -> 5, transB = 0) -> y */
export const flattenGemm = (store) => makeModel({
  store,
  inputs: [['x', [1, 3, 4, 4]]], outputs: [['y', [1, 5]]],
  inits: { ...conv('c', 6, 3), 'fc.w': { dims: [96, 5] }, 'fc.b': { dims: [5] } },
  nodes: [
    ['Conv', ['x', 'c.w', 'c.b'], ['a'], { pads: [1, 1, 1, 1] }],
    ['Relu', ['a'], ['r']],
    ['Flatten', ['r'], ['f']],
    ['Gemm', ['f', 'fc.w', 'fc.b'], ['y']],
  ],
});

/** x (1,10,16) -> MatMul W1 (16,32) -> Add b1 -> Relu -> MatMul W2 (32,8) -> y */
export const mlp = (store) => makeModel({
  store,
  inputs: [['x', [1, 10, 16]]], outputs: [['y', [1, 10, 8]]],
  inits: { W1: { dims: [16, 32] }, b1: { dims: [32], scale: 0.1 }, W2: { dims: [32, 8] } },
  nodes: [
    ['MatMul', ['x', 'W1'], ['h']],
    ['Add', ['h', 'b1'], ['hb']],
    ['Relu', ['hb'], ['hr']],
    ['MatMul', ['hr', 'W2'], ['y']],
  ],
});

/** conv (8) -> Softmax over channels (not handled: keeps its group whole) -> conv (8 -> 2) -> y */
export const unhandled = (store) => makeModel({
  store,
  inputs: [['x', [1, 3, 5, 5]]], outputs: [['y', [1, 2, 5, 5]]],
  inits: { ...conv('c1', 8, 3, 1), ...conv('c2', 2, 8, 1) },
  nodes: [
    ['Conv', ['x', 'c1.w', 'c1.b'], ['a']],
    ['Softmax', ['a'], ['s'], { axis: 1 }],
    ['Conv', ['s', 'c2.w', 'c2.b'], ['y']],
  ],
});

/** x -> conv (8) -> Relu -> ConvTranspose (8 -> 6, stride 2) -> Sigmoid -> conv (6 -> 2) -> y */
export const convTranspose = (store) => makeModel({
  store,
  inputs: [['x', [1, 3, 4, 4]]], outputs: [['y', [1, 2, 8, 8]]],
  inits: { ...conv('c1', 8, 3, 1), 'ct.w': { dims: [8, 6, 2, 2] }, 'ct.b': { dims: [6], scale: 0.1 }, ...conv('c2', 2, 6, 1) },
  nodes: [
    ['Conv', ['x', 'c1.w', 'c1.b'], ['a']],
    ['Relu', ['a'], ['r']],
    ['ConvTranspose', ['r', 'ct.w', 'ct.b'], ['t'], { strides: [2, 2] }],
    ['Sigmoid', ['t'], ['s']],
    ['Conv', ['s', 'c2.w', 'c2.b'], ['y']],
  ],
});

/**
 * The training tests' small network: x -> conv 3x3 (16) -> `act` -> conv 1x1 (16) -> [Add with the
 * activation before it, when `skip`] -> Relu -> conv 3x3 (8) -> y, a dense output; every weight tiles
 * into 4x4 blocks. Names: a, ar, b, then br (no skip) or s, sr (skip), y. `batch`: the declared
 * batch dim of x and y (a number, or a name for a dynamic one).
 */
export function convNet({ inChannels = 3, size = 12, seed = 3, act = 'Relu', skip = false, batch = 1 } = {}) {
  const last = skip ? 'sr' : 'br';
  return makeModel({
    inputs: [['x', [batch, inChannels, size, size]]], outputs: [['y', [batch, 8, size, size]]], seed,
    inits: {
      'a.w': { dims: [16, inChannels, 3, 3] }, 'a.b': { dims: [16], scale: 0.1 },
      'b.w': { dims: [16, 16, 1, 1] }, 'b.b': { dims: [16], scale: 0.1 },
      'c.w': { dims: [8, 16, 3, 3] }, 'c.b': { dims: [8], scale: 0.1 },
    },
    nodes: [
      ['Conv', ['x', 'a.w', 'a.b'], ['a'], { pads: [1, 1, 1, 1] }],
      [act, ['a'], ['ar']],
      ['Conv', ['ar', 'b.w', 'b.b'], ['b']],
      ...(skip ? [['Add', ['ar', 'b'], ['s']], ['Relu', ['s'], ['sr']]] : [['Relu', ['b'], ['br']]]),
      ['Conv', [last, 'c.w', 'c.b'], ['y'], { pads: [1, 1, 1, 1] }],
    ],
  });
}

export const GRAPHS = { residual, concat, depthwise, flattenGemm, mlp, unhandled, convTranspose };

export function tmpDir(prefix = 'sk-onnx-') {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Deterministic input for every graph input (dims must be numeric, or 1 for symbolic ones). */
export function feedsFor(session, shapes) {
  const r = rng(99);
  const feeds = {};
  for (const [name, dims] of Object.entries(shapes)) {
    const d = dims.map((x) => (typeof x === 'number' ? x : 1));
    feeds[name] = new ort.Tensor('float32', Float32Array.from({ length: d.reduce((a, b) => a * b, 1) }, () => r()), d);
  }
  return feeds;
}

/** Runs a model (bytes or path) on given feeds; returns {output: Float32Array}. */
export async function run(modelOrPath, feeds, opts = {}) {
  const s = await ort.InferenceSession.create(modelOrPath, { intraOpNumThreads: 1, ...opts });
  const out = await s.run(feeds);
  const res = {};
  for (const k of Object.keys(out)) res[k] = { data: out[k].data, dims: out[k].dims };
  await s.release?.();
  return res;
}

export function maxAbsDiff(a, b) {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

export function cosine(a, b) {
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) { ab += a[i] * b[i]; aa += a[i] * a[i]; bb += b[i] * b[i]; }
  return ab / Math.sqrt(aa * bb || 1);
}
