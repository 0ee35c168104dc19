// One prunable weight of a job's result as the weights view draws and exports it (results.ts,
// render/heatmap, render/charts, export.ts): its mask on the grid it was pruned on, its norms, its
// counts and sparse-form sizes. Read off the model the job wrote (workers/job-layers.ts).

/** Byte sizes of the sparse forms of the (rows, cols) view; nm24 only where the 2:4 pattern holds. */
export interface SparseSizes { dense: number; csr: number; bsr: number; bsrBlock: [number, number]; nm24: number | null }

export interface LayerResult {
  /** The row of the layer table (the page's index of the prunable weight). */
  id: number;
  name: string;
  dims: number[];
  /** What the job's setting for this layer was: blocks at a sparsity ('hard'), N:M, or dense ('none'). */
  criterion: 'hard' | 'nm' | 'none';
  reduceAxis?: number;
  /** The storage order seen as (dims[0], rest): the grid below cuts it. */
  rows: number;
  cols: number;
  /** The block the layer was pruned in, in that storage view (1x1 for elements). */
  block: [number, number];
  grid: [number, number];
  /** Where blocks competed: 'layer', 'row' or 'global' (ranked with the other layers of its setting). */
  scope: 'layer' | 'row' | 'global';
  global: boolean;
  sparsityTarget: number;
  /** 'block 4x4', '2:4', 'unstructured', 'dense'. */
  pattern: string;
  n?: number;
  m?: number;
  /** Why the package left the layer dense or pruned it differently than asked (the job report's note). */
  notes: string[];
  /** The weights as written (storage layout). */
  data: Float32Array;
  /** One keep flag per cell of the grid: a block is kept when any of its weights is non-zero. */
  blockKeep: Uint8Array;
  /** Per cell: the L2 norm of the block as written (|w| for 1x1 cells). */
  blockNorms: Float32Array;
  normKind: 'L2' | '|w|';
  /** Where the job's threshold fell, when one is known (none: the package does not report it). */
  thresholds: number[];
  numel: number;
  nnz: number;
  sparsity: number;
  blocksKept: number;
  blocksTotal: number;
  nm24Valid: boolean;
  bytes: SparseSizes;
}
