// Error classes of the package and the conversion of whatever a wasm call threw into them.
import { CORE_ERROR_CODES } from './error-codes.js';

/**
 * Stable error codes (`err.code`): the core's `ErrorKind` list, generated from the wasm module at
 * build time. It includes the two codes only the JS layer throws (`not_initialized` before
 * `init()` in a browser, `internal_error` for a wasm trap), so Rust holds the one list.
 */
export type ErrorCode = (typeof CORE_ERROR_CODES)[number];

/** Every code an error of this package can carry, in the Rust order. */
export const ERROR_CODES: readonly ErrorCode[] = Object.freeze([...CORE_ERROR_CODES]);

/** Base class of every error the library throws. After any error no weight has changed. */
export class SparseKitError extends Error {
  /** Stable machine-readable code. */
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = 'SparseKitError';
    this.code = code;
  }
}

/** A length or shape that does not match (`code === 'shape_mismatch'`). */
export class ShapeMismatchError extends SparseKitError {
  constructor(code: ErrorCode, message: string) {
    super(code, message);
    this.name = 'ShapeMismatchError';
  }
}

/** Coupled grids that do not align (`code === 'incompatible_coupling'`). */
export class CouplingError extends SparseKitError {
  constructor(code: ErrorCode, message: string) {
    super(code, message);
    this.name = 'CouplingError';
  }
}

/** The classes the Rust bindings name in `err.name`. */
const ERROR_CLASSES: Record<string, typeof SparseKitError> = { SparseKitError, ShapeMismatchError, CouplingError };

/** The bytes of wasm memory in use (set by the runtime when a build is bound; 0 before). */
let memoryInUse: () => number = () => 0;

/** Whether a wasm call has trapped: objects it had borrowed can no longer be freed (see Owned.free). */
let trapped = false;

/** @internal True once any wasm call of this module has trapped. */
export function hasTrapped(): boolean {
  return trapped;
}

/** @internal The runtime's probe of the wasm memory's size, read when a call traps. */
export function setMemoryProbe(probe: () => number): void {
  memoryInUse = probe;
}

/**
 * A wasm32 module addresses 4 GiB. An allocation that cannot grow the memory aborts (Rust's
 * allocation-failure path is a trap, `unreachable`, not an error it can return); a trap while more
 * than 2 GiB are in use (a tensor asks for at most 1 GiB) is read as that, and said in the user's terms.
 */
const WASM32_BYTES = 2 ** 32;
const NEAR_FULL = 2 * 2 ** 30;

/** @internal Turns what a wasm call threw into a SparseKitError (the glue's own errors included). */
export function convertError(e: unknown): SparseKitError {
  if (e instanceof SparseKitError) return e;
  const err = e as { code?: unknown; name?: unknown; message?: unknown } | null | undefined;
  if (err && typeof err.code === 'string' && typeof err.name === 'string' && ERROR_CLASSES[err.name]) {
    return new ERROR_CLASSES[err.name](err.code as ErrorCode, String(err.message));
  }
  const msg = String((err && err.message) || e);
  // wasm-bindgen's own checks on a freed or borrowed object
  if (/null pointer passed to rust|recursive use of an object|attempted to take ownership/i.test(msg)) {
    return new SparseKitError('use_after_free', `object used after free(): ${msg}`);
  }
  if (typeof WebAssembly !== 'undefined' && e instanceof WebAssembly.RuntimeError) {
    trapped = true;
    const used = memoryInUse();
    if (/unreachable/.test(msg) && used >= NEAR_FULL) {
      const gib = (b: number) => (b / 2 ** 30).toFixed(2);
      return new SparseKitError('out_of_memory', `the wasm module ran out of memory (${gib(used)} GiB in use of the ${gib(WASM32_BYTES)} GiB a wasm32 module can address): use smaller inputs or batches`);
    }
    return new SparseKitError('internal_error', `internal error in the wasm module (please report): ${msg}`);
  }
  return new SparseKitError('invalid_arguments', msg);
}

/** @internal Runs one wasm call, rethrowing its error as a SparseKitError. */
export function call<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw convertError(e);
  }
}

/** @internal A wrong JS type or option (`invalid_arguments`). */
export function argError(message: string): SparseKitError {
  return new SparseKitError('invalid_arguments', message);
}
