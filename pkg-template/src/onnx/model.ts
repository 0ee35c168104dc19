// An ONNX model held as its decoded protobuf, with typed access to its tensors wherever they live
// (raw_data, float_data / int32_data / int64_data, Constant nodes, external data files) and the list
// of prunable weights with the 2-D view the pruning uses. Runs in browsers and Node.
import protobuf from 'protobufjs';
import { ONNX_PROTO } from './schema.js';
import { OnnxError } from './errors.js';
import { halfArrayToFloat, floatArrayToHalf, bf16ArrayToFloat, floatArrayToBf16 } from './fp16.js';

const root = protobuf.parse(ONNX_PROTO, { keepCase: true }).root;
/** The protobufjs type of onnx.ModelProto (decode / encode). */
export const ModelProto = root.lookupType('onnx.ModelProto');

/** ONNX TensorProto data types used here. */
export const DT = { FLOAT: 1, UINT8: 2, INT8: 3, INT32: 6, INT64: 7, BOOL: 9, FLOAT16: 10, DOUBLE: 11, BFLOAT16: 16 } as const;
const DT_NAMES: Record<number, string> = {
  1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64', 8: 'string',
  9: 'bool', 10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64', 16: 'bfloat16',
};
const ELEM_SIZE: Record<number, number> = { 1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 16: 2 };
const FLOAT_TYPES = new Set<number>([DT.FLOAT, DT.FLOAT16, DT.BFLOAT16]);

/* eslint-disable @typescript-eslint/no-explicit-any */
/** A decoded onnx.TensorProto (protobufjs message; fields as in the schema). */
export type TensorProto = any;
/** A decoded onnx.NodeProto. */
export type NodeProto = any;
/** A decoded onnx.GraphProto. */
export type GraphProto = any;

export const toNum = (x: any): number =>
  typeof x === 'number' ? x : x == null ? 0 : typeof x.toNumber === 'function' ? x.toNumber() : Number(x);
export const dtypeName = (t: number): string => DT_NAMES[t] ?? `type ${t}`;
const prod = (d: number[]): number => d.reduce((a, b) => a * b, 1);
export const basename = (p: string): string => String(p).split(/[\\/]/).pop() ?? '';

export function u8(buf: Uint8Array | ArrayBuffer | ArrayBufferView): Uint8Array {
  if (buf instanceof Uint8Array) return buf;
  if (buf instanceof ArrayBuffer) return new Uint8Array(buf);
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** Where external data comes from: whole files in memory (browser) or read on demand (Node). */
export interface ExternalSource {
  has(location: string): boolean;
  size(location: string): number;
  read(location: string, offset: number, length: number): Uint8Array;
}

/**
 * Where the new bytes of changed external tensors go until the model is written: memory by default,
 * a scratch file in Node (loadOnnxFile), so that pruning a model larger than memory holds one tensor.
 */
export interface SpillStore {
  put(bytes: Uint8Array): number;
  get(ref: number, length: number): Uint8Array;
}

/** External data files given as bytes, keyed by file name. */
export class MemoryExternalSource implements ExternalSource {
  private files = new Map<string, Uint8Array>();
  constructor(files: Map<string, Uint8Array> | Record<string, Uint8Array> = {}) {
    const it = files instanceof Map ? files.entries() : Object.entries(files);
    for (const [k, v] of it) this.files.set(basename(k), u8(v));
  }
  has(loc: string) { return this.files.has(basename(loc)); }
  size(loc: string) { return this.files.get(basename(loc))?.length ?? 0; }
  read(loc: string, offset: number, length: number) {
    const f = this.files.get(basename(loc));
    if (!f) throw new OnnxError('missing_external', `external data file "${loc}" was not given`);
    return f.subarray(offset, offset + length);
  }
}

/**
 * The 2-D view of a weight that the pruning uses: rows = outputs, cols = inputs (the reduction).
 * `shape`/`stride` (in elements of the stored tensor) build a sparsekit `View` on a Param of the stored data.
 */
export interface WeightView {
  rows: number;
  cols: number;
  shape: [number, number];
  stride: [number, number];
  /** True when the stored tensor is (inputs, outputs): MatMul's B and Gemm's B with transB = 0. */
  transposed: boolean;
}

/** A float tensor constant of the main graph and how the graph uses it. */
export interface OnnxWeight {
  name: string;
  source: 'initializer' | 'constant';
  tensor: TensorProto;
  dims: number[];
  numel: number;
  dtype: number;
  dtypeName: string;
  storage: 'raw_data' | 'float_data' | 'int32_data' | 'external' | 'empty';
  /** The op that uses it as its weight ('' when none). */
  op: string;
  /** That node's name (or op_index when unnamed). */
  node: string;
  /** Conv `group` (1 elsewhere). */
  group: number;
  /** Every use, as `Op#inputIndex`. */
  consumers: string[];
  /**
   * The axis of the stored tensor that the dot product runs over (where N:M groups run, and what
   * sparsekit-wasm's defaultPlan / nm24ConfigFor take): 0 for a stored (K, N) weight (MatMul's B,
   * Gemm's B with transB = 0), 1 otherwise.
   */
  reduceAxis: 0 | 1;
  prunable: boolean;
  /** Present when prunable. */
  view?: WeightView;
}

/** Options of OnnxModel.parse. */
export interface ParseOptions {
  /** Where changed external tensors wait for the write (default: memory). */
  spill?: SpillStore;
  /** External data files (bytes by name), or a source that reads them on demand. */
  externalFiles?: Map<string, Uint8Array> | Record<string, Uint8Array> | ExternalSource;
  fileName?: string;
}

/** Ops whose weight we prune, and the input index that holds it. */
const WEIGHT_INPUT: Record<string, number> = { Conv: 1, ConvTranspose: 1, Gemm: 1, MatMul: 1 };

export function attr(node: NodeProto, name: string): any {
  return node.attribute.find((a: any) => a.name === name);
}
export function attrInt(node: NodeProto, name: string, dflt: number): number {
  const a = attr(node, name);
  return a ? toNum(a.i) : dflt;
}
export function attrInts(node: NodeProto, name: string): number[] | undefined {
  const a = attr(node, name);
  return a ? a.ints.map(toNum) : undefined;
}

/** First bytes of the ModelProto fields 1-8 (with their wire types), 14, 20 and 25. */
const MODEL_FIRST_TAGS = new Set([0x08, 0x12, 0x1a, 0x22, 0x28, 0x32, 0x3a, 0x42, 0x72, 0xa2, 0xca]);

function decodeError(e: unknown, size: number): OnnxError {
  const msg = String((e as Error)?.message ?? e);
  if (/index out of range/i.test(msg)) {
    return new OnnxError('truncated', `the file ends too early: a truncated ONNX model? (${size} bytes; ${msg})`);
  }
  return new OnnxError('not_onnx', `not an ONNX model: the protobuf decoder failed (${msg})`);
}

export class OnnxModel {
  readonly model: any;
  readonly byteLength: number;
  readonly fileName: string;
  readonly external: ExternalSource;
  /** New bytes of external tensors that were written (the source files are never modified). */
  private overrides = new Map<TensorProto, Uint8Array | { ref: number; length: number }>();
  private readonly spill?: SpillStore;
  weights: OnnxWeight[] = [];

  /** Decodes and validates a model; throws OnnxError (reason not_onnx / truncated / corrupt). */
  static parse(bytes: Uint8Array | ArrayBuffer, opts: ParseOptions = {}): OnnxModel {
    const data = u8(bytes);
    if (data.length === 0) throw new OnnxError('not_onnx', 'the file is empty');
    // A ModelProto starts with one of its own field tags (ir_version first, in practice); text,
    // images or archives do not, and would otherwise read as a "truncated" protobuf.
    if (!MODEL_FIRST_TAGS.has(data[0])) {
      throw new OnnxError('not_onnx', `not an ONNX model (first byte 0x${data[0].toString(16).padStart(2, '0')} starts no ModelProto field)`);
    }
    let model: any;
    try {
      model = ModelProto.decode(data);
    } catch (e) {
      throw decodeError(e, data.length);
    }
    return new OnnxModel(model, data.length, opts);
  }

  private constructor(model: any, byteLength: number, opts: ParseOptions) {
    this.model = model;
    this.byteLength = byteLength;
    this.fileName = opts.fileName ?? 'model.onnx';
    this.spill = opts.spill;
    const ext = opts.externalFiles;
    this.external = ext && typeof (ext as ExternalSource).read === 'function' && typeof (ext as ExternalSource).has === 'function'
      ? (ext as ExternalSource)
      : new MemoryExternalSource(ext as Map<string, Uint8Array> | Record<string, Uint8Array> | undefined);
    this.validate();
    this.refresh();
  }

  get graph(): GraphProto { return this.model.graph; }
  get irVersion(): number { return toNum(this.model.ir_version); }
  get opsets(): string[] {
    return this.model.opset_import.map((o: any) => `${o.domain || 'ai.onnx'}:${toNum(o.version)}`);
  }

  private validate() {
    const m = this.model;
    const g = m.graph;
    if (!g || !m.ir_version) throw new OnnxError('not_onnx', `not an ONNX model: it has no ${g ? 'IR version' : 'graph'}`);
    if (!g.node.length) throw new OnnxError('corrupt', 'the ONNX graph has no nodes');
    if (!g.output.length) throw new OnnxError('truncated', 'the ONNX graph declares no outputs: the file is probably truncated');
    const known = new Set<string>(['']);
    for (const t of g.initializer) known.add(t.name);
    for (const i of g.input) known.add(i.name);
    for (const n of g.node) for (const o of n.output) known.add(o);
    for (const n of g.node) {
      if (!n.op_type) throw new OnnxError('corrupt', `a node has no op type (${n.name || 'unnamed'})`);
      for (const i of n.input) {
        if (!known.has(i)) {
          throw new OnnxError('truncated', `node ${n.name || n.op_type} reads "${i}", which nothing defines: the file is truncated or corrupt`);
        }
      }
    }
    for (const o of g.output) if (!known.has(o.name)) throw new OnnxError('corrupt', `graph output "${o.name}" is never produced`);
  }

  /** Every tensor constant of the main graph by value name: initializers and Constant nodes' `value`. */
  constants(): Map<string, { tensor: TensorProto; source: 'initializer' | 'constant'; node?: NodeProto }> {
    const out = new Map<string, { tensor: TensorProto; source: 'initializer' | 'constant'; node?: NodeProto }>();
    for (const t of this.graph.initializer) out.set(t.name, { tensor: t, source: 'initializer' });
    for (const n of this.graph.node) {
      if (n.op_type !== 'Constant' || (n.domain && n.domain !== 'ai.onnx')) continue;
      const a = n.attribute.find((x: any) => x.name === 'value' && x.t);
      if (a) out.set(n.output[0], { tensor: a.t, source: 'constant', node: n });
    }
    return out;
  }

  /** Rebuilds `weights` (after the graph or tensor shapes changed). */
  refresh(): void {
    const g = this.graph;
    const consumers = new Map<string, { node: NodeProto; index: number; ni: number }[]>();
    g.node.forEach((n: NodeProto, ni: number) => n.input.forEach((name: string, index: number) => {
      if (!consumers.has(name)) consumers.set(name, []);
      consumers.get(name)!.push({ node: n, index, ni });
    }));
    // The weight use of a value, looking through up to two Cast / Identity nodes (float16 weights
    // are often cast to float before their Conv).
    const weightUse = (name: string, depth = 0): { node: NodeProto; index: number; ni: number } | undefined => {
      const cons = consumers.get(name) ?? [];
      const direct = cons.find((c) => WEIGHT_INPUT[c.node.op_type] === c.index);
      if (direct || depth > 1) return direct;
      if (cons.length === 1 && (cons[0].node.op_type === 'Cast' || cons[0].node.op_type === 'Identity')) {
        return weightUse(cons[0].node.output[0], depth + 1);
      }
      return undefined;
    };
    const weights: OnnxWeight[] = [];
    for (const [name, { tensor, source }] of this.constants()) {
      if (!FLOAT_TYPES.has(tensor.data_type)) continue;
      const dims = tensor.dims.map(toNum);
      const use = weightUse(name);
      const op = use ? use.node.op_type : '';
      const numel = prod(dims);
      const transposed = !!use && (op === 'MatMul' || (op === 'Gemm' && !attrInt(use.node, 'transB', 0)));
      const w: OnnxWeight = {
        name, source, tensor, dims, numel,
        dtype: tensor.data_type, dtypeName: dtypeName(tensor.data_type),
        storage: storageOf(tensor),
        op, node: use ? use.node.name || `${op}_${use.ni}` : '',
        group: use && op === 'Conv' ? attrInt(use.node, 'group', 1) : 1,
        consumers: (consumers.get(name) ?? []).map((c) => `${c.node.op_type}#${c.index}`),
        reduceAxis: transposed ? 0 : 1,
        prunable: false,
      };
      if (use && dims.length >= 2 && numel > 0) {
        w.view = viewOf(dims, transposed);
        // MatMul weights of rank > 2 (batched) have no single 2-D view.
        w.prunable = !(op === 'MatMul' && dims.length > 2) && !(op === 'Gemm' && dims.length !== 2);
        if (!w.prunable) delete w.view;
      }
      weights.push(w);
    }
    this.weights = weights;
  }

  /** The prunable weights (Conv / ConvTranspose / Gemm / MatMul weights with a 2-D view). */
  prunable(): OnnxWeight[] { return this.weights.filter((w) => w.prunable); }

  weight(name: string): OnnxWeight {
    const w = this.weights.find((x) => x.name === name);
    if (!w) throw new OnnxError('bad_mask', `no float weight named "${name}"`, 'invalid_arguments');
    return w;
  }

  /** External tensor's location, offset and length (checked against the file). */
  private externalRef(t: TensorProto, size: number) {
    const kv: Record<string, string> = Object.fromEntries(t.external_data.map((x: any) => [x.key, x.value]));
    const loc = kv.location ?? '';
    if (!this.external.has(loc)) {
      throw new OnnxError('missing_external', `tensor "${t.name}" lives in the external data file "${basename(loc)}", which was not given (put it next to the .onnx file)`);
    }
    const offset = Number(kv.offset ?? 0);
    const length = kv.length != null ? Number(kv.length) : size;
    if (length < size || offset + size > this.external.size(loc)) {
      throw new OnnxError('truncated', `external data of "${t.name}" lies outside "${basename(loc)}" (offset ${offset}, ${size} bytes, file ${this.external.size(loc)} bytes)`);
    }
    return { loc, offset };
  }

  /** The tensor's elements as little-endian bytes, wherever they are stored. */
  tensorBytes(t: TensorProto): Uint8Array {
    const dt = t.data_type;
    const esz = ELEM_SIZE[dt];
    if (!esz) throw new OnnxError('unsupported', `tensor "${t.name}" has data type ${dtypeName(dt)}, which is not handled`, 'invalid_arguments');
    const numel = prod(t.dims.map(toNum));
    const size = esz * numel;
    const ov = this.overrides.get(t);
    if (ov) return ov instanceof Uint8Array ? ov : this.spill!.get(ov.ref, ov.length);
    const storage = storageOf(t);
    if (storage === 'external') {
      const { loc, offset } = this.externalRef(t, size);
      return this.external.read(loc, offset, size);
    }
    if (storage === 'raw_data') {
      const raw = u8(t.raw_data);
      if (raw.length !== size) throw new OnnxError('corrupt', `tensor "${t.name}" should hold ${size} bytes but has ${raw.length}`);
      return raw;
    }
    if (numel === 0) return new Uint8Array(0);
    const typed = typedFieldOf(t);
    if (!typed || typed.values.length !== numel) {
      throw new OnnxError('corrupt', `tensor "${t.name}" has ${typed ? typed.values.length : 0} values for shape [${t.dims.map(toNum)}]`);
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

  /**
   * Replaces a tensor's elements (and dims, when given), keeping its data type and storage form:
   * raw_data stays raw_data, float_data stays float_data, external data stays external.
   */
  setTensorBytes(t: TensorProto, bytes: Uint8Array, dims?: number[]): void {
    const newDims = dims ?? t.dims.map(toNum);
    const size = ELEM_SIZE[t.data_type] * prod(newDims);
    if (bytes.length !== size) throw new OnnxError('bad_mask', `${bytes.length} bytes for tensor "${t.name}" of ${size}`, 'shape_mismatch');
    const storage = storageOf(t);
    if (dims) t.dims = dims.slice();
    // An empty tensor stays without a data field: an empty raw_data would change the encoded bytes.
    if (storage === 'empty' && bytes.length === 0) return;
    if (storage === 'external') {
      this.overrides.set(t, this.spill ? { ref: this.spill.put(bytes), length: bytes.length } : new Uint8Array(bytes));
      return;
    }
    if (storage === 'raw_data' || storage === 'empty') { t.raw_data = new Uint8Array(bytes); return; }
    const typed = typedFieldOf(t)!;
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const n = prod(newDims);
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

  /** A float tensor (or weight) as float32 values (float16 / bfloat16 widened). */
  readFloat(w: OnnxWeight | TensorProto): Float32Array {
    const t = 'tensor' in w && w.tensor ? w.tensor : w;
    const b = this.tensorBytes(t);
    const copy = new Uint8Array(b); // a copy with its own aligned buffer (a Node Buffer's slice() is a view)
    switch (t.data_type) {
      case DT.FLOAT: return new Float32Array(copy.buffer, 0, copy.length / 4);
      case DT.FLOAT16: return halfArrayToFloat(new Uint16Array(copy.buffer, 0, copy.length / 2));
      case DT.BFLOAT16: return bf16ArrayToFloat(new Uint16Array(copy.buffer, 0, copy.length / 2));
      case DT.DOUBLE: return Float32Array.from(new Float64Array(copy.buffer, 0, copy.length / 8));
      default: throw new OnnxError('unsupported', `tensor "${t.name}" is ${dtypeName(t.data_type)}, not float`, 'invalid_arguments');
    }
  }

  /** Writes float32 values into a float tensor in its own data type (and new dims, when given). */
  writeFloat(w: OnnxWeight | TensorProto, values: ArrayLike<number>, dims?: number[]): void {
    const t = 'tensor' in w && w.tensor ? w.tensor : w;
    const n = prod(dims ?? t.dims.map(toNum));
    if (values.length !== n) throw new OnnxError('bad_mask', `${values.length} values for tensor "${t.name}" of ${n}`, 'shape_mismatch');
    let bytes: Uint8Array;
    switch (t.data_type) {
      case DT.FLOAT: bytes = new Uint8Array(Float32Array.from(values).buffer); break;
      case DT.FLOAT16: bytes = new Uint8Array(floatArrayToHalf(values).buffer); break;
      case DT.BFLOAT16: bytes = new Uint8Array(floatArrayToBf16(values).buffer); break;
      case DT.DOUBLE: bytes = new Uint8Array(Float64Array.from(values).buffer); break;
      default: throw new OnnxError('unsupported', `tensor "${t.name}" is ${dtypeName(t.data_type)}, not float`, 'invalid_arguments');
    }
    this.setTensorBytes(t, bytes, dims);
    if (dims) this.syncWeightDims(t);
  }

  /** An integer tensor (INT64 / INT32) as numbers. */
  readInts(t: TensorProto): number[] {
    const b = this.tensorBytes(t);
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    if (t.data_type === DT.INT64) return Array.from({ length: b.length / 8 }, (_, i) => Number(dv.getBigInt64(8 * i, true)));
    if (t.data_type === DT.INT32) return Array.from({ length: b.length / 4 }, (_, i) => dv.getInt32(4 * i, true));
    throw new OnnxError('unsupported', `tensor "${t.name}" is ${dtypeName(t.data_type)}, not an integer tensor`, 'invalid_arguments');
  }

  writeInts(t: TensorProto, values: number[]): void {
    const esz = ELEM_SIZE[t.data_type];
    const out = new Uint8Array(values.length * esz);
    const dv = new DataView(out.buffer);
    values.forEach((v, i) => (t.data_type === DT.INT64 ? dv.setBigInt64(8 * i, BigInt(v), true) : dv.setInt32(4 * i, v, true)));
    this.setTensorBytes(t, out, t.dims.length ? [values.length] : []);
  }

  private syncWeightDims(t: TensorProto) {
    const w = this.weights.find((x) => x.tensor === t);
    if (w) { w.dims = t.dims.map(toNum); w.numel = prod(w.dims); }
  }

  /**
   * Zeroes the weight's elements whose keep-mask is 0. `keep` is in the stored layout, or in the 2-D
   * view layout with `{layout: 'view'}` (transposed back for MatMul / Gemm transB = 0 weights).
   */
  applyMask(w: OnnxWeight, keep: Uint8Array, opts: { layout?: 'stored' | 'view' } = {}): void {
    if (keep.length !== w.numel) {
      throw new OnnxError('bad_mask', `keep-mask of ${keep.length} elements for "${w.name}" of ${w.numel}`, 'shape_mismatch');
    }
    const mask = opts.layout === 'view' && w.view?.transposed ? transpose(keep, w.view.rows, w.view.cols) : keep;
    const v = this.readFloat(w);
    for (let i = 0; i < v.length; i++) if (!mask[i]) v[i] = 0;
    this.writeFloat(w, v);
  }

  /** The weight's values in its 2-D view layout (rows = outputs, cols = inputs), row-major. */
  readView(w: OnnxWeight): Float32Array {
    if (!w.view) throw new OnnxError('unsupported', `"${w.name}" is not a prunable weight`, 'invalid_arguments');
    const v = this.readFloat(w);
    return w.view.transposed ? transpose(v, w.view.cols, w.view.rows) : v;
  }

  /** Writes values given in the 2-D view layout. */
  writeView(w: OnnxWeight, values: Float32Array): void {
    if (!w.view) throw new OnnxError('unsupported', `"${w.name}" is not a prunable weight`, 'invalid_arguments');
    this.writeFloat(w, w.view.transposed ? transpose(values, w.view.rows, w.view.cols) : values);
  }

  /** Every tensor stored as external data (initializers and Constant values). */
  externalTensors(): TensorProto[] {
    return [...this.constants().values()].map((c) => c.tensor).filter((t) => storageOf(t) === 'external');
  }

  /** External data file names the model refers to. */
  get externalLocations(): string[] {
    const s = new Set<string>();
    for (const t of this.externalTensors()) {
      const e = t.external_data.find((x: any) => x.key === 'location');
      if (e) s.add(basename(e.value));
    }
    return [...s];
  }

  /**
   * External data files the model refers to that its source cannot read: a browser page asks the
   * user for these before anything reads a weight (which would throw reason missing_external).
   */
  missingExternalFiles(): string[] {
    const missing = new Set<string>();
    for (const t of this.externalTensors()) {
      const e = t.external_data.find((x: any) => x.key === 'location');
      const loc = e ? String(e.value) : '';
      if (!this.external.has(loc)) missing.add(basename(loc));
    }
    return [...missing];
  }

  /**
   * Encodes the model. External tensors are appended to `sink` (one new data file named `location`,
   * offsets aligned to 64 bytes) and their references rewritten into the encoded bytes only: the
   * in-memory model keeps reading from its sources. Without external tensors `sink` is not called.
   */
  encode(opts: { location?: string; sink?: (bytes: Uint8Array) => void } = {}): Uint8Array {
    const ext = this.externalTensors();
    if (!ext.length) return ModelProto.encode(this.model).finish();
    if (!opts.sink || !opts.location) {
      throw new OnnxError('unsupported', 'this model has external data: encode({location, sink}) or saveOnnx() writes it', 'invalid_arguments');
    }
    const saved = ext.map((t) => ({ t, entries: t.external_data }));
    let offset = 0;
    const pad = new Uint8Array(64);
    try {
      for (const t of ext) {
        const bytes = this.tensorBytes(t);
        const gap = (64 - (offset % 64)) % 64;
        if (gap) { opts.sink(pad.subarray(0, gap)); offset += gap; }
        t.external_data = [
          { key: 'location', value: opts.location },
          { key: 'offset', value: String(offset) },
          { key: 'length', value: String(bytes.length) },
        ];
        opts.sink(bytes);
        offset += bytes.length;
      }
      return ModelProto.encode(this.model).finish();
    } finally {
      for (const s of saved) s.t.external_data = s.entries;
    }
  }

  /** Graph inputs that are not initializers. */
  get inputs(): ValueInfo[] {
    const inits = new Set(this.graph.initializer.map((t: any) => t.name));
    return this.graph.input.filter((i: any) => !inits.has(i.name)).map(valueInfo);
  }

  get outputs(): ValueInfo[] { return this.graph.output.map(valueInfo); }
}

export interface ValueInfo {
  name: string;
  elemType: number;
  dims: (number | string)[];
  /** Number of dims, or -1 when the graph declares no shape (unknown rank, not a scalar). */
  rank: number;
}

function valueInfo(v: any): ValueInfo {
  const tt = v.type && v.type.tensor_type;
  const dims = tt && tt.shape
    ? tt.shape.dim.map((d: any) => (d.value === 'dim_value' ? toNum(d.dim_value) : d.dim_param || '?'))
    : [];
  return { name: v.name, elemType: tt ? tt.elem_type : 0, dims, rank: tt && tt.shape ? dims.length : -1 };
}

export function storageOf(t: TensorProto): OnnxWeight['storage'] {
  if (t.data_location === 1) return 'external';
  if (t.raw_data && t.raw_data.length) return 'raw_data';
  if (typedFieldOf(t)?.values.length) return t.data_type === DT.FLOAT ? 'float_data' : 'int32_data';
  return 'empty';
}

function typedFieldOf(t: TensorProto): { field: string; values: any[] } | undefined {
  switch (t.data_type) {
    case DT.FLOAT: return { field: 'float_data', values: t.float_data };
    case DT.DOUBLE: return { field: 'double_data', values: t.double_data };
    case DT.INT64: return { field: 'int64_data', values: t.int64_data };
    case 13: case 12: return { field: 'uint64_data', values: t.uint64_data };
    case 8: return undefined;
    default: return { field: 'int32_data', values: t.int32_data };
  }
}

/** The pruning view of a weight (see WeightView). */
function viewOf(dims: number[], transposed: boolean): WeightView {
  if (transposed) {
    const [k, n] = dims;
    return { rows: n, cols: k, shape: [n, k], stride: [1, n], transposed };
  }
  const rows = dims[0];
  const cols = prod(dims.slice(1));
  return { rows, cols, shape: [rows, cols], stride: [cols, 1], transposed };
}

/** Transposes a (r, c) row-major array. */
export function transpose<T extends Float32Array | Uint8Array>(a: T, r: number, c: number): T {
  const out = new (a.constructor as new (n: number) => T)(a.length);
  for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) out[j * r + i] = a[i * c + j];
  return out;
}
