// Inline weights of a model read from a file, left in the file instead of held in memory (issue 40:
// the decoded protobuf of an inline model kept all its weights in the JS heap for the whole run,
// beside the segments' sessions and the activations). After the load checks, a raw_data initializer
// of the main graph of at least `minBytes` becomes an external tensor whose location is the model
// file itself, so that it is read (ExternalSource), changed (the spill) and put back (storedState)
// the way external data is; its own fields come back, with its current bytes in raw_data, whenever
// the model is encoded, so the written model is the one an in-memory load writes. Every other bytes
// field that views the file's buffer is copied, so that nothing keeps that buffer alive.
//
// Only the main graph's initializers are backed: the segments of a calibrated run read external
// bytes in for those alone (calib/graph-cut.ts), and node attributes (ConstantOfShape's value,
// read directly by channels/int-vectors.ts) keep their raw_data.
import type protobuf from 'protobufjs';
import { OnnxError } from './errors.js';
import { ModelProto } from './proto.js';
import { modelTensors } from './walk.js';
import { ELEM_SIZE, prod, toNum, type TensorProto } from './tensor-data.js';
import type { ExternalSource } from './external.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** The size from which an initializer's bytes stay in the file (smaller ones cost less than their bookkeeping). */
export const FILE_BACKED_MIN_BYTES = 64 * 1024;

/** Which tensors of a model are read from its own file (ParseOptions.fileBacked). */
export interface FileBackedOptions {
  /** The model file's name, as `externalFiles` resolves it. */
  location: string;
  /** Initializers with fewer raw_data bytes are copied instead (default FILE_BACKED_MIN_BYTES). */
  minBytes?: number;
}

/** A backed tensor's fields as decoded (given back when it is encoded) and as backed. */
interface Origin {
  hadLocation: boolean;
  dataLocation: unknown;
  externalData: unknown[];
  backedEntries: { key: string; value: string }[];
}

const own = (m: any, k: string) => Object.prototype.hasOwnProperty.call(m, k);

/** The backed tensors of one model, and their inline form for the writer. */
export class FileBacked {
  private readonly origins = new Map<TensorProto, Origin>();

  has(t: TensorProto): boolean { return this.origins.has(t); }

  /** The same backing for a copy's tensors `mine`, paired in order with this model's `theirs` (OnnxModel.copy). */
  pairedWith(theirs: readonly TensorProto[], mine: readonly TensorProto[]): FileBacked {
    const b = new FileBacked();
    theirs.forEach((t, i) => { const o = this.origins.get(t); if (o) b.origins.set(mine[i], o); });
    return b;
  }
  get size(): number { return this.origins.size; }

  /** Makes `t` external at `offset` of `location` (its raw_data lies there in the file). */
  back(t: TensorProto, location: string, offset: number, length: number): void {
    const backedEntries = [
      { key: 'location', value: location }, { key: 'offset', value: String(offset) }, { key: 'length', value: String(length) },
    ];
    this.origins.set(t, { hadLocation: own(t, 'data_location'), dataLocation: t.data_location, externalData: t.external_data, backedEntries });
    t.data_location = 1;
    t.external_data = backedEntries;
    delete t.raw_data;
  }

  /**
   * `t` as it is written: a plain copy with the decoded data_location and external_data, without
   * raw_data (the writer puts its current bytes there), or undefined when `t` is not backed.
   */
  inlineForm(t: TensorProto): any {
    const o = this.origins.get(t);
    if (!o) return undefined;
    const f: any = { ...t, external_data: o.externalData };
    if (o.hadLocation) f.data_location = o.dataLocation; else delete f.data_location;
    delete f.raw_data;
    return f;
  }

  /** The bytes `t` is written with: its current dims' size, as tensorBytes (`bytesOf`) gives them. */
  byteLength(t: TensorProto): number {
    return ELEM_SIZE[t.data_type] * prod(t.dims.map(toNum));
  }

  /**
   * Runs `fn` with every backed tensor the model holds, except those in `lazy`, in its inline form
   * in place (raw_data from `bytesOf`), and puts the backed form back afterwards: for encoders that
   * encode the whole message at once.
   */
  withInline<T>(model: any, bytesOf: (t: TensorProto) => Uint8Array, fn: () => T, lazy?: Set<TensorProto>): T {
    const done = new Set<TensorProto>();
    try {
      for (const t of modelTensors(model)) {
        const o = this.origins.get(t);
        if (!o || lazy?.has(t) || done.has(t)) continue;
        const raw = bytesOf(t);
        done.add(t);
        t.external_data = o.externalData;
        if (o.hadLocation) t.data_location = o.dataLocation; else delete t.data_location;
        t.raw_data = raw;
      }
      return fn();
    } finally {
      for (const t of done) {
        t.data_location = 1;
        t.external_data = this.origins.get(t)!.backedEntries;
        delete t.raw_data;
      }
    }
  }
}

/**
 * Backs the main graph's large raw_data initializers of `model` (decoded from `data`) by the file
 * `source` reads as `opts.location`, which must be `data` itself (the same size), and copies every
 * other bytes field that still views `data`'s buffer.
 */
export function backByFile(model: any, data: Uint8Array, opts: FileBackedOptions, source: ExternalSource): FileBacked {
  const backed = new FileBacked();
  if (!source.has(opts.location) || source.size(opts.location) !== data.length) {
    throw new OnnxError('bad_external', `the model file "${opts.location}" is not the ${data.length} bytes that were read (changed while it was loaded?)`);
  }
  const min = opts.minBytes ?? FILE_BACKED_MIN_BYTES;
  for (const t of model.graph?.initializer ?? []) {
    const raw = t.raw_data;
    if (!(raw instanceof Uint8Array) || raw.buffer !== data.buffer || raw.length < min || t.data_location === 1) continue;
    const offset = raw.byteOffset - data.byteOffset;
    // Only types whose bytes tensorBytes reads, with exactly their dims' bytes (the load checks'),
    // lying inside the file: anything else keeps a copy.
    const esz = ELEM_SIZE[t.data_type];
    if (!esz || esz * prod(t.dims.map(toNum)) !== raw.length || offset < 0 || offset + raw.length > data.length) continue;
    backed.back(t, opts.location, offset, raw.length);
  }
  copyViews(ModelProto, model, data.buffer);
  return backed;
}

/**
 * Replaces every bytes field of `msg` (of protobufjs type `type`, nested messages included) that
 * views `buffer` by a copy. The depth was bounded by the wire check; the walk keeps its own stack.
 */
function copyViews(type: protobuf.Type, msg: any, buffer: ArrayBufferLike): void {
  const stack: [protobuf.Type, any][] = [[type, msg]];
  const copy = (v: unknown) => (v instanceof Uint8Array && v.buffer === buffer ? new Uint8Array(v) : v);
  while (stack.length) {
    const [ty, m] = stack.pop()!;
    for (const f of ty.fieldsArray) {
      if (!own(m, f.name) || m[f.name] == null) continue;
      const v = m[f.name];
      if (f.type === 'bytes') m[f.name] = Array.isArray(v) ? v.map(copy) : copy(v);
      else if (f.resolvedType && (f.resolvedType as protobuf.Type).fieldsArray) {
        for (const x of Array.isArray(v) ? v : [v]) if (x && typeof x === 'object') stack.push([f.resolvedType as protobuf.Type, x]);
      }
    }
  }
}
