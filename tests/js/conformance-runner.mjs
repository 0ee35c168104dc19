// The conformance runner, shared by the Node test and the headless-Chromium test: runs the
// cases of ../shared/testdata/sparsekit-cases through a sparsekit-wasm module `sk` (its public JS
// API) and reports per-case failures. No Node APIs here.

let sk;

// ------------------------------------------------------------------ decoding

const prod = (s) => s.reduce((a, b) => a * b, 1);

function f32(t) {
  return Float32Array.from(t.data);
}

function stridesOf(shape) {
  const st = new Array(shape.length).fill(1);
  for (let d = shape.length - 2; d >= 0; d--) st[d] = st[d + 1] * shape[d + 1];
  return st;
}

/** Storage offsets of every view element, row-major. */
function viewOffsets(shape, stride) {
  const n = prod(shape);
  const out = new Array(n);
  const idx = new Array(shape.length).fill(0);
  for (let i = 0; i < n; i++) {
    let rem = i;
    for (let d = shape.length - 1; d >= 0; d--) {
      idx[d] = rem % shape[d];
      rem = Math.floor(rem / shape[d]);
    }
    out[i] = idx.reduce((acc, x, d) => acc + x * stride[d], 0);
  }
  return out;
}

const sameShape = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * A values/conditioners tensor as the JS API takes it: the param's layout. View layout (shape
 * equal to the view's; wins when both match, as in the seed) is scattered into a param-length
 * array; a param-shaped tensor is passed as is; anything else goes through unchanged so that the
 * library reports the mismatch.
 */
function toParamLayout(t, paramShape, viewShape, viewStride) {
  const data = f32(t);
  if (sameShape(t.shape, viewShape)) {
    const out = new Float32Array(prod(paramShape));
    viewOffsets(viewShape, viewStride).forEach((o, i) => {
      out[o] = data[i];
    });
    return out;
  }
  return data;
}

function grid(t) {
  return { data: t.dtype === 'bool' ? Uint8Array.from(t.data, (v) => (v ? 1 : 0)) : f32(t), shape: t.shape };
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

function softOpts(a, conditioners) {
  const o = {};
  if (conditioners !== undefined) o.conditioners = conditioners;
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

// ------------------------------------------------------------------ comparison

function flat(x) {
  if (x && typeof x === 'object' && 'data' in x && 'dtype' in x) return x.data;
  if (ArrayBuffer.isView(x)) return Array.from(x);
  if (Array.isArray(x)) return x.flat(Infinity);
  return [x];
}

function close(got, exp, tol) {
  if (typeof exp === 'boolean' || typeof got === 'boolean') return Number(got) === Number(exp);
  if (Number.isNaN(exp)) return Number.isNaN(got);
  if (exp === got) return true;
  return Math.abs(got - exp) <= tol.atol + tol.rtol * Math.abs(exp);
}

/** null when equal, else a description of the first difference. */
function compare(key, got, exp, tol) {
  const exact = exp && typeof exp === 'object' && 'dtype' in exp && exp.dtype !== 'float32';
  const t = exact ? { rtol: 0, atol: 0 } : tol;
  if (exp && typeof exp === 'object' && 'shape' in exp && ArrayBuffer.isView(got) && got.length !== prod(exp.shape)) {
    return `${key}: length ${got.length}, expected shape ${JSON.stringify(exp.shape)}`;
  }
  const g = flat(got);
  const e = flat(exp);
  if (g.length !== e.length) return `${key}: length ${g.length} != ${e.length}`;
  const isF32 = exp && typeof exp === 'object' && exp.dtype === 'float32';
  for (let i = 0; i < e.length; i++) {
    // JSON floats are the shortest strings of float32 values: round them back to float32.
    const ev = isF32 && typeof e[i] === 'number' ? Math.fround(e[i]) : e[i];
    if (!close(Number(g[i]), Number(ev), t)) return `${key}[${i}]: got ${g[i]}, expected ${e[i]}`;
  }
  return null;
}

function check(c, got) {
  for (const [key, exp] of Object.entries(c.expect)) {
    if (!(key in got)) return `missing result ${key}`;
    if (key === 'masks' || key === 'params') {
      if (got[key].length !== exp.length) return `${key}: ${got[key].length} entries, expected ${exp.length}`;
      for (let i = 0; i < exp.length; i++) {
        const d = compare(`${key}[${i}]`, got[key][i], exp[i], c.tol);
        if (d) return d;
      }
    } else if (key === 'block_shapes' || key === 'orders' || key === 'scope_shapes') {
      if (JSON.stringify(got[key]) !== JSON.stringify(exp)) return `${key}: ${JSON.stringify(got[key])} != ${JSON.stringify(exp)}`;
    } else {
      const d = compare(key, got[key], exp, c.tol);
      if (d) return d;
    }
  }
  return null;
}

const ERROR_CLASS = {};

/**
 * A coupling soft threshold whose only fault, for the seed, is conditioners in param layout:
 * the JS API takes param layout for couplings (README), so the call must succeed there.
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
        if (paramLayoutConditionersOnly(c)) return null;
        return `expected error ${c.expect.error}, got success`;
      }
      return check(c, got);
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

/** Runs every case; returns {passed, failures: string[], perOp}. */
export function runCases(module, cases) {
  sk = module;
  ERROR_CLASS.shape_mismatch = sk.ShapeMismatchError;
  ERROR_CLASS.incompatible_coupling = sk.CouplingError;
  const failures = [];
  const perOp = {};
  for (const c of cases) {
    const err = runCase(c);
    const s = (perOp[c.op] ??= { pass: 0, fail: 0 });
    if (err) {
      s.fail++;
      failures.push(`${c.id}: ${err}`);
    } else s.pass++;
  }
  return { passed: cases.length - failures.length, failures, perOp };
}
