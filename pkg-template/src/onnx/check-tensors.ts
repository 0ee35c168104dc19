// Load-time checks of every tensor a model declares (initializers, Constant values, attribute
// tensors, sparse initializers, in every graph): dims are non-negative safe integers whose product
// is a safe integer, and the data really present (raw_data, a typed field, external data) holds
// exactly that many elements. After these checks a tensor's declared size is backed by bytes, so
// later stages may allocate or loop over it.
import { OnnxError } from './errors.js';
import { EMPTY_TENSOR_DIM_PRODUCT } from './limits.js';
import { checkExternalRange, externalRefOf, type ExternalSource } from './external.js';
import { dtypeName, storedByteSize, toNum, typedFieldOf, MAX_DATA_TYPE, type TensorProto } from './tensor-data.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const fmtDims = (t: TensorProto): string => {
  const d = (t.dims ?? []) as unknown[];
  const shown = d.slice(0, 8).map((x) => String(toNum(x)));
  return `[${shown.join(', ')}${d.length > 8 ? `, … (${d.length} dims)` : ''}]`;
};

/**
 * Checks a dims list (of a tensor or a sparse tensor) and returns its element count. `what` names
 * the tensor in messages.
 */
export function checkDims(dims: unknown[], what: string): number {
  let numel = 1;
  let nonZero = 1;
  for (let i = 0; i < dims.length; i++) {
    const d = toNum(dims[i]);
    if (!Number.isSafeInteger(d) || d < 0) {
      throw new OnnxError('bad_dims', `${what} declares dimension ${i} as ${d}: a dimension is a non-negative integer below 2^53`);
    }
    if (d === 0) { numel = 0; continue; }
    nonZero *= d;
    if (nonZero > Number.MAX_SAFE_INTEGER) {
      throw new OnnxError('bad_dims', `${what} declares more than 2^53 elements (dimensions ${dims.slice(0, 8).map(toNum).join(' x ')}${dims.length > 8 ? ' x …' : ''})`);
    }
    if (numel) numel = nonZero;
  }
  if (numel === 0 && nonZero > EMPTY_TENSOR_DIM_PRODUCT) {
    throw new OnnxError('bad_dims', `${what} has no elements but declares other dimensions of ${nonZero} elements in all (at most ${EMPTY_TENSOR_DIM_PRODUCT} in an empty tensor)`);
  }
  return numel;
}

/** Checks one tensor: its data type, dims, and the length of its data in whatever form it is stored. */
export function checkTensor(t: TensorProto, where: string, external: ExternalSource): void {
  const what = `tensor "${t.name ?? ''}" (${where})`;
  const dt = t.data_type;
  if (!Number.isInteger(dt) || dt < 1 || dt > MAX_DATA_TYPE) {
    throw new OnnxError('bad_dtype', `${what} has data type ${dt}, which ONNX does not define`);
  }
  const numel = checkDims(t.dims ?? [], what);
  const size = storedByteSize(dt, numel);
  if (t.data_location === 1) {
    const ref = externalRefOf(t);
    if (size < 0) throw new OnnxError('unsupported', `${what} of ${dtypeName(dt)} is stored as external data, which this reader does not handle`);
    checkExternalRange(t, ref, size, external);
    return;
  }
  if (t.data_location !== undefined && t.data_location !== null && t.data_location !== 0) {
    throw new OnnxError('bad_external', `${what} has data location ${t.data_location} (0 inline, 1 external)`);
  }
  const raw = t.raw_data as Uint8Array | undefined;
  if (raw && raw.length) {
    if (size < 0) throw new OnnxError('size_mismatch', `${what} of ${dtypeName(dt)} cannot be stored as raw_data`);
    if (raw.length !== size) {
      throw new OnnxError('size_mismatch', `${what} ${fmtDims(t)} of ${dtypeName(dt)} should hold ${size} bytes but has ${raw.length}`);
    }
    return;
  }
  const typed = typedFieldOf(t);
  const have = typed ? typed.values.length : 0;
  const want = numel * (typed?.perElement ?? 1);
  if (have !== want) {
    throw new OnnxError('size_mismatch', have
      ? `${what} ${fmtDims(t)} of ${dtypeName(dt)} has ${have} values in ${typed!.field} for ${want}`
      : `${what} ${fmtDims(t)} of ${dtypeName(dt)} declares ${numel} elements but holds no data`);
  }
}

/** Checks a sparse tensor: its dense dims, and its values / indices tensors. */
export function checkSparseTensor(s: any, where: string, external: ExternalSource): void {
  checkDims(s.dims ?? [], `sparse tensor (${where})`);
  if (s.values) checkTensor(s.values, `values of a sparse tensor, ${where}`, external);
  if (s.indices) checkTensor(s.indices, `indices of a sparse tensor, ${where}`, external);
}
