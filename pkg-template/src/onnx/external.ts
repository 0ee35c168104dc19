// External data: where it comes from (files in memory, or read on demand in Node), where changed
// external tensors wait until the write, and the parsing of a tensor's location / offset / length,
// whose numbers come from the file and are checked before anything is read.
import { OnnxError } from './errors.js';
import { basename, u8, type TensorProto } from './tensor-data.js';

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
    if (offset < 0 || offset + length > f.length) {
      throw new OnnxError('bad_external', `external data read of ${length} bytes at offset ${offset} lies outside "${basename(loc)}" (${f.length} bytes)`);
    }
    return f.subarray(offset, offset + length);
  }
}

/** A tensor's external data reference, as declared in the file. */
export interface ExternalRef {
  location: string;
  offset: number;
  /** The declared length, when the file gives one. */
  length?: number;
}

/** A decimal byte count from an external_data entry: a non-negative safe integer, or refused. */
function byteCount(t: TensorProto, key: string, value: unknown): number {
  const s = String(value ?? '').trim();
  const n = /^\d{1,16}$/.test(s) ? Number(s) : NaN;
  if (!Number.isSafeInteger(n)) {
    throw new OnnxError('bad_external', `tensor "${t.name}": external data ${key} "${s.slice(0, 40)}" is not a byte count (a non-negative integer below 2^53)`);
  }
  return n;
}

/** Parses (and checks the form of) a tensor's external_data entries. */
export function externalRefOf(t: TensorProto): ExternalRef {
  let location: string | undefined;
  let offset = 0;
  let length: number | undefined;
  for (const e of t.external_data ?? []) {
    if (e.key === 'location') location = String(e.value ?? '');
    else if (e.key === 'offset') offset = byteCount(t, 'offset', e.value);
    else if (e.key === 'length') length = byteCount(t, 'length', e.value);
  }
  if (!location || !basename(location)) {
    throw new OnnxError('bad_external', `tensor "${t.name}" is stored as external data but names no file (no "location")`);
  }
  return { location, offset, length };
}

/**
 * Checks an external tensor of `size` bytes against its declaration and, when the file is at hand,
 * against the file's size: the declared length must be the tensor's size, and the range must lie
 * inside the file.
 */
export function checkExternalRange(t: TensorProto, ref: ExternalRef, size: number, source: ExternalSource): void {
  if (ref.length !== undefined && ref.length !== size) {
    throw new OnnxError('size_mismatch', `tensor "${t.name}" should hold ${size} bytes but its external data declares ${ref.length}`);
  }
  if (!source.has(ref.location)) return; // asked for later (missingExternalFiles), checked again at read
  const fileSize = source.size(ref.location);
  if (ref.offset + size > fileSize) {
    throw new OnnxError('bad_external', `external data of "${t.name}" lies outside "${basename(ref.location)}" (offset ${ref.offset}, ${size} bytes, file ${fileSize} bytes)`);
  }
}
