// TensorProto data types and the conversions between a tensor's stored form (raw_data, or one of
// the typed repeated fields) and its little-endian bytes. Shared by the reader, the load-time checks
// and the writer; nothing here allocates before its caller checked the sizes (see check-tensors.ts).
import { OnnxError } from './errors.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
/** A decoded onnx.TensorProto (protobufjs message; fields as in the schema). */
export type TensorProto = any;
/** A decoded onnx.NodeProto. */
export type NodeProto = any;
/** A decoded onnx.GraphProto. */
export type GraphProto = any;

/** ONNX TensorProto data types used here. */
export const DT = { FLOAT: 1, UINT8: 2, INT8: 3, INT32: 6, INT64: 7, BOOL: 9, FLOAT16: 10, DOUBLE: 11, BFLOAT16: 16 } as const;
const DT_NAMES: Record<number, string> = {
  1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64', 8: 'string',
  9: 'bool', 10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64', 14: 'complex64', 15: 'complex128',
  16: 'bfloat16', 17: 'float8e4m3fn', 18: 'float8e4m3fnuz', 19: 'float8e5m2', 20: 'float8e5m2fnuz',
  21: 'uint4', 22: 'int4', 23: 'float4e2m1',
};
/** Bytes per element of the types this module reads and writes. */
export const ELEM_SIZE: Record<number, number> = { 1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 16: 2 };
export const FLOAT_TYPES = new Set<number>([DT.FLOAT, DT.FLOAT16, DT.BFLOAT16]);
/** The highest data type of the schema (FLOAT4E2M1); above it a file is from the future or corrupt. */
export const MAX_DATA_TYPE = 23;

export const toNum = (x: any): number =>
  typeof x === 'number' ? x : x == null ? 0 : typeof x.toNumber === 'function' ? x.toNumber() : Number(x);
export const dtypeName = (t: number): string => DT_NAMES[t] ?? `type ${t}`;
/** Product of dims that were checked at load (each a safe integer, the product too). */
export const prod = (d: number[]): number => d.reduce((a, b) => a * b, 1);
export const basename = (p: string): string => String(p).split(/[\\/]/).pop() ?? '';

export function u8(buf: Uint8Array | ArrayBuffer | ArrayBufferView): Uint8Array {
  if (buf instanceof Uint8Array) return buf;
  if (buf instanceof ArrayBuffer) return new Uint8Array(buf);
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

/**
 * Bytes a tensor of `numel` elements of type `dt` occupies in raw_data / external data, or -1 when
 * the type has no fixed width (strings, unknown types).
 */
export function storedByteSize(dt: number, numel: number): number {
  if (ELEM_SIZE[dt]) return ELEM_SIZE[dt] * numel;
  if (dt === 14) return 8 * numel;
  if (dt === 15) return 16 * numel;
  if (dt >= 17 && dt <= 20) return numel;
  if (dt >= 21 && dt <= 23) return Math.ceil(numel / 2); // 4-bit types, two per byte
  return -1;
}

/** How a tensor stores its elements. */
export type Storage = 'raw_data' | 'float_data' | 'int32_data' | 'external' | 'empty';

export function storageOf(t: TensorProto): Storage {
  if (t.data_location === 1) return 'external';
  if (t.raw_data && t.raw_data.length) return 'raw_data';
  if (t.data_type !== 8 && typedFieldOf(t)?.values.length) return t.data_type === DT.FLOAT ? 'float_data' : 'int32_data';
  return 'empty';
}

/**
 * The typed repeated field that holds a tensor's elements when raw_data is not used, and how many
 * field values make one element (complex types: two).
 */
export function typedFieldOf(t: TensorProto): { field: string; values: any[]; perElement: number } | undefined {
  switch (t.data_type) {
    case DT.FLOAT: return { field: 'float_data', values: t.float_data, perElement: 1 };
    case 14: return { field: 'float_data', values: t.float_data, perElement: 2 };
    case DT.DOUBLE: return { field: 'double_data', values: t.double_data, perElement: 1 };
    case 15: return { field: 'double_data', values: t.double_data, perElement: 2 };
    case DT.INT64: return { field: 'int64_data', values: t.int64_data, perElement: 1 };
    case 13: case 12: return { field: 'uint64_data', values: t.uint64_data, perElement: 1 };
    case 8: return { field: 'string_data', values: t.string_data, perElement: 1 };
    default: return { field: 'int32_data', values: t.int32_data, perElement: 1 };
  }
}

/** The elements of a tensor stored in a typed field, as `size` little-endian bytes. */
export function typedFieldToBytes(t: TensorProto, numel: number, size: number): Uint8Array {
  const dt = t.data_type;
  const typed = typedFieldOf(t);
  if (!typed || typed.values.length !== numel * typed.perElement || dt === 8) {
    throw new OnnxError('size_mismatch', `tensor "${t.name}" has ${typed ? typed.values.length : 0} values for shape [${t.dims.map(toNum)}]`);
  }
  const out = new Uint8Array(size);
  const dv = new DataView(out.buffer);
  const v = typed.values;
  for (let i = 0; i < numel; i++) {
    switch (dt) {
      case DT.FLOAT: dv.setFloat32(4 * i, v[i], true); break;
      case DT.DOUBLE: dv.setFloat64(8 * i, v[i], true); break;
      case DT.INT64: dv.setBigInt64(8 * i, BigInt(String(v[i])), true); break;
      case 13: dv.setBigUint64(8 * i, BigInt(String(v[i])), true); break;
      case 10: case 16: case 4: case 5: dv.setUint16(2 * i, toNum(v[i]) & 0xffff, true); break;
      case 6: case 12: dv.setInt32(4 * i, toNum(v[i]), true); break;
      default: out[i] = toNum(v[i]) & 0xff;
    }
  }
  return out;
}

/** Stores `bytes` (n elements) into the tensor's typed field, in the tensor's data type. */
export function bytesToTypedField(t: TensorProto, bytes: Uint8Array, n: number): void {
  const typed = typedFieldOf(t);
  if (!typed || typed.perElement !== 1 || t.data_type === 8) {
    throw new OnnxError('unsupported', `tensor "${t.name}" of ${dtypeName(t.data_type)} cannot be rewritten in its typed field`, 'invalid_arguments');
  }
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const vals: number[] = new Array(n);
  for (let i = 0; i < n; i++) {
    switch (t.data_type) {
      case DT.FLOAT: vals[i] = dv.getFloat32(4 * i, true); break;
      case DT.DOUBLE: vals[i] = dv.getFloat64(8 * i, true); break;
      case DT.INT64: vals[i] = Number(dv.getBigInt64(8 * i, true)); break;
      case 13: vals[i] = Number(dv.getBigUint64(8 * i, true)); break;
      case 10: case 16: case 4: case 5: vals[i] = dv.getUint16(2 * i, true); break;
      case 6: case 12: vals[i] = dv.getInt32(4 * i, true); break;
      default: vals[i] = bytes[i];
    }
  }
  t[typed.field] = vals;
}

/** Transposes a (r, c) row-major array. */
export function transpose<T extends Float32Array | Uint8Array>(a: T, r: number, c: number): T {
  const out = new (a.constructor as new (n: number) => T)(a.length);
  for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) out[j * r + i] = a[i * c + j];
  return out;
}
