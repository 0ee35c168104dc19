// View: a strided window over a Param, with write-through.
import { argError, call } from './errors.js';
import { bool, checkKeys, describe, dims, f32, gridF32, gridU8, i32, optsObject } from './convert.js';
import type { Floats, GridInput, Mask, Shaped } from './convert.js';
import { INTERNAL, Owned } from './owned.js';
import { Param } from './param.js';
import { R } from './runtime.js';
import type { RawView } from '../wasm/st/sparsekit_wasm.js';

/** How a block view is laid out: reordered (B0,B1,..,b0,b1,..), merged (B0,B1,..,b0*b1*..). */
export interface BlockViewOptions {
  /** Grid axes first, then block axes (default true); false interleaves (B0,b0,B1,b1,..). */
  reorder?: boolean;
  /** Merge the block axes into one (default false). */
  merge?: boolean;
}

/**
 * @internal The grid of `shape` cut into `blockShape` blocks, or null when it does not divide
 * (wasm reports that): the expected shape of a `{data, shape}` grid input.
 */
export function gridOf(shape: number[], blockShape: ArrayLike<number>): number[] | null {
  const b = Array.from(blockShape);
  if (b.length === 0) return [...shape];
  if (b.length !== shape.length) return null;
  const g = shape.map((s, d) => (b[d] <= 0 ? 1 : s / b[d]));
  return g.every(Number.isInteger) ? g : null;
}

/** A strided window over a Param with write-through (seed: sparsekit.view.View). */
export class View extends Owned {
  /** @internal */
  declare _raw: RawView;
  readonly param: Param;
  #shape: number[];
  #stride: number[];

  /** Refuses (typed errors) rank mismatches, negative sizes/strides and `cosize > param.size`. */
  constructor(param: Param, shape: number[], stride: number[]);
  /** @internal */
  constructor(token: typeof INTERNAL, raw: RawView, param: Param);
  constructor(param: Param | typeof INTERNAL, shape: number[] | RawView, stride: number[] | Param) {
    super();
    if (param === INTERNAL) {
      this._raw = shape as RawView;
      this.param = stride as Param;
    } else {
      if (!(param instanceof Param)) throw argError(`View needs a Param, got ${describe(param)}`);
      const s = dims(shape, 'shape');
      const st = dims(stride, 'stride');
      this._raw = call(() => new (R().RawView)(param._live, s, st));
      this.param = param;
    }
    this.#shape = this._raw.shape() as number[];
    this.#stride = this._raw.stride() as number[];
  }

  /** A Param becomes its contiguous full view; a View is returned as is. */
  static fromExisting(p: Param | View): View {
    if (p instanceof View) return p;
    if (!(p instanceof Param)) throw argError(`fromExisting needs a Param or a View, got ${describe(p)}`);
    return new View(INTERNAL, call(() => R().RawView.fromParam(p._live)), p);
  }

  get shape(): number[] {
    return [...this.#shape];
  }
  get stride(): number[] {
    return [...this.#stride];
  }
  get ndim(): number {
    return this.#shape.length;
  }
  /** Maximum reachable storage offset + 1. */
  get cosize(): number {
    return call(() => this._live.cosize());
  }
  numel(): number {
    return call(() => this._live.numel());
  }
  /** A view-shaped, row-major copy of the elements. */
  values(): Float32Array {
    return call(() => this._live.values());
  }
  /** `idx`: (k, ndim) flattened view indices -> k storage offsets. */
  linearOffset(idx: Int32Array | number[]): Int32Array {
    const ix = i32(idx, 'idx');
    return call(() => this._live.linearOffset(ix));
  }
  /** View indices -> (row, col) in the 2-D param (`param_not_2d` otherwise). */
  toParamRc(idx: Int32Array | number[]): { rows: Int32Array; cols: Int32Array } {
    const ix = i32(idx, 'idx');
    return call(() => this._live.toParamRc(ix)) as { rows: Int32Array; cols: Int32Array };
  }
  /** Multiplies every block in place by its grid value (`m` grid-shaped). */
  applyMultiplier(m: GridInput<Floats>, blockShape: number[]): void {
    const b = dims(blockShape, 'blockShape');
    const mm = gridF32(m, gridOf(this.#shape, b), 'multiplier');
    call(() => this._live.applyMultiplier(mm, b));
  }
  /** Zeroes in place the blocks whose keep value is 0. */
  applyMask(keep: GridInput<Mask>, blockShape: number[]): void {
    const b = dims(blockShape, 'blockShape');
    const k = gridU8(keep, gridOf(this.#shape, b), 'keep');
    call(() => this._live.applyMask(k, b));
  }
  /** Interleaved (B0,b0,B1,b1..), reordered (B0,B1,..,b0,b1,..) or merged (B0,B1,..,b0*b1*..) view. */
  static blockViewOf(t: Floats, shape: number[], blockShape: number[], opts?: BlockViewOptions): Shaped<Float32Array> {
    const o = optsObject(opts, 'blockViewOf options');
    checkKeys(o, ['reorder', 'merge'], 'blockViewOf options');
    const tt = f32(t, 't');
    const s = dims(shape, 'shape');
    const b = dims(blockShape, 'blockShape');
    const reorder = bool(o.reorder, true, 'reorder');
    const merge = bool(o.merge, false, 'merge');
    return call(() => R().RawView.blockViewOf(tt, s, b, reorder, merge)) as Shaped<Float32Array>;
  }
  /** Grid values to element shape (or only to the broadcastable (B0,1,B1,1,..) when `fake`). */
  static broadcastBlockToElement(blockValues: Floats, gridShape: number[], blockShape: number[], fake = false): Shaped<Float32Array> {
    const v = f32(blockValues, 'blockValues');
    const g = dims(gridShape, 'gridShape');
    const b = dims(blockShape, 'blockShape');
    const fk = bool(fake, false, 'fake');
    return call(() => R().RawView.broadcastBlockToElement(v, g, b, fk)) as Shaped<Float32Array>;
  }
}
