// GPTQ against round-to-nearest, per layer, on a real model and on random correlated data: the
// relative output error sqrt(tr(D H Dᵀ) / tr(W H Wᵀ)) (D = W - Ŵ) on HELD-OUT inputs (H from inputs
// the quantizer never saw) and on the calibration inputs, and the time of one gptq call per layer.
// Layers: the PaddleOCR recogniser's MatMul/Gemm weights (and with --convs its group-1 Convs), their
// inputs captured from the dense model (one pass, not sequential) on generated text lines.
//   node bench/quant/gptq-layer.mjs [--model rec|det|cls|none] [--calib 32] [--heldout 16] [--damp 0.01] [--convs]
//        [--synthetic 768] [--out bench/out/gptq-layer.json]
// Configurations: 8 and 4 bits per row, 4 bits in groups of 128 and 32, joint 50% and 2:4 + 4 bits
// group 32 (against SparseGPT followed by round-to-nearest, and magnitude pruning + round-to-nearest).
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import ort from 'onnxruntime-node';
import * as sk from 'sparsekit-wasm';
import { OnnxModel, makeInputSet, makeOrtRunner, findLayers, capture, outputAsFloat, maskFromScores } from '#onnx-internal';
import { ROOT, OCR_MODELS } from '../../kit/ocr-models.mjs';

const { values: opt } = parseArgs({
  options: {
    model: { type: 'string', default: 'rec' }, calib: { type: 'string', default: '32' }, heldout: { type: 'string', default: '16' },
    damp: { type: 'string', default: '0.01' }, convs: { type: 'boolean', default: false }, synthetic: { type: 'string', default: '768' },
    out: { type: 'string' },
  },
});
const percDamp = Number(opt.damp);
const CONFIGS = [
  { name: '8-bit per row', bits: 8 },
  { name: '4-bit per row', bits: 4 },
  { name: '4-bit g128', bits: 4, group: 128 },
  { name: '4-bit g32', bits: 4, group: 32 },
  { name: '50% + 4-bit g32', bits: 4, group: 32, target: { sparsity: 0.5 } },
  { name: '2:4 + 4-bit g32', bits: 4, group: 32, target: { nm: [2, 4] } },
];

/** A fresh Param holding the view values (rows x cols); fn(p) runs on it; returns [result, values after, ms]. */
function onCopy(w0, rows, cols, fn) {
  const p = sk.Param.fromArray(w0, [rows, cols]);
  try {
    const t = performance.now();
    const r = fn(p);
    return [r, p.toArray(), performance.now() - t];
  } finally { p.free(); }
}

/** One layer (view values w0, rows x cols) under every configuration: errors on held-out and calibration H. */
function measureLayer(label, w0, rows, cols, hc, hh) {
  const rows_ = [];
  const err = (w1) => ({ heldOut: sk.relReconError(w0, w1, hh), calib: sk.relReconError(w0, w1, hc) });
  for (const c of CONFIGS) {
    if (c.target?.nm && cols % 4) continue;
    const grid = { bits: c.bits, ...(c.group ? { group: c.group } : {}) };
    const joint = c.target ? (c.target.nm ? { nm: c.target.nm } : { sparsity: c.target.sparsity }) : {};
    const [, g, ms] = onCopy(w0, rows, cols, (p) => sk.gptq(p, hc, { ...grid, ...joint, percDamp }));
    let rtnIn = w0;
    const extra = {};
    if (c.target) {
      // The two-step baselines: magnitude mask then RTN; SparseGPT then RTN of what it kept.
      const keep = maskFromScores(Float32Array.from(w0, Math.abs), rows, cols, c.target, false);
      rtnIn = Float32Array.from(w0, (x, i) => (keep[i] ? x : 0));
      const [, sp] = onCopy(w0, rows, cols, (p) => sk.sparseGpt(p, hc, { ...joint, percDamp }));
      const [, spr] = onCopy(sp, rows, cols, (p) => sk.roundToNearest(p, grid));
      extra.sparseGptThenRtn = err(spr);
    }
    const [, r] = onCopy(rtnIn, rows, cols, (p) => sk.roundToNearest(p, grid));
    rows_.push({ layer: label, rows, cols, config: c.name, rtn: err(r), gptq: err(g), ms, ...extra });
  }
  return rows_;
}

/** n correlated input vectors of `cols` features: 16 shared factors (one fixed mixing for every set) plus noise. */
function correlated(n, cols, seed) {
  let s = 12345;
  const rnd = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s / 2 ** 31 - 1; };
  const k = 16, mix = Float32Array.from({ length: k * cols }, rnd), x = new Float32Array(n * cols);
  s = (seed * 2654435761) >>> 0 || 1; // the set's own factors and noise
  for (let r = 0; r < n; r++) {
    const z = Array.from({ length: k }, rnd);
    for (let j = 0; j < cols; j++) { let v = 0.3 * rnd(); for (let t = 0; t < k; t++) v += z[t] * mix[t * cols + j]; x[r * cols + j] = v; }
  }
  return x;
}

const results = [];
const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 });
const model = opt.model === 'none' ? null : OnnxModel.parse(fs.readFileSync(OCR_MODELS[opt.model]));
const ops = opt.convs ? ['MatMul', 'Gemm', 'Conv'] : ['MatMul', 'Gemm'];
const layers = model ? findLayers(model).filter((l) => ops.includes(l.op) && (l.stats === 'rows' || l.stats === 'conv') && l.group === 1) : [];
const statsOf = async (set) => {
  const hs = new Map(layers.map((l) => [l, new sk.Hessian(l.cols)]));
  const byInput = new Map();
  for (const l of layers) byInput.set(l.input, [...(byInput.get(l.input) ?? []), l]);
  const feeds = new Set(model.graph.input.map((i) => i.name));
  const add = (name, t) => {
    const x = outputAsFloat(t);
    for (const l of byInput.get(name)) { const h = hs.get(l); if (l.stats === 'conv') h.addConv(x, t.dims, l.conv); else h.addRows(x, x.length / l.cols); }
  };
  // A layer fed by a graph input reads the samples themselves.
  for (const name of [...byInput.keys()].filter((n) => feeds.has(n))) for (const s of set) add(name, s.feeds[name]);
  await capture(runner, model, [...byInput.keys()].filter((n) => !feeds.has(n)), set, add);
  return hs;
};
const t0 = performance.now();
const hc = model && await statsOf(makeInputSet(model, { count: Number(opt.calib) }));
const hh = model && await statsOf(makeInputSet(model, { count: Number(opt.heldout), set: 'heldOut' }));
if (model) console.error(`${opt.model}: ${layers.length} layers, statistics in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
for (const l of layers) {
  const w = model.readFloat(l.weight);
  const w0 = new Float32Array(l.rows * l.cols);
  for (let r = 0; r < l.rows; r++) for (let c = 0; c < l.cols; c++) w0[r * l.cols + c] = l.transposed ? w[c * l.rows + r] : w[r * l.cols + c];
  const rs = measureLayer(`${opt.model}:${l.name}`, w0, l.rows, l.cols, hc.get(l), hh.get(l));
  console.error(`${l.name} (${l.op} ${l.rows}x${l.cols}, ${hc.get(l).count} vectors): ${rs.map((r) => `${r.config} ${(r.gptq.heldOut / r.rtn.heldOut).toFixed(2)}`).join(', ')}`);
  results.push(...rs);
}
const n = Number(opt.synthetic);
if (n > 0) {
  // A BERT-size linear map on random correlated inputs (4n vectors each for calibration and held-out).
  const hc1 = new sk.Hessian(n), hh1 = new sk.Hessian(n);
  hc1.addRows(correlated(4 * n, n, 1), 4 * n);
  hh1.addRows(correlated(4 * n, n, 2), 4 * n);
  let s = 99;
  const w0 = Float32Array.from({ length: n * n }, () => { s = (s * 1103515245 + 12345) >>> 0; return (s / 2 ** 32 - 0.5) * 0.1; });
  const rs = measureLayer(`synthetic:${n}x${n}`, w0, n, n, hc1, hh1);
  console.error(`synthetic ${n}x${n}: ${rs.map((r) => `${r.config} ${(r.gptq.heldOut / r.rtn.heldOut).toFixed(2)} ${r.ms.toFixed(0)} ms`).join(', ')}`);
  results.push(...rs);
}
const out = path.resolve(opt.out ?? path.join(ROOT, `bench/out/gptq-layer-${opt.model}.json`));
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), model: opt.model, calib: Number(opt.calib), heldOut: Number(opt.heldout), percDamp, variant: sk.variant(), results }, null, 2));

// Summary: per configuration over the model's layers (synthetic apart).
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const geo = (xs) => Math.exp(mean(xs.map(Math.log)));
console.log('| layers | config | RTN held-out | GPTQ held-out | GPTQ / RTN (geo. mean) | GPTQ better | SparseGPT→RTN held-out | GPTQ calib / RTN calib | ms per layer (mean, max) |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|');
for (const group of [results.filter((r) => !r.layer.startsWith('synthetic')), results.filter((r) => r.layer.startsWith('synthetic'))]) {
  if (!group.length) continue;
  const which = group[0].layer.startsWith('synthetic') ? group[0].layer : `${opt.model} (${new Set(group.map((r) => r.layer)).size})`;
  for (const c of CONFIGS) {
    const rs = group.filter((r) => r.config === c.name && r.rtn.heldOut > 0);
    if (!rs.length) continue;
    const sp = rs.filter((r) => r.sparseGptThenRtn);
    console.log(`| ${which} | ${c.name} | ${mean(rs.map((r) => r.rtn.heldOut)).toFixed(4)} | ${mean(rs.map((r) => r.gptq.heldOut)).toFixed(4)} | ${geo(rs.map((r) => r.gptq.heldOut / r.rtn.heldOut)).toFixed(3)} | ${rs.filter((r) => r.gptq.heldOut < r.rtn.heldOut).length}/${rs.length} | ${sp.length ? mean(sp.map((r) => r.sparseGptThenRtn.heldOut)).toFixed(4) : '–'} | ${geo(rs.map((r) => r.gptq.calib / r.rtn.calib)).toFixed(3)} | ${mean(rs.map((r) => r.ms)).toFixed(1)}, ${Math.max(...rs.map((r) => r.ms)).toFixed(1)} |`);
  }
}
