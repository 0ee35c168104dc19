// Label-free fidelity (sparsekit-wasm/onnx fidelity/): each kind's metric against values worked out
// by hand, kind detection from shape and values, the two ways a single cosine misleads (a collapse
// that keeps the cosine >= 0.99, and a low cosine with the same decisions), and evaluate() running
// two real models through onnxruntime.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import ort from 'onnxruntime-node';
import { build } from './build.mjs';

build();
const O = await import('#onnx-internal');
const G = await import('./graphs.mjs');

/** A Float32Array carrying its dims, as runSet returns outputs. */
const t = (dims, values) => Object.assign(Float32Array.from(values), { dims });
const close = (a, b, eps = 1e-6) => assert.ok(Math.abs(a - b) <= eps, `${a} != ${b}`);

test('generic: mean cosine and the worst channel error on the cosine scale, by hand', () => {
  // one sample, 2 channels: [3, 4] -> [3, 4.4]; channel 1 is off by 0.4 / 4 = 10%
  const r = O.fidelity([{ y: t([1, 2], [3, 4]) }], [{ y: t([1, 2], [3, 4.4]) }], { kinds: { y: 'generic' } });
  const cos = (9 + 4 * 4.4) / (5 * Math.hypot(3, 4.4));
  const o = r.outputs[0];
  close(o.metrics.cosine, cos);
  close(o.metrics.worstChannelRelError, 0.1);
  assert.equal(o.metrics.worstChannel, 1);
  close(o.score, Math.min(cos, 1 / Math.sqrt(1.01)));
  assert.equal(r.score, o.score);
  assert.equal(r.worst, 'y');
  assert.equal(r.samples, 1);
  // a non-finite output scores 0
  assert.equal(O.fidelity([{ y: t([1, 2], [3, 4]) }], [{ y: t([1, 2], [NaN, 4]) }]).score, 0);
});

test('generic: a collapsed small channel is caught although the cosine stays above 0.999', () => {
  // channel 0 large (100s), channel 1 small (~1) and zeroed in the "pruned" output
  const n = 50, ref = [], out = [];
  for (let i = 0; i < n; i++) { ref.push(100 + i); out.push(100 + i); }
  for (let i = 0; i < n; i++) { ref.push(1 + (i % 3)); out.push(0); }
  const r = O.fidelity([{ e: t([1, 2, n], ref) }], [{ e: t([1, 2, n], out) }]);
  assert.equal(r.outputs[0].kind, 'generic');
  assert.ok(r.outputs[0].metrics.cosine > 0.999, String(r.outputs[0].metrics.cosine));
  close(r.outputs[0].metrics.worstChannelRelError, 1);
  close(r.score, 1 / Math.sqrt(2));
});

test('classification: top-1, top-5 and KL by hand; softmax for logits', () => {
  // 2 rows of 6 probabilities; row 2's top class drops to the pruned model's 6th place
  const p1 = [0.5, 0.2, 0.1, 0.1, 0.05, 0.05], q1 = [0.4, 0.3, 0.1, 0.1, 0.05, 0.05];
  const p2 = [0.6, 0.1, 0.1, 0.1, 0.05, 0.05], q2 = [0.01, 0.2, 0.2, 0.2, 0.2, 0.19];
  const r = O.fidelity([{ p: t([2, 6], [...p1, ...p2]) }], [{ p: t([2, 6], [...q1, ...q2]) }]);
  const o = r.outputs[0];
  assert.equal(o.kind, 'classification');
  const kl = (p, q) => p.reduce((s, x, i) => s + x * Math.log(x / q[i]), 0);
  close(o.metrics.top1Agreement, 0.5);
  close(o.metrics.top5Agreement, 0.5);
  close(o.metrics.meanKL, (kl(p1, q1) + kl(p2, q2)) / 2, 1e-6);
  assert.equal(o.score, 0.5);
  // logits: the same decisions and the KL of their softmaxes
  const sm = (z) => { const e = z.map(Math.exp); const s = e.reduce((a, b) => a + b); return e.map((x) => x / s); };
  const a = [2, 1, 0], b = [1, 2, 0];
  const rl = O.fidelity([{ logits: t([1, 3], a) }], [{ logits: t([1, 3], b) }]);
  assert.equal(rl.outputs[0].kind, 'classification');
  assert.equal(rl.outputs[0].metrics.top1Agreement, 0);
  close(rl.outputs[0].metrics.meanKL, kl(sm(a), sm(b)), 1e-6);
});

test('reverse: a low cosine with the same decisions keeps fidelity 1 (classification, sequence)', () => {
  const ref = [0.9, 0.05, 0.05, 0.05, 0.9, 0.05], out = [0.4, 0.3, 0.3, 0.3, 0.4, 0.3];
  const refs = [{ p: t([2, 3], ref) }], outs = [{ p: t([2, 3], out) }];
  const cmp = O.compareSets(refs, outs);
  assert.ok(cmp.cosine < 0.8, String(cmp.cosine));
  assert.equal(cmp.fidelity.outputs[0].kind, 'classification');
  assert.equal(cmp.fidelity.score, 1);
  // the same rows as a sequence of 2 steps: same argmax per step, same decode
  const s = O.fidelity([{ q: t([1, 2, 3], ref) }], [{ q: t([1, 2, 3], out) }]);
  assert.equal(s.outputs[0].kind, 'sequence');
  assert.equal(s.score, 1);
  // ...while the generic metric, forced, would call it a failure
  assert.ok(O.fidelity(refs, outs, { kinds: { p: 'generic' } }).score < 0.8);
});

/** (1, 4+C, A) YOLOv8-style head: pixel boxes, `objects` anchors with one confident class, the rest background. */
function yoloHead({ anchors = 96, classes = 3, objects, scoreOf = () => 0.01, confident = 0.9 }) {
  const k = 4 + classes, v = new Float32Array(k * anchors);
  for (let a = 0; a < anchors; a++) {
    v[a] = 20 + 6 * a; v[anchors + a] = 300 + (a % 7) * 40; v[2 * anchors + a] = 30 + (a % 5); v[3 * anchors + a] = 40;
    for (let c = 0; c < classes; c++) v[(4 + c) * anchors + a] = scoreOf(a, c);
  }
  for (const [a, c] of objects) v[(4 + c) * anchors + a] = confident;
  return t([1, k, anchors], v);
}

test('detection: a YOLO-style head whose cosine is >= 0.99 while every detection is lost', () => {
  const objects = [[5, 0], [30, 1], [60, 2], [90, 0]];
  const ref = yoloHead({ objects });
  // class scores collapsed to a flat, uninformative 0.05..0.14; boxes intact
  const out = yoloHead({ objects, confident: 0.1, scoreOf: (a, c) => 0.05 + ((a * 7 + c * 3) % 10) / 100 });
  const cmp = O.compareSets([{ output0: ref }], [{ output0: out }]);
  assert.ok(cmp.cosine >= 0.99, String(cmp.cosine));
  const o = cmp.fidelity.outputs[0];
  assert.equal(o.kind, 'detection');
  assert.equal(o.metrics.referenceBoxes, 4);
  assert.equal(o.metrics.prunedBoxes, 0);
  assert.equal(o.score, 0);
  assert.ok(o.metrics.scoreCosine < 0.5, String(o.metrics.scoreCosine));
  // the generic metric, forced, catches it too: the class channels' own error (~110%), not the cosine
  const g = O.fidelity([{ output0: ref }], [{ output0: out }], { kinds: { output0: 'generic' } }).outputs[0];
  assert.ok(g.metrics.cosine >= 0.99 && g.score < 0.8 && g.metrics.worstChannel >= 4, JSON.stringify(g.metrics));
});

test('detection: F1 against the original by hand (class change, moved box, NMS, anchors-first with objectness)', () => {
  const ref = yoloHead({ objects: [[5, 0], [30, 1], [60, 2], [90, 0]] });
  // anchor 30 now class 2 (no match); anchor 60's box (30 x 40 px) 6 px to the right: IoU 24/36 >= 0.5 -> match
  const out = yoloHead({ objects: [[5, 0], [30, 2], [60, 2], [90, 0]] });
  out[60] += 6;
  const o = O.fidelity([{ y: ref }], [{ y: out }]).outputs[0];
  assert.equal(o.metrics.matched, 3);
  close(o.score, (2 * 3) / (4 + 4));
  // two overlapping boxes of one class: NMS keeps one
  const box = (cx, cls, s) => ({ cx, cls, s });
  const anchorsFirst = (list) => {
    const anchors = 80, k = 5 + 2, v = new Float32Array(anchors * k);
    for (let a = 0; a < anchors; a++) { v[a * k] = 1000 + 50 * a; v[a * k + 1] = 50; v[a * k + 2] = 20; v[a * k + 3] = 20; v[a * k + 4] = 0.05; }
    list.forEach(({ cx, cls, s }, a) => { v[a * k] = cx; v[a * k + 4] = 1; v[a * k + 5 + cls] = s; });
    return t([1, anchors, k], v);
  };
  const r2 = anchorsFirst([box(100, 0, 0.9), box(102, 0, 0.8), box(300, 1, 0.9)]);
  const o2 = anchorsFirst([box(100, 0, 0.9), box(300, 1, 0.2)]); // second object below the threshold
  const d = O.fidelity([{ y: r2 }], [{ y: o2 }], { kinds: { y: 'detection' } }).outputs[0];
  assert.equal(d.metrics.referenceBoxes, 2); // NMS merged the overlapping pair
  assert.equal(d.metrics.prunedBoxes, 1);
  close(d.score, 2 / 3);
});

test('dense map: thresholded IoU and component F1 by hand', () => {
  const h = 16, w = 16, blob = (m, y0, x0, hh, ww, v = 0.9) => { for (let y = y0; y < y0 + hh; y++) for (let x = x0; x < x0 + ww; x++) m[y * w + x] = v; };
  const ref = new Float32Array(h * w), out = new Float32Array(h * w);
  blob(ref, 1, 1, 4, 4); blob(ref, 8, 8, 4, 6); // two regions: 16 and 24 px
  blob(out, 1, 1, 4, 3); // first region shrunk to 12 px (IoU 0.75: matched), second gone
  blob(out, 12, 0, 2, 2, 0.5); // a new 4-px component: 2 px wide, mean 0.5
  // Every component a region (minSide 1, minScore 0): 1 of 2 matched, 2 found.
  const all = O.fidelity([{ maps: t([1, 1, h, w], ref) }], [{ maps: t([1, 1, h, w], out) }], { denseMap: { minSide: 1, minScore: 0 } });
  const o = all.outputs[0];
  assert.equal(o.kind, 'dense-map');
  close(o.metrics.iou, 12 / (16 + 24 + 4));
  assert.equal(o.metrics.referenceComponents, 2);
  assert.equal(o.metrics.prunedComponents, 2);
  assert.equal(o.metrics.matched, 1);
  close(o.score, 2 / 4);
  // By default regions are what DB keeps (short side >= 3 px, mean >= 0.6): the new component is none.
  const r = O.fidelity([{ maps: t([1, 1, h, w], ref) }], [{ maps: t([1, 1, h, w], out) }]).outputs[0];
  assert.equal(r.metrics.prunedComponents, 1);
  close(r.score, 2 / 3);
  close(r.metrics.iou, 12 / (16 + 24 + 4)); // the pixel IoU counts every pixel still
  // A 1-px sliver of high value is no region either; a 3x3 blob at 0.9 is one, a 3x3 at 0.55 is not.
  const sliver = Float32Array.from(ref);
  blob(sliver, 14, 8, 1, 6);
  assert.equal(O.fidelity([{ maps: t([1, 1, h, w], ref) }], [{ maps: t([1, 1, h, w], sliver) }]).score, 1);
  const square = Float32Array.from(ref), faint = Float32Array.from(ref);
  blob(square, 12, 0, 3, 3); blob(faint, 12, 0, 3, 3, 0.55);
  close(O.fidelity([{ maps: t([1, 1, h, w], ref) }], [{ maps: t([1, 1, h, w], square) }]).score, 4 / 5);
  assert.equal(O.fidelity([{ maps: t([1, 1, h, w], ref) }], [{ maps: t([1, 1, h, w], faint) }]).score, 1);
  // segmentation (N, K, H, W) distributions: argmax masks
  const k2 = (cls) => { const v = new Float32Array(2 * h * w); for (let p = 0; p < h * w; p++) { v[cls[p] * h * w + p] = 0.8; v[(1 - cls[p]) * h * w + p] = 0.2; } return t([1, 2, h, w], v); };
  const c = new Uint8Array(h * w); for (let y = 0; y < 8; y++) for (let x = 0; x < 8; x++) c[y * w + x] = 1;
  const s = O.fidelity([{ seg: k2(c) }], [{ seg: k2(c) }]).outputs[0];
  assert.equal(s.kind, 'dense-map');
  assert.equal(s.score, 1);
  assert.equal(s.metrics.iou, 1);
});

test('sequence: step agreement and the edit distance of greedy CTC decodes by hand', () => {
  const steps = (ids, c = 4) => ids.flatMap((i) => Array.from({ length: c }, (_, j) => (j === i ? 0.7 : 0.1)));
  // original: 1 1 0 2 0 2 3 -> "1 2 2 3"; pruned: 1 0 0 2 2 2 0 -> "1 2"
  const a = [1, 1, 0, 2, 0, 2, 3], b = [1, 0, 0, 2, 2, 2, 0];
  const r = O.fidelity([{ rec: t([1, 7, 4], steps(a)) }], [{ rec: t([1, 7, 4], steps(b)) }]);
  const o = r.outputs[0];
  assert.equal(o.kind, 'sequence');
  close(o.metrics.stepAgreement, 4 / 7);
  assert.equal(o.metrics.editDistance, 2);
  assert.equal(o.metrics.referenceLength, 4);
  close(o.score, 0.5);
  // a blank other than 0: class 3 as blank reads "1 0 2 0 2" against "1 0 2 0" (1 edit in 5)
  const r3 = O.fidelity([{ rec: t([1, 7, 4], steps(a)) }], [{ rec: t([1, 7, 4], steps(b)) }], { blank: 3 }).outputs[0];
  assert.equal(r3.metrics.referenceLength, 5);
  assert.equal(r3.metrics.editDistance, 1);
  close(r3.score, 0.8);
});

test('kinds: detected from shape and values, set by the caller; the model takes its worst output', () => {
  const det = yoloHead({ objects: [[5, 0]] });
  const refs = [{ cls: t([1, 2], [0.3, 0.7]), det, emb: t([1, 8], [1, -2, 3, 0.5, 0, 1, 2, -1]) }];
  const outs = [{ cls: t([1, 2], [0.6, 0.4]), det, emb: t([1, 8], [1, -2, 3, 0.5, 0, 1, 2, -1]) }];
  const r = O.fidelity(refs, outs);
  assert.deepEqual(r.outputs.map((o) => [o.name, o.kind]), [['cls', 'classification'], ['det', 'detection'], ['emb', 'generic']]);
  assert.equal(r.worst, 'cls');
  assert.equal(r.score, 0);
  // without dims on the arrays, shapes come from the options
  const flat = [{ m: Float32Array.from(det) }];
  assert.equal(O.fidelity(flat, flat, { shapes: { m: det.dims } }).outputs[0].kind, 'detection');
  assert.equal(O.fidelity(flat, flat).outputs[0].kind, 'generic');
  assert.equal(O.fidelity(refs, outs, { kinds: { cls: 'generic' } }).outputs[0].kind, 'generic');
  // sigmoid scores (1, 200, 10) without boxes: not a detection head, not distributions -> generic
  const sig = t([1, 200, 10], Array.from({ length: 2000 }, (_, i) => 1 / (1 + Math.exp(-((i * 37) % 11 - 5)))));
  assert.equal(O.fidelity([{ s: sig }], [{ s: sig }]).outputs[0].kind, 'generic');
  // hidden states (1, 16, 64) -> generic; a map over 0..1 of (1, 1, 32, 32) -> dense-map; of values > 1 -> generic
  const hs = t([1, 16, 64], Array.from({ length: 1024 }, (_, i) => Math.sin(i)));
  assert.equal(O.fidelity([{ h: hs }], [{ h: hs }]).outputs[0].kind, 'generic');
  const map = (k) => t([1, 1, 32, 32], Array.from({ length: 1024 }, (_, i) => k * ((i % 7) / 7)));
  assert.equal(O.fidelity([{ m: map(1) }], [{ m: map(1) }]).outputs[0].kind, 'dense-map');
  assert.equal(O.fidelity([{ m: map(3) }], [{ m: map(3) }]).outputs[0].kind, 'generic');
});

test('confidence: the Wilson lower bound by hand; shares of counted decisions are bounded, generic scores are not', () => {
  // z(0.975) = 1.959964; p = 0.5 of 100: (0.5 + z²/200 - z·sqrt(0.0025 + z²/40000)) / (1 + z²/100) = 0.403832
  assert.ok(Math.abs(O.wilsonLower(0.5, 100, 0.975) - 0.403832) < 1e-5);
  // 511 of 512 at 95% one-sided (z = 1.644854): 0.991294; 2 flips: 0.988266 (below a 0.99 floor)
  assert.ok(Math.abs(O.wilsonLower(511 / 512, 512, 0.95) - 0.991294) < 1e-5);
  assert.ok(Math.abs(O.wilsonLower(510 / 512, 512, 0.95) - 0.988266) < 1e-5);
  assert.equal(O.wilsonLower(1, 0, 0.95), 0);
  assert.ok(O.wilsonLower(1, 1e6, 0.95) > 0.99999 && O.wilsonLower(1, 1e6, 0.95) < 1);
  // A report with a classification output (8 rows, 7 agree) and a generic one (no counted decisions).
  const rows = (flip) => t([8, 3], Array.from({ length: 24 }, (_, i) => (i % 3 === (flip && i < 3 ? 1 : 0) ? 5 : 0)));
  const gen = (v) => t([1, 4], [1, 2, 3, v]);
  const r = O.fidelity([{ c: rows(false), g: gen(4) }], [{ c: rows(true), g: gen(4.4) }], { kinds: { c: 'classification', g: 'generic' } });
  const c = r.outputs.find((o) => o.name === 'c'), g = r.outputs.find((o) => o.name === 'g');
  assert.equal(c.decisions, 8);
  assert.equal(c.score, 7 / 8);
  assert.equal(g.decisions, undefined);
  const b = O.lowerBound(r, 0.9);
  assert.ok(Math.abs(b.outputs.c - O.wilsonLower(7 / 8, 8, 0.9)) < 1e-12);
  assert.equal(b.outputs.g, g.score);
  assert.equal(b.score, Math.min(b.outputs.c, b.outputs.g));
  assert.equal(b.worst, b.outputs.c <= b.outputs.g ? 'c' : 'g');
  assert.throws(() => O.lowerBound(r, 1), /confidence must be in \(0, 1\)/);
});

test('bad input: typed errors for mismatched sets, unknown kinds and outputs, dims that do not fit', () => {
  const a = [{ y: t([1, 2], [1, 2]) }];
  assert.throws(() => O.fidelity(a, []), (e) => e instanceof O.OnnxError && e.code === 'shape_mismatch');
  assert.throws(() => O.fidelity(a, [{ y: t([1, 3], [1, 2, 3]) }]), (e) => e instanceof O.OnnxError && e.code === 'shape_mismatch');
  assert.throws(() => O.fidelity(a, a, { kinds: { y: 'boxes' } }), (e) => e instanceof O.OnnxError && /unknown output kind/.test(e.message));
  assert.throws(() => O.fidelity(a, a, { kinds: { z: 'generic' } }), (e) => e instanceof O.OnnxError && /no output named "z"/.test(e.message));
  assert.throws(() => O.fidelity([{ y: Float32Array.of(1, 2) }], [{ y: Float32Array.of(1, 2) }], { shapes: { y: [3] } }), (e) => e.code === 'shape_mismatch');
});

test('evaluate(): runs the original and a pruned model through onnxruntime; classification detected', async () => {
  // x (1, 16) -> Gemm (16 -> 10) -> Softmax -> probs
  const bytes = G.makeModel({
    inputs: [['x', [1, 16]]], outputs: [['probs', [1, 10]]],
    inits: { W: { dims: [10, 16] }, b: { dims: [10], scale: 0.1 } },
    nodes: [['Gemm', ['x', 'W', 'b'], ['z'], { transB: 1 }], ['Softmax', ['z'], ['probs'], { axis: -1 }]],
  });
  const model = O.OnnxModel.parse(bytes);
  const samples = O.makeInputSet(model, { count: 12, set: 'heldOut' });
  const same = await O.evaluate(bytes, model, samples, { ort });
  assert.equal(same.score, 1);
  assert.equal(same.outputs[0].kind, 'classification');
  assert.equal(same.samples, 12);
  close(same.cosine, 1, 1e-6);
  const pruned = O.OnnxModel.parse(bytes);
  O.pruneSparsity(pruned, { sparsity: 0.9 });
  const r = await O.evaluate(model, pruned, samples, { ort, sessionOptions: { intraOpNumThreads: 1 } });
  assert.equal(r.outputs[0].kind, 'classification');
  assert.ok(r.outputs[0].metrics.meanKL > 0);
  assert.ok(r.score < 1, `90% of the weights gone should change a decision of 12 (score ${r.score})`);
  await assert.rejects(O.evaluate(model, pruned, [], { ort }), (e) => e instanceof O.OnnxError);
});

test('a YOLO-like model pruned: cosine >= 0.99, detections lost, and evaluate() says so', async () => {
  // x (1, 16, 1, 128) -> box branch: Conv 1x1 (4) * 5 + per-anchor pixel offsets (a grid over 640 px)
  //                   -> class branch: Conv 1x1 (3) -> Sigmoid; Concat -> (1, 7, 128), YOLOv8's layout
  const A = 128, off = new Float32Array(4 * A);
  for (let a = 0; a < A; a++) { off[a] = 20 + 40 * (a % 16); off[A + a] = 20 + 80 * Math.floor(a / 16); off[2 * A + a] = 30; off[3 * A + a] = 30; }
  const bytes = G.makeModel({
    inputs: [['x', [1, 16, 1, A]]], outputs: [['output0', [1, 7, A]]],
    inits: {
      bw: { dims: [4, 16, 1, 1] }, bscale: { dims: [1], data: [5] }, boff: { dims: [1, 4, 1, A], data: off },
      cw: { dims: [3, 16, 1, 1], scale: 2 }, shape: { dims: [3], int64: [1, 7, A] },
    },
    nodes: [
      ['Conv', ['x', 'bw'], ['b0']], ['Mul', ['b0', 'bscale'], ['b1']], ['Add', ['b1', 'boff'], ['box']],
      ['Conv', ['x', 'cw'], ['c0']], ['Sigmoid', ['c0'], ['cls']],
      ['Concat', ['box', 'cls'], ['cat'], { axis: 1 }], ['Reshape', ['cat', 'shape'], ['output0']],
    ],
  });
  const model = O.OnnxModel.parse(bytes);
  const samples = O.makeInputSet(model, { count: 4, set: 'heldOut' });
  const pruned = O.OnnxModel.parse(bytes);
  O.pruneSparsity(pruned, { sparsity: 0.75 });
  const r = await O.evaluate(model, pruned, samples, { ort });
  const o = r.outputs[0];
  assert.equal(o.kind, 'detection', o.detail);
  assert.ok(r.cosine >= 0.99, `cosine ${r.cosine}`);
  assert.ok(o.metrics.referenceBoxes >= 40, o.detail);
  assert.ok(r.score < 0.6 && r.score < r.cosine - 0.35, `fidelity ${r.score} (${o.detail})`);
});
