// N:M pruning of one weight with the package's createAspMask, grouped along the reduction axis as
// NVIDIA ASP groups it; the view transposition is the ONNX module's transpose().
import { transpose } from 'sparsekit-wasm/onnx';
import type { Sk } from './types.js';

/** Zero-pads (or crops) `axis` of a row-major tensor to length `to`, as ASP pads its groups: [data, shape]. */
function padAxis<T extends Float32Array | Uint8Array>(data: T, dims: readonly number[], axis: number, to: number): [T, number[]] {
  const len = dims[axis];
  const inner = dims.slice(axis + 1).reduce((a, b) => a * b, 1);
  const outer = dims.slice(0, axis).reduce((a, b) => a * b, 1);
  const shape = dims.slice();
  shape[axis] = to;
  const out = new (data.constructor as new (n: number) => T)(outer * to * inner);
  const n = Math.min(len, to) * inner;
  for (let o = 0; o < outer; o++) out.set(data.subarray(o * len * inner, o * len * inner + n), o * to * inner);
  return [out, shape];
}

/** The element keep-mask (storage layout) of n:m along the reduction axis; `notes` gets what was adapted. */
export function nmMask(sk: Sk, data: Float32Array, dims: readonly number[], reduceAxis: number | undefined, n: number, m: number, notes: string[]): Uint8Array {
  const pattern = `m${m}n${n}_1d`;
  let values = data, shape = dims.slice(), transposed = false;
  if (reduceAxis === 0 && dims.length === 2) {
    values = transpose(data, dims[0], dims[1]);
    shape = [dims[1], dims[0]];
    transposed = true;
  } else if (dims.length > 4) {
    shape = [dims[0], data.length / dims[0]];
    notes.push(`rank ${dims.length}: N:M groups run along the flattened (O, rest) view`);
  }
  const axis = shape.length === 1 ? 0 : 1;           // ASP: groups along C (or the columns)
  const len = shape[axis];
  if (shape.length >= 3 && len <= n) notes.push(`only ${len} input channel(s): ${n}:${m} along C prunes nothing`);
  let mask: Uint8Array;
  if (len % m) {
    const padded = Math.ceil(len / m) * m;
    const [pv, ps] = padAxis(values, shape, axis, padded);
    [mask] = padAxis(sk.createAspMask(pv, ps, pattern), ps, axis, len);
    if (len > n) notes.push(`${len} ${shape.length >= 3 ? 'channels' : 'columns'} padded with zeros to ${padded} for ${n}:${m} groups (as ASP does)`);
  } else {
    mask = sk.createAspMask(values, shape, pattern);
  }
  return transposed ? transpose(mask, shape[0], shape[1]) : mask;
}
