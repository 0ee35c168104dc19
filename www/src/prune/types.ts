// The data of the page's pruning run: what the page sends to the pruning worker per layer and what
// it gets back (masks, norms, statistics), shared by prune-core, the worker and the result views.
import type { LayerConfig } from 'sparsekit-wasm';

export type Sk = typeof import('sparsekit-wasm');
export type { LayerConfig };

/** One weight to prune: its storage dims, the (O, rest) or (K, N) data, and its settings. */
export interface LayerInput {
  id: number;
  name: string;
  dims: number[];
  /** 0 for MatMul / Gemm(transB=0) weights (K, N), whose reduction axis is the first. */
  reduceAxis?: number;
  data: Float32Array;
  cfg: LayerConfig;
}

/** The model-wide scope: every 'hard' layer coupled, `sparsity` of their blocks pruned together. */
export interface GlobalOption { enabled: boolean; sparsity?: number }

/** How a weight is viewed and blocked (planLayer). */
export interface LayerPlan {
  rows: number;
  cols: number;
  block: [number, number];
  grid: [number, number];
  scope: number[];
  notes: string[];
}

/** Byte sizes of the sparse forms of the (rows, cols) view; nm24 only where the 2:4 pattern holds. */
export interface SparseSizes { dense: number; csr: number; bsr: number; bsrBlock: [number, number]; nm24: number | null }

/** The outcome of one layer, as the page shows and exports it. */
export interface LayerResult extends LayerPlan {
  id: number;
  name: string;
  dims: number[];
  criterion: LayerConfig['criterion'];
  reduceAxis?: number;
  sparsityTarget: number;
  thresholds: number[];
  /** 'block 4x4', '2:4', 'dense', … */
  pattern: string;
  n?: number;
  m?: number;
  global?: boolean;
  /** The pruned values (storage layout). */
  data: Float32Array;
  /** One keep flag per block of the grid (per element for N:M). */
  blockKeep: Uint8Array;
  blockNorms: Float32Array;
  normKind: 'L2' | '|w|';
  numel: number;
  nnz: number;
  sparsity: number;
  blocksKept: number;
  blocksTotal: number;
  nm24Valid: boolean;
  bytes: SparseSizes;
}

/** A result while it is being filled in (pruneLayers): the outcome fields arrive per criterion. */
export type Draft = LayerPlan & Pick<LayerResult, 'id' | 'name' | 'dims' | 'criterion' | 'reduceAxis' | 'sparsityTarget' | 'thresholds'>
  & Partial<Pick<LayerResult, 'pattern' | 'n' | 'm' | 'global' | 'data' | 'blockKeep' | 'blockNorms' | 'normKind'>>;

/** Progress of a run: layers done (fractional inside the global coupling), total, current label. */
export interface PruneProgress { done: number; total: number; label: string }
