// Reading, editing and re-encoding ONNX models with protobufjs and the ONNX schema of sparsekit-wasm/onnx.
// Works in the browser, in a worker and in Node (the tests use it on the real PaddleOCR models).
import protobuf from 'protobufjs';
import { ONNX_PROTO, halfArrayToFloat, floatArrayToHalf, bf16ArrayToFloat, floatArrayToBf16 } from 'sparsekit-wasm/onnx';

const root = protobuf.parse(ONNX_PROTO, { keepCase: true }).root;
export const ModelProto = root.lookupType('onnx.ModelProto');
export const TensorProto = root.lookupType('onnx.TensorProto');

export const DT = { FLOAT: 1, UINT8: 2, INT8: 3, INT32: 6, INT64: 7, BOOL: 9, FLOAT16: 10, DOUBLE: 11, BFLOAT16: 16 };
const DT_NAMES = { 1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64', 8: 'string',
  9: 'bool', 10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64', 16: 'bfloat16' };
const FLOAT_TYPES = new Set([DT.FLOAT, DT.FLOAT16, DT.BFLOAT16]);
const ELEM_SIZE = { 1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 16: 2 };

/** Ops whose weight input we can prune, and which input index holds the weight. */
export const WEIGHT_INPUT = { Conv: 1, ConvTranspose: 1, Gemm: 1, MatMul: 1 };

export class OnnxError extends Error {
  constructor(code, message) { super(message); this.name = 'OnnxError'; this.code = code; }
}

export const toNum = (x) => (typeof x === 'number' ? x : x == null ? 0 : typeof x.toNumber === 'function' ? x.toNumber() : Number(x));
export const dtypeName = (t) => DT_NAMES[t] ?? `type ${t}`;
const numelOf = (dims) => dims.reduce((a, b) => a * b, 1);
const basename = (p) => String(p).split(/[\\/]/).pop();

function u8(buf) {
  if (buf instanceof Uint8Array) return buf;
  if (buf instanceof ArrayBuffer) return new Uint8Array(buf);
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** Aligned copy of `len` bytes at `off` as a typed array of `Ctor` (little-endian host assumed). */
function typedFromBytes(bytes, off, len, Ctor) {
  const copy = new Uint8Array(len);
  copy.set(bytes.subarray(off, off + len));
  return new Ctor(copy.buffer);
}

function decodeError(e, size) {
  const msg = String(e && e.message || e);
  if (/index out of range/i.test(msg)) {
    return new OnnxError('truncated', `The file ends too early: it looks like a truncated ONNX model (${size} bytes; ${msg}). Re-download or re-export it.`);
  }
  return new OnnxError('not_onnx', `This is not a valid ONNX model: the protobuf decoder failed (${msg}).`);
}

/**
 * A parsed model. `weights` lists every float tensor constant of the main graph: initializers and
 * the `value` tensors of Constant nodes (PaddleOCR exports keep their weights in Constant nodes).
 */
export class OnnxModel {
  /**
   * @param {Uint8Array|ArrayBuffer} bytes the .onnx file
   * @param {{externalFiles?: Map<string, Uint8Array>|Record<string, Uint8Array>, fileName?: string}} [opts]
   */
  static parse(bytes, opts = {}) {
    const data = u8(bytes);
    if (data.length === 0) throw new OnnxError('not_onnx', 'The file is empty.');
    let model;
    try {
      model = ModelProto.decode(data);
    } catch (e) {
      throw decodeError(e, data.length);
    }
    return new OnnxModel(model, data, opts);
  }

  constructor(model, bytes, opts) {
    this.model = model;
    this.byteLength = bytes.length;
    this.fileName = opts.fileName ?? 'model.onnx';
    this.externalFiles = new Map();
    const ext = opts.externalFiles instanceof Map ? opts.externalFiles : new Map(Object.entries(opts.externalFiles ?? {}));
    for (const [k, v] of ext) this.externalFiles.set(basename(k), u8(v));
    this.modifiedExternal = new Map();
    this.#validate();
    this.#collectWeights();
  }

  get graph() { return this.model.graph; }
  get irVersion() { return toNum(this.model.ir_version); }
  get opsets() { return this.model.opset_import.map((o) => `${o.domain || 'ai.onnx'}:${toNum(o.version)}`); }

  #validate() {
    const m = this.model;
    const g = m.graph;
    if (!g || !m.ir_version) {
      throw new OnnxError('not_onnx', 'This file is not an ONNX model: it has no ' + (g ? 'IR version' : 'graph') + '.');
    }
    if (!g.node.length) throw new OnnxError('invalid', 'The ONNX graph has no nodes.');
    if (!g.output.length) throw new OnnxError('truncated', 'The ONNX graph declares no outputs: the file is probably truncated.');
    const known = new Set(['']);
    for (const t of g.initializer) known.add(t.name);
    for (const i of g.input) known.add(i.name);
    for (const n of g.node) for (const o of n.output) known.add(o);
    for (const n of g.node) {
      if (!n.op_type) throw new OnnxError('invalid', `A node of the graph has no op type (node ${n.name || '(unnamed)'}).`);
      for (const i of n.input) {
        if (!known.has(i)) {
          throw new OnnxError('truncated', `Node ${n.name || n.op_type} reads "${i}", which no node, input or initializer defines: the file is truncated or corrupt.`);
        }
      }
    }
    for (const o of g.output) if (!known.has(o.name)) throw new OnnxError('invalid', `Graph output "${o.name}" is never produced.`);
  }

  #collectWeights() {
    const g = this.graph;
    const consumers = new Map();
    g.node.forEach((n, ni) => n.input.forEach((name, k) => {
      if (!consumers.has(name)) consumers.set(name, []);
      consumers.get(name).push({ op: n.op_type, node: n.name || `${n.op_type}_${ni}`, inputIndex: k, attrs: n.attribute });
    }));
    // The weight use of a tensor, looking through a Cast / Identity (e.g. float16 weights cast to float).
    const weightUse = (name, depth = 0) => {
      const cons = consumers.get(name) ?? [];
      const direct = cons.find((c) => WEIGHT_INPUT[c.op] === c.inputIndex);
      if (direct || depth > 1) return direct;
      for (const c of cons) {
        if ((c.op === 'Cast' || c.op === 'Identity') && cons.length === 1) {
          const n = g.node.find((x) => x.input[0] === name && x.op_type === c.op);
          if (n) return weightUse(n.output[0], depth + 1);
        }
      }
      return undefined;
    };
    const weights = [];
    const add = (name, tensor, source) => {
      if (!tensor || !FLOAT_TYPES.has(tensor.data_type)) return;
      const dims = tensor.dims.map(toNum);
      const cons = consumers.get(name) ?? [];
      const wcons = weightUse(name);
      const primary = wcons ?? cons[0];
      let transB = 0;
      if (wcons && wcons.op === 'Gemm') {
        const a = wcons.attrs.find((x) => x.name === 'transB');
        transB = a ? toNum(a.i) : 0;
      }
      weights.push({
        id: weights.length, name, source, tensor, dims, numel: numelOf(dims),
        dtype: tensor.data_type, dtypeName: dtypeName(tensor.data_type),
        op: primary ? primary.op : '', role: wcons ? 'weight' : primary ? `input ${primary.inputIndex}` : 'unused',
        consumers: cons.map((c) => `${c.op}#${c.inputIndex}`),
        prunable: !!wcons && dims.length >= 2 && numelOf(dims) > 0,
        // The axis of the reduction (the dot product) in this weight: N:M groups run along it.
        reduceAxis: !wcons ? 1 : (wcons.op === 'MatMul' || (wcons.op === 'Gemm' && !transB)) ? 0 : 1,
        storage: this.#storageOf(tensor),
      });
    };
    for (const t of g.initializer) add(t.name, t, 'initializer');
    for (const n of g.node) {
      if (n.op_type !== 'Constant' || (n.domain && n.domain !== 'ai.onnx')) continue;
      const a = n.attribute.find((x) => x.name === 'value' && x.t);
      if (a) add(n.output[0], a.t, 'constant');
    }
    this.weights = weights;
  }

  #storageOf(t) {
    if (t.data_location === 1) return 'external';
    if (t.raw_data && t.raw_data.length) return 'raw_data';
    if (t.data_type === DT.FLOAT && t.float_data.length) return 'float_data';
    if ((t.data_type === DT.FLOAT16 || t.data_type === DT.BFLOAT16) && t.int32_data.length) return 'int32_data';
    return 'empty';
  }

  /** External data files this model refers to, by basename. */
  get externalLocations() {
    const locs = new Set();
    const visit = (t) => {
      if (t.data_location === 1) {
        const e = t.external_data.find((x) => x.key === 'location');
        if (e) locs.add(basename(e.value));
      }
    };
    this.graph.initializer.forEach(visit);
    for (const n of this.graph.node) for (const a of n.attribute) if (a.t) visit(a.t);
    return [...locs];
  }

  missingExternalFiles() {
    return this.externalLocations.filter((l) => !this.externalFiles.has(l));
  }

  #externalRef(w) {
    const kv = Object.fromEntries(w.tensor.external_data.map((x) => [x.key, x.value]));
    const loc = basename(kv.location ?? '');
    const file = this.modifiedExternal.get(loc) ?? this.externalFiles.get(loc);
    if (!file) {
      throw new OnnxError('missing_external', `Weight "${w.name}" is stored in the external file "${loc}": choose it together with the .onnx file.`);
    }
    const offset = Number(kv.offset ?? 0);
    const size = ELEM_SIZE[w.dtype] * w.numel;
    const length = kv.length != null ? Number(kv.length) : size;
    if (length < size || offset + size > file.length) {
      throw new OnnxError('truncated', `External data for "${w.name}" lies outside "${loc}" (offset ${offset}, ${size} bytes, file ${file.length} bytes).`);
    }
    return { loc, file, offset, size };
  }

  #bytesOf(w) {
    const t = w.tensor;
    const size = ELEM_SIZE[w.dtype] * w.numel;
    if (w.storage === 'external') {
      const { file, offset } = this.#externalRef(w);
      return { bytes: file, offset, size };
    }
    if (w.storage === 'raw_data') {
      const raw = u8(t.raw_data);
      if (raw.length !== size) {
        throw new OnnxError('truncated', `Weight "${w.name}" should hold ${size} bytes but has ${raw.length}: the file is corrupt.`);
      }
      return { bytes: raw, offset: 0, size };
    }
    return null;
  }

  /** The weight as float32 (converted from float16 / bfloat16 where needed). */
  readFloat(w) {
    const t = w.tensor;
    const b = this.#bytesOf(w);
    if (b) {
      if (w.dtype === DT.FLOAT) return typedFromBytes(b.bytes, b.offset, b.size, Float32Array);
      const u16 = typedFromBytes(b.bytes, b.offset, b.size, Uint16Array);
      return w.dtype === DT.FLOAT16 ? halfArrayToFloat(u16) : bf16ArrayToFloat(u16);
    }
    if (w.storage === 'float_data') {
      if (t.float_data.length !== w.numel) throw new OnnxError('invalid', `Weight "${w.name}" has ${t.float_data.length} values for shape [${w.dims}].`);
      return Float32Array.from(t.float_data);
    }
    if (w.storage === 'int32_data') {
      if (t.int32_data.length !== w.numel) throw new OnnxError('invalid', `Weight "${w.name}" has ${t.int32_data.length} values for shape [${w.dims}].`);
      const u16 = Uint16Array.from(t.int32_data, (x) => x & 0xffff);
      return w.dtype === DT.FLOAT16 ? halfArrayToFloat(u16) : bf16ArrayToFloat(u16);
    }
    if (w.numel === 0) return new Float32Array(0);
    throw new OnnxError('invalid', `Weight "${w.name}" has no data.`);
  }

  /** Replaces the weight's values, keeping its data type and its storage form. */
  writeFloat(w, values) {
    if (values.length !== w.numel) throw new OnnxError('invalid', `writeFloat: ${values.length} values for "${w.name}" of ${w.numel}`);
    const t = w.tensor;
    if (w.numel === 0) return;
    let encoded;
    if (w.dtype === DT.FLOAT) encoded = new Uint8Array(Float32Array.from(values).buffer);
    else {
      const u16 = w.dtype === DT.FLOAT16 ? floatArrayToHalf(values) : floatArrayToBf16(values);
      if (w.storage === 'int32_data') { t.int32_data = Array.from(u16); return; }
      encoded = new Uint8Array(u16.buffer);
    }
    if (w.storage === 'float_data') { t.float_data = Array.from(values); return; }
    if (w.storage === 'raw_data') { t.raw_data = encoded; return; }
    if (w.storage === 'external') {
      const { loc, offset } = this.#externalRef(w);
      if (!this.modifiedExternal.has(loc)) this.modifiedExternal.set(loc, this.externalFiles.get(loc).slice());
      this.modifiedExternal.get(loc).set(encoded, offset);
      return;
    }
    throw new OnnxError('invalid', `Weight "${w.name}" has no data to replace.`);
  }

  /** The model re-encoded (same graph; weights as edited). External data files: see externalData(). */
  encode() {
    return ModelProto.encode(this.model).finish();
  }

  /** The external data files, edited where weights were written: Map basename -> bytes. */
  externalData() {
    const out = new Map();
    for (const [k, v] of this.externalFiles) out.set(k, this.modifiedExternal.get(k) ?? v);
    return out;
  }

  /** Graph inputs that are not initializers: [{name, elemType, dims: (number|string)[]}]. */
  get inputs() {
    const inits = new Set(this.graph.initializer.map((t) => t.name));
    return this.graph.input.filter((i) => !inits.has(i.name)).map(valueInfo);
  }

  get outputs() { return this.graph.output.map(valueInfo); }
}

function valueInfo(v) {
  const tt = v.type && v.type.tensor_type;
  const dims = tt && tt.shape ? tt.shape.dim.map((d) => (d.dim_value != null && d.value === 'dim_value' ? toNum(d.dim_value) : d.dim_param || '?')) : [];
  return { name: v.name, elemType: tt ? tt.elem_type : 0, dims, rank: tt && tt.shape ? tt.shape.dim.length : -1 };
}
