// Encoding a model: the protobuf of the model with its external tensors gathered into one new data
// file. Nothing is written to the caller's sink before every tensor's bytes are at hand in order;
// the file helpers (node-io.ts) write to temporary names and rename only at the end.
import { OnnxError } from './errors.js';
import { ModelProto } from './proto.js';
import type { TensorProto } from './tensor-data.js';

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
 * Encodes `model` (a decoded ModelProto). The `external` tensors' bytes (from `bytesOf`) are
 * appended to `opts.sink` and their references rewritten into the encoded bytes only: the
 * in-memory model keeps reading from its sources. Without external tensors `sink` is not called.
 */
export function encodeModel(model: any, external: TensorProto[], bytesOf: (t: TensorProto) => Uint8Array, opts: EncodeOptions = {}): Uint8Array {
  if (!external.length) return ModelProto.encode(model).finish();
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
    return ModelProto.encode(model).finish();
  } finally {
    for (const s of saved) s.t.external_data = s.entries;
  }
}
