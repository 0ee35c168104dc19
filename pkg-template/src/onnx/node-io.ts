// Node file I/O of ONNX models: external data read on demand (a tensor at a time, never whole
// files), and saving through temporary files renamed at the end, so a failed run leaves no output.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OnnxModel, ModelProto, basename, u8, storageOf, type ExternalSource, type SpillStore, type TensorProto } from './model.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
import { OnnxError } from './errors.js';

/** External data files next to the model, read with positioned reads when a tensor is needed. */
export class FileExternalSource implements ExternalSource {
  private fds = new Map<string, { fd: number; size: number }>();
  constructor(readonly dir: string) {}
  private open(loc: string) {
    const name = basename(loc);
    let f = this.fds.get(name);
    if (!f) {
      const p = path.join(this.dir, name);
      const fd = fs.openSync(p, 'r');
      f = { fd, size: fs.fstatSync(fd).size };
      this.fds.set(name, f);
    }
    return f;
  }
  has(loc: string) {
    try { this.open(loc); return true; } catch { return false; }
  }
  size(loc: string) { return this.open(loc).size; }
  /**
   * The whole file `loc`, read through the descriptor that later reads of it use: what was read
   * and what is read again are one file, even if the path is replaced meanwhile (an output
   * written over its input is renamed into place; the open descriptor keeps the old one).
   */
  readAll(loc: string): Buffer {
    const { fd, size } = this.open(loc);
    const out = Buffer.allocUnsafeSlow(size);
    let done = 0;
    while (done < size) {
      const n = fs.readSync(fd, out, done, size - done, done);
      if (n <= 0) throw new OnnxError('truncated', `"${basename(loc)}" ends before its ${size} bytes (changed while it was read?)`);
      done += n;
    }
    return out;
  }
  read(loc: string, offset: number, length: number) {
    const { fd } = this.open(loc);
    const out = new Uint8Array(length);
    let done = 0;
    while (done < length) {
      const n = fs.readSync(fd, out, done, length - done, offset + done);
      if (n <= 0) throw new OnnxError('truncated', `external data file "${basename(loc)}" ends before offset ${offset + length}`);
      done += n;
    }
    return out;
  }
  close() {
    for (const { fd } of this.fds.values()) fs.closeSync(fd);
    this.fds.clear();
  }
}

/**
 * Changed external tensors appended to an unlinked scratch file in the temp directory (the space is
 * freed when the process ends), and a calibrated run's weights from before it (rollback.ts): memory
 * holds one tensor at a time. The file is made at the first put: a model that changes nothing makes none.
 */
export class FileSpillStore implements SpillStore {
  private fd = -1;
  private size = 0;
  private open(): number {
    if (this.fd < 0) this.fd = scratchFile('sparsekit-onnx-');
    return this.fd;
  }
  put(bytes: Uint8Array): number {
    const at = this.size;
    writeAt(this.open(), bytes, at);
    this.size += bytes.length;
    return at;
  }
  get(ref: number, length: number): Uint8Array {
    const out = new Uint8Array(length);
    readAt(this.open(), out, ref, 'the scratch file of changed tensors');
    return out;
  }
}

/** A file in the temp directory, open for reading and writing and already unlinked: its space goes when the process ends (or the descriptor closes). */
export function scratchFile(prefix: string): number {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const p = path.join(dir, 'scratch.bin');
  const fd = fs.openSync(p, 'w+');
  fs.unlinkSync(p);
  fs.rmdirSync(dir);
  return fd;
}

/** All of `bytes` written at `at` (writeSync may write less than asked). */
export function writeAt(fd: number, bytes: Uint8Array, at: number): void {
  let done = 0;
  while (done < bytes.length) done += fs.writeSync(fd, bytes, done, bytes.length - done, at + done);
}

/** `into` filled from `at`; a file that ends first is corrupt (`what` names it). */
export function readAt(fd: number, into: Uint8Array, at: number, what: string): void {
  let done = 0;
  while (done < into.length) {
    const n = fs.readSync(fd, into, done, into.length - done, at + done);
    if (n <= 0) throw new OnnxError('corrupt', `${what} ends early`);
    done += n;
  }
}

/**
 * Reads an .onnx file; its external data files are looked up next to it. Its large inline
 * initializers stay in the file, read again when needed (file-backed.ts): the file's bytes are
 * not held once the model is parsed.
 */
export function loadOnnxFile(file: string): OnnxModel {
  const external = new FileExternalSource(path.dirname(path.resolve(file)));
  let bytes: Uint8Array;
  try {
    if (fs.statSync(file).isDirectory()) throw Object.assign(new Error('directory'), { code: 'EISDIR' });
    bytes = external.readAll(basename(file));
  } catch (e) {
    if (e instanceof OnnxError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new OnnxError('no_file', `cannot read "${file}": ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (e as Error).message}`);
  }
  return OnnxModel.parse(bytes, { externalFiles: external, fileName: basename(file), spill: new FileSpillStore(), fileBacked: { location: basename(file) } });
}

/** What saveOnnxFile wrote. */
export interface SavedFiles {
  model: string;
  modelBytes: number;
  /** The external data file (when the model has external tensors). */
  data?: string;
  dataBytes: number;
}

/**
 * Writes the model to `file` (and its external tensors to `file + '.data'`), each first to a
 * temporary name in the same directory, renamed only when everything was written.
 */
export function saveOnnxFile(model: OnnxModel, file: string): SavedFiles {
  const dir = path.dirname(path.resolve(file));
  const tag = `.tmp-${process.pid}-${Date.now().toString(36)}`;
  const modelTmp = path.join(dir, `.${basename(file)}${tag}`);
  const dataName = `${basename(file)}.data`;
  const dataTmp = path.join(dir, `.${dataName}${tag}`);
  let fd = -1, modelFd = -1;
  let dataBytes = 0;
  try {
    const external = model.externalTensors().length > 0;
    if (external) fd = fs.openSync(dataTmp, 'w');
    modelFd = fs.openSync(modelTmp, 'w');
    // The model in pieces (model.encodeTo): its weights are written from where they are held.
    const modelBytes = model.encodeTo((b) => writeAll(modelFd, b), external ? {
      location: dataName,
      sink: (b) => { writeAll(fd, b); dataBytes += b.length; },
    } : {});
    for (const f of [fd, modelFd]) if (f >= 0) fs.closeSync(f);
    fd = modelFd = -1;
    if (dataBytes || fs.existsSync(dataTmp)) fs.renameSync(dataTmp, path.join(dir, dataName));
    fs.renameSync(modelTmp, path.resolve(file));
    return { model: path.resolve(file), modelBytes, data: fs.existsSync(path.join(dir, dataName)) && external ? path.join(dir, dataName) : undefined, dataBytes };
  } finally {
    for (const f of [fd, modelFd]) if (f >= 0) fs.closeSync(f);
    for (const p of [modelTmp, dataTmp]) if (fs.existsSync(p)) fs.unlinkSync(p);
  }
}

/** Writes all of `b` at the file's position (writeSync may write less than asked). */
export function writeAll(fd: number, b: Uint8Array): void {
  let done = 0;
  while (done < b.length) done += fs.writeSync(fd, b, done, b.length - done);
}

/** A model written for an onnxruntime session read from disk (sessionFiles), and how to remove it. */
export interface SessionFiles { file: string; remove(): void }

/** Initializers from this size go to the data file of sessionFiles (smaller ones stay in the graph). */
const SESSION_EXTERNAL_MIN = 1024;

/**
 * The model as two files in a new temporary directory, for onnxruntime to read itself: the graph,
 * and every main-graph initializer of SESSION_EXTERNAL_MIN bytes or more (and every external one)
 * in one data file beside it, offsets aligned to 64 bytes. onnxruntime maps such a file instead of
 * copying it, and the model is never encoded whole in JS (issue 37: from bytes a session of
 * SmolLM2 took 1.22 GB of encoded model in JS, 0.9 GB in onnxruntime, and 0.6 GB of it stayed after
 * release; from these files 0.55 GB, 0.1 GB after). The tensors are written one at a time from
 * where they are held; their fields are put back afterwards. Undefined when some external tensor
 * is not a main-graph initializer (its reference would not resolve from the new directory).
 */
export function sessionFiles(model: OnnxModel): SessionFiles | undefined {
  const inits: TensorProto[] = model.graph.initializer ?? [];
  const mine = new Set(inits);
  if (model.externalTensors().some((t) => !mine.has(t))) return undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sparsekit-session-'));
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  const file = path.join(dir, 'model.onnx'), data = 'model.onnx.data';
  const own = (t: object, k: string) => Object.prototype.hasOwnProperty.call(t, k);
  const saved: { t: TensorProto; fields: Record<string, unknown> }[] = [];
  let fd = -1;
  try {
    fd = fs.openSync(path.join(dir, data), 'w');
    let offset = 0;
    for (const t of inits) {
      const external = storageOf(t) === 'external';
      if (!external && !(storageOf(t) === 'raw_data' && u8(t.raw_data).length >= SESSION_EXTERNAL_MIN)) continue;
      const bytes = model.tensorBytes(t);
      offset += (64 - (offset % 64)) % 64;
      writeAt(fd, bytes, offset);
      const fields: Record<string, unknown> = {};
      for (const k of ['raw_data', 'data_location', 'external_data']) if (own(t, k)) fields[k] = (t as any)[k];
      saved.push({ t, fields });
      delete (t as any).raw_data;
      t.data_location = 1;
      t.external_data = [{ key: 'location', value: data }, { key: 'offset', value: String(offset) }, { key: 'length', value: String(bytes.length) }];
      offset += bytes.length;
    }
    fs.closeSync(fd);
    fd = -1;
    fs.writeFileSync(file, ModelProto.encode(model.model).finish());
    return { file, remove };
  } catch (e) {
    remove();
    throw e;
  } finally {
    if (fd >= 0) fs.closeSync(fd);
    for (const { t, fields } of saved) {
      for (const k of ['raw_data', 'data_location', 'external_data']) delete (t as any)[k];
      Object.assign(t, fields);
    }
  }
}
