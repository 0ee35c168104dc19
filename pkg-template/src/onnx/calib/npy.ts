// NumPy .npy files (format versions 1-3, C order) as calibration inputs: decoded from bytes (any
// runtime) and converted to the element type the model's input declares.
import { OnnxError } from '../errors.js';
import { halfArrayToFloat, floatArrayToHalf } from '../fp16.js';
import { ORT_TYPES, type FeedTensor } from './inputs.js';

/** A decoded array: its numpy dtype (e.g. '<f4'), shape and values (float16 as Uint16 bits). */
export interface NpyArray {
  dtype: string;
  shape: number[];
  data: Float32Array | Float64Array | Uint16Array | Int32Array | BigInt64Array | Uint8Array | Int8Array | Int16Array | Uint32Array | BigUint64Array;
}

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

const bad = (what: string, msg: string) => new OnnxError('bad_calibration', `${what}: ${msg}`, 'invalid_value');

/** Decodes a .npy file (`what` names it in errors). Little-endian or single-byte dtypes only. */
export function parseNpy(bytes: Uint8Array, what = 'npy'): NpyArray {
  if (bytes.length < 10 || MAGIC.some((b, i) => bytes[i] !== b)) throw bad(what, 'not a .npy file (no \\x93NUMPY header)');
  const major = bytes[6];
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const hlen = major === 1 ? dv.getUint16(8, true) : dv.getUint32(8, true);
  const start = major === 1 ? 10 : 12;
  if (start + hlen > bytes.length) throw bad(what, 'the .npy header runs past the end of the file');
  const header = new TextDecoder('latin1').decode(bytes.subarray(start, start + hlen));
  const descr = /'descr'\s*:\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape'\s*:\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || !fortran || shapeText === undefined) throw bad(what, `unreadable .npy header ${JSON.stringify(header.trim())}`);
  if (fortran === 'True') throw bad(what, 'Fortran-ordered array: save it with np.ascontiguousarray first');
  const shape = shapeText.split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  if (shape.some((d) => !Number.isInteger(d) || d < 0)) throw bad(what, `bad shape (${shapeText})`);
  const n = shape.reduce((a, b) => a * b, 1);
  const kinds: Record<string, [number, (b: ArrayBuffer, n: number) => NpyArray['data']]> = {
    f4: [4, (b, k) => new Float32Array(b, 0, k)], f8: [8, (b, k) => new Float64Array(b, 0, k)],
    f2: [2, (b, k) => new Uint16Array(b, 0, k)], i8: [8, (b, k) => new BigInt64Array(b, 0, k)],
    u8: [8, (b, k) => new BigUint64Array(b, 0, k)], i4: [4, (b, k) => new Int32Array(b, 0, k)],
    u4: [4, (b, k) => new Uint32Array(b, 0, k)], i2: [2, (b, k) => new Int16Array(b, 0, k)],
    u2: [2, (b, k) => new Uint16Array(b, 0, k)], i1: [1, (b, k) => new Int8Array(b, 0, k)],
    u1: [1, (b, k) => new Uint8Array(b, 0, k)], b1: [1, (b, k) => new Uint8Array(b, 0, k)],
  };
  const order = descr[0], kind = descr.slice(1);
  const spec = kinds[kind];
  if (!spec || order === '>' || (order === '|' && spec[0] > 1)) throw bad(what, `dtype '${descr}' is not handled (little-endian float16/32/64, int8-64, uint8-64, bool)`);
  const body = start + hlen;
  if (bytes.length - body < n * spec[0]) throw bad(what, `${bytes.length - body} data bytes for shape (${shape.join(', ')}) of '${descr}' (${n * spec[0]} needed): truncated`);
  const copy = new Uint8Array(n * spec[0]); // aligned and owned (a Node Buffer's slice() is a view of a shared pool)
  copy.set(bytes.subarray(body, body + n * spec[0]));
  const data = spec[1](copy.buffer, n);
  return { dtype: kind, shape, data };
}

/**
 * The array as a feed for an input of ONNX element type `elemType`: floats convert between widths
 * (float16 as bits), integers and booleans convert to the input's integer type; a float array for
 * an integer input (or the reverse) is refused.
 */
export function npyToFeed(a: NpyArray, elemType: number, what = 'npy'): FeedTensor {
  const isFloat = a.dtype === 'f2' || a.dtype === 'f4' || a.dtype === 'f8';
  const wantFloat = elemType === 1 || elemType === 10 || elemType === 11;
  const type = ORT_TYPES[elemType];
  if (!type) throw bad(what, `the model input has element type ${elemType}, which calibration does not feed`);
  if (isFloat !== wantFloat) throw bad(what, `${isFloat ? 'float' : 'integer'} data ('${a.dtype}') for a ${type} input`);
  const dims = a.shape.slice();
  if (isFloat) {
    const f = a.dtype === 'f2' ? halfArrayToFloat(a.data as Uint16Array) : a.data instanceof Float32Array ? a.data : Float32Array.from(a.data as Float64Array);
    if (elemType === 10) return { type, data: a.dtype === 'f2' ? (a.data as Uint16Array) : floatArrayToHalf(f), dims };
    if (elemType === 11) return { type, data: a.data instanceof Float64Array ? a.data : Float64Array.from(f), dims };
    return { type, data: f, dims };
  }
  const nums = Array.from(a.data as ArrayLike<number | bigint>, (v) => Number(v));
  switch (elemType) {
    case 7: return { type, data: BigInt64Array.from(nums, (v) => BigInt(v)), dims };
    case 6: return { type, data: Int32Array.from(nums), dims };
    case 3: return { type, data: Int8Array.from(nums), dims };
    default: return { type, data: Uint8Array.from(nums, (v) => (elemType === 9 ? (v ? 1 : 0) : v)), dims };
  }
}
