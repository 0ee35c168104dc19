// An ONNX model held as its decoded protobuf, with typed access to its tensors wherever they live
// (raw_data, typed fields, Constant nodes, external data files) and the list of prunable weights
// with the 2-D view the pruning uses. Runs in browsers and Node. Reading a file goes through three
// gates before any object is built or any declared size is trusted: the wire check (wire.ts), the
// decoder, and the model checks (check-graph.ts, check-tensors.ts); see docs/guides/robustness.md.
// A model read from a file in Node keeps its large inline initializers in the file (file-backed.ts).
import { OnnxError } from './errors.js';
import { halfArrayToFloat, floatArrayToHalf, bf16ArrayToFloat, floatArrayToBf16 } from './fp16.js';
import { ModelProto } from './proto.js';
import { encodeModel, encodeModelPieces, type EncodeOptions } from './writer.js';
import { modelTensors } from './walk.js';
import { checkWire } from './wire.js';
import { checkModel } from './check-graph.js';
import { checkDims } from './check-tensors.js';
import { limitsOf, type OnnxLimits } from './limits.js';
import { MemoryExternalSource, externalRefOf, checkExternalRange, type ExternalSource, type SpillStore } from './external.js';
import {
  DT, ELEM_SIZE, toNum, dtypeName, prod, basename, u8, storageOf, transpose, typedFieldToBytes, bytesToTypedField,
  type TensorProto, type GraphProto, type Storage,
} from './tensor-data.js';
import { findWeights, graphConstants, type OnnxWeight, type ConstantEntry } from './weights.js';
import { backByFile, type FileBacked, type FileBackedOptions } from './file-backed.js';
import { valueInfo, type ValueInfo } from './value-info.js';
import type { ExternalState, StoredState } from './stored-state.js';
export type { ExternalState, RawState, StoredState } from './stored-state.js';

// The names other modules (and the package's public index) import from here.
export { ModelProto } from './proto.js';
export { DT, dtypeName, toNum, basename, u8, storageOf, transpose } from './tensor-data.js';
export type { TensorProto, NodeProto, GraphProto } from './tensor-data.js';
export { MemoryExternalSource } from './external.js';
export type { ExternalSource, SpillStore } from './external.js';
export { attr, attrInt, attrInts } from './weights.js';
export type { OnnxWeight, WeightView } from './weights.js';
export type { OnnxLimits } from './limits.js';
export type { ValueInfo } from './value-info.js';
export type { FileBackedOptions } from './file-backed.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** Options of OnnxModel.parse. */
export interface ParseOptions {
  /** Where changed external tensors wait for the write (default: memory), and a rollback's bytes from before (storedState). */
  spill?: SpillStore;
  /** External data files (bytes by name), or a source that reads them on demand. */
  externalFiles?: Map<string, Uint8Array> | Record<string, Uint8Array> | ExternalSource;
  fileName?: string;
  /** Bounds on nesting and on the objects a file may decode into (defaults in limits.ts). */
  limits?: Partial<OnnxLimits>;
  /**
   * Node's loadOnnxFile: the large raw_data initializers are read from `externalFiles` at
   * `location` (the model's own file) when needed, not held, and nothing keeps the parsed bytes
   * alive; the model encodes as it would without this (file-backed.ts).
   */
  fileBacked?: FileBackedOptions;
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
  /** raw_data tensors whose bytes from before were put in the spill (storedState): written in place since. */
  private readonly inPlace = new WeakSet<TensorProto>();
  private readonly spill?: SpillStore;
  /** Initializers read from the model's own file (ParseOptions.fileBacked): external here, inline when written. */
  private readonly backed?: FileBacked;
  private readonly limits: OnnxLimits;
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
    const limits = limitsOf(opts.limits);
    checkWire(data, ModelProto, limits);
    let model: any;
    try {
      model = ModelProto.decode(data);
    } catch (e) {
      throw decodeError(e, data.length);
    }
    return new OnnxModel(model, data, opts, limits);
  }

  private constructor(model: any, data: Uint8Array, opts: ParseOptions, limits: OnnxLimits, from?: OnnxModel) {
    this.model = model;
    this.limits = limits;
    this.byteLength = data.length;
    this.fileName = opts.fileName ?? 'model.onnx';
    this.spill = opts.spill;
    const ext = opts.externalFiles;
    this.external = ext && typeof (ext as ExternalSource).read === 'function' && typeof (ext as ExternalSource).has === 'function'
      ? (ext as ExternalSource)
      : new MemoryExternalSource(ext as Map<string, Uint8Array> | Record<string, Uint8Array> | undefined);
    checkModel(model, this.external, limits);
    if (opts.fileBacked) this.backed = backByFile(model, data, opts.fileBacked, this.external);
    else if (from) this.backed = this.adopt(from);
    this.refresh();
  }

  /**
   * A copy that reads its values where this model does (files, spill, changed bytes: never written
   * into, a write gives new bytes), so a write to either leaves the other as it was. Of a model read
   * from a file it costs the graph, not the weights (issue 37); of one in memory, its raw_data again.
   */
  copy(): OnnxModel {
    // a backed or external tensor: its reference, not its bytes
    const bytes = this.withHeldLengths(() => ModelProto.encode(this.model).finish());
    return new OnnxModel(ModelProto.decode(bytes), bytes, { spill: this.spill, externalFiles: this.external, fileName: this.fileName }, this.limits, this);
  }

  /**
   * Runs `fn` with every external (or file-backed) tensor whose bytes were replaced at another size
   * (channel removal changes its dims) declaring the length of the bytes it holds now, and puts the
   * file's declaration back after. The copy is checked against what it declares, and the file's
   * length is that of bytes neither model reads any more.
   */
  private withHeldLengths<T>(fn: () => T): T {
    const saved: [TensorProto, unknown][] = [];
    try {
      for (const [t, ov] of this.overrides) {
        const length = String(ov.length);
        const entries = (t.external_data ?? []) as { key: string; value: string }[];
        if (!entries.some((e) => e.key === 'length' && String(e.value) !== length)) continue;
        saved.push([t, t.external_data]);
        t.external_data = entries.map((e) => (e.key === 'length' ? { key: 'length', value: length } : e));
      }
      return fn();
    } finally {
      for (const [t, entries] of saved) t.external_data = entries;
    }
  }
  /** copy(): the original's changed bytes and file backing, tensor for tensor (both walks in the encoded order). */
  private adopt(from: OnnxModel): FileBacked | undefined {
    const mine = [...modelTensors(this.model)], theirs = [...modelTensors(from.model)];
    theirs.forEach((t, i) => { const ov = from.overrides.get(t); if (ov) this.overrides.set(mine[i], ov); });
    return from.backed?.pairedWith(theirs, mine);
  }

  get graph(): GraphProto { return this.model.graph; }
  get irVersion(): number { return toNum(this.model.ir_version); }
  get opsets(): string[] {
    return this.model.opset_import.map((o: any) => `${o.domain || 'ai.onnx'}:${toNum(o.version)}`);
  }

  /** Every tensor constant of the main graph by value name: initializers and Constant nodes' `value`. */
  constants(): Map<string, ConstantEntry> {
    return graphConstants(this.graph);
  }

  /** Rebuilds `weights` (after the graph or tensor shapes changed). */
  refresh(): void {
    this.weights = findWeights(this.graph, this.constants(), (t) => this.storage(t));
  }

  /** How the tensor is stored in the model as written (a file-backed initializer: raw_data). */
  storage(t: TensorProto): Storage {
    return this.backed?.has(t) ? 'raw_data' : storageOf(t);
  }

  /** The prunable weights (Conv / ConvTranspose / Gemm / MatMul weights with a 2-D view). */
  prunable(): OnnxWeight[] { return this.weights.filter((w) => w.prunable); }

  weight(name: string): OnnxWeight {
    const w = this.weights.find((x) => x.name === name);
    if (!w) throw new OnnxError('bad_mask', `no float weight named "${name}"`, 'invalid_arguments');
    return w;
  }

  /** External tensor's location and offset, checked against its declaration and the file. */
  private externalRef(t: TensorProto, size: number) {
    const ref = externalRefOf(t);
    if (!this.external.has(ref.location)) {
      throw new OnnxError('missing_external', `tensor "${t.name}" lives in the external data file "${basename(ref.location)}", which was not given (put it next to the .onnx file)`);
    }
    checkExternalRange(t, ref, size, this.external);
    return { loc: ref.location, offset: ref.offset };
  }

  /** The tensor's elements as little-endian bytes, wherever they are stored. */
  tensorBytes(t: TensorProto): Uint8Array {
    const dt = t.data_type;
    const esz = ELEM_SIZE[dt];
    if (!esz) throw new OnnxError('unsupported', `tensor "${t.name}" has data type ${dtypeName(dt)}, which is not handled`, 'invalid_arguments');
    const numel = checkDims(t.dims, `tensor "${t.name}"`);
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
      if (raw.length !== size) throw new OnnxError('size_mismatch', `tensor "${t.name}" should hold ${size} bytes but has ${raw.length}`);
      return raw;
    }
    if (numel === 0) return new Uint8Array(0);
    return typedFieldToBytes(t, numel, size);
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
    if (storage === 'raw_data' && this.inPlace.has(t) && !dims && u8(t.raw_data).length === bytes.length) { u8(t.raw_data).set(bytes); return; }
    if (storage === 'raw_data' || storage === 'empty') { t.raw_data = new Uint8Array(bytes); return; }
    bytesToTypedField(t, bytes, prod(newDims));
  }

  /**
   * Where an external tensor's bytes are now (undefined for a tensor stored in the model), for
   * restoreExternal: no copy of them, since the source files are never modified and spilled bytes
   * never overwritten. A rollback of a model larger than memory keeps this instead of the values.
   */
  externalState(t: TensorProto): ExternalState | undefined {
    if (storageOf(t) !== 'external') return undefined;
    return { tensor: t, dims: t.dims.slice(), bytes: this.overrides.get(t) };
  }

  /** Puts an external tensor back as externalState found it. */
  restoreExternal(s: ExternalState): void {
    s.tensor.dims = s.dims.slice();
    if (s.bytes) this.overrides.set(s.tensor, s.bytes);
    else this.overrides.delete(s.tensor);
    this.syncWeightDims(s.tensor);
  }

  /**
   * Where a tensor's bytes are now, kept without a copy in memory, for restoreStored: externalState's;
   * for a raw_data tensor, with a spill store (Node: loadOnnxFile), its bytes put in the spill, after
   * which setTensorBytes writes it in place; without one, its array itself, since setTensorBytes
   * then gives raw_data a new array and never writes into the one it replaces. A rollback that
   * keeps this costs no memory where a copy of every changed weight would hold them twice, and
   * with the spill the changed weights take no new memory either. (A model read by loadOnnxFile
   * has its large initializers file-backed, external here: they take externalState's way.)
   */
  storedState(t: TensorProto): StoredState | undefined {
    const storage = storageOf(t);
    if (storage === 'external') return this.externalState(t);
    if (storage !== 'raw_data') return undefined;
    const dims = t.dims.slice(), raw = u8(t.raw_data);
    if (!this.spill) return { tensor: t, dims, raw };
    const spilled = { ref: this.spill.put(raw), length: raw.length };
    this.inPlace.add(t);
    return { tensor: t, dims, spilled };
  }

  /** Puts a tensor back as storedState found it. */
  restoreStored(s: StoredState): void {
    if (!('raw' in s) && !('spilled' in s)) { this.restoreExternal(s); return; }
    s.tensor.dims = s.dims.slice();
    s.tensor.raw_data = 'raw' in s ? s.raw : this.spill!.get(s.spilled.ref, s.spilled.length);
    this.inPlace.delete(s.tensor);
    this.syncWeightDims(s.tensor);
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

  /** Every tensor stored as external data, in any graph or function of the model. */
  externalTensors(): TensorProto[] {
    return [...modelTensors(this.model)].filter((t) => storageOf(t) === 'external' && !this.backed?.has(t));
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
  encode(opts: EncodeOptions = {}): Uint8Array {
    return encodeModel(this.model, this.externalTensors(), (t) => this.tensorBytes(t), opts, this.backed);
  }

  /**
   * encode()'s bytes handed to `out` in pieces, the graph's initializers one at a time and their
   * raw_data as held, never as one buffer: a file writer holds the model once. Returns the length.
   */
  encodeTo(out: (bytes: Uint8Array) => void, opts: EncodeOptions = {}): number {
    return encodeModelPieces(this.model, this.externalTensors(), (t) => this.tensorBytes(t), opts, out, this.backed);
  }

  /** Graph inputs that are not initializers. */
  get inputs(): ValueInfo[] {
    const inits = new Set(this.graph.initializer.map((t: any) => t.name));
    return this.graph.input.filter((i: any) => !inits.has(i.name)).map(valueInfo);
  }

  get outputs(): ValueInfo[] { return this.graph.output.map(valueInfo); }
}
