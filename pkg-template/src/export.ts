// Sparse storage formats of a pruned 2-D weight: CSR, block-CSR, and the 2:4 compressed form.
import { call } from './errors.js';
import { checkKeys, dims, f32, num, optsObject } from './convert.js';
import type { Floats } from './convert.js';
import type { Param } from './param.js';
import { R } from './runtime.js';

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
export function toCsr(values: Floats | Param, shape: number[]): CsrMatrix {
  const v = f32(values, 'values');
  const s = dims(shape, 'shape');
  return call(() => R().toCsr(v, s)) as CsrMatrix;
}

/** Block-CSR arrays with [bh, bw] blocks (a block is stored when any element is non-zero). */
export function toBsr(values: Floats | Param, shape: number[], blockShape: number[]): BsrMatrix {
  const v = f32(values, 'values');
  const s = dims(shape, 'shape');
  const b = dims(blockShape, 'blockShape');
  return call(() => R().toBsr(v, s, b)) as BsrMatrix;
}

/** The 2:4 compressed form (the weight must be 2:4 sparse). */
export function toNm24(values: Floats | Param, shape: number[]): Nm24Matrix {
  const v = f32(values, 'values');
  const s = dims(shape, 'shape');
  return call(() => R().toNm24(v, s)) as Nm24Matrix;
}

/** Decodes toCsr / toBsr / toNm24 output back to a dense Float32Array (every field checked in wasm). */
export function sparseToDense(sparse: CsrMatrix | BsrMatrix | Nm24Matrix): Float32Array {
  return call(() => R().sparseToDense(sparse));
}

/** Bytes as dense / CSR / BSR (`blockShape`) / 2:4 compressed (null when cols % 4 != 0). */
export function sparseBytes(values: Floats | Param, shape: number[], blockShape: number[] = [1, 1]): { dense: number; csr: number; bsr: number; nm24: number | null } {
  const v = f32(values, 'values');
  const s = dims(shape, 'shape');
  const b = dims(blockShape, 'blockShape');
  return call(() => R().sparseBytes(v, s, b)) as { dense: number; csr: number; bsr: number; nm24: number | null };
}

/** Options of searchPermutation. */
export interface PermutationOptions {
  /** Group length (default 4). */
  m?: number;
  /** Kept per group (default 2). */
  n?: number;
  /** Upper bound on improvement sweeps (default 8). */
  maxSweeps?: number;
}

/** ASP-style input-channel permutation that raises the magnitude kept by an m:n mask. */
export function searchPermutation(values: Floats | Param, shape: number[], opts?: PermutationOptions): { perm: Uint32Array; keptBefore: number; keptAfter: number; swaps: number } {
  const o = optsObject(opts, 'searchPermutation options');
  checkKeys(o, ['m', 'n', 'maxSweeps'], 'searchPermutation options');
  const v = f32(values, 'values');
  const s = dims(shape, 'shape');
  const m = num(o.m ?? 4, 'm');
  const n = num(o.n ?? 2, 'n');
  const sweeps = o.maxSweeps === undefined ? undefined : num(o.maxSweeps, 'maxSweeps');
  return call(() => R().searchPermutation(v, s, m, n, sweeps)) as { perm: Uint32Array; keptBefore: number; keptAfter: number; swaps: number };
}
