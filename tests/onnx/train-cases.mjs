// The per-op forward checks of the training core against onnxruntime-node, shared by
// train-ops.test.mjs and train-dataops.test.mjs: small models from [op, inputs, outputs, attrs]
// rows, seeded feeds, onnxruntime's outputs, and the relative error (max |ours - ort| / max |ort|).
import assert from 'node:assert/strict';
import ort from 'onnxruntime-node';
import { build } from './build.mjs';

build();
const sk = await import('sparsekit-wasm');
const { OnnxModel, ModelProto, DT, trainGraph } = await import('#onnx-internal');
const { rng } = await import('./graphs.mjs');

/** An attribute of the right ONNX type from a JS value (floats marked with `f:`, tensors with `t:`). */
function attribute(name, v) {
  if (v && typeof v === 'object' && 't' in v) return { name, type: 4, t: v.t };
  if (typeof v === 'string') return { name, type: 3, s: new TextEncoder().encode(v) };
  if (v && typeof v === 'object' && 'f' in v) return Array.isArray(v.f) ? { name, type: 6, floats: v.f } : { name, type: 1, f: v.f };
  if (Array.isArray(v)) return { name, type: 7, ints: v };
  return { name, type: 2, i: v };
}
export const F = (f) => ({ f });

/** A model: inputs [[name, dims]], inits {name: {dims, data?|int64?}}, nodes [[op, ins, outs, attrs]]. */
export function model({ inputs, outputs, nodes, inits = {}, opset = 17, seed = 5 }) {
  const r = rng(seed);
  const initializer = Object.entries(inits).map(([name, t]) => {
    if (t.int64) return { name, dims: t.dims, data_type: DT.INT64, raw_data: new Uint8Array(BigInt64Array.from(t.int64.map(BigInt)).buffer) };
    const n = t.dims.reduce((a, b) => a * b, 1);
    const data = t.data ? Float32Array.from(t.data) : Float32Array.from({ length: n }, () => r() * (t.scale ?? 0.5) + (t.offset ?? 0));
    return { name, dims: t.dims, data_type: DT.FLOAT, raw_data: new Uint8Array(data.buffer) };
  });
  const vi = (name, dims) => ({ name, type: { tensor_type: { elem_type: DT.FLOAT, shape: dims ? { dim: dims.map((d) => ({ dim_value: d })) } : undefined } } });
  const m = {
    ir_version: 8, producer_name: 'sparsekit-wasm train tests', opset_import: [{ domain: '', version: opset }],
    graph: {
      name: 'g', initializer,
      node: nodes.map(([op, input, output, attrs = {}], i) => ({ op_type: op, input, output, name: `n${i}`, attribute: Object.entries(attrs).map(([k, v]) => attribute(k, v)) })),
      input: inputs.map(([n, d]) => vi(n, d)), output: outputs.map((n) => vi(n)),
    },
  };
  return ModelProto.encode(ModelProto.fromObject(m)).finish();
}

export function feeds(inputs, seed = 11, scale = 2) {
  const r = rng(seed);
  return inputs.map(([name, dims]) => ({ name, dims, values: Float32Array.from({ length: dims.reduce((a, b) => a * b, 1) }, () => r() * scale) }));
}

export async function ortRun(bytes, fs_) {
  const s = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 1, graphOptimizationLevel: 'disabled' });
  const out = await s.run(Object.fromEntries(fs_.map((f) => [f.name, new ort.Tensor('float32', f.values, f.dims)])));
  const res = s.outputNames.map((n) => ({ values: out[n].data, shape: Array.from(out[n].dims) }));
  await s.release?.();
  return res;
}

export function relErr(a, b) {
  let num = 0, den = 0;
  for (let i = 0; i < b.length; i++) { num = Math.max(num, Math.abs(a[i] - b[i])); den = Math.max(den, Math.abs(b[i])); }
  return num / (den || 1);
}

export async function same(bytes, ins, tol = 1e-5) {
  const fs_ = feeds(ins);
  const want = await ortRun(bytes, fs_);
  const trainer = new sk.Trainer(trainGraph(OnnxModel.parse(bytes)));
  try {
    const got = trainer.forward(fs_.map((f) => ({ values: f.values, shape: f.dims })));
    assert.equal(got.length, want.length);
    for (let i = 0; i < want.length; i++) {
      assert.deepEqual(got[i].shape, want[i].shape, `output ${i} shape`);
      const e = relErr(got[i].values, want[i].values);
      assert.ok(e <= tol, `output ${i}: relative error ${e.toExponential(2)} > ${tol}`);
    }
  } finally {
    trainer.free();
  }
}

