// The playground's pruning plan (www/src/prune-core.ts) with the real sparsekit-wasm in Node, on the
// real PaddleOCR weights: per-layer top-k blocks, scopes, soft threshold, 2:4, the global coupling.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DET, CLS, REC, parseFile, loadSparsekit, importWww } from './helpers.mjs';

const { pruneLayers, planLayer, blockNormsJs, nmViolations, nm24ConfigFor, nmGroupLength, defaultPlan, magnitudeAllocation, DEFAULT_RULE, NM24_RULE } = await importWww('prune-core.ts');

const sk = await loadSparsekit();

function layerOf(model, name, cfg) {
  const w = model.weights.find((x) => x.name === name);
  return { id: model.weights.indexOf(w), name, dims: w.dims, reduceAxis: w.reduceAxis, data: model.readFloat(w), cfg: { block: [4, 4], scope: [-1, -1], sparsity: 0.5, n: 2, m: 4, ...cfg } };
}

function checkTopK(r, original) {
  const norms = blockNormsJs(original, r.rows, r.cols, r.block[0], r.block[1]);
  const after = blockNormsJs(r.data, r.rows, r.cols, r.block[0], r.block[1]);
  let minKept = Infinity, maxPruned = -Infinity;
  for (let k = 0; k < norms.length; k++) {
    if (r.blockKeep[k]) { minKept = Math.min(minKept, norms[k]); assert.ok(Math.abs(after[k] - norms[k]) <= 1e-5 * norms[k] + 1e-7); }
    else { maxPruned = Math.max(maxPruned, norms[k]); assert.equal(after[k], 0); }
  }
  assert.ok(minKept >= maxPruned, `top-k: min kept ${minKept} >= max pruned ${maxPruned}`);
}

test('plan: (O, rest) view, block fallback with a note', () => {
  const p = planLayer([16, 3, 3, 3], { block: [4, 4], scope: [-1, -1] });
  assert.deepEqual([p.rows, p.cols, p.block, p.grid], [16, 27, [4, 1], [4, 27]]);
  assert.match(p.notes[0], /does not divide/);
  const q = planLayer([96, 384, 1, 1], { block: [4, 4], scope: [1, 5] });
  assert.deepEqual(q.block, [4, 4]);
  assert.deepEqual(q.scope, [1, -1]);           // 5 does not divide the 96 block columns
});

test('hard threshold per layer: 50% of 4x4 blocks, top-k by L2 norm', () => {
  const m = parseFile(DET);
  const L = layerOf(m, 'conv2d_134.w_0', { criterion: 'hard' });
  const orig = Float32Array.from(L.data);
  const [r] = pruneLayers(sk, [L]);
  assert.deepEqual(r.block, [4, 4]);
  assert.equal(r.blocksKept, Math.floor(0.5 * r.blocksTotal + 0.5));
  assert.ok(Math.abs(r.sparsity - 0.5) < 0.01);
  checkTopK(r, orig);
  assert.equal(r.thresholds.length, 1);
  assert.ok(r.bytes.csr > 0 && r.bytes.bsr > 0 && r.bytes.bsr < r.bytes.dense);
});

test('hard threshold with a 1xall scope keeps the same count in every block row', () => {
  const m = parseFile(DET);
  const L = layerOf(m, 'conv2d_134.w_0', { criterion: 'hard', scope: [1, -1], sparsity: 0.75 });
  const [r] = pruneLayers(sk, [L]);
  const [gr, gc] = r.grid;
  for (let i = 0; i < gr; i++) {
    let kept = 0;
    for (let j = 0; j < gc; j++) kept += r.blockKeep[i * gc + j];
    assert.equal(kept, Math.floor(0.25 * gc + 0.5));
  }
});

test('soft threshold zeroes the weakest blocks and shrinks the rest', () => {
  const m = parseFile(DET);
  const L = layerOf(m, 'conv2d_107.w_0', { criterion: 'soft', sparsity: 0.5 });
  const orig = Float32Array.from(L.data);
  const [r] = pruneLayers(sk, [L]);
  const before = blockNormsJs(orig, r.rows, r.cols, 4, 4), after = blockNormsJs(r.data, r.rows, r.cols, 4, 4);
  const t = r.thresholds[0];
  assert.ok(t > 0);
  for (let k = 0; k < before.length; k++) {
    const want = Math.max(0, before[k] - t);
    assert.ok(Math.abs(after[k] - want) < 1e-4 * (1 + before[k]), `block ${k}: ${after[k]} vs ${want}`);
  }
  assert.ok(Math.abs(r.blocksKept / r.blocksTotal - 0.5) < 0.02);
});

test('2:4 on a conv (along C) and a MatMul weight (along K)', () => {
  const m = parseFile(REC);
  const conv = layerOf(m, 'conv2d_142.w_0', { criterion: 'nm' });
  const mm = layerOf(m, 'linear_77.w_0', { criterion: 'nm' });
  const [rc, rm] = pruneLayers(sk, [conv, mm]);
  assert.equal(nmViolations(rc.data, rc.dims, 1, 2, 4), 0);
  assert.equal(rc.sparsity, 0.5);
  assert.equal(nmViolations(rm.data, rm.dims, 0, 2, 4), 0);
  assert.equal(rm.sparsity, 0.5);
  assert.equal(rm.nm24Valid, true);
  assert.ok(rm.bytes.nm24 > 0 && rm.bytes.nm24 < rm.bytes.dense);
});

test('global scope coupling keeps the top 50% of blocks model-wide', () => {
  const m = parseFile(REC);
  const names = m.weights.filter((w) => w.prunable && w.op === 'MatMul').map((w) => w.name);
  const layers = names.map((n) => layerOf(m, n, { criterion: 'hard' }));
  const origs = layers.map((l) => Float32Array.from(l.data));
  let calls = 0;
  const res = pruneLayers(sk, layers, { enabled: true, sparsity: 0.5 }, () => { calls++; });
  assert.ok(calls >= 2);
  const total = res.reduce((a, r) => a + r.blocksTotal, 0), kept = res.reduce((a, r) => a + r.blocksKept, 0);
  assert.equal(kept, Math.floor(0.5 * total + 0.5));
  // one model-wide ranking: every kept block scores at least as high as every pruned one (RMS when block sizes differ)
  const mixed = new Set(res.map((r) => r.block[0] * r.block[1])).size > 1;
  let minKept = Infinity, maxPruned = -Infinity;
  res.forEach((r, i) => {
    assert.equal(r.global, true);
    const f = mixed ? 1 / Math.sqrt(r.block[0] * r.block[1]) : 1;
    const norms = blockNormsJs(origs[i], r.rows, r.cols, r.block[0], r.block[1]);
    norms.forEach((v, k) => { if (r.blockKeep[k]) minKept = Math.min(minKept, v * f); else maxPruned = Math.max(maxPruned, v * f); });
  });
  assert.ok(minKept >= maxPruned * (1 - 1e-6), `${minKept} >= ${maxPruned}`);
  assert.ok(res.some((r) => r.sparsity > 0.6) && res.some((r) => r.sparsity < 0.4), 'layers end up with different sparsities');
});

test('library errors surface with their code', () => {
  const m = parseFile(DET);
  const L = layerOf(m, 'conv2d_134.w_0', { criterion: 'hard', sparsity: 1.5 });
  assert.throws(() => pruneLayers(sk, [L]), (e) => e instanceof sk.SparseKitError && e.code === 'invalid_sparsity');
});

test('N:M where the group axis is not a multiple of m: the layer stays dense, as the library leaves it', () => {
  const m = parseFile(REC);
  const first = layerOf(m, 'conv2d_10.w_0', { criterion: 'nm' });          // 16x3x3x3: C = 3
  const fc = layerOf(m, 'linear_85.w_0', { criterion: 'nm' });             // 120x6625 MatMul: K = 120
  const dw = layerOf(m, 'conv2d_157.w_0', { criterion: 'nm' });            // depthwise 16x1x3x3
  const [r1, r2, r3] = pruneLayers(sk, [first, fc, dw]);
  assert.deepEqual(Array.from(r1.data), Array.from(first.data), 'C = 3 is no multiple of 4: unchanged');
  assert.ok(r1.notes.some((n) => /dense: the reduction axis holds 3 input channels, not a multiple of 4/.test(n)), r1.notes.join('; '));
  assert.equal(nmViolations(r2.data, r2.dims, 0, 2, 4), 0);
  assert.equal(r2.sparsity, 0.5);
  assert.equal(r3.sparsity, 0);
  assert.ok(r3.notes.some((n) => /prunes nothing/.test(n)));
});

test('2:4 preset: 2:4 along the reduction axis where it holds a multiple of 4, dense otherwise', () => {
  assert.equal(nmGroupLength([96, 384, 1, 1], 1), 384);
  assert.equal(nmGroupLength([384, 96], 0), 384);           // MatMul (K, N)
  assert.equal(nmGroupLength([96, 384], 1), 384);           // Gemm transB=1 (N, K)
  assert.equal(nm24ConfigFor([96, 384, 1, 1], 1, 'Conv').cfg.criterion, 'nm');
  assert.deepEqual([nm24ConfigFor([96, 384, 1, 1], 1, 'Conv').cfg.n, nm24ConfigFor([96, 384, 1, 1], 1, 'Conv').cfg.m], [2, 4]);
  const dw = nm24ConfigFor([96, 1, 3, 3], 1, 'Conv');     // depthwise
  assert.equal(dw.cfg.criterion, 'none');
  assert.match(dw.note, /not a multiple of 4/);
  assert.equal(nm24ConfigFor([16, 3, 3, 3], 1, 'Conv').cfg.criterion, 'none');
  assert.equal(nm24ConfigFor([96, 18, 1, 1], 1, 'Conv').cfg.criterion, 'none');
  assert.equal(nm24ConfigFor([24, 24, 2, 2], 1, 'ConvTranspose').cfg.criterion, 'none');
  assert.equal(nm24ConfigFor([120, 64], 0, 'MatMul').cfg.criterion, 'nm');
  assert.equal(nm24ConfigFor([6, 64], 0, 'MatMul').cfg.criterion, 'none');
});

test('2:4 preset on the default model (det): every eligible weight exactly 2:4, the rest dense', () => {
  const m = parseFile(DET);
  const layers = m.weights.filter((w) => w.prunable).map((w, id) => ({ id, name: w.name, dims: w.dims, reduceAxis: w.reduceAxis, data: m.readFloat(w), cfg: nm24ConfigFor(w.dims, w.reduceAxis, w.op).cfg }));
  const res = pruneLayers(sk, layers);
  let nm = 0;
  for (const r of res) {
    if (r.criterion !== 'nm') { assert.equal(r.nnz, r.numel - layers.find((l) => l.id === r.id).data.filter((x) => x === 0).length); continue; }
    nm++;
    assert.ok(r.sparsity >= 0.5 && r.sparsity < 0.55, `${r.name}: groups of 4 complete, 2 kept (some weights were zero already): ${r.sparsity}`);
    assert.equal(r.nm24Valid, true);
    assert.deepEqual(r.notes.filter((n) => /^dense:/.test(n)), []);
  }
  assert.equal(nm, 41);
});

test('magnitude allocation: one threshold model-wide, capped per layer, exact count', () => {
  const a = Float32Array.from({ length: 100 }, (_, i) => (i + 1) / 100);      // 0.01 .. 1.00
  const b = Float32Array.from({ length: 100 }, (_, i) => -(i + 1) / 1000);   // tiny weights: -0.001 .. -0.1
  // 25% of 200 = 50: the 50 smallest |w| of both layers (0.001 .. 0.046 of b, 0.01 .. 0.04 of a); no cap binds.
  let r = magnitudeAllocation([a, b], 0.25, 0.5);
  assert.deepEqual(r.counts, [4, 46]);
  assert.deepEqual(r.uncapped, [4, 46]);
  r = magnitudeAllocation([a, b], 0.4, 0.5);                                 // 80: b capped at 50, 30 of a
  assert.deepEqual(r.counts, [30, 50]);
  assert.equal(r.uncapped[1], 100);
  assert.ok(r.threshold > 0.3 && r.threshold <= 0.31, `threshold ${r.threshold}`);
  assert.deepEqual(magnitudeAllocation([a, b], 0, 0.5).counts, [0, 0]);
  const plan = defaultPlan([{ dims: [10, 10], reduceAxis: 1, op: 'Conv', data: a }, { dims: [10, 10], reduceAxis: 1, op: 'Conv', data: b }], { kind: 'magnitude', target: 0.4, cap: 0.5 });
  assert.deepEqual(plan.items.map((i) => i.kind), ['global', 'capped']);
  assert.deepEqual(plan.items.map((i) => i.cfg.sparsity), [0.3, 0.5]);
  assert.match(plan.items[1].note, /capped at 50\.0%.*would prune 100\.0%/);
  assert.match(plan.sentence, /40% smallest-magnitude weights model-wide .* never more than 50% of any one layer/);
  const big = a.map((x) => x + 1);                                            // all above the threshold
  const dense = defaultPlan([{ dims: [10, 10], reduceAxis: 1, op: 'Conv', data: big }, { dims: [10, 10], reduceAxis: 1, op: 'Conv', data: b }]);
  assert.deepEqual(dense.items.map((i) => i.cfg.criterion), ['none', 'hard']);
  assert.match(dense.items[0].note, /dense by default: none of its weights lies below/);
});

// The default rule on the three real models: exactly 25% of the prunable weights, no layer above 50%,
// the pruned weights of a layer are its smallest |w| and, where the cap does not bind, exactly those
// below the model-wide threshold. (The effect on the outputs is checked on the page: playground.test.mjs.)
for (const [label, file] of [['det', DET], ['cls', CLS], ['rec', REC]]) {
  test(`default settings on ${label}: magnitude threshold model-wide, 25%, at most 50% per layer`, () => {
    const m = parseFile(file);
    const ws = m.weights.filter((w) => w.prunable);
    const plan = defaultPlan(ws.map((w) => ({ dims: w.dims, reduceAxis: w.reduceAxis, op: w.op, data: m.readFloat(w) })));
    assert.equal(plan.rule, DEFAULT_RULE);
    const layers = ws.map((w, i) => ({ id: i, name: w.name, dims: w.dims, reduceAxis: w.reduceAxis, data: m.readFloat(w), cfg: plan.items[i].cfg }));
    const res = pruneLayers(sk, layers);
    let zeros = 0, numel = 0;
    res.forEach((r, i) => {
      const it = plan.items[i], orig = layers[i].data;
      zeros += r.numel - r.nnz; numel += r.numel;
      assert.ok(r.sparsity <= DEFAULT_RULE.cap + 1e-9, `${r.name}: ${r.sparsity} <= cap`);
      if (it.kind === 'dense') { assert.deepEqual(Array.from(r.data), Array.from(orig)); return; }
      assert.equal(r.criterion, 'hard');
      assert.deepEqual(r.block, [1, 1]);
      assert.equal(r.numel - r.nnz >= Math.round(it.cfg.sparsity * r.numel), true, `${r.name}: prunes its share`);
      let maxPruned = 0, minKept = Infinity;
      for (let k = 0; k < orig.length; k++) {
        if (r.data[k] === 0) maxPruned = Math.max(maxPruned, Math.abs(orig[k])); else { minKept = Math.min(minKept, Math.abs(orig[k])); assert.equal(r.data[k], orig[k]); }
      }
      assert.ok(maxPruned <= minKept, `${r.name}: the smallest |w| go`);
      if (it.kind === 'global') assert.ok(maxPruned < plan.threshold && minKept >= plan.threshold, `${r.name}: exactly the weights below the threshold`);
      else assert.ok(minKept < plan.threshold, `${r.name}: capped, so weights below the threshold stay`);
    });
    assert.ok(Math.abs(zeros / numel - DEFAULT_RULE.target) < 1e-4, `total ${zeros / numel}`);
    const nm = defaultPlan(ws.map((w) => ({ dims: w.dims, reduceAxis: w.reduceAxis, op: w.op, data: m.readFloat(w) })), NM24_RULE);
    assert.deepEqual(nm.items.map((x) => x.cfg.criterion), ws.map((w) => nm24ConfigFor(w.dims, w.reduceAxis, w.op).cfg.criterion));
  });
}
