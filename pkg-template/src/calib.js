// Calibration-aware pruning (API.md "Calibration-aware pruning"): Hessian, wandaScores,
// sparseGpt over the wasm glue. Like api.js this layer only coerces and copies arguments and
// rethrows errors as SparseKitError classes; every check and all behaviour live in the Rust core.

import { SparseKitError, ShapeMismatchError, CouplingError, Param, View } from './api.js';

let glue = null;

/** @internal Called by the package entries with the initialized glue module. */
export function bindCalib(g) {
  glue = g;
}

function G() {
  if (!glue) throw new SparseKitError('not_initialized', 'sparsekit-wasm is not initialized: `await init()` first (browser)');
  return glue;
}

const CLASSES = { SparseKitError, ShapeMismatchError, CouplingError };

function call(fn) {
  try {
    return fn();
  } catch (e) {
    if (e instanceof SparseKitError) throw e;
    if (e && typeof e.code === 'string' && CLASSES[e.name]) throw new CLASSES[e.name](e.code, e.message);
    if (/null pointer passed to rust|recursive use of an object/i.test(String(e && e.message))) {
      throw new SparseKitError('use_after_free', `object used after free(): ${e.message}`);
    }
    throw new SparseKitError('invalid_arguments', String((e && e.message) || e));
  }
}

const argError = (msg) => new SparseKitError('invalid_arguments', msg);

function detached(a) {
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

/** A Float32Array safe to hand to wasm (arrays that view wasm memory are copied). */
function f32(x, what) {
  if (ArrayBuffer.isView(x) && detached(x)) throw new SparseKitError('detached_buffer', `${what}: the array's ArrayBuffer is detached`);
  if (x instanceof Float32Array) return x.buffer === G().wasmMemory().buffer ? x.slice() : x;
  if (Array.isArray(x) && x.every((v) => typeof v === 'number')) return Float32Array.from(x);
  throw argError(`${what} must be a Float32Array`);
}

function u8(x, what) {
  if (ArrayBuffer.isView(x) && detached(x)) throw new SparseKitError('detached_buffer', `${what}: the array's ArrayBuffer is detached`);
  if (x instanceof Uint8Array) return x.slice();
  if (Array.isArray(x) && x.every((v) => typeof v === 'number' || typeof v === 'boolean')) return Uint8Array.from(x, (v) => (v ? 1 : 0));
  throw argError(`${what} must be a Uint8Array keep-mask (1 keeps)`);
}

function num(x, what) {
  if (typeof x !== 'number') throw argError(`${what} must be a number`);
  return x;
}

function optNum(x, what) {
  return x === undefined ? undefined : num(x, what);
}

function f64s(x, what) {
  if ((Array.isArray(x) || ArrayBuffer.isView(x)) && Array.from(x).every((v) => typeof v === 'number')) return Float64Array.from(x);
  throw argError(`${what} must be an array of integers`);
}

function optF64s(x, what) {
  return x === undefined ? undefined : f64s(x, what);
}

function options(o, allowed, what) {
  if (o === undefined || o === null) return {};
  if (typeof o !== 'object' || Array.isArray(o) || ArrayBuffer.isView(o)) throw argError(`${what} must be an options object`);
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k) && o[k] !== undefined) throw argError(`${what}: unknown option \`${k}\`, expected one of ${allowed.join(', ')}`);
  }
  return o;
}

function live(obj, what) {
  const r = obj && obj._raw;
  if (!r || r.__wbg_ptr === 0) throw new SparseKitError('use_after_free', `${what} was freed`);
  return r;
}

/** Runs `fn(rawView)` on the 2-D view of `w` (a Param is seen as its full view, freed after). */
function withView(w, fn) {
  if (w instanceof View) return fn(live(w, 'View'));
  if (!(w instanceof Param)) throw argError('expected a Param or a 2-D View (rows = outputs, cols = inputs)');
  const v = View.fromExisting(w);
  try {
    return fn(live(v, 'View'));
  } finally {
    v.free();
  }
}

function hessianRaw(h) {
  if (!(h instanceof Hessian)) throw argError('expected a Hessian');
  return live(h, 'Hessian');
}

const disposeSymbol = Symbol.dispose || Symbol.for('Symbol.dispose');

/** Input statistics of one linear map: count and mean of x xᵀ over the calibration inputs. */
export class Hessian {
  constructor(cols) {
    this._raw = call(() => new (G().RawHessian)(num(cols, 'cols')));
  }
  get cols() {
    return live(this, 'Hessian').cols();
  }
  get count() {
    return live(this, 'Hessian').count();
  }
  addRows(x, n) {
    const xx = f32(x, 'x');
    call(() => live(this, 'Hessian').addRows(xx, num(n, 'n')));
  }
  addConv(x, inputShape, conv) {
    const xx = f32(x, 'x');
    const c = options(conv, ['kernelShape', 'strides', 'pads', 'dilations'], 'conv');
    if (c.kernelShape === undefined) throw argError('conv.kernelShape is required ([kh, kw])');
    call(() =>
      live(this, 'Hessian').addConv(xx, f64s(inputShape, 'inputShape'), f64s(c.kernelShape, 'kernelShape'),
        optF64s(c.strides, 'strides'), optF64s(c.pads, 'pads'), optF64s(c.dilations, 'dilations')),
    );
  }
  matrix() {
    return call(() => live(this, 'Hessian').matrix());
  }
  inputNorms() {
    return call(() => live(this, 'Hessian').inputNorms());
  }
  free() {
    if (this._raw && this._raw.__wbg_ptr !== 0) this._raw.free();
  }
  [disposeSymbol]() {
    this.free();
  }
}

/** Wanda scores `|W_ij| * inputNorms_j`, view-shaped. */
export function wandaScores(w, h) {
  const hr = hessianRaw(h);
  return withView(w, (v) => call(() => G().rawWandaScores(v, hr)));
}

/** SparseGPT in place on `w`; returns the keep-mask (view-shaped, 1 keeps). */
export function sparseGpt(w, h, opts) {
  const hr = hessianRaw(h);
  const o = options(opts, ['sparsity', 'nm', 'keep', 'blockSize', 'percDamp'], 'sparseGpt options');
  const sparsity = optNum(o.sparsity, 'sparsity');
  const nm = optF64s(o.nm, 'nm');
  const keep = o.keep === undefined ? undefined : u8(o.keep, 'keep');
  const blockSize = optNum(o.blockSize, 'blockSize');
  const percDamp = optNum(o.percDamp, 'percDamp');
  return withView(w, (v) => call(() => G().rawSparseGpt(v, hr, sparsity, nm, keep, blockSize, percDamp)));
}

/** `sqrt(tr((W-Ŵ) H (W-Ŵ)ᵀ) / tr(W H Wᵀ))` of view values before/after a pruning (API.md step 5). */
export function relReconError(before, after, h) {
  const hr = hessianRaw(h);
  const b = f32(before, 'before');
  const a = f32(after, 'after');
  return call(() => G().rawRelReconError(b, a, hr));
}
