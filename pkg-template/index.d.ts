// Types of sparsekit-wasm: block-structured and N:M pruning of weights, in place, in wasm.
// Conventions: shapes/strides are number[] (row-major, strides in elements); grid- or
// element-shaped results are flat row-major Float32Array (values) or Uint8Array (masks).
// Masks are KEEP masks: 1 keeps, 0 prunes.

/** Values for a BlockSpec: in the param's storage layout (or view-shaped if the length differs). */
export type Values = Param | Float32Array;
/** A flat array with its shape. */
export interface Shaped<T> {
  data: T;
  shape: number[];
}

/** Stable error codes (`err.code`). */
export type ErrorCode =
  | 'invalid_view'
  | 'view_out_of_bounds'
  | 'block_rank_mismatch'
  | 'invalid_block_shape'
  | 'shape_mismatch'
  | 'invalid_orders'
  | 'incompatible_coupling'
  | 'scope_rank_mismatch'
  | 'invalid_scope_shape'
  | 'invalid_sparsity'
  | 'invalid_nnz'
  | 'invalid_arguments'
  | 'invalid_eps'
  | 'param_not_2d'
  | 'invalid_nm_shape'
  | 'invalid_nm_pattern'
  | 'unsupported_pattern'
  | 'invalid_value'
  | 'aliased_view'
  | 'out_of_memory'
  | 'use_after_free'
  | 'not_initialized'
  | 'internal_error';

/** Base class of every error the library throws. After any error no weight has changed. */
export class SparseKitError extends Error {
  /** Stable machine-readable code. */
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string);
}
/** A length or shape that does not match (`code === 'shape_mismatch'`). */
export class ShapeMismatchError extends SparseKitError {}
/** Coupled grids that do not align (`code === 'incompatible_coupling'`). */
export class CouplingError extends SparseKitError {}

/** Options of init(). */
export interface InitOptions {
  /** `false` forces the single-threaded SIMD build even when cross-origin isolated. */
  threads?: boolean;
  /** Where to load the .wasm from (URL, Response or bytes); default: next to the package. */
  moduleOrPath?: unknown;
}
/** Browser: loads the wasm once (threaded build when `crossOriginIsolated`). Node: no-op. */
export default function init(opts?: InitOptions): Promise<void>;
/**
 * Starts `n` rayon workers in the threaded build (browser, cross-origin isolated pages only).
 * Elsewhere a no-op. Resolves to whether threads are active.
 */
export function initThreadPool(n?: number): Promise<boolean>;
/** True when the threaded build runs with more than one worker. */
export function threads(): boolean;
/** The loaded build: 'simd' (single-threaded SIMD128), 'threads', or 'uninitialized'. */
export function variant(): 'simd' | 'threads' | 'uninitialized';
/** Number of rayon workers (1 without threads). */
export function numThreads(): number;
/** Diagnostic: runs `n` small tasks on the pool and returns how many distinct workers ran them. */
export function probeThreads(n?: number): number;

interface Disposable {
  /** Releases the wasm-side object now (otherwise a FinalizationRegistry does it later). */
  free(): void;
  [Symbol.dispose](): void;
}

/**
 * A weight tensor in wasm memory. Every operation works in place on it. A View/BlockSpec/Scope
 * built on a Param keeps its storage alive even after the Param object is freed.
 */
export class Param implements Disposable {
  private constructor();
  /** Copies `data` (row-major, prod(shape) long) into wasm memory once. */
  static fromArray(data: Float32Array | number[], shape: number[]): Param;
  readonly shape: number[];
  /** Number of elements. */
  readonly size: number;
  /**
   * A live, zero-copy Float32Array onto the weights in wasm memory. Re-derived on each access
   * (wasm memory growth detaches old arrays): re-read it after library calls.
   */
  readonly data: Float32Array;
  /** A copy of the weights. */
  toArray(): Float32Array;
  /** Overwrites the weights with `data` (same length). */
  set(data: Float32Array | number[]): void;
  free(): void;
  [Symbol.dispose](): void;
}

/** A strided window over a Param with write-through (seed: sparsekit.view.View). */
export class View implements Disposable {
  /** Refuses (typed errors) rank mismatches, negative sizes/strides and `cosize > param.size`. */
  constructor(param: Param, shape: number[], stride: number[]);
  /** A Param becomes its contiguous full view; a View is returned as is. */
  static fromExisting(p: Param | View): View;
  readonly param: Param;
  readonly shape: number[];
  readonly stride: number[];
  readonly ndim: number;
  /** Maximum reachable storage offset + 1. */
  readonly cosize: number;
  numel(): number;
  /** A view-shaped, row-major copy of the elements. */
  values(): Float32Array;
  /** `idx`: (k, ndim) flattened view indices -> k storage offsets. */
  linearOffset(idx: Int32Array | number[]): Int32Array;
  /** View indices -> (row, col) in the 2-D param (`param_not_2d` otherwise). */
  toParamRc(idx: Int32Array | number[]): { rows: Int32Array; cols: Int32Array };
  /** Multiplies every block in place by its grid value (`m` grid-shaped). */
  applyMultiplier(m: Float32Array, blockShape: number[]): void;
  /** Zeroes in place the blocks whose keep value is 0. */
  applyMask(keep: Uint8Array, blockShape: number[]): void;
  /** Interleaved (B0,b0,B1,b1..), reordered (B0,B1,..,b0,b1,..) or merged (B0,B1,..,b0*b1*..) view. */
  static blockViewOf(
    t: Float32Array,
    shape: number[],
    blockShape: number[],
    opts?: { reorder?: boolean; merge?: boolean },
  ): Shaped<Float32Array>;
  /** Grid values to element shape (or only to the broadcastable (B0,1,B1,1,..) when `fake`). */
  static broadcastBlockToElement(
    blockValues: Float32Array,
    gridShape: number[],
    blockShape: number[],
    fake?: boolean,
  ): Shaped<Float32Array>;
  free(): void;
  [Symbol.dispose](): void;
}

/** Options of the soft threshold. */
export interface SoftThresholdOptions<C> {
  /** Diagonal conditioner (e.g. Adam's sqrt(v)+eps), strictly positive: the Adam-conditioned prox. */
  conditioners?: C;
  /** Bisection iterations (default 20). */
  maxIter?: number;
  /** Stop when every block's bracket is narrower than this (default 1e-8). */
  atol?: number;
  /** Numerical guard (default float32 eps); must be >= 0. */
  eps?: number;
}

/** A view (or param) seen as a grid of equal blocks (seed: BlockSpec). */
export class BlockSpec implements Disposable {
  /** `blockShape` may hold -1 (whole dimension) or be [] (every element its own block). */
  constructor(view: View | Param, blockShape: number[], name?: string);
  readonly view: View;
  readonly name?: string;
  /** The normalised block shape. */
  readonly shape: number[];
  readonly gridShape: number[];
  readonly gridNdim: number;
  numblk(): number;
  numel(): number;
  numelPerBlock(): number;
  /** Elements of the view with |x| > eps (default 1e-8). */
  nnz(eps?: number): number;
  /** Lp norm per block (p = 1, 2 or Infinity; default 2) of the weights or `values`. */
  norms(p?: number, values?: Values): Float32Array;
  min(values?: Values): Float32Array;
  max(values?: Values): Float32Array;
  applyMask(keep: Uint8Array): void;
  applyMultiplier(m: Float32Array): void;
  /** Group-lasso prox: Euclidean, or Adam-conditioned (bisection) with `conditioners`. */
  softThreshold(thresholds: Float32Array, opts?: SoftThresholdOptions<Values>): void;
  /** Zeroes blocks whose L2 norm (of `values`) is < threshold; equal is kept. */
  hardThreshold(thresholds: Float32Array, values?: Values): void;
  /** Element keep-mask (view-shaped) of a block keep-mask. */
  getMasks(keepBlocks: Uint8Array): Map<BlockSpec, Uint8Array>;
  blockView(values?: Values, opts?: { reorder?: boolean; merge?: boolean }): Shaped<Float32Array>;
  free(): void;
  [Symbol.dispose](): void;
}

/** BlockSpecs whose grids, permuted by `orders`, coincide; aligned blocks are pruned together. */
export class BlockCoupling implements Disposable {
  /** Grid = specs[0]'s grid permuted by orders[0]; orders default to the identity. */
  constructor(specs: BlockSpec[], orders?: number[][], name?: string);
  readonly specs: BlockSpec[];
  readonly name?: string;
  readonly orders: number[][];
  readonly gridShape: number[];
  readonly gridNdim: number;
  numblk(): number;
  numel(): number;
  /** Sum over the specs. */
  numelPerBlock(): number;
  nnz(eps?: number): number;
  norms(p?: number, values?: Values[]): Float32Array;
  min(values?: Values[]): Float32Array;
  max(values?: Values[]): Float32Array;
  applyMask(keep: Uint8Array): void;
  applyMultiplier(m: Float32Array): void;
  softThreshold(thresholds: Float32Array, opts?: SoftThresholdOptions<Values[]>): void;
  hardThreshold(thresholds: Float32Array, values?: Values[]): void;
  getMasks(keepBlocks: Uint8Array): Map<BlockSpec, Uint8Array>;
  /** `(*gridShape, numelPerBlock)`: each spec's merged blocks, concatenated in spec order. */
  blockView(values?: Values[]): Shaped<Float32Array>;
  free(): void;
  [Symbol.dispose](): void;
}

/** Values of a scope: one per spec of its block (a Values, or Values[] for a coupling). */
export type ScopeValues = Values | Values[];

/** Exactly one of nnz, sparsity, thresholds. */
export interface HardThresholdOptions<V> {
  /** Blocks kept per scope (exactly that many; ties to the lower in-scope index). */
  nnz?: number;
  /** Fraction pruned per scope in [0, 1]: nnz = floor((1 - s) * numblkPerScope + 0.5). */
  sparsity?: number;
  /** Per-scope thresholds (scope grid): prune blocks whose norm < threshold. */
  thresholds?: Float32Array;
  /** What the norms are computed from (default the weights). */
  values?: V;
}

/** Groups of blocks that compete: keep the top k of every scope (seed: ScopeSpec). */
export class ScopeSpec implements Disposable {
  /** `scopeShape` counts blocks per scope; -1 spans a dimension; [] = one scope for the grid. */
  constructor(block: BlockSpec | BlockCoupling, scopeShape: number[], name?: string);
  readonly block: BlockSpec | BlockCoupling;
  readonly name?: string;
  /** Scopes per dimension. */
  readonly gridShape: number[];
  /** Blocks per scope in each dimension. */
  readonly shape: number[];
  readonly blockGridShape: number[];
  numblkPerScope(): number;
  numelPerScope(): number;
  numScopes(): number;
  /** floor((1 - s) * numblkPerScope + 0.5); s in [0, 1]. */
  sparsityToNnz(sparsity: number): number;
  /** L2 norm per block, `(*gridShape, numblkPerScope)`, in-scope order row-major. */
  blockNorms(values?: ScopeValues): Float32Array;
  /** The nnz-th largest block score per scope (scope grid); nnz = 0 gives +Infinity. */
  kthLargest(scores: Float32Array, nnz: number): Float32Array;
  /** `(kWeight * v_k + v_{k+1}) / (kWeight + 1)` per scope (v_{n+1} = 0); default kWeight 1 = midpoint. */
  kthMid(scores: Float32Array, nnz: number, kWeight?: number): Float32Array;
  hardThreshold(opts: HardThresholdOptions<ScopeValues>): void;
  /** Element keep-masks from nnz/sparsity (by values or blockScores), or from a block keep-mask. */
  getMasks(opts: {
    nnz?: number;
    sparsity?: number;
    values?: ScopeValues;
    blockScores?: Float32Array;
    blockMask?: Uint8Array;
  }): Map<BlockSpec, Uint8Array>;
  /** Per-scope thresholds (× sqrt(numelPerBlock) when `scale`). */
  softThreshold(thresholds: Float32Array, opts?: SoftThresholdOptions<ScopeValues> & { scale?: boolean }): void;
  free(): void;
  [Symbol.dispose](): void;
}

/** Progress of a multi-param operation. */
export type ProgressCallback = (done: number, total: number) => void;

/** ScopeSpecs whose blocks compete together (top-k across all coupled scopes: global pruning). */
export class ScopeCoupling implements Disposable {
  constructor(scopes: ScopeSpec[], orders?: number[][], name?: string);
  readonly scopes: ScopeSpec[];
  readonly name?: string;
  readonly orders: number[][];
  readonly gridShape: number[];
  /** Sum over the scopes. */
  numblkPerScope(): number;
  numelPerScope(): number;
  numScopes(): number;
  sparsityToNnz(sparsity: number): number;
  /** Every scope's block norms, aligned and concatenated in scope order. */
  blockNorms(values?: ScopeValues[]): Float32Array;
  hardThreshold(opts: HardThresholdOptions<ScopeValues[]> & { onProgress?: ProgressCallback }): void;
  softThreshold(
    thresholds: Float32Array,
    opts?: SoftThresholdOptions<ScopeValues[]> & { scale?: boolean; onProgress?: ProgressCallback },
  ): void;
  /** One element keep-mask per BlockSpec, in scope order. */
  getMasks(opts: { nnz?: number; sparsity?: number; values?: ScopeValues[]; onProgress?: ProgressCallback }): Map<BlockSpec, Uint8Array>;
  free(): void;
  [Symbol.dispose](): void;
}

/** 'm4n2_1d' -> {valid: true, m: 4, n: 2}; anything else -> {valid: false, m: 0, n: 0}. */
export function getNmpruneInfo(pattern: string): { valid: boolean; m: number; n: number };
/** All C(m, n) patterns (rows of m), in itertools.combinations order. */
export function computeValid1dPatterns(m: number, n: number): Uint8Array;
/** Keep-mask keeping the n largest |x| of every m consecutive elements of each row. */
export function mn1dBest(values: Float32Array, shape: number[], m: number, n: number): Uint8Array;
export function m4n2_1d(values: Float32Array, shape: number[]): Uint8Array;
/** ASP pattern name: 'm{M}n{N}_1d', 'm4n2_2d_greedy' or 'm4n2_2d_best'. */
export type AspPattern = string;
/**
 * Keep-mask in the tensor's layout; 1-D/2-D/3-D (K,C,R)/4-D (K,C,R,S) tensors, groups along
 * the input channels C as NVIDIA ASP does. Shape defaults to the Param's.
 */
export function createAspMask(values: Float32Array | Param, shape?: number[], pattern?: AspPattern): Uint8Array;
/** Fraction of non-zeros. */
export function fill(values: Float32Array): number;
/** Groups of m ([rows*ceil(cols/m), m]) with rows right-padded with zeros. */
export function reshape1d(
  values: Float32Array,
  shape: number[],
  m: number,
): { data: Float32Array; shape: number[]; paddedShape: number[] };

/** N:M masks for a set of params; conv weights (O, I, kh, kw) grouped along input channels. */
export class MagnitudeSearcher implements Disposable {
  constructor(pattern?: AspPattern);
  readonly pattern: string;
  /** Keep-masks (param layout) without changing the params. */
  computeMasks(params: Param[], opts?: { onProgress?: ProgressCallback }): Map<Param, Uint8Array>;
  /** Computes every mask first, then applies them in place. */
  apply(params: Param[], opts?: { onProgress?: ProgressCallback }): Map<Param, Uint8Array>;
  free(): void;
  [Symbol.dispose](): void;
}

export interface CsrMatrix {
  indptr: Uint32Array;
  indices: Uint32Array;
  values: Float32Array;
  shape: number[];
  bytes: number;
}
export interface BsrMatrix extends CsrMatrix {
  blockShape: number[];
}
export interface Nm24Matrix {
  /** cols/2 kept values per row. */
  values: Float32Array;
  /** Per group of 4, the two kept positions (2 bits each), two groups per byte, low nibble first. */
  meta: Uint8Array;
  shape: number[];
  bytes: number;
}
/** CSR arrays of a pruned 2-D weight. */
export function toCsr(values: Float32Array, shape: number[]): CsrMatrix;
/** Block-CSR arrays with [bh, bw] blocks (a block is stored when any element is non-zero). */
export function toBsr(values: Float32Array, shape: number[], blockShape: number[]): BsrMatrix;
/** The 2:4 compressed form (the weight must be 2:4 sparse). */
export function toNm24(values: Float32Array, shape: number[]): Nm24Matrix;
/** Decodes toCsr / toBsr / toNm24 output back to a dense Float32Array. */
export function sparseToDense(sparse: CsrMatrix | BsrMatrix | Nm24Matrix): Float32Array;
/** Bytes as dense / CSR / BSR / 2:4 compressed (null when cols % 4 != 0). */
export function sparseBytes(
  values: Float32Array,
  shape: number[],
  blockShape?: number[],
): { dense: number; csr: number; bsr: number; nm24: number | null };
/** ASP-style input-channel permutation that raises the magnitude kept by an m:n mask. */
export function searchPermutation(
  values: Float32Array,
  shape: number[],
  opts?: { m?: number; n?: number; maxSweeps?: number },
): { perm: Uint32Array; keptBefore: number; keptAfter: number; swaps: number };

// ------------------------------------------------------------------ calibration-aware pruning
// A linear map y = W x with W as a 2-D view: rows = outputs, cols = inputs. A PyTorch Linear /
// ONNX Gemm(transB=1) / Conv [O, C*kh*kw] weight is that as stored; an ONNX MatMul weight (K, N)
// is its transposed View: shape [N, K], stride [1, N] (no copy).

/** ONNX Conv attributes (group 1) for {@link Hessian.addConv}. */
export interface ConvGeometry {
  /** [kh, kw]. */
  kernelShape: [number, number];
  /** [sh, sw], default [1, 1]. */
  strides?: [number, number];
  /** [top, left, bottom, right], default [0, 0, 0, 0]. */
  pads?: [number, number, number, number];
  /** [dh, dw], default [1, 1]. */
  dilations?: [number, number];
}

/**
 * Input statistics of one linear map with `cols` inputs: `count` vectors and the mean of x xᵀ
 * (accumulated in f32 chunks of 64 vectors folded into f64: error below 4e-6·sqrt(H_aa H_bb)).
 * A refused call (wrong length, non-finite input, bad conv attributes) changes nothing.
 */
export class Hessian {
  constructor(cols: number);
  readonly cols: number;
  /** Input vectors added so far. */
  readonly count: number;
  /** Adds n input vectors, row-major n x cols. */
  addRows(x: Float32Array, n: number): void;
  /**
   * Adds one vector per output position of every image of a Conv input x of shape
   * inputShape = [N, C, H, W], in the weight's (c, i, j) order (zero padding included);
   * C*kh*kw must equal cols.
   */
  addConv(x: Float32Array, inputShape: [number, number, number, number], conv: ConvGeometry): void;
  /** Mean of x xᵀ, cols x cols row-major (all zeros while count is 0). */
  matrix(): Float32Array;
  /** sqrt(diag(matrix())): the RMS of each input. */
  inputNorms(): Float32Array;
  free(): void;
  [Symbol.dispose](): void;
}

/**
 * Wanda scores |W_ij| * inputNorms_j, view-shaped (rows x cols). Wanda's mask: per-row top-k,
 * i.e. ScopeSpec(BlockSpec(w, [1, 1]), [1, -1]) with these scores (param layout) as values, or
 * createAspMask(scores, [rows, cols], 'm{M}n{N}_1d') for N:M.
 */
export function wandaScores(w: Param | View, h: Hessian): Float32Array;

/** Options of {@link sparseGpt}: exactly one of sparsity / nm / keep. */
export interface SparseGptOptions {
  /** Fraction pruned in every block of columns (rows may keep different counts). */
  sparsity?: number;
  /** [n, m]: keep n of every m consecutive inputs in each row (cols and blockSize multiples of m). */
  nm?: [number, number];
  /** A given keep-mask (view-shaped, 1 keeps): only the reconstruction runs. */
  keep?: Uint8Array;
  /** Columns per lazy block, default 128. */
  blockSize?: number;
  /** Damping as a fraction of mean(diag H), default 0.01; raise it on `singular_hessian`. */
  percDamp?: number;
}

/**
 * SparseGPT (optimal-brain-surgeon pruning with lazy block updates, API.md) in place on the 2-D
 * view `w`: the pruned weights become 0 and the kept ones compensate. Returns the keep-mask
 * (view-shaped). `h` is not changed; a refused call changes no weight.
 */
export function sparseGpt(w: Param | View, h: Hessian, opts: SparseGptOptions): Uint8Array;

/**
 * Relative reconstruction error sqrt(tr((W-Ŵ) H (W-Ŵ)ᵀ) / tr(W H Wᵀ)) of a pruning, from the
 * view's values before (W) and after (Ŵ) it (view.values()), with the undamped h.matrix().
 */
export function relReconError(before: Float32Array, after: Float32Array, h: Hessian): number;
