// ScopeSpec and ScopeCoupling: groups of blocks that compete for the kept budget.
import { argError, call } from './errors.js';
import { describe, dims, f32, gridF32, num, optName, optsObject, progressFn, restOptions, u8 } from './convert.js';
import type { Floats, GridInput, Mask } from './convert.js';
import { BlockCoupling, BlockSpec, blockSpecsOf, buildCoupling, nodeValues, type SoftThresholdOptions, type Values } from './block.js';
import { Owned, toMap } from './owned.js';
import { R } from './runtime.js';
import type { RawScopeCoupling, RawScopeSpec } from '../wasm/st/sparsekit_wasm.js';

/** Values of a scope: one per spec of its block (a Values, or Values[] for a coupling). */
export type ScopeValues = Values | Values[];

/** Progress of a multi-param operation. */
export type ProgressCallback = (done: number, total: number) => void;

/** Exactly one of nnz, sparsity, thresholds. */
export interface HardThresholdOptions<V> {
  /** Blocks kept per scope (exactly that many; ties to the lower in-scope index). */
  nnz?: number;
  /** Fraction pruned per scope in [0, 1]: nnz = floor((1 - s) * numblkPerScope + 0.5). */
  sparsity?: number;
  /** Per-scope thresholds (scope grid): prune blocks whose norm < threshold. */
  thresholds?: GridInput<Floats>;
  /** What the norms are computed from (default the weights). */
  values?: V;
}

/** Options of ScopeSpec.getMasks: nnz/sparsity (by values or blockScores), or a block keep-mask. */
export interface ScopeMaskOptions {
  nnz?: number;
  sparsity?: number;
  values?: ScopeValues;
  /** Scores per block, in blockNorms() order, instead of norms. */
  blockScores?: Floats;
  /** A block keep-mask of the whole block grid (excludes the other options). */
  blockMask?: Mask;
}

/** Groups of blocks that compete: keep the top k of every scope (seed: ScopeSpec). */
export class ScopeSpec extends Owned {
  /** @internal */
  declare _raw: RawScopeSpec;
  readonly block: BlockSpec | BlockCoupling;
  readonly name?: string;
  #grid: number[];
  #scope: number[];

  /** `scopeShape` counts blocks per scope; -1 spans a dimension; [] = one scope for the grid. */
  constructor(block: BlockSpec | BlockCoupling, scopeShape: number[], name?: string) {
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
    this.#grid = this._raw.gridShape() as number[];
    this.#scope = this._raw.scopeShape() as number[];
  }
  /** Scopes per dimension. */
  get gridShape(): number[] {
    return [...this.#grid];
  }
  /** Blocks per scope in each dimension (-1 resolved). */
  get shape(): number[] {
    return [...this.#scope];
  }
  /** The block grid the scopes cut. */
  get blockGridShape(): number[] {
    return call(() => this._live.blockGridShape()) as number[];
  }
  numblkPerScope(): number {
    return call(() => this._live.numblkPerScope());
  }
  numelPerScope(): number {
    return call(() => this._live.numelPerScope());
  }
  numScopes(): number {
    return call(() => this._live.numScopes());
  }
  /** floor((1 - s) * numblkPerScope + 0.5); s in [0, 1]. */
  sparsityToNnz(sparsity: number): number {
    const s = num(sparsity, 'sparsity');
    return call(() => this._live.sparsityToNnz(s));
  }
  /** L2 norm per block, `(*gridShape, numblkPerScope)`, in-scope order row-major. */
  blockNorms(values?: ScopeValues): Float32Array {
    const v = nodeValues(this.block, values, 'values');
    return call(() => this._live.blockNorms(v));
  }
  /** The nnz-th largest block score per scope (scope grid); nnz = 0 gives +Infinity. */
  kthLargest(scores: Floats, nnz: number): Float32Array {
    const s = f32(scores, 'scores');
    const k = num(nnz, 'nnz');
    return call(() => this._live.kthLargest(s, k));
  }
  /** `(kWeight * v_k + v_{k+1}) / (kWeight + 1)` per scope (v_{n+1} = 0); default kWeight 1 = midpoint. */
  kthMid(scores: Floats, nnz: number, kWeight = 1): Float32Array {
    const s = f32(scores, 'scores');
    const k = num(nnz, 'nnz');
    const w = num(kWeight, 'kWeight');
    return call(() => this._live.kthMid(s, k, w));
  }
  /** Prunes the blocks of every scope by nnz, sparsity or per-scope thresholds. */
  hardThreshold(opts: HardThresholdOptions<ScopeValues>): void {
    const o = optsObject(opts, 'hardThreshold options');
    const t = o.thresholds === undefined ? undefined : gridF32(o.thresholds, this.#grid, 'thresholds');
    const v = nodeValues(this.block, o.values, 'values');
    call(() => this._live.hardThreshold(restOptions(o, ['thresholds', 'values']), t, v));
  }
  /** Element keep-masks from nnz/sparsity (by values or blockScores), or from a block keep-mask. */
  getMasks(opts: ScopeMaskOptions): Map<BlockSpec, Uint8Array> {
    const o = optsObject(opts, 'getMasks options');
    const v = nodeValues(this.block, o.values, 'values');
    const scores = o.blockScores === undefined ? undefined : f32(o.blockScores, 'blockScores');
    const mask = o.blockMask === undefined ? undefined : u8(o.blockMask, 'blockMask');
    const masks = call(() => this._live.getMasks(restOptions(o, ['values', 'blockScores', 'blockMask']), v, scores, mask));
    return toMap(blockSpecsOf(this.block), masks as Uint8Array[]);
  }
  /** Per-scope thresholds (× sqrt(numelPerBlock) when `scale`). */
  softThreshold(thresholds: GridInput<Floats>, opts?: SoftThresholdOptions<ScopeValues> & { scale?: boolean }): void {
    const t = gridF32(thresholds, this.#grid, 'thresholds');
    const o = optsObject(opts, 'softThreshold options');
    const c = nodeValues(this.block, o.conditioners, 'conditioners');
    call(() => this._live.softThreshold(t, c, restOptions(o, ['conditioners'])));
  }
}

/** ScopeSpecs whose blocks compete together (top-k across all coupled scopes: global pruning). */
export class ScopeCoupling extends Owned {
  /** @internal */
  declare _raw: RawScopeCoupling;
  readonly scopes: ScopeSpec[];
  readonly name?: string;
  #grid: number[];
  #orders: number[][];

  constructor(scopes: ScopeSpec[], orders?: number[][], name?: string) {
    super();
    if (!Array.isArray(scopes) || !scopes.every((s) => s instanceof ScopeSpec)) {
      throw argError('ScopeCoupling needs an array of ScopeSpec');
    }
    const { raw, name: n } = buildCoupling(scopes, orders, name, 'addScope', (b, o, nm) => b.buildScopeCoupling(o, nm));
    this._raw = raw;
    this.scopes = [...scopes];
    this.name = n;
    this.#grid = this._raw.gridShape() as number[];
    this.#orders = this._raw.orders() as number[][];
  }
  get gridShape(): number[] {
    return [...this.#grid];
  }
  /** The normalised orders (one permutation per scope). */
  get orders(): number[][] {
    return this.#orders.map((o) => [...o]);
  }
  /** Sum over the scopes. */
  numblkPerScope(): number {
    return call(() => this._live.numblkPerScope());
  }
  numelPerScope(): number {
    return call(() => this._live.numelPerScope());
  }
  numScopes(): number {
    return call(() => this._live.numScopes());
  }
  sparsityToNnz(sparsity: number): number {
    const s = num(sparsity, 'sparsity');
    return call(() => this._live.sparsityToNnz(s));
  }
  /**
   * Per-scope values: each entry copied as its scope takes it. Whether there is one entry per
   * scope is checked in wasm; entries past the scopes are passed on unread.
   */
  #values(v: unknown, what: string): unknown {
    if (!Array.isArray(v)) return v;
    return v.map((x, i) => (i < this.scopes.length ? nodeValues(this.scopes[i].block, x, `${what}[${i}]`) : x));
  }
  /** Every scope's block norms, aligned and concatenated in scope order. */
  blockNorms(values?: ScopeValues[]): Float32Array {
    const v = this.#values(values, 'values');
    return call(() => this._live.blockNorms(v));
  }
  /** Prunes the coupled scopes together by nnz, sparsity or thresholds. */
  hardThreshold(opts: HardThresholdOptions<ScopeValues[]> & { onProgress?: ProgressCallback }): void {
    const o = optsObject(opts, 'hardThreshold options');
    const t = o.thresholds === undefined ? undefined : gridF32(o.thresholds, this.#grid, 'thresholds');
    const v = this.#values(o.values, 'values');
    const p = progressFn(o.onProgress);
    call(() => this._live.hardThreshold(restOptions(o, ['thresholds', 'values', 'onProgress']), t, v, p));
  }
  /** Per-scope thresholds applied to every coupled scope (× sqrt(numelPerBlock) when `scale`). */
  softThreshold(thresholds: GridInput<Floats>, opts?: SoftThresholdOptions<ScopeValues[]> & { scale?: boolean; onProgress?: ProgressCallback }): void {
    const t = gridF32(thresholds, this.#grid, 'thresholds');
    const o = optsObject(opts, 'softThreshold options');
    const c = this.#values(o.conditioners, 'conditioners');
    const p = progressFn(o.onProgress);
    call(() => this._live.softThreshold(t, c, restOptions(o, ['conditioners', 'onProgress']), p));
  }
  /** One element keep-mask per BlockSpec, in scope order. */
  getMasks(opts: { nnz?: number; sparsity?: number; values?: ScopeValues[]; onProgress?: ProgressCallback }): Map<BlockSpec, Uint8Array> {
    const o = optsObject(opts, 'getMasks options');
    const v = this.#values(o.values, 'values');
    const p = progressFn(o.onProgress);
    const masks = call(() => this._live.getMasks(restOptions(o, ['values', 'onProgress']), v, p));
    return toMap(this.scopes.flatMap((s) => blockSpecsOf(s.block)), masks as Uint8Array[]);
  }
}
