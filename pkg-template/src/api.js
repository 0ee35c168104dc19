// The public JS API of sparsekit-wasm over the wasm-bindgen glue (`Raw*` classes).
//
// This layer only adapts: it checks JS argument types, copies arrays that live in wasm memory
// before handing them to wasm (a call may grow memory and detach them), turns wasm errors into
// SparseKitError classes, and shapes results (Maps, live Float32Arrays). All behaviour lives in
// the Rust core.

let raw = null;
let variantName = 'uninitialized';

/** @internal Binds the API to an initialized wasm-bindgen glue module. */
export function bind(glue, variant) {
  raw = glue;
  variantName = variant;
}

function R() {
  if (!raw) {
    throw new SparseKitError('not_initialized', 'sparsekit-wasm is not initialized: `await init()` first (browser)');
  }
  return raw;
}

// ------------------------------------------------------------------ errors

/** Base class of every error the library throws; `.code` is a stable machine-readable string. */
export class SparseKitError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'SparseKitError';
    this.code = code;
  }
}

/** A flat array or values argument whose length/shape is not the expected one (`shape_mismatch`). */
export class ShapeMismatchError extends SparseKitError {
  constructor(code, message) {
    super(code, message);
    this.name = 'ShapeMismatchError';
  }
}

/** Coupled grids that do not align (`incompatible_coupling`). */
export class CouplingError extends SparseKitError {
  constructor(code, message) {
    super(code, message);
    this.name = 'CouplingError';
  }
}

const ERROR_CLASSES = { SparseKitError, ShapeMismatchError, CouplingError };

function convertError(e) {
  if (e instanceof SparseKitError) return e;
  if (e && typeof e.code === 'string' && ERROR_CLASSES[e.name]) {
    return new ERROR_CLASSES[e.name](e.code, e.message);
  }
  const msg = String((e && e.message) || e);
  if (/null pointer passed to rust|recursive use of an object|attempted to take ownership/i.test(msg)) {
    return new SparseKitError('use_after_free', `object used after free(): ${msg}`);
  }
  if (typeof WebAssembly !== 'undefined' && e instanceof WebAssembly.RuntimeError) {
    return new SparseKitError('internal_error', `internal error in the wasm module (please report): ${msg}`);
  }
  return new SparseKitError('invalid_arguments', msg);
}

function call(fn) {
  try {
    return fn();
  } catch (e) {
    throw convertError(e);
  }
}

function argError(message) {
  return new SparseKitError('invalid_arguments', message);
}

// ------------------------------------------------------------------ argument helpers

function memoryBuffer() {
  return R().wasmMemory().buffer;
}

/** True when `a` views an ArrayBuffer that was transferred away (its data is gone). */
function isDetached(a) {
  const b = a.buffer;
  if (typeof b.detached === 'boolean') return b.detached;
  if (a.byteLength !== 0) return false;
  try {
    new Uint8Array(b, 0, 0);
    return false;
  } catch {
    return true;
  }
}

function notDetached(x, what) {
  if (ArrayBuffer.isView(x) && isDetached(x)) {
    throw new SparseKitError('detached_buffer', `${what}: the array's ArrayBuffer is detached (transferred); pass a live array`);
  }
}

/** A Float32Array safe to pass to wasm: copies arrays that view wasm memory. */
function f32(x, what) {
  if (x instanceof Param) return x.toArray();
  notDetached(x, what);
  if (x instanceof Float32Array) return x.buffer === memoryBuffer() ? x.slice() : x;
  if (Array.isArray(x) && x.every((v) => typeof v === 'number')) return Float32Array.from(x);
  throw argError(`${what} must be a Float32Array, got ${describe(x)}`);
}

function u8(x, what) {
  notDetached(x, what);
  if (x instanceof Uint8Array) return x.buffer === memoryBuffer() ? x.slice() : x;
  if (Array.isArray(x) && x.every((v) => typeof v === 'number' || typeof v === 'boolean')) {
    return Uint8Array.from(x, (v) => (v ? 1 : 0));
  }
  throw argError(`${what} must be a Uint8Array keep-mask (1 keeps, 0 prunes), got ${describe(x)}`);
}

function i32(x, what) {
  notDetached(x, what);
  if (x instanceof Int32Array) return x;
  // Int32Array.from would wrap out-of-range indices silently.
  const inRange = (v) => typeof v === 'number' && Number.isInteger(v) && v >= -2147483648 && v <= 2147483647;
  if ((Array.isArray(x) || ArrayBuffer.isView(x)) && Array.from(x).every(inRange)) {
    return Int32Array.from(x, Number);
  }
  throw argError(`${what} must be an Int32Array of indices, got ${describe(x)}`);
}

/** Shapes, strides, block and scope shapes: arrays of numbers (integers checked in wasm). */
function dims(x, what) {
  notDetached(x, what);
  if ((Array.isArray(x) || ArrayBuffer.isView(x)) && Array.from(x).every((v) => typeof v === 'number')) {
    return Float64Array.from(x);
  }
  throw argError(`${what} must be an array of integers, got ${describe(x)}`);
}

function num(x, what) {
  if (typeof x !== 'number') throw argError(`${what} must be a number, got ${describe(x)}`);
  return x;
}

function optName(name) {
  if (name === undefined || name === null) return undefined;
  if (typeof name !== 'string') throw argError(`name must be a string, got ${describe(name)}`);
  return name;
}

function optsObject(o, what) {
  if (o === undefined || o === null) return {};
  if (typeof o !== 'object' || Array.isArray(o) || ArrayBuffer.isView(o)) {
    throw argError(`${what} must be an options object, got ${describe(o)}`);
  }
  return o;
}

function progressFn(f) {
  if (f === undefined || f === null) return undefined;
  if (typeof f !== 'function') throw argError(`onProgress must be a function, got ${describe(f)}`);
  return f;
}

function describe(x) {
  if (x === null) return 'null';
  if (Array.isArray(x)) return `an Array(${x.length})`;
  if (ArrayBuffer.isView(x)) return `a ${x.constructor.name}(${x.length})`;
  if (typeof x === 'object') return `a ${x.constructor ? x.constructor.name : 'object'}`;
  return `${typeof x} ${String(x).slice(0, 40)}`;
}

/**
 * Grid-shaped inputs (thresholds, multipliers, keep-masks) are flat arrays; they may also be
 * given as `{data, shape}`, and then the shape itself must equal the expected grid shape (a
 * same-length array of another shape is a `shape_mismatch`, not silently reinterpreted).
 */
function isShaped(x) {
  return x !== null && typeof x === 'object' && !ArrayBuffer.isView(x) && !Array.isArray(x) && !(x instanceof Param) && 'data' in x && 'shape' in x;
}

function gridInput(x, expected, what, conv) {
  if (!isShaped(x)) return conv(x, what);
  const shape = Array.from(dims(x.shape, `${what}.shape`));
  if (expected && (shape.length !== expected.length || shape.some((s, i) => s !== expected[i]))) {
    throw new ShapeMismatchError('shape_mismatch', `${what}: Shape mismatch: expected [${expected}], got [${shape}]`);
  }
  return conv(x.data, what);
}

const gridF32 = (x, expected, what) => gridInput(x, expected, what, f32);
const gridU8 = (x, expected, what) => gridInput(x, expected, what, u8);

/** The grid of `shape` cut into `blockShape` blocks, or null when it does not divide (wasm reports that). */
function gridOf(shape, blockShape) {
  const b = Array.from(blockShape);
  if (b.length === 0) return [...shape];
  if (b.length !== shape.length) return null;
  const g = shape.map((s, d) => (b[d] <= 0 ? 1 : s / b[d]));
  return g.every(Number.isInteger) ? g : null;
}

/** Values/conditioners for one BlockSpec: Param or Float32Array (param layout). */
function specValues(v, what) {
  if (v === undefined || v === null) return undefined;
  return f32(v, what);
}

/** Values for a coupling: one Param/Float32Array per spec. */
function listValues(v, what) {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw argError(`${what} must be an array with one Param/Float32Array per spec, got ${describe(v)}`);
  return v.map((x, i) => f32(x, `${what}[${i}]`));
}

function nodeValues(block, v, what) {
  return block instanceof BlockCoupling ? listValues(v, what) : specValues(v, what);
}

function takeRaw(obj, what) {
  const r = obj && obj._raw;
  if (!r || r.__wbg_ptr === 0) {
    throw new SparseKitError('use_after_free', `${what} was freed`);
  }
  return r;
}

const disposeSymbol = Symbol.dispose || Symbol.for('Symbol.dispose');

/** Shared `free()` / `using` support. Freeing twice is a no-op. */
class Owned {
  free() {
    if (this._raw && this._raw.__wbg_ptr !== 0) this._raw.free();
  }
  [disposeSymbol]() {
    this.free();
  }
  /** @internal */
  get _live() {
    return takeRaw(this, this.constructor.name);
  }
}

function toMap(keys, masks) {
  const m = new Map();
  keys.forEach((k, i) => m.set(k, masks[i]));
  return m;
}

// ------------------------------------------------------------------ Param / View

/** A weight tensor stored in wasm memory; every operation works in place on it. */
export class Param extends Owned {
  /** @internal */
  constructor(rawParam) {
    super();
    this._raw = rawParam;
    this._shape = rawParam.shape();
  }

  /** Copies `data` (row-major, `prod(shape)` long) into wasm memory once. */
  static fromArray(data, shape) {
    const d = f32(data, 'data');
    return new Param(call(() => new (R().RawParam)(d, dims(shape, 'shape'))));
  }

  get shape() {
    return [...this._shape];
  }

  /** Number of elements. */
  get size() {
    return this._live.len();
  }

  /**
   * A live Float32Array onto the weights in wasm memory (zero-copy). Re-derived on every access,
   * so it never goes stale after memory growth; do not keep it across library calls.
   */
  get data() {
    const r = this._live;
    return new Float32Array(memoryBuffer(), r.ptr(), r.len());
  }

  /** A copy of the weights. */
  toArray() {
    return call(() => this._live.toArray());
  }

  /** Overwrites the weights (same length). */
  set(data) {
    const d = f32(data, 'data');
    call(() => this._live.setData(d));
  }
}

/** A strided window over a Param with write-through (seed: sparsekit.view.View). */
export class View extends Owned {
  constructor(param, shape, stride) {
    super();
    if (param === INTERNAL) {
      this._raw = shape;
      this.param = stride;
    } else {
      if (!(param instanceof Param)) throw argError(`View needs a Param, got ${describe(param)}`);
      const s = dims(shape, 'shape');
      const st = dims(stride, 'stride');
      this._raw = call(() => new (R().RawView)(param._live, s, st));
      this.param = param;
    }
    this._shape = this._raw.shape();
    this._stride = this._raw.stride();
  }

  /** A Param becomes its contiguous full view; a View is returned as is. */
  static fromExisting(p) {
    if (p instanceof View) return p;
    if (!(p instanceof Param)) throw argError(`fromExisting needs a Param or a View, got ${describe(p)}`);
    return new View(INTERNAL, call(() => R().RawView.fromParam(p._live)), p);
  }

  get shape() {
    return [...this._shape];
  }
  get stride() {
    return [...this._stride];
  }
  get ndim() {
    return this._shape.length;
  }
  /** Maximum reachable storage offset + 1. */
  get cosize() {
    return call(() => this._live.cosize());
  }
  numel() {
    return call(() => this._live.numel());
  }
  /** A view-shaped, row-major copy of the elements. */
  values() {
    return call(() => this._live.values());
  }
  linearOffset(idx) {
    const ix = i32(idx, 'idx');
    return call(() => this._live.linearOffset(ix));
  }
  toParamRc(idx) {
    const ix = i32(idx, 'idx');
    return call(() => this._live.toParamRc(ix));
  }
  applyMultiplier(m, blockShape) {
    const b = dims(blockShape, 'blockShape');
    const mm = gridF32(m, gridOf(this._shape, b), 'multiplier');
    call(() => this._live.applyMultiplier(mm, b));
  }
  applyMask(keep, blockShape) {
    const b = dims(blockShape, 'blockShape');
    const k = gridU8(keep, gridOf(this._shape, b), 'keep');
    call(() => this._live.applyMask(k, b));
  }
  static blockViewOf(t, shape, blockShape, opts) {
    const o = optsObject(opts, 'blockViewOf options');
    checkKeys(o, ['reorder', 'merge'], 'blockViewOf options');
    const tt = f32(t, 't');
    return call(() => R().RawView.blockViewOf(tt, dims(shape, 'shape'), dims(blockShape, 'blockShape'), bool(o.reorder, true, 'reorder'), bool(o.merge, false, 'merge')));
  }
  static broadcastBlockToElement(blockValues, gridShape, blockShape, fake = false) {
    const v = f32(blockValues, 'blockValues');
    return call(() => R().RawView.broadcastBlockToElement(v, dims(gridShape, 'gridShape'), dims(blockShape, 'blockShape'), bool(fake, false, 'fake')));
  }
}

const INTERNAL = Symbol('internal');

function bool(v, dflt, what) {
  if (v === undefined) return dflt;
  if (typeof v !== 'boolean') throw argError(`${what} must be a boolean, got ${describe(v)}`);
  return v;
}

function checkKeys(o, allowed, what) {
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k)) throw argError(`${what}: unknown option \`${k}\`, expected one of ${allowed.join(', ')}`);
  }
}

/** Options forwarded to wasm (serde refuses unknown keys and wrong types there). */
function restOptions(o, omit) {
  const out = {};
  for (const [k, v] of Object.entries(o)) if (!omit.includes(k) && v !== undefined) out[k] = v;
  return out;
}

// ------------------------------------------------------------------ BlockSpec / BlockCoupling

/**
 * Builds a BlockCoupling or ScopeCoupling in wasm: members are added one by one to a builder
 * (moving JS objects into Rust would invalidate them), then aligned by `orders`.
 */
function buildCoupling(members, orders, name, add, build) {
  if (orders !== undefined && orders !== null && !Array.isArray(orders)) {
    throw new SparseKitError('invalid_orders', `orders must be an array of axis permutations, got ${describe(orders)}`);
  }
  const n = optName(name);
  const b = new (R().RawCouplingBuilder)();
  try {
    for (const m of members) b[add](m._live);
    return { raw: call(() => b[build](orders ?? undefined, n)), name: n };
  } finally {
    b.free();
  }
}

/**
 * What BlockSpec and BlockCoupling share: the same members over one grid; they differ only in
 * how `values` are given (one array, or one per spec) and which specs the masks are keyed by.
 */
class BlockGrid extends Owned {
  get gridShape() {
    return [...this._grid];
  }
  get gridNdim() {
    return this._grid.length;
  }
  numblk() {
    return call(() => this._live.numblk());
  }
  numel() {
    return call(() => this._live.numel());
  }
  numelPerBlock() {
    return call(() => this._live.numelPerBlock());
  }
  nnz(eps = 1e-8) {
    const e = num(eps, 'eps');
    return call(() => this._live.nnz(e));
  }
  norms(p = 2, values) {
    const pp = num(p, 'p');
    const v = this._values(values, 'values');
    return call(() => this._live.norms(pp, v));
  }
  min(values) {
    const v = this._values(values, 'values');
    return call(() => this._live.min(v));
  }
  max(values) {
    const v = this._values(values, 'values');
    return call(() => this._live.max(v));
  }
  applyMask(keep) {
    const k = gridU8(keep, this._grid, 'keep');
    call(() => this._live.applyMask(k));
  }
  applyMultiplier(m) {
    const mm = gridF32(m, this._grid, 'multiplier');
    call(() => this._live.applyMultiplier(mm));
  }
  softThreshold(thresholds, opts) {
    const t = gridF32(thresholds, this._grid, 'thresholds');
    const o = optsObject(opts, 'softThreshold options');
    const c = this._values(o.conditioners, 'conditioners');
    call(() => this._live.softThreshold(t, c, restOptions(o, ['conditioners'])));
  }
  hardThreshold(thresholds, values) {
    const t = gridF32(thresholds, this._grid, 'thresholds');
    const v = this._values(values, 'values');
    call(() => this._live.hardThreshold(t, v));
  }
  /** Element keep-masks (view-shaped) of a block keep-mask, keyed by BlockSpec. */
  getMasks(keepBlocks) {
    const k = gridU8(keepBlocks, this._grid, 'keepBlocks');
    return toMap(blockSpecsOf(this), call(() => this._live.getMasks(k)));
  }
}

/** A view (or param) seen as a grid of equal blocks (seed: BlockSpec). */
export class BlockSpec extends BlockGrid {
  constructor(view, blockShape, name) {
    super();
    const v = View.fromExisting(view);
    const b = dims(blockShape, 'blockShape');
    const n = optName(name);
    this._raw = call(() => new (R().RawBlockSpec)(v._live, b, n));
    this.view = v;
    this.name = n;
    this._block = this._raw.shape();
    this._grid = this._raw.gridShape();
  }
  /** The normalised block shape (-1 and [] resolved). */
  get shape() {
    return [...this._block];
  }
  _values(v, what) {
    return specValues(v, what);
  }
  blockView(values, opts) {
    const v = specValues(values, 'values');
    const o = optsObject(opts, 'blockView options');
    checkKeys(o, ['reorder', 'merge'], 'blockView options');
    return call(() => this._live.blockView(v, bool(o.reorder, true, 'reorder'), bool(o.merge, false, 'merge')));
  }
}

/** Several BlockSpecs whose grids are aligned by `orders` and pruned together. */
export class BlockCoupling extends BlockGrid {
  constructor(specs, orders, name) {
    super();
    if (!Array.isArray(specs) || !specs.every((s) => s instanceof BlockSpec)) {
      throw argError('BlockCoupling needs an array of BlockSpec');
    }
    const { raw, name: n } = buildCoupling(specs, orders, name, 'addSpec', 'buildBlockCoupling');
    this._raw = raw;
    this.specs = [...specs];
    this.name = n;
    this._grid = this._raw.gridShape();
    this._orders = this._raw.orders();
  }
  /** The normalised orders (one permutation per spec). */
  get orders() {
    return this._orders.map((o) => [...o]);
  }
  _values(v, what) {
    return listValues(v, what);
  }
  /** Every spec's merged block view, aligned and concatenated: `(*gridShape, numelPerBlock)`. */
  blockView(values) {
    const v = listValues(values, 'values');
    return call(() => this._live.blockView(v));
  }
}


// ------------------------------------------------------------------ ScopeSpec / ScopeCoupling

function blockSpecsOf(block) {
  return block instanceof BlockCoupling ? block.specs : [block];
}

/** Groups of blocks that compete: keep the top k blocks of every scope (seed: ScopeSpec). */
export class ScopeSpec extends Owned {
  constructor(block, scopeShape, name) {
    super();
    const s = dims(scopeShape, 'scopeShape');
    const n = optName(name);
    if (block instanceof BlockSpec) {
      this._raw = call(() => R().RawScopeSpec.fromSpec(block._live, s, n));
    } else if (block instanceof BlockCoupling) {
      this._raw = call(() => R().RawScopeSpec.fromCoupling(block._live, s, n));
    } else {
      throw argError(`ScopeSpec needs a BlockSpec or a BlockCoupling, got ${describe(block)}`);
    }
    this.block = block;
    this.name = n;
    this._grid = this._raw.gridShape();
    this._scope = this._raw.scopeShape();
  }
  /** Scopes per dimension. */
  get gridShape() {
    return [...this._grid];
  }
  /** Blocks per scope in each dimension (-1 resolved). */
  get shape() {
    return [...this._scope];
  }
  get blockGridShape() {
    return call(() => this._live.blockGridShape());
  }
  numblkPerScope() {
    return call(() => this._live.numblkPerScope());
  }
  numelPerScope() {
    return call(() => this._live.numelPerScope());
  }
  numScopes() {
    return call(() => this._live.numScopes());
  }
  sparsityToNnz(sparsity) {
    const s = num(sparsity, 'sparsity');
    return call(() => this._live.sparsityToNnz(s));
  }
  blockNorms(values) {
    const v = nodeValues(this.block, values, 'values');
    return call(() => this._live.blockNorms(v));
  }
  kthLargest(scores, nnz) {
    const s = f32(scores, 'scores');
    const k = num(nnz, 'nnz');
    return call(() => this._live.kthLargest(s, k));
  }
  /** See the README: `(kWeight * v_k + v_{k+1}) / (kWeight + 1)` per scope. */
  kthMid(scores, nnz, kWeight = 1) {
    const s = f32(scores, 'scores');
    const k = num(nnz, 'nnz');
    const w = num(kWeight, 'kWeight');
    return call(() => this._live.kthMid(s, k, w));
  }
  hardThreshold(opts) {
    const o = optsObject(opts, 'hardThreshold options');
    const t = o.thresholds === undefined ? undefined : gridF32(o.thresholds, this._grid, 'thresholds');
    const v = nodeValues(this.block, o.values, 'values');
    call(() => this._live.hardThreshold(restOptions(o, ['thresholds', 'values']), t, v));
  }
  getMasks(opts) {
    const o = optsObject(opts, 'getMasks options');
    const v = nodeValues(this.block, o.values, 'values');
    const scores = o.blockScores === undefined ? undefined : f32(o.blockScores, 'blockScores');
    const mask = o.blockMask === undefined ? undefined : u8(o.blockMask, 'blockMask');
    const masks = call(() => this._live.getMasks(restOptions(o, ['values', 'blockScores', 'blockMask']), v, scores, mask));
    return toMap(blockSpecsOf(this.block), masks);
  }
  softThreshold(thresholds, opts) {
    const t = gridF32(thresholds, this._grid, 'thresholds');
    const o = optsObject(opts, 'softThreshold options');
    const c = nodeValues(this.block, o.conditioners, 'conditioners');
    call(() => this._live.softThreshold(t, c, restOptions(o, ['conditioners'])));
  }
}

/** Several ScopeSpecs whose blocks compete together (model-wide pruning). */
export class ScopeCoupling extends Owned {
  constructor(scopes, orders, name) {
    super();
    if (!Array.isArray(scopes) || !scopes.every((s) => s instanceof ScopeSpec)) {
      throw argError('ScopeCoupling needs an array of ScopeSpec');
    }
    const { raw, name: n } = buildCoupling(scopes, orders, name, 'addScope', 'buildScopeCoupling');
    this._raw = raw;
    this.scopes = [...scopes];
    this.name = n;
    this._grid = this._raw.gridShape();
    this._orders = this._raw.orders();
  }
  get gridShape() {
    return [...this._grid];
  }
  get orders() {
    return this._orders.map((o) => [...o]);
  }
  numblkPerScope() {
    return call(() => this._live.numblkPerScope());
  }
  numelPerScope() {
    return call(() => this._live.numelPerScope());
  }
  numScopes() {
    return call(() => this._live.numScopes());
  }
  sparsityToNnz(sparsity) {
    const s = num(sparsity, 'sparsity');
    return call(() => this._live.sparsityToNnz(s));
  }
  _values(v, what) {
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v)) throw argError(`${what} must be an array with one entry per scope, got ${describe(v)}`);
    if (v.length !== this.scopes.length) {
      throw new ShapeMismatchError('shape_mismatch', `${what}: expected ${this.scopes.length} entries (one per scope), got ${v.length}`);
    }
    return v.map((x, i) => nodeValues(this.scopes[i].block, x, `${what}[${i}]`));
  }
  blockNorms(values) {
    const v = this._values(values, 'values');
    return call(() => this._live.blockNorms(v));
  }
  hardThreshold(opts) {
    const o = optsObject(opts, 'hardThreshold options');
    const t = o.thresholds === undefined ? undefined : gridF32(o.thresholds, this._grid, 'thresholds');
    const v = this._values(o.values, 'values');
    const p = progressFn(o.onProgress);
    call(() => this._live.hardThreshold(restOptions(o, ['thresholds', 'values', 'onProgress']), t, v, p));
  }
  softThreshold(thresholds, opts) {
    const t = gridF32(thresholds, this._grid, 'thresholds');
    const o = optsObject(opts, 'softThreshold options');
    const c = this._values(o.conditioners, 'conditioners');
    const p = progressFn(o.onProgress);
    call(() => this._live.softThreshold(t, c, restOptions(o, ['conditioners', 'onProgress']), p));
  }
  getMasks(opts) {
    const o = optsObject(opts, 'getMasks options');
    const v = this._values(o.values, 'values');
    const p = progressFn(o.onProgress);
    const masks = call(() => this._live.getMasks(restOptions(o, ['values', 'onProgress']), v, p));
    return toMap(this.scopes.flatMap((s) => blockSpecsOf(s.block)), masks);
  }
}

// ------------------------------------------------------------------ N:M (after NVIDIA ASP)

export function getNmpruneInfo(pattern) {
  if (typeof pattern !== 'string') return { valid: false, m: 0, n: 0 };
  return call(() => R().getNmpruneInfo(pattern));
}

export function computeValid1dPatterns(m, n) {
  return call(() => R().computeValid1dPatterns(num(m, 'm'), num(n, 'n')));
}

export function mn1dBest(values, shape, m, n) {
  const v = f32(values, 'values');
  return call(() => R().mn1dBest(v, dims(shape, 'shape'), num(m, 'm'), num(n, 'n')));
}

export function m4n2_1d(values, shape) {
  const v = f32(values, 'values');
  return call(() => R().m4n2_1d(v, dims(shape, 'shape')));
}

/** Keep-mask of `values` (tensor layout) for an ASP pattern; conv weights grouped along C. */
export function createAspMask(values, shape, pattern = 'm4n2_1d') {
  const s = shape === undefined && values instanceof Param ? values.shape : shape;
  const v = f32(values, 'values');
  if (typeof pattern !== 'string') throw argError(`pattern must be a string, got ${describe(pattern)}`);
  return call(() => R().createAspMask(v, dims(s, 'shape'), pattern));
}

export function fill(values) {
  const v = f32(values, 'values');
  return call(() => R().fill(v));
}

export function reshape1d(values, shape, m) {
  const v = f32(values, 'values');
  return call(() => R().reshape1d(v, dims(shape, 'shape'), num(m, 'm')));
}

/** N:M masks for a set of params, computed all first and then applied in place. */
export class MagnitudeSearcher extends Owned {
  constructor(pattern = 'm4n2_1d') {
    super();
    if (typeof pattern !== 'string') throw argError(`pattern must be a string, got ${describe(pattern)}`);
    this._raw = call(() => new (R().RawMagnitudeSearcher)(pattern));
    this.pattern = pattern;
  }
  _load(params) {
    if (!Array.isArray(params) || !params.every((p) => p instanceof Param)) {
      throw argError('MagnitudeSearcher needs an array of Param');
    }
    const r = this._live;
    r.clearParams();
    for (const p of params) r.addParam(p._live);
  }
  /** Keep-masks (param layout) without changing the params. */
  computeMasks(params, opts) {
    this._load(params);
    const p = progressFn(optsObject(opts, 'options').onProgress);
    try {
      return toMap(params, call(() => this._live.computeMasks(p)));
    } finally {
      this._live.clearParams();
    }
  }
  /** Computes every mask, then applies them in place; returns the masks. */
  apply(params, opts) {
    this._load(params);
    const p = progressFn(optsObject(opts, 'options').onProgress);
    try {
      return toMap(params, call(() => this._live.apply(p)));
    } finally {
      this._live.clearParams();
    }
  }
}

// ------------------------------------------------------------------ sparse exports

/** CSR arrays of a 2-D weight: `{indptr, indices, values, shape, bytes}`. */
export function toCsr(values, shape) {
  const v = f32(values, 'values');
  return call(() => R().toCsr(v, dims(shape, 'shape')));
}

/** Block-CSR arrays with `[bh, bw]` blocks: `{indptr, indices, values, shape, blockShape, bytes}`. */
export function toBsr(values, shape, blockShape) {
  const v = f32(values, 'values');
  return call(() => R().toBsr(v, dims(shape, 'shape'), dims(blockShape, 'blockShape')));
}

/** 2:4 compressed form: `{values (cols/2 per row), meta (2-bit positions), shape, bytes}`. */
export function toNm24(values, shape) {
  const v = f32(values, 'values');
  return call(() => R().toNm24(v, dims(shape, 'shape')));
}

/** Decodes an object returned by toCsr / toBsr / toNm24 back to a dense Float32Array. */
export function sparseToDense(sparse) {
  if (!sparse || typeof sparse !== 'object') throw argError('sparseToDense needs the object returned by toCsr/toBsr/toNm24');
  return call(() => R().sparseToDense(sparse));
}

/** Bytes of a 2-D weight as dense / CSR / BSR (`blockShape`) / 2:4 compressed (null if cols % 4). */
export function sparseBytes(values, shape, blockShape = [1, 1]) {
  const v = f32(values, 'values');
  return call(() => R().sparseBytes(v, dims(shape, 'shape'), dims(blockShape, 'blockShape')));
}

/** ASP-style input-channel permutation raising the magnitude kept by an m:n mask. */
export function searchPermutation(values, shape, opts) {
  const o = optsObject(opts, 'searchPermutation options');
  checkKeys(o, ['m', 'n', 'maxSweeps'], 'searchPermutation options');
  const v = f32(values, 'values');
  return call(() => R().searchPermutation(v, dims(shape, 'shape'), num(o.m ?? 4, 'm'), num(o.n ?? 2, 'n'), o.maxSweeps === undefined ? undefined : num(o.maxSweeps, 'maxSweeps')));
}

// ------------------------------------------------------------------ runtime info

/** True when the threaded variant is loaded and its pool has more than one worker. */
export function threads() {
  return raw !== null && variantName === 'threads' && raw.numThreads() > 1;
}

/** Which wasm build is loaded: 'simd' (single-threaded SIMD128), 'threads', or 'uninitialized'. */
export function variant() {
  return variantName;
}

/** Number of rayon workers (1 without threads). */
export function numThreads() {
  return raw ? raw.numThreads() : 1;
}

/** @internal Distinct workers that ran `n` probe tasks (test hook for the thread pool). */
export function probeThreads(n = 64) {
  return R().probeThreads(n);
}
