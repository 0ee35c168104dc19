// Argument coercion: JS values to what the wasm exports take. Type checks only (the Rust core
// checks every size, shape and value); arrays that view wasm memory are copied, because a call
// may grow memory and detach them mid-call.
import { argError, call, SparseKitError } from './errors.js';
import { memoryBuffer, R } from './runtime.js';

/**
 * @internal The method by which a Param hands over a copy of its weights. This module sits below
 * param.ts (which imports it), so it recognises a Param by this key, which only Param defines,
 * instead of importing the class.
 */
export const weightsCopy: unique symbol = Symbol('sparsekit-wasm.weightsCopy');

/** True for a Param (an object whose prototype chain defines [weightsCopy]). */
function isParam(x: unknown): x is { [weightsCopy](): Float32Array } {
  return x !== null && typeof x === 'object' && weightsCopy in x;
}

/** A flat array with its shape. */
export interface Shaped<T> {
  data: T;
  shape: number[];
}

/** Float inputs: a Float32Array, or plain numbers (copied). */
export type Floats = Float32Array | number[];
/** A keep-mask (1 keeps, 0 prunes): a Uint8Array, or numbers/booleans (copied). */
export type Mask = Uint8Array | (number | boolean)[];
/** A grid-shaped input: flat (row-major), or `{data, shape}` whose shape must be the grid's. */
export type GridInput<T> = T | Shaped<T>;

/** @internal A short description of a value for error messages. */
export function describe(x: unknown): string {
  if (x === null) return 'null';
  if (Array.isArray(x)) return `an Array(${x.length})`;
  if (ArrayBuffer.isView(x)) return `a ${x.constructor.name}(${(x as unknown as ArrayLike<unknown>).length})`;
  if (typeof x === 'object') return `a ${(x as object).constructor ? (x as object).constructor.name : 'object'}`;
  return `${typeof x} ${String(x).slice(0, 40)}`;
}

/** True when `a` views an ArrayBuffer that was transferred away (its data is gone). */
function isDetached(a: ArrayBufferView): boolean {
  const b = a.buffer as ArrayBuffer & { detached?: boolean };
  if (typeof b.detached === 'boolean') return b.detached;
  if (a.byteLength !== 0) return false;
  try {
    new Uint8Array(b, 0, 0);
    return false;
  } catch {
    return true;
  }
}

/** @internal */
export function notDetached(x: unknown, what: string): void {
  if (ArrayBuffer.isView(x) && isDetached(x)) {
    throw new SparseKitError('detached_buffer', `${what}: the array's ArrayBuffer is detached (transferred); pass a live array`);
  }
}

/** @internal A Float32Array safe to pass to wasm: a Param's copy, or arrays that view wasm memory copied. */
export function f32(x: unknown, what: string): Float32Array {
  if (isParam(x)) return x[weightsCopy]();
  notDetached(x, what);
  if (x instanceof Float32Array) return x.buffer === memoryBuffer() ? x.slice() : x;
  if (Array.isArray(x) && x.every((v) => typeof v === 'number')) return Float32Array.from(x as number[]);
  throw argError(`${what} must be a Float32Array, got ${describe(x)}`);
}

/** @internal A keep-mask (booleans become 0/1). */
export function u8(x: unknown, what: string): Uint8Array {
  notDetached(x, what);
  if (x instanceof Uint8Array) return x.buffer === memoryBuffer() ? x.slice() : x;
  if (Array.isArray(x) && x.every((v) => typeof v === 'number' || typeof v === 'boolean')) {
    return Uint8Array.from(x as (number | boolean)[], (v) => (v ? 1 : 0));
  }
  throw argError(`${what} must be a Uint8Array keep-mask (1 keeps, 0 prunes), got ${describe(x)}`);
}

/** @internal Indices; refused when out of Int32 range (Int32Array.from would wrap them silently). */
export function i32(x: unknown, what: string): Int32Array {
  notDetached(x, what);
  if (x instanceof Int32Array) return x;
  const inRange = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= -2147483648 && v <= 2147483647;
  if ((Array.isArray(x) || ArrayBuffer.isView(x)) && Array.from(x as ArrayLike<unknown>).every(inRange)) {
    return Int32Array.from(x as ArrayLike<number>, Number);
  }
  throw argError(`${what} must be an Int32Array of indices, got ${describe(x)}`);
}

/** @internal Shapes, strides, block and scope shapes: numbers (integers are checked in wasm). */
export function dims(x: unknown, what: string): Float64Array {
  notDetached(x, what);
  if ((Array.isArray(x) || ArrayBuffer.isView(x)) && Array.from(x as ArrayLike<unknown>).every((v) => typeof v === 'number')) {
    return Float64Array.from(x as ArrayLike<number>);
  }
  throw argError(`${what} must be an array of integers, got ${describe(x)}`);
}

/** @internal A number (wasm-bindgen would coerce a string silently). */
export function num(x: unknown, what: string): number {
  if (typeof x !== 'number') throw argError(`${what} must be a number, got ${describe(x)}`);
  return x;
}

/** @internal A string (wasm-bindgen would stringify any value silently). */
export function str(x: unknown, what: string): string {
  if (typeof x !== 'string') throw argError(`${what} must be a string, got ${describe(x)}`);
  return x;
}

/** @internal */
export function optName(name: unknown): string | undefined {
  if (name === undefined || name === null) return undefined;
  return str(name, 'name');
}

/** @internal */
export function bool(v: unknown, dflt: boolean, what: string): boolean {
  if (v === undefined) return dflt;
  if (typeof v !== 'boolean') throw argError(`${what} must be a boolean, got ${describe(v)}`);
  return v;
}

/** @internal An options argument: `undefined`/`null` is `{}`. */
export function optsObject(o: unknown, what: string): Record<string, unknown> {
  if (o === undefined || o === null) return {};
  if (typeof o !== 'object' || Array.isArray(o) || ArrayBuffer.isView(o)) {
    throw argError(`${what} must be an options object, got ${describe(o)}`);
  }
  return o as Record<string, unknown>;
}

/** @internal Options read here in JS (never seen by wasm): unknown keys are refused here. */
export function checkKeys(o: Record<string, unknown>, allowed: string[], what: string): void {
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k)) throw argError(`${what}: unknown option \`${k}\`, expected one of ${allowed.join(', ')}`);
  }
}

/** @internal The options forwarded to wasm (which refuses unknown keys and wrong types). */
export function restOptions(o: Record<string, unknown>, omit: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (!omit.includes(k) && v !== undefined) out[k] = v;
  return out;
}

/** @internal */
export function progressFn(f: unknown): ((done: number, total: number) => void) | undefined {
  if (f === undefined || f === null) return undefined;
  if (typeof f !== 'function') throw argError(`onProgress must be a function, got ${describe(f)}`);
  return f as (done: number, total: number) => void;
}

function isShaped(x: unknown): x is Shaped<unknown> {
  return (
    x !== null && typeof x === 'object' && !ArrayBuffer.isView(x) && !Array.isArray(x) && !isParam(x) && 'data' in x && 'shape' in x
  );
}

/**
 * @internal Grid-shaped inputs (thresholds, multipliers, keep-masks) are flat arrays, or
 * `{data, shape}` whose shape must equal the grid's (a same-length array of another shape is a
 * `shape_mismatch`, never reinterpreted; checked in wasm by checkGridShape). `expected` is null
 * when the grid is unknown here (a block shape that does not divide: wasm refuses the call).
 */
export function gridInput<T>(x: unknown, expected: number[] | null, what: string, conv: (x: unknown, what: string) => T): T {
  if (!isShaped(x)) return conv(x, what);
  const shape = dims(x.shape, `${what}.shape`);
  if (expected) {
    const grid = Float64Array.from(expected);
    call(() => R().checkGridShape(what, grid, shape));
  }
  return conv(x.data, what);
}

/** @internal */
export const gridF32 = (x: unknown, expected: number[] | null, what: string) => gridInput(x, expected, what, f32);
/** @internal */
export const gridU8 = (x: unknown, expected: number[] | null, what: string) => gridInput(x, expected, what, u8);
