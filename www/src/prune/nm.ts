// N:M pruning of one weight with the package's createAspMask, grouped along the reduction axis as
// NVIDIA ASP groups it (a layer whose axis is not a multiple of m stays dense, as pruneNm leaves it);
// the view transposition is the ONNX module's transpose().
import { transpose } from 'sparsekit-wasm/onnx';
import type { Sk } from './types.js';

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
  // The library's policy (pruneNm, NVIDIA ASP's default): a reduction axis that is not a multiple of
  // m stays dense, said in the notes; the page prunes exactly what the CLI and the module prune.
  if (len % m) {
    notes.push(`dense: the reduction axis holds ${len} ${shape.length >= 3 ? 'input channels' : 'elements'}, not a multiple of ${m}`);
    return new Uint8Array(data.length).fill(1);
  }
  const mask = sk.createAspMask(values, shape, pattern);
  return transposed ? transpose(mask, shape[0], shape[1]) : mask;
}
