// gptq / roundToNearest through the built package (the wasm SIMD128 build), and quantizeLayer of
// sparsekit-wasm/onnx on a small MatMul layer: the package equals a scalar JavaScript reference
// written from the contract bit for bit, its values are its codes dequantized, compensation beats
// round-to-nearest on correlated inputs, joint mode keeps exact zeros, refusals change nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as sk from 'sparsekit-wasm';
import { build } from './build.mjs';
import { gptqOracle, hessianF64, upperFactorF32 } from './gptq-oracle.mjs';

build();
const O = await import('#onnx-internal');
const G = await import('./graphs.mjs');

/** Deterministic numbers in [-1, 1). */
function rand(seed, n) {
  let s = seed >>> 0 || 1;
  return Float32Array.from({ length: n }, () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s / 2 ** 31 - 1; });
}

/** n input vectors with correlated features (a shared component and a random mixing). */
function correlated(n, cols, seed) {
  const z = rand(seed, n * cols), a = rand(seed + 1, cols * cols), common = rand(seed + 2, n);
  const x = new Float32Array(n * cols);
  for (let r = 0; r < n; r++) for (let j = 0; j < cols; j++) {
    let s = 2 * common[r];
    for (let k = 0; k < cols; k++) s += z[r * cols + k] * a[k * cols + j] * 0.5;
    x[r * cols + j] = s;
  }
  return x;
}

const sameBits = (a, b) => a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

/** Runs `fn` on a fresh rows x cols Param holding w0; returns [its result, the values after]. */
function onParam(w0, rows, cols, fn) {
  const p = sk.Param.fromArray(w0, [rows, cols]);
  try { return [fn(p), p.toArray()]; } finally { p.free(); }
}

test('gptq equals the scalar reference bit for bit (per row and grouped, sym, full-range and asym, several block sizes)', () => {
  const rows = 12, cols = 48, n = 64;
  const x = correlated(n, cols, 5);
  const h = new sk.Hessian(cols);
  h.addRows(x, n);
  const u = upperFactorF32(hessianF64(x, n, cols), cols, 0.01);
  const w0 = rand(9, rows * cols);
  for (const [bits, group, sym, blockSize, fullRange] of [[4, undefined, true, 128], [4, 16, true, 16], [4, 16, true, 32, true], [3, undefined, true, 48, true],
    [3, 16, false, 32], [8, 24, true, 48], [2, 8, false, 8]]) {
    const want = gptqOracle(w0, rows, cols, u, { bits, group, sym, fullRange });
    const [q, got] = onParam(w0, rows, cols, (p) => sk.gptq(p, h, { bits, group, sym, blockSize, fullRange }));
    const label = JSON.stringify({ bits, group, sym, blockSize, fullRange });
    assert.ok(sameBits(got, want.values), `${label}: values`);
    assert.deepEqual(q.codes, want.codes, `${label}: codes`);
    assert.ok(sameBits(q.scales, want.scales), `${label}: scales`);
    if (sym) assert.equal(q.zeros, undefined);
    else assert.deepEqual(q.zeros, want.zeros);
    assert.equal(q.group, group ?? cols);
    // The full grid reaches code -half in every group (its extreme, unless compensation moved it away) and has negative scales.
    if (fullRange) assert.ok(q.codes.includes(-(2 ** (bits - 1))) && q.scales.some((s) => s < 0), `${label}: the full grid`);
    // Every value is its code dequantized: (code - zero) * scale in float32.
    const ng = Math.ceil(cols / q.group);
    for (let i = 0; i < rows * cols; i++) {
      const k = Math.floor(i / cols) * ng + Math.floor((i % cols) / q.group);
      assert.equal(got[i], Math.fround((q.codes[i] - (q.zeros?.[k] ?? 0)) * q.scales[k]) + 0);
    }
  }
  h.free();
});

test('compensation beats round-to-nearest on correlated inputs; joint 2:4 + 4-bit keeps exact zeros', () => {
  const rows = 32, cols = 64, n = 512;
  const h = new sk.Hessian(cols);
  h.addRows(correlated(n, cols, 21), n);
  const w0 = rand(22, rows * cols);
  for (const [bits, group, fullRange] of [[4, undefined], [4, 32], [4, 32, true], [8, undefined]]) {
    const [, rtn] = onParam(w0, rows, cols, (p) => sk.roundToNearest(p, { bits, group, fullRange }));
    const [, gq] = onParam(w0, rows, cols, (p) => sk.gptq(p, h, { bits, group, fullRange }));
    const er = sk.relReconError(w0, rtn, h), eg = sk.relReconError(w0, gq, h);
    assert.ok(eg < 0.75 * er, `${bits} bits group ${group}: gptq ${eg} vs rtn ${er}`);
  }
  const [q, joint] = onParam(w0, rows, cols, (p) => sk.gptq(p, h, { bits: 4, group: 32, nm: [2, 4] }));
  for (let i = 0; i < rows * cols; i += 4) {
    assert.equal(q.keep[i] + q.keep[i + 1] + q.keep[i + 2] + q.keep[i + 3], 2);
    for (let t = i; t < i + 4; t++) if (!q.keep[t]) { assert.ok(Object.is(joint[t], 0)); assert.equal(q.codes[t], 0); }
  }
  h.free();
});

test('refused options change nothing and name their code', () => {
  const rows = 4, cols = 16;
  const h = new sk.Hessian(cols);
  h.addRows(correlated(40, cols, 3), 40);
  const w0 = rand(4, rows * cols);
  for (const [opts, code] of [[{ bits: 9 }, 'invalid_arguments'], [{ bits: 4, group: 8, blockSize: 12 }, 'invalid_arguments'],
    [{ bits: 4, sparsity: 0.5, nm: [2, 4] }, 'invalid_arguments'], [{ bits: 4, nm: [2, 3] }, 'invalid_nm_shape'], [{ bits: 4, colour: 1 }, 'invalid_arguments'],
    [{ bits: 4, sym: false, fullRange: true }, 'invalid_arguments']]) {
    const [err, after] = onParam(w0, rows, cols, (p) => { try { sk.gptq(p, h, opts); return null; } catch (e) { return e; } });
    assert.ok(err instanceof sk.SparseKitError, JSON.stringify(opts));
    assert.equal(err.code, code, JSON.stringify(opts));
    assert.ok(sameBits(after, w0));
  }
  h.free();
});

test('quantizeLayer on a MatMul layer: transposed view codes, GPTQ below RTN, RTN without statistics', () => {
  const K = 32, N = 24, n = 256;
  const bytes = G.makeModel({ inputs: [['x', [1, K]]], outputs: [['y', [1, N]]], inits: { W: { dims: [K, N] } }, nodes: [['MatMul', ['x', 'W'], ['y']]] });
  const model = O.OnnxModel.parse(bytes);
  const [layer] = O.findLayers(model);
  assert.equal(layer.transposed, true);
  const stored = model.readFloat(layer.weight);
  const h = new sk.Hessian(K);
  h.addRows(correlated(n, K, 8), n);
  const g = O.quantizeLayer({ layer, stored, stats: { h }, bits: 4, group: 16 });
  const r = O.quantizeLayer({ layer, stored, stats: { h }, bits: 4, group: 16, method: 'rtn' });
  assert.equal(g.method, 'gptq');
  assert.ok(g.relError < 0.8 * r.relError, `gptq ${g.relError} vs rtn ${r.relError}`);
  // codes are view-shaped [N, K]; data is stored (K, N): element (k, n) is code [n, k] dequantized.
  for (let k = 0; k < K; k++) for (let c = 0; c < N; c++) {
    assert.equal(g.data[k * N + c], Math.fround(g.codes[c * K + k] * g.scales[c * 2 + Math.floor(k / 16)]) + 0);
  }
  const none = O.quantizeLayer({ layer, stored, bits: 8 });
  assert.equal(none.method, 'rtn');
  assert.equal(none.relError, null);
  assert.match(none.notes.join(' '), /round-to-nearest instead of GPTQ/);
  assert.throws(() => O.quantizeLayer({ layer, stored, stats: { h }, bits: 4, method: 'awq' }), (e) => e instanceof O.OnnxError && e.reason === 'bad_option');
  h.free();
});

test('actOrder: static groups of the original blocks (their scales are round-to-nearest\'s), below natural order on rising input energy; scaleSearch stays on the grid', () => {
  const rows = 24, cols = 64, n = 512, group = 16, ng = cols / group;
  const base = correlated(n, cols, 31);
  // Input j scaled by 1.1^j: the strongest inputs last, natural order's worst case.
  const x = base.map((v, i) => v * 1.1 ** (i % cols));
  const h = new sk.Hessian(cols);
  h.addRows(x, n);
  const w0 = rand(32, rows * cols);
  const grid = { bits: 4, group, fullRange: true };
  const [rq] = onParam(w0, rows, cols, (p) => sk.roundToNearest(p, grid));
  const [, nat] = onParam(w0, rows, cols, (p) => sk.gptq(p, h, grid));
  const [q, act] = onParam(w0, rows, cols, (p) => sk.gptq(p, h, { ...grid, actOrder: true }));
  assert.ok(sameBits(q.scales, rq.scales), 'static groups: the scales of the uncompensated blocks');
  const en = sk.relReconError(w0, nat, h), ea = sk.relReconError(w0, act, h);
  assert.ok(ea < 0.9 * en, `act-order ${ea} vs natural ${en}`);
  const [qs, srch] = onParam(w0, rows, cols, (p) => sk.gptq(p, h, { ...grid, actOrder: true, scaleSearch: true }));
  for (const [qq, vals] of [[q, act], [qs, srch]]) {
    for (let i = 0; i < rows * cols; i++) assert.equal(vals[i], Math.fround(qq.codes[i] * qq.scales[Math.floor(i / cols) * ng + Math.floor((i % cols) / group)]) + 0);
  }
  assert.ok(qs.scales.some((s, k) => Math.abs(s) < Math.abs(rq.scales[k])) && qs.scales.every((s, k) => Math.abs(s) <= Math.abs(rq.scales[k])), 'the search only shrinks');
  for (const [opts, code] of [[{ ...grid, actOrder: true, nm: [2, 4] }, 'invalid_arguments'], [{ ...grid, actOrder: true, staticGroups: false }, 'invalid_arguments'],
    [{ ...grid, actOrder: 1 }, 'invalid_arguments']]) {
    const [err, after] = onParam(w0, rows, cols, (p) => { try { sk.gptq(p, h, opts); return null; } catch (e) { return e; } });
    assert.equal(err?.code, code, JSON.stringify(opts));
    assert.ok(sameBits(after, w0));
  }
  h.free();
});
