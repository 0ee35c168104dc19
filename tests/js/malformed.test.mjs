// The malformed-call barrage (issue 8): a deterministic generator drives >= 1000 bad calls
// through every public class and function of the built package (wrong types, wrong lengths,
// NaN/Infinity, negative/fractional sizes, strings for numbers, unknown option keys, freed
// objects, detached ArrayBuffers, arrays that view wasm memory, shapes too big to allocate).
// Every bad call must throw an `instanceof sk.SparseKitError` with a stable string `.code`;
// afterwards every weight is bit-identical to before and correct calls give the right numbers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as sk from 'sparsekit-wasm';

// ------------------------------------------------------------------ deterministic generator

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    // mulberry32
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(0x5eed);
const pick = (a) => a[Math.floor(rand() * a.length)];

function detached(n) {
  const buf = new ArrayBuffer(4 * n);
  const a = new Float32Array(buf);
  structuredClone(buf, { transfer: [buf] });
  assert.equal(a.length, 0, 'transfer detaches the buffer');
  return a;
}
function detachedU8(n) {
  const buf = new ArrayBuffer(n);
  const a = new Uint8Array(buf);
  structuredClone(buf, { transfer: [buf] });
  return a;
}

const f32 = (n, v = 1) => new Float32Array(n).fill(v);
const bits = (a) => Array.from(new Uint32Array(Float32Array.from(a).buffer));

// Numbers that are never a valid size, count or finite parameter.
const BAD_NUMS = [NaN, Infinity, -Infinity, '2', '', null, {}, [], [2], true, Symbol('x'), 10n, () => 1];
// Shapes / strides / block shapes that are never valid (type or value).
const BAD_DIMS = ['2,8', 7, null, {}, [1.5, 8], [NaN, 8], ['2', 8], [Infinity, 1], [true, 1], [2 ** 60, 1], [-3, 8, 1], new Map()];
// Not a Float32Array (or convertible array of numbers).
const BAD_ARRAYS = ['1,2,3', 42, {}, new Map(), [1, 'a'], [1, null], Symbol('a'), true, new Float64Array(3), new Int16Array(2)];
const BAD_OPTS = ['x', 5, [1], true];

// ------------------------------------------------------------------ fixtures

function fixtures() {
  const pData = Float32Array.from({ length: 16 }, (_, i) => ((i * 7) % 11) - 5 + i / 8);
  const qData = Float32Array.from({ length: 16 }, (_, i) => Math.sin(i + 1) * 3);
  const rData = Float32Array.from({ length: 24 }, (_, i) => ((i * 5) % 13) / 3 - 2);
  const p = sk.Param.fromArray(pData, [2, 8]);
  const q = sk.Param.fromArray(qData, [8, 2]);
  const r = sk.Param.fromArray(rData, [4, 6]);
  const v = new sk.View(p, [2, 8], [8, 1]);
  const vt = new sk.View(r, [6, 4], [1, 6]); // transposed
  const bs = new sk.BlockSpec(v, [1, 2], 'bs'); // grid [2, 4]
  const bq = new sk.BlockSpec(q, [2, 1], 'bq'); // grid [4, 2]
  const br = new sk.BlockSpec(vt, [3, 2], 'br'); // grid [2, 2]
  const bc = new sk.BlockCoupling([bs, bq], [[0, 1], [1, 0]], 'bc'); // grid [2, 4]
  const sc = new sk.ScopeSpec(bs, [1, 2], 'sc'); // scope grid [2, 2]
  const sr = new sk.ScopeSpec(br, [1, 1], 'sr'); // scope grid [2, 2]
  const scc = new sk.ScopeSpec(bc, [2, 2], 'scc'); // scope grid [1, 2]
  const cpl = new sk.ScopeCoupling([sc, sr], undefined, 'cpl'); // grid [2, 2]
  const alias = new sk.View(p, [2, 8], [0, 1]); // two indices per element: writes refused
  const aliasSpec = new sk.BlockSpec(alias, [1, 2]);
  return { p, q, r, v, vt, bs, bq, br, bc, sc, sr, scc, cpl, alias, aliasSpec, pData, qData, rData };
}

function freedObjects() {
  const fp = sk.Param.fromArray(f32(16), [2, 8]);
  const fv = new sk.View(fp, [2, 8], [8, 1]);
  const fbs = new sk.BlockSpec(fv, [1, 2]);
  const fbs2 = new sk.BlockSpec(fv, [1, 2]);
  const fbc = new sk.BlockCoupling([fbs2]);
  const fsc = new sk.ScopeSpec(new sk.BlockSpec(fv, [1, 2]), [1, 2]);
  const fcpl = new sk.ScopeCoupling([new sk.ScopeSpec(new sk.BlockSpec(fv, [1, 2]), [1, 2])]);
  const fms = new sk.MagnitudeSearcher();
  // Free in an order that also frees parents before children.
  for (const o of [fp, fv, fbs, fbc, fsc, fcpl, fms]) o.free();
  fp.free(); // double free is a no-op
  return { fp, fv, fbs, fbc, fsc, fcpl, fms };
}

// ------------------------------------------------------------------ the bad-call templates

/** Each template returns a thunk that must throw a SparseKitError. */
function templates(F, X) {
  const { p, q, v, bs, bc, sc, scc, cpl, aliasSpec, alias } = F;
  const grid = (n, k) => (k === 0 ? f32(n + 1 + Math.floor(rand() * 3)) : k === 1 ? f32(Math.max(0, n - 1)) : detached(n));
  const T = [];
  const add = (name, make) => T.push({ name, make });

  // Param
  add('Param.fromArray bad data', () => () => sk.Param.fromArray(pick(BAD_ARRAYS), [2, 2]));
  add('Param.fromArray bad shape', () => () => sk.Param.fromArray(f32(4), pick(BAD_DIMS)));
  add('Param.fromArray wrong length', () => () => sk.Param.fromArray(f32(Math.floor(rand() * 5)), [3, 3]));
  add('Param.fromArray detached', () => () => sk.Param.fromArray(detached(4), [2, 2]));
  add('Param.fromArray huge', () => () => sk.Param.fromArray(f32(0), pick([[65536, 65536], [1 << 30, 8], [2 ** 31, 2 ** 31, 2]])));
  add('Param.set wrong', () => () => p.set(pick([f32(3), detached(16), 'x', [1, 'a'], F.r.data])));
  add('Param freed', () => () => pick([() => X.fp.data, () => X.fp.toArray(), () => X.fp.size, () => X.fp.set(f32(16))])());
  // View
  add('View bad param', () => () => new sk.View(pick([null, {}, bs, F.pData, X.fv]), [2, 8], [8, 1]));
  add('View bad shape', () => () => new sk.View(p, pick(BAD_DIMS), [8, 1]));
  add('View bad stride', () => () => new sk.View(p, [2, 8], pick([...BAD_DIMS, [8], [8, 1, 1], [-8, 1], [8, 2]])));
  add('View out of bounds', () => () => new sk.View(p, [2, 8], pick([[9, 1], [8, 2], [1, 3]])));
  add('View huge', () => () => new sk.View(p, pick([[2 ** 31, 2 ** 31], [65536, 65536, 65536]]), [0, 0].concat(rand() < 0.5 ? [] : [0]).slice(0, 2).concat([0]).slice(0, rand() < 0.5 ? 2 : 3)));
  add('View.fromExisting bad', () => () => sk.View.fromExisting(pick([null, 3, 'p', {}, bs, X.fp])));
  add('View freed', () => () => pick([() => X.fv.values(), () => X.fv.numel(), () => X.fv.cosize, () => X.fv.applyMask(new Uint8Array(8), [1, 2])])());
  add('View.linearOffset bad', () => () => v.linearOffset(pick([new Int32Array(3), [0.5, 1], ['a', 0], 'x', null, [2 ** 40, 0]])));
  add('View.toParamRc bad', () => () => pick([() => v.toParamRc(new Int32Array(1)), () => F.vt.toParamRc(pick(['x', null])), () => new sk.View(sk.Param.fromArray(f32(8), [8]), [8], [1]).toParamRc(new Int32Array([1]))])());
  add('View.applyMultiplier bad', () => () => v.applyMultiplier(pick([grid(8, 0), grid(8, 1), 'x', null]), [1, 2]));
  add('View.applyMultiplier bad block', () => () => v.applyMultiplier(f32(8), pick([...BAD_DIMS, [3, 1], [1, 3], [1, 2, 1]])));
  add('View.applyMask bad', () => () => v.applyMask(pick([new Uint8Array(3), detachedU8(8), 'x', new Float32Array(8), [1, 'a']]), [1, 2]));
  add('View aliased write', () => () => pick([() => alias.applyMultiplier(f32(16, 0.5), [1, 1]), () => alias.applyMask(new Uint8Array(16), [1, 1])])());
  add('View.blockViewOf bad', () => () => sk.View.blockViewOf(pick([f32(5), 'x', detached(16)]), [2, 8], [1, 2]));
  add('View.blockViewOf bad shape', () => () => sk.View.blockViewOf(f32(16), pick([...BAD_DIMS, [65536, 65536]]), [1, 2]));
  add('View.blockViewOf bad opts', () => () => sk.View.blockViewOf(f32(16), [2, 8], [1, 2], pick([{ reorder: 1 }, { merge: 'yes' }, { bogus: true }, ...BAD_OPTS])));
  add('View.broadcastBlockToElement bad', () => () => sk.View.broadcastBlockToElement(pick([f32(3), 'x']), [2, 2], [1, 1]));
  add('View.broadcastBlockToElement huge', () => () => sk.View.broadcastBlockToElement(f32(1), [1, 1], pick([[65536, 65536], [1 << 20, 1 << 12], [2 ** 31, 2 ** 31]])));
  add('View.broadcastBlockToElement fake', () => () => sk.View.broadcastBlockToElement(f32(4), [2, 2], [1, 1], pick(['yes', 1, null, {}])));
  // BlockSpec
  add('BlockSpec bad view', () => () => new sk.BlockSpec(pick([null, 3, {}, F.pData, X.fp, X.fv]), [1, 2]));
  add('BlockSpec bad block', () => () => new sk.BlockSpec(v, pick([...BAD_DIMS, [3, 2], [1, 3], [1], [1, 2, 1]])));
  add('BlockSpec bad name', () => () => new sk.BlockSpec(v, [1, 2], pick([5, {}, [], true])));
  add('BlockSpec huge 1x1', () => () => {
    const huge = new sk.BlockSpec(new sk.View(q, [1 << 30], [0]), [1]);
    try {
      pick([() => huge.norms(), () => huge.min(), () => huge.blockView(), () => new sk.ScopeSpec(huge, [1])])();
    } finally {
      huge.free();
    }
  });
  add('BlockSpec.norms bad', () => () => bs.norms(pick([0, 3, -1, 0.5, ...BAD_NUMS.filter((x) => x !== Infinity)])));
  add('BlockSpec.norms bad values', () => () => bs.norms(2, pick([f32(5), f32(15), detached(16), 'x', [1, 'a'], [f32(16)], q.data.subarray(0, 3)])));
  add('BlockSpec.min/max bad values', () => () => (rand() < 0.5 ? bs.min : bs.max).call(bs, pick([f32(7), 'x', 4, [f32(16)]])));
  add('BlockSpec.nnz bad', () => () => bs.nnz(pick([NaN, '1e-8', null, {}, [1]])));
  add('BlockSpec.applyMask bad', () => () => bs.applyMask(pick([new Uint8Array(7), new Uint8Array(9), detachedU8(8), 'x', 8, { data: new Uint8Array(8), shape: [4, 2] }])));
  add('BlockSpec.applyMultiplier bad', () => () => bs.applyMultiplier(pick([grid(8, 0), grid(8, 1), grid(8, 2), 'x', p.data, { data: f32(8), shape: [8] }])));
  add('BlockSpec.hardThreshold bad', () => () => bs.hardThreshold(pick([grid(8, 0), grid(8, 1), detached(8), f32(8, NaN), p.data, 'x'])));
  add('BlockSpec.hardThreshold bad values', () => () => bs.hardThreshold(f32(8, 100), pick([f32(3), 'x', [f32(16)], detached(16)])));
  add('BlockSpec.softThreshold bad t', () => () => bs.softThreshold(pick([grid(8, 0), grid(8, 1), f32(8, NaN), Float32Array.from([0, 0, NaN, 0, 0, 0, 0, 0])])));
  add('BlockSpec.softThreshold bad opts', () => () =>
    bs.softThreshold(f32(8, 0.1), pick([{ maxIter: -1 }, { maxIter: 2.5 }, { maxIter: '3' }, { maxIter: 1e7 }, { atol: NaN }, { atol: -1 }, { atol: 'x' }, { eps: -1 }, { eps: NaN }, { scale: true }, { bogus: 1 }, { method: 'secant' }, { method: 'Newton' }, { method: 2 }, { conditioners: f32(16), method: 'bisect' }, { conditioners: f32(5) }, { conditioners: 'x' }, { conditioners: [f32(16)] }, ...BAD_OPTS])));
  add('BlockSpec.getMasks bad', () => () => bs.getMasks(pick([new Uint8Array(3), 'x', null, detachedU8(8)])));
  add('BlockSpec.blockView bad', () => () => bs.blockView(pick([f32(3), 'x']), pick([undefined, { merge: 1 }])));
  add('BlockSpec.blockView bad opts', () => () => bs.blockView(undefined, pick([{ reorder: 'no' }, { foo: 1 }, ...BAD_OPTS])));
  add('BlockSpec aliased write', () => () => pick([() => aliasSpec.applyMultiplier(f32(8, 0.5)), () => aliasSpec.hardThreshold(f32(8, 1e9)), () => aliasSpec.softThreshold(f32(8, 1)), () => aliasSpec.applyMask(new Uint8Array(8))])());
  add('BlockSpec freed', () => () => pick([() => X.fbs.norms(), () => X.fbs.applyMask(new Uint8Array(4)), () => X.fbs.numblk(), () => new sk.ScopeSpec(X.fbs, [1, 1])])());
  // BlockCoupling
  add('BlockCoupling bad specs', () => () => new sk.BlockCoupling(pick([[], null, [bs, 3], 'x', [X.fbs], [bs, sc]])));
  add('BlockCoupling bad orders', () => () => new sk.BlockCoupling([bs, F.bq], pick([[[0, 1]], [[0, 0], [1, 0]], [[0, 1], [1, 2]], [[0, 1], [0.5, 0]], 'x', [[0, 1], 'ab'], [[0, 1], [1, 0], [0, 1]], 5])));
  add('BlockCoupling incompatible', () => () => new sk.BlockCoupling([bs, F.bq]));
  add('BlockCoupling.norms bad values', () => () => bc.norms(2, pick([f32(16), [f32(16)], [f32(16), f32(3)], ['x', f32(16)], 'x', [f32(16), f32(16), f32(16)]])));
  add('BlockCoupling.norms bad p', () => () => bc.norms(pick([3, NaN, '2', -Infinity])));
  add('BlockCoupling.applyMultiplier bad', () => () => bc.applyMultiplier(pick([grid(8, 0), grid(8, 1), 'x', { data: f32(8), shape: [4, 2] }])));
  add('BlockCoupling.applyMask bad', () => () => bc.applyMask(pick([new Uint8Array(7), 'x', { data: new Uint8Array(8), shape: [2, 2, 2] }])));
  add('BlockCoupling.hardThreshold bad', () => () => bc.hardThreshold(pick([grid(8, 0), f32(8, NaN), 'x']), pick([undefined, [f32(16)], f32(16)])));
  add('BlockCoupling.softThreshold bad', () => () => bc.softThreshold(f32(8, 0.1), pick([{ conditioners: [f32(16)] }, { conditioners: f32(16) }, { scale: true }, { eps: -2 }, { maxIter: NaN }, { nope: 0 }])));
  add('BlockCoupling.getMasks bad', () => () => bc.getMasks(pick([new Uint8Array(9), 'x', 4])));
  add('BlockCoupling freed', () => () => pick([() => X.fbc.norms(), () => X.fbc.applyMultiplier(f32(4)), () => new sk.ScopeSpec(X.fbc, [1, 1])])());
  // ScopeSpec
  add('ScopeSpec bad block', () => () => new sk.ScopeSpec(pick([null, v, p, 'x', X.fbs]), [1, 2]));
  add('ScopeSpec bad shape', () => () => new sk.ScopeSpec(bs, pick([...BAD_DIMS, [1, 3], [3, 1], [1], [0, 2], [-2, 1], [1, 2, 1]])));
  add('ScopeSpec.sparsityToNnz bad', () => () => sc.sparsityToNnz(pick([-0.1, 1.5, NaN, Infinity, '0.5', null])));
  add('ScopeSpec.kthLargest bad', () => () => sc.kthLargest(pick([f32(8), f32(7), 'x']), pick([3, -1, 0.5, NaN, '1', 1e12])));
  add('ScopeSpec.kthMid bad', () => () => sc.kthMid(f32(8), 1, pick([NaN, -1, Infinity, '1'])));
  add('ScopeSpec.blockNorms bad', () => () => sc.blockNorms(pick([f32(3), 'x', [f32(16)]])));
  add('ScopeSpec.hardThreshold bad', () => () =>
    sc.hardThreshold(pick([{}, { nnz: 1, sparsity: 0.5 }, { nnz: 3 }, { nnz: -1 }, { nnz: 1.5 }, { nnz: '1' }, { nnz: NaN }, { sparsity: 1.01 }, { sparsity: NaN }, { sparsity: '0.5' }, { thresholds: f32(3) }, { thresholds: f32(4, NaN) }, { thresholds: f32(4), nnz: 1 }, { nnz: 1, values: f32(3) }, { nnz: 1, bogus: 1 }, ...BAD_OPTS, null])));
  add('ScopeSpec.getMasks bad', () => () =>
    sc.getMasks(pick([{}, { nnz: 5 }, { sparsity: -1 }, { nnz: 1, blockScores: f32(3) }, { blockMask: new Uint8Array(3) }, { blockMask: new Uint8Array(8), nnz: 1 }, { nnz: 1, zzz: 2 }, { nnz: 'x' }])));
  add('ScopeSpec.softThreshold bad', () => () => sc.softThreshold(pick([f32(3), f32(4, NaN), 'x']), pick([undefined, { scale: 'y' }])));
  add('ScopeSpec.softThreshold bad opts', () => () => sc.softThreshold(f32(4, 0.1), pick([{ scale: 1 }, { conditioners: f32(3) }, { atol: -1 }, { q: 1 }, ...BAD_OPTS])));
  add('ScopeSpec over coupling bad values', () => () => scc.hardThreshold({ nnz: 1, values: pick([f32(16), [f32(16)], [f32(16), 'x']]) }));
  add('ScopeSpec freed', () => () => pick([() => X.fsc.hardThreshold({ nnz: 1 }), () => X.fsc.blockNorms(), () => X.fsc.numScopes(), () => new sk.ScopeCoupling([X.fsc])])());
  // ScopeCoupling
  add('ScopeCoupling bad scopes', () => () => new sk.ScopeCoupling(pick([[], null, [sc, bs], 'x', [X.fsc]])));
  add('ScopeCoupling bad orders', () => () => new sk.ScopeCoupling([sc, F.sr], pick([[[0, 1]], [[1, 1], [0, 1]], 'x', [[0, 1], [0, 2]]])));
  add('ScopeCoupling incompatible', () => () => new sk.ScopeCoupling([sc, scc]));
  add('ScopeCoupling.hardThreshold bad', () => () =>
    cpl.hardThreshold(pick([{}, { nnz: 7 }, { sparsity: 2 }, { nnz: 1, values: [f32(16)] }, { nnz: 1, values: f32(16) }, { thresholds: f32(3) }, { thresholds: f32(4, NaN) }, { nnz: 1, onProgress: 'f' }, { nnz: 1, foo: 1 }])));
  add('ScopeCoupling.softThreshold bad', () => () => cpl.softThreshold(pick([f32(3), f32(4, NaN), 'x']), pick([undefined, { conditioners: [f32(16)] }])));
  add('ScopeCoupling.softThreshold bad opts', () => () => cpl.softThreshold(f32(4, 0.1), pick([{ eps: NaN }, { maxIter: -3 }, { conditioners: [f32(16), f32(2)] }, { onProgress: 5 }, { x: 1 }])));
  add('ScopeCoupling.getMasks bad', () => () => cpl.getMasks(pick([{}, { nnz: -2 }, { sparsity: 'half' }, { nnz: 1, values: 'x' }])));
  add('ScopeCoupling.blockNorms bad', () => () => cpl.blockNorms(pick([[f32(16)], 'x', [f32(16), f32(24), f32(1)]])));
  add('ScopeCoupling freed', () => () => pick([() => X.fcpl.hardThreshold({ nnz: 1 }), () => X.fcpl.numScopes(), () => X.fcpl.blockNorms()])());
  // N:M and exports
  add('computeValid1dPatterns bad', () => () => sk.computeValid1dPatterns(pick([-1, 2.5, NaN, '4', null, 40]), pick([2, -1, 50])));
  add('mn1dBest bad', () => () => sk.mn1dBest(pick([f32(7), 'x', detached(8)]), [2, 4], 4, 2));
  add('mn1dBest bad shape', () => () => sk.mn1dBest(f32(8), pick([...BAD_DIMS, [8], [2, 2, 2]]), 4, 2));
  add('mn1dBest bad mn', () => () => sk.mn1dBest(f32(8), [2, 4], pick([0, -4, 2.5, NaN, '4']), pick([2, 5, -1])));
  add('m4n2_1d bad', () => () => sk.m4n2_1d(pick([f32(8), f32(7)]), pick([[2, 3], [1, 7], 'x', [8]])));
  add('createAspMask bad', () => () => sk.createAspMask(pick([f32(8), 'x']), [2, 4], pick(['m4n2_3d', 'bogus', 5, 'm0n0_1d', 'm4n5_1d'])));
  add('createAspMask huge', () => () => sk.createAspMask(f32(4), pick([[65536, 65536], [2 ** 31, 2 ** 31, 4]])));
  add('fill bad', () => () => sk.fill(pick(['x', 5, {}, null, [1, 'a']])));
  add('reshape1d bad', () => () => sk.reshape1d(f32(8), [2, 4], pick([0, -1, NaN, 'x', 1.5])));
  add('MagnitudeSearcher bad', () => () => pick([() => new sk.MagnitudeSearcher(pick([5, 'm4n2_3d', 'nope', null])), () => new sk.MagnitudeSearcher().apply(pick(['x', [bs], [null]])), () => X.fms.computeMasks([p])])());
  add('toCsr/toBsr/toNm24 bad', () => () => pick([() => sk.toCsr(f32(7), [2, 4]), () => sk.toBsr(f32(8), [2, 4], pick([[0, 0], [3, 1], 'x'])), () => sk.toNm24(f32(6), [2, 3])])());
  add('sparseToDense bad', () => () =>
    sk.sparseToDense(pick([null, 'x', { shape: [2, 2] }, { shape: [2, 2], values: f32(1), indptr: new Uint32Array([0, 5, 9]), indices: new Uint32Array([7]) }, { shape: [2, 4], values: f32(1), meta: new Uint8Array(0) }, { shape: 'x', values: f32(1) }])));
  add('searchPermutation bad', () => () => sk.searchPermutation(f32(8), [2, 4], pick([{ m: 0 }, { n: 9 }, { m: 'x' }, { maxSweeps: -1 }, { zz: 1 }, 'o'])));
  return T;
}

// ------------------------------------------------------------------ the test

const N_CALLS = 1200;

test(`malformed-call barrage: ${N_CALLS} bad calls throw SparseKitError, write nothing, leave the module usable`, () => {
  const F = fixtures();
  const X = freedObjects();
  const T = templates(F, X);
  const main = [F.p, F.q, F.r];
  const before = main.map((x) => bits(x.toArray()));

  const codes = new Map();
  const perTemplate = new Map();
  let n = 0;
  for (let i = 0; i < N_CALLS; i++) {
    // Visit every template first, then draw at random.
    const t = i < T.length ? T[i] : pick(T);
    const thunk = t.make();
    let threw = null;
    try {
      thunk();
    } catch (e) {
      threw = e;
    }
    n++;
    assert.ok(threw !== null, `#${i} ${t.name}: a malformed call did not throw`);
    assert.ok(threw instanceof sk.SparseKitError, `#${i} ${t.name}: threw a raw ${threw && threw.name}: ${threw && threw.message}`);
    assert.equal(typeof threw.code, 'string', `#${i} ${t.name}: no string .code`);
    assert.match(threw.code, /^[a-z_0-9]+$/, `#${i} ${t.name}: code ${threw.code}`);
    assert.notEqual(threw.code, 'internal_error', `#${i} ${t.name}: ${threw.message}`);
    assert.ok(threw.message.length > 0);
    assert.equal(threw.name, threw.constructor.name);
    if (threw.code === 'shape_mismatch') assert.ok(threw instanceof sk.ShapeMismatchError);
    if (threw.code === 'incompatible_coupling') assert.ok(threw instanceof sk.CouplingError);
    codes.set(threw.code, (codes.get(threw.code) || 0) + 1);
    perTemplate.set(t.name, (perTemplate.get(t.name) || 0) + 1);
    // No half-writes: the weights are unchanged after every single bad call.
    if (i % 50 === 0 || i === N_CALLS - 1) {
      main.forEach((x, j) => assert.deepEqual(bits(x.toArray()), before[j], `#${i} ${t.name}: weights of param ${j} changed`));
    }
  }
  assert.ok(n >= 1000);
  assert.equal(perTemplate.size, T.length, 'every template was exercised');
  const dist = [...codes.entries()].sort((a, b) => b[1] - a[1]);
  console.log(`malformed calls: ${n} over ${T.length} templates; codes: ${dist.map(([c, k]) => `${c}=${k}`).join(', ')}`);

  // Every weight bit-identical to before the barrage.
  main.forEach((x, j) => assert.deepEqual(bits(x.toArray()), before[j], `param ${j} changed`));
  assert.deepEqual(bits(F.p.toArray()), bits(F.pData));

  // ---------------------------------------------------------------- correct calls still right
  const { p, q, bs, bc, sc, pData, qData } = F;
  // Block L2 norms of bs (2x8, blocks 1x2) computed in plain JS.
  const ref = [];
  for (let i = 0; i < 2; i++) for (let j = 0; j < 4; j++) ref.push(Math.hypot(pData[i * 8 + 2 * j], pData[i * 8 + 2 * j + 1]));
  const norms = bs.norms();
  ref.forEach((x, k) => assert.ok(Math.abs(norms[k] - x) <= 1e-5 * Math.max(1, x), `norm ${k}: ${norms[k]} vs ${x}`));
  // Values given as a live view of wasm memory (p.data itself) are accepted and copied.
  assert.deepEqual(Array.from(bs.norms(2, p.data)), Array.from(norms));
  // L1 and Inf norms, min and max.
  const l1 = bs.norms(1);
  const linf = bs.norms(Infinity);
  for (let k = 0; k < 8; k++) {
    const [a, b] = [pData[2 * k], pData[2 * k + 1]];
    assert.ok(Math.abs(l1[k] - (Math.abs(a) + Math.abs(b))) < 1e-5);
    assert.equal(linf[k], Math.fround(Math.max(Math.abs(a), Math.abs(b))));
    assert.equal(bs.min()[k], Math.fround(Math.min(a, b)));
    assert.equal(bs.max()[k], Math.fround(Math.max(a, b)));
  }
  // Coupling norms: bs block (i, j) with bq block (j, i) (orders [[0,1],[1,0]]).
  const cn = bc.norms();
  for (let i = 0; i < 2; i++) {
    for (let j = 0; j < 4; j++) {
      const a = [pData[i * 8 + 2 * j], pData[i * 8 + 2 * j + 1]];
      const b = [qData[2 * j * 2 + i], qData[(2 * j + 1) * 2 + i]];
      const want = Math.hypot(...a, ...b);
      assert.ok(Math.abs(cn[i * 4 + j] - want) < 1e-5 * Math.max(1, want), `coupling norm ${i},${j}`);
    }
  }
  // Scope top-1 of every 1x2 scope of bs, checked against a JS top-k.
  const masks = sc.getMasks({ nnz: 1 }).get(bs);
  for (let i = 0; i < 2; i++) {
    for (let g = 0; g < 2; g++) {
      const [b0, b1] = [i * 4 + 2 * g, i * 4 + 2 * g + 1];
      const keep0 = ref[b0] >= ref[b1];
      assert.equal(masks[i * 8 + 4 * g], keep0 ? 1 : 0);
      assert.equal(masks[i * 8 + 4 * g + 2], keep0 ? 0 : 1);
    }
  }
  // In-place: hardThreshold by thresholds on bs, then applyMultiplier on q, vs plain JS.
  const t = Float32Array.from(ref.map((x) => x * 0.999 + 0.5)); // between norms
  bs.hardThreshold(t);
  const wantP = Float32Array.from(pData, (x, e) => (ref[Math.floor(e / 2)] < t[Math.floor(e / 2)] ? x * 0 : x));
  assert.deepEqual(bits(p.toArray()), bits(wantP));
  const m = Float32Array.from({ length: 8 }, (_, k) => 0.5 + k / 4);
  F.bq.applyMultiplier(m); // bq grid [4, 2], blocks 2x1 of q (8x2)
  const wantQ = Float32Array.from(qData, (x, e) => {
    const [row, col] = [Math.floor(e / 2), e % 2];
    return Math.fround(x * m[Math.floor(row / 2) * 2 + col]);
  });
  assert.deepEqual(bits(q.toArray()), bits(wantQ));
  // A fresh param round-trips and the module still allocates.
  const z = sk.Param.fromArray(Float32Array.from([1, 2, 3, 4]), [2, 2]);
  assert.deepEqual(Array.from(new sk.BlockSpec(z, [2, 2]).norms()), [Math.fround(Math.sqrt(30))]);
  z.free();
});

test('reads through an aliasing view are allowed, writes refused with aliased_view', () => {
  const p = sk.Param.fromArray(Float32Array.from([3, 4, 0, 0]), [4]);
  const v = new sk.View(p, [2, 2], [0, 1]); // both rows are storage [0, 1]
  const s = new sk.BlockSpec(v, [1, 2]);
  assert.deepEqual(Array.from(s.norms()), [5, 5]);
  assert.throws(() => s.applyMultiplier(Float32Array.from([2, 2])), (e) => e instanceof sk.SparseKitError && e.code === 'aliased_view');
  assert.deepEqual(Array.from(p.toArray()), [3, 4, 0, 0]);
});

test('a progress callback that writes to a param being read gets reentrant_call, not a crash', () => {
  const p = sk.Param.fromArray(Float32Array.from({ length: 16 }, (_, i) => i + 1), [4, 4]);
  const s = new sk.BlockSpec(p, [1, 1]);
  const ms = new sk.MagnitudeSearcher('m4n2_1d');
  const errors = [];
  const masks = ms.computeMasks([p], {
    onProgress: () => {
      try {
        s.applyMultiplier(new Float32Array(16));
      } catch (e) {
        errors.push(e);
      }
      try {
        p.set(new Float32Array(16));
      } catch (e) {
        errors.push(e);
      }
    },
  });
  assert.equal(masks.get(p).length, 16);
  assert.ok(errors.length >= 2, 'the callback ran');
  for (const e of errors) {
    assert.ok(e instanceof sk.SparseKitError, String(e));
    assert.equal(e.code, 'reentrant_call');
  }
  assert.deepEqual(Array.from(p.toArray()), Array.from({ length: 16 }, (_, i) => i + 1));
  // The module is still usable after the refused re-entrant writes.
  s.applyMultiplier(new Float32Array(16).fill(2));
  assert.equal(p.toArray()[15], 32);
});

// Sizes that callers control (shapes, decoded headers) but memory cannot hold: every export,
// decoder and N:M entry point must refuse them with a typed error (out_of_memory when the
// request is well-formed but too big), never trap the wasm instance; the module keeps working.
test('huge sizes to every export, decoder and N:M entry point: typed errors, no trap', () => {
  const BIG = 60000;
  const u32 = (n) => new Uint32Array(n);
  const calls = {
    'sparseToDense csr 60000x60000': () => sk.sparseToDense({ format: 'csr', shape: [BIG, BIG], indptr: u32(BIG + 1), indices: u32(0), values: new Float32Array(0) }),
    'sparseToDense bsr 60000x60000': () => sk.sparseToDense({ format: 'bsr', shape: [BIG, BIG], blockShape: [1, 1], indptr: u32(BIG + 1), indices: u32(0), values: new Float32Array(0) }),
    'sparseToDense 2:4 60000x60000': () => sk.sparseToDense({ format: 'nm24', shape: [BIG, BIG], values: new Float32Array(0), meta: new Uint8Array(0) }),
    'sparseToDense csr 2^31 x 2^31': () => sk.sparseToDense({ format: 'csr', shape: [2 ** 31, 2 ** 31], indptr: u32(3), indices: u32(0), values: new Float32Array(0) }),
    'toCsr 2^30 empty rows': () => sk.toCsr(new Float32Array(0), [2 ** 30, 0]),
    'toBsr 2^30 empty rows': () => sk.toBsr(new Float32Array(0), [2 ** 30, 0], [1, 1]),
    'toNm24 huge shape': () => sk.toNm24(new Float32Array(8), [2 ** 30, 2 ** 30]),
    'sparseBytes huge shape': () => sk.sparseBytes(new Float32Array(8), [2 ** 30, 2 ** 30], [1, 1]),
    'mn1dBest huge shape': () => sk.mn1dBest(new Float32Array(8), [2 ** 31, 2 ** 31], 4, 2),
    'm4n2_1d huge shape': () => sk.m4n2_1d(new Float32Array(8), [2 ** 31, 2 ** 31]),
    'reshape1d huge shape': () => sk.reshape1d(new Float32Array(8), [2 ** 31, 2 ** 31], 4),
    'createAspMask 2-D greedy huge': () => sk.createAspMask(new Float32Array(16), [2 ** 30, 2 ** 30], 'm4n2_2d_greedy'),
    'computeValid1dPatterns 64 choose 32': () => sk.computeValid1dPatterns(64, 32),
    'searchPermutation huge shape': () => sk.searchPermutation(new Float32Array(8), [2 ** 31, 2 ** 31], { m: 4, n: 2 }),
  };
  const codes = {};
  for (const [name, call] of Object.entries(calls)) {
    let err = null;
    try { call(); } catch (e) { err = e; }
    assert.ok(err, `${name}: must be refused`);
    assert.ok(err instanceof sk.SparseKitError, `${name}: SparseKitError, got ${err?.name}: ${err?.message}`);
    assert.notEqual(err.code, 'internal_error', `${name}: trapped: ${err.message}`);
    codes[name] = err.code;
    // usable after every refusal: a 2:4 mask and a CSR round trip give the exact answers
    assert.deepEqual(Array.from(sk.m4n2_1d(Float32Array.of(1, -4, 3, 2), [1, 4])), [0, 1, 1, 0]);
    const d = Float32Array.of(0, 1.5, 0, -2);
    assert.deepEqual(Array.from(sk.sparseToDense(sk.toCsr(d, [2, 2]))), Array.from(d));
  }
  console.log(`# huge sizes refused: ${JSON.stringify(codes)}`);
});
