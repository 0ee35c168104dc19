// Encoding a model: the protobuf of the model with its external tensors gathered into one new data
// file. Nothing is written to the caller's sink before every tensor's bytes are at hand in order;
// the file helpers (node-io.ts) write to temporary names and rename only at the end. A model can
// also be encoded in pieces (encodeModelPieces): the same bytes, with the graph's initializers
// handed out one at a time and their raw_data as held, so that writing a model held in memory does
// not hold it a second time as one encoded buffer (issue 40: 622 MiB of SmolLM2 more at the write).
import type protobuf from 'protobufjs';
import { OnnxError } from './errors.js';
import { ModelProto, onnxRoot } from './proto.js';
import type { TensorProto } from './tensor-data.js';
import type { FileBacked } from './file-backed.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** Where external tensors go when a model is encoded. */
export interface EncodeOptions {
  /** The data file's name, as the encoded model will refer to it. */
  location?: string;
  /** Receives the data file's bytes, in order. */
  sink?: (bytes: Uint8Array) => void;
}

/** Data file offsets are aligned to this (what onnx's own writer and onnxruntime's mmap expect). */
const ALIGN = 64;

/**
 * Runs `fn` with the `external` tensors' bytes (from `bytesOf`) appended to `opts.sink` and their
 * references rewritten to the new data file; the references are put back afterwards, so the
 * in-memory model keeps reading from its sources.
 */
function withNewExternalData<T>(external: TensorProto[], bytesOf: (t: TensorProto) => Uint8Array, opts: EncodeOptions, fn: () => T): T {
  if (!external.length) return fn();
  if (!opts.sink || !opts.location) {
    throw new OnnxError('unsupported', 'this model has external data: encode({location, sink}) or saveOnnx() writes it', 'invalid_arguments');
  }
  const saved = external.map((t) => ({ t, entries: t.external_data }));
  let offset = 0;
  const pad = new Uint8Array(ALIGN);
  try {
    for (const t of external) {
      const bytes = bytesOf(t);
      const gap = (ALIGN - (offset % ALIGN)) % ALIGN;
      if (gap) { opts.sink(pad.subarray(0, gap)); offset += gap; }
      t.external_data = [
        { key: 'location', value: opts.location },
        { key: 'offset', value: String(offset) },
        { key: 'length', value: String(bytes.length) },
      ];
      opts.sink(bytes);
      offset += bytes.length;
    }
    return fn();
  } finally {
    for (const s of saved) s.t.external_data = s.entries;
  }
}

/**
 * Encodes `model` (a decoded ModelProto). The `external` tensors' bytes (from `bytesOf`) are
 * appended to `opts.sink` and their references rewritten into the encoded bytes only: the
 * in-memory model keeps reading from its sources. Without external tensors `sink` is not called.
 * The `backed` tensors (file-backed.ts) are encoded inline, as they were read.
 */
export function encodeModel(model: any, external: TensorProto[], bytesOf: (t: TensorProto) => Uint8Array, opts: EncodeOptions = {}, backed?: FileBacked): Uint8Array {
  const encode = () => ModelProto.encode(model).finish();
  return withNewExternalData(external, bytesOf, opts, () => (backed ? backed.withInline(model, bytesOf, encode) : encode()));
}

const GraphProto = onnxRoot.lookupType('onnx.GraphProto');
const TensorProtoT = onnxRoot.lookupType('onnx.TensorProto');
const GRAPH = ModelProto.fields.graph, INITIALIZER = GraphProto.fields.initializer, RAW = TensorProtoT.fields.raw_data;
const has = (m: any, k: string) => m[k] != null && Object.prototype.hasOwnProperty.call(m, k);

/**
 * The fields of `m` whose number is below (`side` < 0) or above (> 0) `id`, encoded. protobufjs
 * writes a message's fields in the order of their numbers, and skips a field exactly when it is
 * null or not the message's own (an empty repeated field writes nothing), so the part below, the
 * field itself and the part above, concatenated, are the message's encoding.
 */
function part(type: protobuf.Type, m: any, id: number, side: -1 | 1): Uint8Array {
  const o: any = {};
  for (const f of type.fieldsArray) if ((f.id - id) * side > 0 && has(m, f.name)) o[f.name] = m[f.name];
  return type.encode(o).finish();
}

const varintLength = (n: number): number => { let k = 1; while (n >= 128) { n = Math.floor(n / 128); k++; } return k; };
function varint(n: number): Uint8Array {
  const out: number[] = [];
  while (n >= 128) { out.push((n % 128) | 128); n = Math.floor(n / 128); }
  out.push(n);
  return Uint8Array.from(out);
}
/** A length-delimited field's tag (wire type 2). */
const tag = (id: number): Uint8Array => varint(id * 8 + 2);

/**
 * A message's encoding as a list of pieces and their total length; a piece may be a file-backed
 * tensor's bytes of known length, read only when it is written.
 */
interface Lazy { length: number; read: () => Uint8Array }
type Piece = Uint8Array | Lazy;
interface Pieces { list: Piece[]; length: number }
const pieces = (list: Piece[]): Pieces => ({ list, length: list.reduce((a, b) => a + b.length, 0) });

/**
 * One initializer: its fields around raw_data, and raw_data's bytes as held (no copy), or for a
 * backed tensor, in its inline form, its bytes from `bytesOf` when they are written.
 */
function tensorPieces(t: any, bytesOf: (t: TensorProto) => Uint8Array, backed?: FileBacked): Pieces {
  const form = backed?.inlineForm(t);
  if (form) {
    const length = backed!.byteLength(t);
    const read = () => {
      const b = bytesOf(t);
      if (b.length !== length) throw new OnnxError('corrupt', `tensor "${t.name}" has ${b.length} bytes where its dims make ${length}`);
      return b;
    };
    return pieces([part(TensorProtoT, form, RAW.id, -1), tag(RAW.id), varint(length), { length, read }, part(TensorProtoT, form, RAW.id, 1)]);
  }
  if (!has(t, 'raw_data') || !(t.raw_data instanceof Uint8Array)) return pieces([TensorProtoT.encode(t).finish()]);
  const raw: Uint8Array = t.raw_data;
  return pieces([part(TensorProtoT, t, RAW.id, -1), tag(RAW.id), varint(raw.length), raw, part(TensorProtoT, t, RAW.id, 1)]);
}

/**
 * The bytes encodeModel returns, handed to `out` in pieces (the initializers' raw_data as held; a
 * backed initializer's bytes read when their turn comes, so that one of them is in memory at a time).
 */
export function encodeModelPieces(model: any, external: TensorProto[], bytesOf: (t: TensorProto) => Uint8Array, opts: EncodeOptions, out: (bytes: Uint8Array) => void, backed?: FileBacked): number {
  return withNewExternalData(external, bytesOf, opts, () => {
    const g = model.graph;
    if (!has(model, 'graph')) { const b = ModelProto.encode(model).finish(); out(b); return b.length; }
    // Backed tensors elsewhere than the initializers (moved into a node by an edit) go in whole.
    const lazy = new Set<TensorProto>(g.initializer ?? []);
    return backed ? backed.withInline(model, bytesOf, () => piecesOf(model, out, bytesOf, backed), lazy) : piecesOf(model, out, bytesOf);
  });
}

/** The model in pieces, its initializers one at a time (encodeModelPieces). */
function piecesOf(model: any, out: (bytes: Uint8Array) => void, bytesOf: (t: TensorProto) => Uint8Array, backed?: FileBacked): number {
  const g = model.graph;
  const inits = (g.initializer ?? []).map((t: any) => tensorPieces(t, bytesOf, backed));
  const graphBody = [part(GraphProto, g, INITIALIZER.id, -1)];
  for (const p of inits) graphBody.push(tag(INITIALIZER.id), varint(p.length));
  const before = part(ModelProto, model, GRAPH.id, -1), after = part(ModelProto, model, GRAPH.id, 1), tail = part(GraphProto, g, INITIALIZER.id, 1);
  const graphLength = graphBody[0].length + tail.length + inits.reduce((a: number, p: Pieces) => a + tag(INITIALIZER.id).length + varintLength(p.length) + p.length, 0);
  let total = 0;
  const emit = (p: Piece) => { const b = p instanceof Uint8Array ? p : p.read(); if (b.length) { out(b); total += b.length; } };
  emit(before);
  emit(tag(GRAPH.id));
  emit(varint(graphLength));
  emit(graphBody[0]);
  inits.forEach((p: Pieces, i: number) => { emit(graphBody[1 + 2 * i]); emit(graphBody[2 + 2 * i]); p.list.forEach(emit); });
  emit(tail);
  emit(after);
  return total;
}
