// Param: a weight tensor stored in wasm memory, pruned in place.
import { call } from './errors.js';
import { dims, f32, weightsCopy } from './convert.js';
import { Owned } from './owned.js';
import { memoryBuffer, R } from './runtime.js';
import type { RawParam } from '../wasm/st/sparsekit_wasm.js';

/**
 * A weight tensor in wasm memory. Every operation works in place on it. A View/BlockSpec/Scope
 * built on a Param keeps its storage alive even after the Param object is freed.
 */
export class Param extends Owned {
  /** @internal */
  declare _raw: RawParam;
  #shape: number[];

  private constructor(raw: RawParam) {
    super();
    this._raw = raw;
    this.#shape = raw.shape() as number[];
  }

  /** Copies `data` (row-major, `prod(shape)` long) into wasm memory once. */
  static fromArray(data: Float32Array | number[], shape: number[]): Param {
    const d = f32(data, 'data');
    const s = dims(shape, 'shape');
    return new Param(call(() => new (R().RawParam)(d, s)));
  }

  get shape(): number[] {
    return [...this.#shape];
  }

  /** Number of elements. */
  get size(): number {
    return this._live.len();
  }

  /**
   * A live, zero-copy Float32Array onto the weights in wasm memory. Re-derived on each access
   * (wasm memory growth detaches old arrays): re-read it after library calls.
   */
  get data(): Float32Array {
    const r = this._live;
    return new Float32Array(memoryBuffer(), r.ptr(), r.len());
  }

  /** A copy of the weights. */
  toArray(): Float32Array {
    return call(() => this._live.toArray());
  }

  /** @internal A copy of the weights, for the argument coercion of convert.ts. */
  [weightsCopy](): Float32Array {
    return this.toArray();
  }

  /** Overwrites the weights with `data` (same length). */
  set(data: Float32Array | number[]): void {
    const d = f32(data, 'data');
    call(() => this._live.setData(d));
  }
}
