// The lifetime of objects that own wasm memory: free() and `using`.
import { SparseKitError, hasTrapped } from './errors.js';
import { noteObject } from './runtime.js';

// `Symbol.dispose` typed without requiring the consumer's `esnext.disposable` lib: this merges
// with that lib's identical declaration where it is present, and supplies the key where not.
declare global {
  interface SymbolConstructor {
    readonly dispose: unique symbol;
  }
}

/** @internal A wasm-bindgen object: its pointer is 0 once freed. */
export interface RawHandle {
  free(): void;
}

/**
 * The runtime key of `using`: the engine's `Symbol.dispose`, else the registry symbol that
 * transpilers (esbuild, TypeScript's helpers with a polyfill) fall back to.
 */
const disposeKey: symbol = (Symbol as { dispose?: symbol }).dispose ?? Symbol.for('Symbol.dispose');

/** @internal Marks the internal constructor path of View (wrapping an existing raw view). */
export const INTERNAL: unique symbol = Symbol('internal');

/**
 * Base of every class that owns wasm memory: `free()` releases it now (otherwise a
 * FinalizationRegistry does it later); `using x = ...` frees at the end of the block.
 */
export abstract class Owned {
  /** @internal */
  _raw!: RawHandle;

  constructor() {
    // Node switches builds in initThreadPool() only while no object holds a handle of the first
    noteObject();
  }

  /**
   * Releases the wasm-side object now. Freeing twice is a no-op. After a trap (out of memory) the
   * object the trapped call had borrowed stays borrowed and wasm-bindgen refuses to free it: its
   * memory went with the trap, and the trap's error is the one the caller reads, not free()'s.
   */
  free(): void {
    if (!this._raw || ptr(this._raw) === 0) return;
    try {
      this._raw.free();
    } catch (e) {
      if (!hasTrapped()) throw e;
    }
  }

  /** Same as free(): lets `using` release the object at the end of its block. */
  declare [Symbol.dispose]: () => void;

  /** @internal The raw object, or `use_after_free` when it was freed. */
  get _live(): this['_raw'] {
    const r = this._raw;
    if (!r || ptr(r) === 0) throw new SparseKitError('use_after_free', `${this.constructor.name} was freed`);
    return r;
  }
}

Object.defineProperty(Owned.prototype, disposeKey, {
  value: function dispose(this: Owned) {
    this.free();
  },
  writable: true,
  configurable: true,
});

function ptr(r: RawHandle): number {
  return (r as unknown as { __wbg_ptr: number }).__wbg_ptr;
}

/** @internal Results keyed by the objects they belong to. */
export function toMap<K, V>(keys: readonly K[], values: readonly V[]): Map<K, V> {
  const m = new Map<K, V>();
  keys.forEach((k, i) => m.set(k, values[i]));
  return m;
}
