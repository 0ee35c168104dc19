// How the page views and blocks a weight, and the JS checks the page and its tests share.
import { fitBlock, DEFAULT_CONFIG } from 'sparsekit-wasm';
import type { LayerConfig, LayerPlan } from './types.js';

/**
 * The 2-D view (rows, cols) is (O, rest) of the stored dims; the block falls back as the package's
 * fitBlock() does (a dim that does not divide: gcd), the scope to the whole grid where it does not
 * divide the block grid. Both fallbacks are noted.
 */
export function planLayer(dims: readonly number[], cfg: Partial<Pick<LayerConfig, 'block' | 'scope'>>): LayerPlan {
  const rows = dims[0];
  const cols = dims.slice(1).reduce((a, b) => a * b, 1);
  const notes: string[] = [];
  const fitted = fitBlock(rows, cols, cfg.block ?? DEFAULT_CONFIG.block);
  if (fitted.note) notes.push(fitted.note);
  const block = fitted.block;
  const grid: [number, number] = [rows / block[0], cols / block[1]];
  const wantScope = cfg.scope ?? DEFAULT_CONFIG.scope;
  const scope = wantScope.map((s, i) => (s === -1 || (s > 0 && grid[i] % s === 0) ? s : -1));
  if (scope.some((s, i) => s !== wantScope[i])) {
    notes.push(`scope ${wantScope.join('x')} blocks does not divide the ${grid[0]}x${grid[1]} block grid: using ${scope.map((s) => (s === -1 ? 'all' : s)).join('x')}`);
  }
  return { rows, cols, block, grid, scope, notes };
}

/** Block L2 norms of a (rows, cols) matrix: a (rows/bh, cols/bw) grid, computed in JS (for display). */
export function blockNormsJs(data: ArrayLike<number>, rows: number, cols: number, bh: number, bw: number): Float32Array {
  const gc = cols / bw;
  const out = new Float32Array((rows / bh) * gc);
  for (let i = 0; i < rows; i++) {
    const bi = ((i / bh) | 0) * gc;
    for (let j = 0; j < cols; j++) { const v = data[i * cols + j]; out[bi + ((j / bw) | 0)] += v * v; }
  }
  for (let k = 0; k < out.length; k++) out[k] = Math.sqrt(out[k]);
  return out;
}

/** Block keep-mask (grid) from an element keep-mask (rows, cols): a block is kept iff its first element is. */
export function blockKeepFromElements(mask: ArrayLike<number>, rows: number, cols: number, bh: number, bw: number): Uint8Array {
  const gr = rows / bh, gc = cols / bw;
  const out = new Uint8Array(gr * gc);
  for (let i = 0; i < gr; i++) for (let j = 0; j < gc; j++) out[i * gc + j] = mask[i * bh * cols + j * bw] ? 1 : 0;
  return out;
}

/**
 * Checks an N:M pattern: along `axis` of `dims` (ASP grouping: axis 1 of 2-D/3-D/4-D weights,
 * axis 0 for MatMul-style (K, N) weights) every group of m consecutive elements (the last one padded)
 * holds at most n non-zeros. Returns the number of violating groups.
 */
export function nmViolations(data: ArrayLike<number>, dims: readonly number[], axis: number, n: number, m: number): number {
  const len = dims[axis];
  const inner = dims.slice(axis + 1).reduce((a, b) => a * b, 1);
  const outer = dims.slice(0, axis).reduce((a, b) => a * b, 1);
  let bad = 0;
  for (let o = 0; o < outer; o++) {
    for (let r = 0; r < inner; r++) {
      for (let g = 0; g < len; g += m) {
        let nz = 0;
        for (let k = g; k < Math.min(g + m, len); k++) if (data[(o * len + k) * inner + r] !== 0) nz++;
        if (nz > n) bad++;
      }
    }
  }
  return bad;
}

export function countNonZero(a: ArrayLike<number>): number {
  let z = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== 0) z++;
  return z;
}
