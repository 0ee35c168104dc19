// The block-family and N:M runners of the conformance harness (driver, decoder and comparison:
// ../support/cases.mjs), shared by the Node run and both Chromium runs: a sparsekit-cases case
// through a sparsekit-wasm module `sk` (its public JS API). No Node APIs here.
import { checkExpect, compare, f32, prod, sameShape, scatter, stridesOf, u8 } from '../support/cases.mjs';
import { couplingAdamProx } from '../support/coupling-prox-oracle.mjs';
import { obsRunner } from './obs-cases.mjs';

let sk;

// ------------------------------------------------------------------ inputs

/**
 * A values/conditioners tensor as the JS API takes it: the param's layout. View layout (shape
 * equal to the view's; wins when both match, as in sparsekit) is scattered into a param-length
 * array; anything else goes through flat, so that the library reports a wrong length.
 */
function toParamLayout(t, paramShape, viewShape, viewStride) {
  const data = f32(t);
  return sameShape(t.shape, viewShape) ? scatter(data, prod(paramShape), viewShape, viewStride) : data;
}

/** A grid-shaped input (thresholds, multiplier, keep) with its n-d shape, for the library to check. */
function grid(t) {
  return { data: t.dtype === 'bool' ? u8(t) : f32(t), shape: t.shape };
}

// ------------------------------------------------------------------ structures

class Built {
  constructor() {
    this.params = [];
    this.geoms = []; // per spec: {paramShape, viewShape, viewStride}
    this.objects = [];
  }
  track(o) {
    this.objects.push(o);
    return o;
  }
  param(p) {
    const prm = this.track(sk.Param.fromArray(f32(p), p.shape));
    this.params.push(prm);
    return prm;
  }
  view(prm, p, v) {
    const view = this.track(v === null ? sk.View.fromExisting(prm) : new sk.View(prm, v.shape, v.stride));
    this.geoms.push({ paramShape: p.shape, viewShape: view.shape, viewStride: view.stride });
    return view;
  }
  spec(s) {
    const prm = this.param(s.param);
    return this.track(new sk.BlockSpec(this.view(prm, s.param, s.view), s.block_shape, s.name ?? undefined));
  }
  free() {
    for (const o of this.objects.reverse()) o.free();
  }
}

function build(c, b) {
  switch (c.target) {
    case 'View':
      if (c.param === null) return null;
      return b.view(b.param(c.param), c.param, c.view);
    case 'BlockSpec':
      return b.spec(c);
    case 'BlockCoupling': {
      const specs = c.specs.map((s) => b.spec(s));
      return b.track(new sk.BlockCoupling(specs, c.orders));
    }
    case 'ScopeSpec':
      return b.track(new sk.ScopeSpec(b.spec(c), c.scope_shape));
    case 'ScopeSpec[BlockCoupling]': {
      const specs = c.specs.map((s) => b.spec(s));
      return b.track(new sk.ScopeSpec(b.track(new sk.BlockCoupling(specs, c.orders)), c.scope_shape));
    }
    case 'ScopeCoupling': {
      const scopes = c.scopes.map((s) => b.track(new sk.ScopeSpec(b.spec(s), s.scope_shape)));
      return b.track(new sk.ScopeCoupling(scopes, c.orders));
    }
    case 'nm':
      return null;
    default:
      throw new Error(`unknown target ${c.target}`);
  }
}

/** values (one tensor, or a list per spec) in param layout, for spec geometries from `first`. */
function vals(b, v, first = 0) {
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) return v.map((t, i) => toParamLayout(t, ...geomArgs(b.geoms[first + i])));
  return toParamLayout(v, ...geomArgs(b.geoms[first]));
}
const geomArgs = (g) => [g.paramShape, g.viewShape, g.viewStride];

/** ScopeCoupling values: one entry per scope (one spec each in the cases). */
function scopeVals(b, v) {
  if (v === undefined || v === null) return undefined;
  return v.map((t, i) => toParamLayout(t, ...geomArgs(b.geoms[i])));
}

// The soft-threshold root finder the cases run with: undefined is the default ('newton').
let softMethod;
/** Runs the following soft-threshold cases with `method` (undefined: the default). */
export function setSoftMethod(method) {
  softMethod = method;
}

function softOpts(a, conditioners) {
  const o = {};
  if (conditioners !== undefined) o.conditioners = conditioners;
  if (softMethod !== undefined) o.method = softMethod;
  if (a.max_iter !== undefined) o.maxIter = a.max_iter;
  if (a.atol !== undefined) o.atol = a.atol;
  if (a.eps !== undefined && a.eps !== null) o.eps = a.eps;
  if (a.scale !== undefined) o.scale = a.scale;
  return o;
}

const pOf = (p) => (p === 'inf' ? Infinity : p ?? 2);
const masksList = (m) => [...m.values()];

// ------------------------------------------------------------------ ops

function run(c, obj, b) {
  const a = c.args;
  const [cls, op] = c.op.split('.');
  const isCoupling = c.target === 'BlockCoupling';
  const isScopeCoupling = c.target === 'ScopeCoupling';
  const v = (x) => (isScopeCoupling ? scopeVals(b, x) : vals(b, x));
  const params = () => b.params.map((p) => p.toArray());
  const inPlace = () => (b.params.length === 1 && !['BlockCoupling', 'ScopeCoupling', 'ScopeSpec[BlockCoupling]'].includes(c.target) ? { param: params()[0] } : { params: params() });

  if (cls === 'nm') return runNm(op, a);
  if (cls === 'View') {
    switch (op) {
      case 'info':
        return { ndim: obj.ndim, numel: obj.numel(), cosize: obj.cosize };
      case 'data':
        return { out: obj.values() };
      case 'linear_offset':
        return { out: obj.linearOffset(Int32Array.from(a.idx.data)) };
      case 'to_param_rc':
        return obj.toParamRc(Int32Array.from(a.idx.data));
      case 'block_view_of':
        return { out: sk.View.blockViewOf(obj.values(), obj.shape, a.block_shape, { reorder: a.reorder, merge: a.merge }).data };
      case 'broadcast_block_to_element':
        return { out: sk.View.broadcastBlockToElement(f32(a.block_values), a.block_values.shape, a.block_shape, a.fake).data };
      case 'apply_multiplier':
        obj.applyMultiplier(grid(a.multiplier), a.block_shape);
        return { param: params()[0] };
      case 'apply_mask':
        obj.applyMask(grid(a.keep), a.block_shape);
        return { param: params()[0] };
    }
  }
  if (cls === 'BlockSpec' || cls === 'BlockCoupling') {
    switch (op) {
      case 'info':
        return isCoupling
          ? { block_shapes: obj.specs.map((s) => s.shape), orders: obj.orders, grid_shape: obj.gridShape, grid_ndim: obj.gridNdim, numel_per_block: obj.numelPerBlock(), numblk: obj.numblk(), numel: obj.numel() }
          : { block_shape: obj.shape, grid_shape: obj.gridShape, grid_ndim: obj.gridNdim, numel_per_block: obj.numelPerBlock(), numblk: obj.numblk(), numel: obj.numel() };
      case 'norms':
        return { out: obj.norms(pOf(a.p), v(a.values)) };
      case 'min':
        return { out: obj.min(v(a.values)) };
      case 'max':
        return { out: obj.max(v(a.values)) };
      case 'nnz':
        return { value: a.eps === undefined ? obj.nnz() : obj.nnz(a.eps) };
      case 'block_view':
        return { out: isCoupling ? obj.blockView().data : obj.blockView(undefined, { reorder: a.reorder, merge: a.merge }).data };
      case 'apply_multiplier':
        obj.applyMultiplier(grid(a.multiplier));
        return inPlace();
      case 'apply_mask':
        obj.applyMask(grid(a.keep));
        return inPlace();
      case 'get_masks':
        return { masks: masksList(obj.getMasks(grid(a.keep))) };
      case 'hard_threshold':
        obj.hardThreshold(grid(a.thresholds), v(a.values));
        return inPlace();
      case 'soft_threshold':
        obj.softThreshold(grid(a.block_thresholds), softOpts(a, v(a.conditioners)));
        return inPlace();
    }
  }
  if (cls === 'ScopeSpec' || cls === 'ScopeCoupling') {
    const sv = (x) => (c.target === 'ScopeSpec[BlockCoupling]' ? vals(b, x) : v(x));
    switch (op) {
      case 'info':
        return isScopeCoupling
          ? { grid_shape: obj.gridShape, scope_shapes: obj.scopes.map((s) => s.shape), orders: obj.orders, numblk_per_scope: obj.numblkPerScope(), numel_per_scope: obj.numelPerScope(), num_scopes: obj.numScopes() }
          : { grid_shape: obj.gridShape, scope_shape: obj.shape, block_grid_shape: obj.blockGridShape, numblk_per_scope: obj.numblkPerScope(), numel_per_scope: obj.numelPerScope(), num_scopes: obj.numScopes() };
      case 'block_norms':
        return { out: obj.blockNorms(sv(a.values)) };
      case 'sparsity_to_nnz':
        return { value: obj.sparsityToNnz(a.sparsity) };
      case 'hard_threshold': {
        const o = {};
        if (a.nnz !== undefined) o.nnz = a.nnz;
        if (a.sparsity !== undefined) o.sparsity = a.sparsity;
        if (a.thresholds !== undefined) o.thresholds = grid(a.thresholds);
        if (a.values !== undefined) o.values = sv(a.values);
        obj.hardThreshold(o);
        return inPlace();
      }
      case 'soft_threshold':
        obj.softThreshold(grid(a.thresholds), softOpts(a, sv(a.conditioners)));
        return inPlace();
      case 'get_masks':
        return { masks: masksList(obj.getMasks({ nnz: a.nnz, values: sv(a.values) })) };
    }
  }
  throw new Error(`unmapped op ${c.op}`);
}

function runNm(op, a) {
  switch (op) {
    case 'get_nmprune_info': {
      const r = sk.getNmpruneInfo(a.pattern);
      return { value: [r.valid, r.m, r.n] };
    }
    case 'compute_valid_1d_patterns':
      return { out: sk.computeValid1dPatterns(a.m, a.n) };
    case 'reshape_1d': {
      const r = sk.reshape1d(f32(a.matrix), a.matrix.shape, a.m);
      return { out: r.data, padded_shape: r.paddedShape, _shape: r.shape };
    }
    case 'mn_1d_best':
      return { out: sk.mn1dBest(f32(a.matrix), a.matrix.shape, a.m, a.n) };
    case 'm4n2_1d':
      return { out: sk.m4n2_1d(f32(a.matrix), a.matrix.shape) };
    case 'create_asp_mask':
      return { out: sk.createAspMask(f32(a.tensor), a.tensor.shape, a.pattern) };
    case 'fill':
      return { value: sk.fill(f32(a.x)) };
  }
  throw new Error(`unmapped nm op ${op}`);
}

// ------------------------------------------------------------------ one case

const ERROR_CLASS = {};

/**
 * A coupling soft threshold whose only fault, for sparsekit, is conditioners in param layout
 * (pub-0583): the JS API takes param layout for couplings (README), so the call must succeed
 * there, and its result is compared with the float64 oracle.
 */
function paramLayoutConditionersOnly(c) {
  return (
    c.op === 'BlockCoupling.soft_threshold' &&
    c.expect.error === 'shape_mismatch' &&
    Array.isArray(c.args.conditioners) &&
    c.args.conditioners.every((t, i) => sameShape(t.shape, c.specs[i].param.shape)) &&
    c.args.conditioners.some((t, i) => !sameShape(t.shape, c.specs[i].view ? c.specs[i].view.shape : c.specs[i].param.shape)) &&
    sameShape(c.args.block_thresholds.shape, expectedCouplingGrid(c))
  );
}

function expectedCouplingGrid(c) {
  const b = new Built();
  try {
    return build(c, b).gridShape;
  } finally {
    b.free();
  }
}

/**
 * Tolerance against the float64 oracle: the case itself has none (it expects an error), so the
 * one of every other coupling soft-threshold case of the folder.
 */
const ORACLE_TOL = { rtol: 1e-3, atol: 1e-5 };

/** The params after the call against couplingAdamProx on the same inputs; null when close. */
function compareWithProxOracle(c, before, got) {
  const a = c.args;
  const specs = c.specs.map((s, i) => ({
    param: before[i],
    viewShape: s.view ? s.view.shape : s.param.shape,
    viewStride: s.view ? s.view.stride : stridesOf(s.param.shape),
    blockShape: s.block_shape,
  }));
  const conds = a.conditioners.map((t, i) => toParamLayout(t, c.specs[i].param.shape, specs[i].viewShape, specs[i].viewStride));
  const opts = {};
  if (a.max_iter !== undefined) opts.maxIter = a.max_iter;
  if (a.atol !== undefined) opts.atol = a.atol;
  if (a.eps !== undefined && a.eps !== null) opts.eps = a.eps;
  const want = couplingAdamProx(specs, c.orders, f32(a.block_thresholds), conds, opts);
  for (let i = 0; i < want.length; i++) {
    const exp = { dtype: 'float64', shape: [want[i].length], data: Array.from(want[i]) };
    const d = compare(`params[${i}] vs float64 oracle`, got.params[i], exp, ORACLE_TOL);
    if (d) return d;
  }
  return null;
}


function runCase(c) {
  const b = new Built();
  try {
    let obj;
    let before;
    try {
      obj = build(c, b);
      before = b.params.map((p) => p.toArray());
      const got = run(c, obj, b);
      if (c.expect.error !== undefined) {
        if (paramLayoutConditionersOnly(c)) return compareWithProxOracle(c, before, got);
        return `expected error ${c.expect.error}, got success`;
      }
      return checkExpect(c, got);
    } catch (e) {
      if (c.expect.error === undefined) return `unexpected error: ${e && e.code} ${e && e.message}\n${e && e.stack}`;
      if (!(e instanceof sk.SparseKitError)) return `error is not a SparseKitError: ${e}`;
      if (e.code !== c.expect.error) return `error code ${e.code} (${e.message}), expected ${c.expect.error}`;
      const cls = ERROR_CLASS[e.code];
      if (cls && !(e instanceof cls)) return `error ${e.code} is not a ${cls.name}`;
      if (before) {
        const after = b.params.map((p) => p.toArray());
        for (let i = 0; i < after.length; i++) {
          if (after[i].some((x, j) => !Object.is(x, before[i][j]))) return `a refused call changed param ${i}`;
        }
      }
      return null;
    }
  } finally {
    b.free();
  }
}

const BLOCK_CLASSES = new Set(['View', 'BlockSpec', 'BlockCoupling', 'ScopeSpec', 'ScopeCoupling']);

function bind(module) {
  sk = module;
  ERROR_CLASS.shape_mismatch = sk.ShapeMismatchError;
  ERROR_CLASS.incompatible_coupling = sk.CouplingError;
}

/** The View/BlockSpec/BlockCoupling/ScopeSpec/ScopeCoupling cases and the N:M cases (`nm.*`). */
export const blockRunner = {
  handles: (op) => BLOCK_CLASSES.has(op.split('.')[0]) || op.startsWith('nm.'),
  run(module, c) {
    bind(module);
    return runCase(c);
  },
};

/** Every runner of the harness, in dispatch order: the same list in Node and in Chromium. */
export const RUNNERS = [blockRunner, obsRunner];
