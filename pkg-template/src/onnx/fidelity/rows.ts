// Shape helpers shared by the metrics: dims without trailing singleton axes, and whether the rows
// along one axis are probability distributions (a softmax was applied) or free scores (logits).

/** Dims with trailing 1s dropped down to rank 2: (N, C, 1, 1) reads as (N, C). */
export function squeezeTrailing(dims: readonly number[]): number[] {
  const d = [...dims];
  while (d.length > 2 && d[d.length - 1] === 1) d.pop();
  return d;
}

/** Visits at most `limit` rows along `axis` of a C-order tensor: calls fn(offset, stride, length). */
export function forRows(dims: readonly number[], axis: number, fn: (offset: number, stride: number, length: number) => void, limit = Infinity): void {
  const len = dims[axis];
  const inner = dims.slice(axis + 1).reduce((a, b) => a * b, 1);
  const outer = dims.slice(0, axis).reduce((a, b) => a * b, 1);
  const rows = outer * inner;
  const step = rows > limit ? rows / limit : 1;
  for (let r = 0; r < rows; r += step) {
    const k = Math.floor(r);
    const o = Math.floor(k / inner), i = k % inner;
    fn(o * len * inner + i, inner, len);
  }
}

/** Whether every value is in [0, 1] (to 1e-4). */
export function inUnit(v: Float32Array): boolean {
  for (let i = 0; i < v.length; i++) if (!(v[i] >= -1e-4 && v[i] <= 1 + 1e-4)) return false;
  return true;
}

/** Whether the rows along `axis` are distributions: values in [0, 1], each row summing to 1 (to 1e-2). Checks up to 4096 rows. */
export function isProbRows(v: Float32Array, dims: readonly number[], axis: number): boolean {
  if (dims[axis] < 2 || !inUnit(v)) return false;
  let ok = true;
  forRows(dims, axis, (off, stride, len) => {
    let s = 0;
    for (let j = 0; j < len; j++) s += v[off + j * stride];
    if (Math.abs(s - 1) > 1e-2) ok = false;
  }, 4096);
  return ok;
}

/** Softmax of one row into `dst` (numerically stable). */
export function softmaxRow(v: Float32Array, off: number, stride: number, len: number, dst: Float64Array): void {
  let m = -Infinity;
  for (let j = 0; j < len; j++) m = Math.max(m, v[off + j * stride]);
  let s = 0;
  for (let j = 0; j < len; j++) { dst[j] = Math.exp(v[off + j * stride] - m); s += dst[j]; }
  for (let j = 0; j < len; j++) dst[j] /= s;
}

/** Index of the largest value of a row (the first on ties; NaN never wins). */
export function argmaxRow(v: ArrayLike<number>, off: number, stride: number, len: number): number {
  let best = 0, bv = -Infinity;
  for (let j = 0; j < len; j++) { const x = v[off + j * stride]; if (x > bv) { bv = x; best = j; } }
  return best;
}
