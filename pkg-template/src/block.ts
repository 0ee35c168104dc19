// BlockSpec and BlockCoupling: a view (or several aligned views) cut into a grid of equal blocks.
import { argError, call } from './errors.js';
import { bool, checkKeys, describe, dims, f32, gridF32, gridU8, num, optName, optsObject, restOptions } from './convert.js';
import type { Floats, GridInput, Mask, Shaped } from './convert.js';
import { Owned, toMap, type RawHandle } from './owned.js';
import { Param } from './param.js';
import { R } from './runtime.js';
import { View, type BlockViewOptions } from './view.js';
import type { RawBlockCoupling, RawBlockSpec, RawCouplingBuilder } from '../wasm/st/sparsekit_wasm.js';

/** Values for a BlockSpec: in the param's storage layout (or view-shaped if the length differs). */
export type Values = Param | Floats;

/** Options of the soft threshold. */
export interface SoftThresholdOptions<C> {
  /** Diagonal conditioner (e.g. Adam's sqrt(v)+eps), strictly positive: the Adam-conditioned prox. */
  conditioners?: C;
  /** Bisection iterations (default 20): the bisection's iterate is the result, whatever the method (docs/API.md). */
  maxIter?: number;
  /** Stop when every block's bracket is narrower than this (default 1e-8). */
  atol?: number;
  /**
   * How `mu` is found per block with conditioners: `'newton'` (default), a safeguarded Newton
   * search for the root, from which the bisection's iterate is read off (about 3 passes over a
   * block instead of `maxIter`); `'bisection'`, the reference bisection step for step. Both give the
   * bisection's result within float32 rounding. Anything else: `invalid_arguments`.
   */
  method?: 'newton' | 'bisection';
  /** Numerical guard (default float32 eps); must be >= 0. */
  eps?: number;
}

/** @internal Values of one BlockSpec, as wasm takes them. */
export function specValues(v: unknown, what: string): Float32Array | undefined {
  if (v === undefined || v === null) return undefined;
  return f32(v, what);
}

/**
 * @internal Values of a coupling: one entry per spec. The array is needed here to copy each
 * entry (a Param's weights, arrays over wasm memory); its length is checked in wasm.
 */
export function listValues(v: unknown, what: string): Float32Array[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw argError(`${what} must be an array with one Param/Float32Array per spec, got ${describe(v)}`);
  return v.map((x, i) => f32(x, `${what}[${i}]`));
}

/** @internal Values for what a scope is built on: one entry, or one per spec of a coupling. */
export function nodeValues(block: BlockSpec | BlockCoupling, v: unknown, what: string): Float32Array | Float32Array[] | undefined {
  return block instanceof BlockCoupling ? listValues(v, what) : specValues(v, what);
}

/** @internal The BlockSpecs whose masks a node returns, in order. */
export function blockSpecsOf(block: BlockSpec | BlockCoupling): BlockSpec[] {
  return block instanceof BlockCoupling ? block.specs : [block];
}

/**
 * @internal Builds a BlockCoupling or ScopeCoupling in wasm: members are added one by one to a
 * builder (moving JS objects into Rust would invalidate them), then aligned by `orders`
 * (checked in wasm: `invalid_orders`).
 */
export function buildCoupling<T>(members: Owned[], orders: unknown, name: unknown, add: 'addSpec' | 'addScope', build: (b: RawCouplingBuilder, orders: unknown, name: string | undefined) => T): { raw: T; name: string | undefined } {
  const n = optName(name);
  const b = new (R().RawCouplingBuilder)();
  try {
    for (const m of members) (b[add] as (r: RawHandle) => void)(m._live);
    return { raw: call(() => build(b, orders ?? undefined, n)), name: n };
  } finally {
    b.free();
  }
}

/**
 * What BlockSpec and BlockCoupling share: the same members over one grid; they differ only in
 * how `values` are given (one array, or one per spec) and which specs the masks are keyed by.
 */
export abstract class BlockGrid<V> extends Owned {
  /** @internal */
  declare _raw: RawBlockSpec | RawBlockCoupling;
  /** @internal */
  _grid!: number[];
  /** @internal */
  abstract _values(v: unknown, what: string): Float32Array | Float32Array[] | undefined;
  /** @internal */
  abstract _specs(): BlockSpec[];

  /** Blocks per dimension. */
  get gridShape(): number[] {
    return [...this._grid];
  }
  get gridNdim(): number {
    return this._grid.length;
  }
  /** Number of blocks. */
  numblk(): number {
    return call(() => this._live.numblk());
  }
  numel(): number {
    return call(() => this._live.numel());
  }
  numelPerBlock(): number {
    return call(() => this._live.numelPerBlock());
  }
  /** Elements of the view(s) with |x| > eps (default 1e-8). */
  nnz(eps = 1e-8): number {
    const e = num(eps, 'eps');
    return call(() => this._live.nnz(e));
  }
  /** Lp norm per block (p = 1, 2 or Infinity; default 2) of the weights or `values`. */
  norms(p = 2, values?: V): Float32Array {
    const pp = num(p, 'p');
    const v = this._values(values, 'values');
    return call(() => this._live.norms(pp, v));
  }
  /** Minimum per block. */
  min(values?: V): Float32Array {
    const v = this._values(values, 'values');
    return call(() => this._live.min(v));
  }
  /** Maximum per block. */
  max(values?: V): Float32Array {
    const v = this._values(values, 'values');
    return call(() => this._live.max(v));
  }
  /** Zeroes in place the blocks whose keep value is 0. */
  applyMask(keep: GridInput<Mask>): void {
    const k = gridU8(keep, this._grid, 'keep');
    call(() => this._live.applyMask(k));
  }
  /** Multiplies every block in place by its grid value. */
  applyMultiplier(m: GridInput<Floats>): void {
    const mm = gridF32(m, this._grid, 'multiplier');
    call(() => this._live.applyMultiplier(mm));
  }
  /** Group-lasso prox: Euclidean, or Adam-conditioned (bisection) with `conditioners`. */
  softThreshold(thresholds: GridInput<Floats>, opts?: SoftThresholdOptions<V>): void {
    const t = gridF32(thresholds, this._grid, 'thresholds');
    const o = optsObject(opts, 'softThreshold options');
    const c = this._values(o.conditioners, 'conditioners');
    call(() => this._live.softThreshold(t, c, restOptions(o, ['conditioners'])));
  }
  /** Zeroes blocks whose L2 norm (of `values`) is < threshold; equal is kept. */
  hardThreshold(thresholds: GridInput<Floats>, values?: V): void {
    const t = gridF32(thresholds, this._grid, 'thresholds');
    const v = this._values(values, 'values');
    call(() => this._live.hardThreshold(t, v));
  }
  /** Element keep-masks (view-shaped) of a block keep-mask, keyed by BlockSpec. */
  getMasks(keepBlocks: GridInput<Mask>): Map<BlockSpec, Uint8Array> {
    const k = gridU8(keepBlocks, this._grid, 'keepBlocks');
    return toMap(this._specs(), call(() => this._live.getMasks(k)) as Uint8Array[]);
  }
}

/** A view (or param) seen as a grid of equal blocks (seed: BlockSpec). */
export class BlockSpec extends BlockGrid<Values> {
  /** @internal */
  declare _raw: RawBlockSpec;
  readonly view: View;
  readonly name?: string;
  #block: number[];

  /** `blockShape` may hold -1 (whole dimension) or be [] (every element its own block). */
  constructor(view: View | Param, blockShape: number[], name?: string) {
    super();
    const v = View.fromExisting(view);
    const b = dims(blockShape, 'blockShape');
    const n = optName(name);
    this._raw = call(() => new (R().RawBlockSpec)(v._live, b, n));
    this.view = v;
    this.name = n;
    this.#block = this._raw.shape() as number[];
    this._grid = this._raw.gridShape() as number[];
  }
  /** The normalised block shape (-1 and [] resolved). */
  get shape(): number[] {
    return [...this.#block];
  }
  /** @internal */
  _values(v: unknown, what: string): Float32Array | undefined {
    return specValues(v, what);
  }
  /** @internal */
  _specs(): BlockSpec[] {
    return [this];
  }
  /** The blocks of the weights (or of `values`) as a block view. */
  blockView(values?: Values, opts?: BlockViewOptions): Shaped<Float32Array> {
    const v = specValues(values, 'values');
    const o = optsObject(opts, 'blockView options');
    checkKeys(o, ['reorder', 'merge'], 'blockView options');
    const reorder = bool(o.reorder, true, 'reorder');
    const merge = bool(o.merge, false, 'merge');
    return call(() => this._live.blockView(v, reorder, merge)) as Shaped<Float32Array>;
  }
}

/** BlockSpecs whose grids, permuted by `orders`, coincide; aligned blocks are pruned together. */
export class BlockCoupling extends BlockGrid<Values[]> {
  /** @internal */
  declare _raw: RawBlockCoupling;
  readonly specs: BlockSpec[];
  readonly name?: string;
  #orders: number[][];

  /** Grid = specs[0]'s grid permuted by orders[0]; orders default to the identity. */
  constructor(specs: BlockSpec[], orders?: number[][], name?: string) {
    super();
    if (!Array.isArray(specs) || !specs.every((s) => s instanceof BlockSpec)) {
      throw argError('BlockCoupling needs an array of BlockSpec');
    }
    const { raw, name: n } = buildCoupling(specs, orders, name, 'addSpec', (b, o, nm) => b.buildBlockCoupling(o, nm));
    this._raw = raw;
    this.specs = [...specs];
    this.name = n;
    this._grid = this._raw.gridShape() as number[];
    this.#orders = this._raw.orders() as number[][];
  }
  /** The normalised orders (one permutation per spec). */
  get orders(): number[][] {
    return this.#orders.map((o) => [...o]);
  }
  /** @internal */
  _values(v: unknown, what: string): Float32Array[] | undefined {
    return listValues(v, what);
  }
  /** @internal */
  _specs(): BlockSpec[] {
    return this.specs;
  }
  /** `(*gridShape, numelPerBlock)`: each spec's merged blocks, concatenated in spec order. */
  blockView(values?: Values[]): Shaped<Float32Array> {
    const v = listValues(values, 'values');
    return call(() => this._live.blockView(v)) as Shaped<Float32Array>;
  }
}
