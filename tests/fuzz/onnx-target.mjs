// The fuzz target: one input through the reader, the channel analysis, one pruning mode and the
// writer. Invariants: only typed errors (SparseKitError, of which OnnxError is one) escape any
// stage; a model that loaded is written, loaded again, and re-encodes to the same bytes; read as
// its own file (file-backed initializers), it gives the same answers and writes the same bytes.
import { SparseKitError } from 'sparsekit-wasm';
import { OnnxModel, findChannelGroups, pruneSparsity, pruneNm, removeChannels } from 'sparsekit-wasm/onnx';

/** A broken invariant: not a typed error, or a round trip that differs. */
export class InvariantError extends Error {
  constructor(stage, message, cause) {
    super(`${stage}: ${message}`);
    this.name = 'InvariantError';
    this.stage = stage;
    this.cause = cause;
  }
}

/** Runs `fn`; a typed error is an answer (returned), anything else breaks the invariant. */
function typed(stage, fn) {
  try {
    return { value: fn() };
  } catch (e) {
    if (e instanceof SparseKitError) return { error: e };
    throw new InvariantError(stage, `untyped ${e?.name ?? typeof e}: ${e?.message ?? e}`, e);
  }
}

const byteEqual = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * One execution. `mode` picks the pruning (0 sparsity, 1 N:M, 2 channels), `x` a parameter in
 * [0, 1). Returns how far the input got: 'refused:<reason>' (typed error at load), 'loaded',
 * 'analysed', 'pruned' (the write refused it with a typed error), 'written' (round trip checked).
 */
export function runOne(bytes, mode, x) {
  const load = typed('load', () => OnnxModel.parse(bytes));
  if (load.error) return `refused:${load.error.reason ?? load.error.code}`;
  const model = load.value;
  const { stage, enc, chunks } = pruneAndEncode(model, mode, x);
  // The same input read as a file is (file-backed.ts, every initializer backed): the same answers,
  // the same bytes.
  const file = typed('load (file-backed)', () => OnnxModel.parse(bytes, { externalFiles: { [SELF]: bytes }, fileBacked: { location: SELF, minBytes: 1 } }));
  if (file.error) throw new InvariantError('load (file-backed)', `loads from bytes, not from its file: ${file.error.reason}: ${file.error.message}`);
  const f = pruneAndEncode(file.value, mode, x);
  if (f.stage !== stage || !!f.enc.error !== !!enc.error || (enc.error && f.enc.error.reason !== enc.error.reason)) {
    throw new InvariantError('file-backed', `from its file: ${f.stage}/${f.enc.error?.reason ?? 'encoded'}, from bytes: ${stage}/${enc.error?.reason ?? 'encoded'}`);
  }
  if (enc.error) return stage;
  const data = concat(chunks);
  if (!byteEqual(enc.value, f.enc.value) || !byteEqual(data, concat(f.chunks))) throw new InvariantError('file-backed', 'from its file, the model writes other bytes than from bytes');
  let again;
  try {
    again = OnnxModel.parse(enc.value, { externalFiles: { 'out.onnx.data': data } });
  } catch (e) {
    throw new InvariantError('reload', `a written model does not load again: ${e?.reason ?? e?.name}: ${e?.message}`, e);
  }
  const chunks2 = [];
  const enc2 = typed('re-encode', () => again.encode({ location: 'out.onnx.data', sink: (b) => chunks2.push(b.slice()) }));
  if (enc2.error) throw new InvariantError('re-encode', `a reloaded model does not encode: ${enc2.error.message}`);
  if (!byteEqual(enc.value, enc2.value)) throw new InvariantError('round-trip', `load -> write -> load -> write gives different model bytes (${enc.value.length} vs ${enc2.value.length})`);
  const data2 = chunks2.reduce((n, c) => n + c.length, 0);
  if (data2 !== data.length) throw new InvariantError('round-trip', `external data of ${data.length} bytes re-written as ${data2}`);
  return `written:${stage}`;
}

/** The name the input is given as its own file (one a mutated model does not refer to). */
const SELF = 'fuzz-input-itself.onnx';

const concat = (chunks) => {
  const data = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) { data.set(c, at); at += c.length; }
  return data;
};

/** The analysis, one pruning mode and the encoding of a loaded model: how far it got, and the bytes. */
function pruneAndEncode(model, mode, x) {
  const groups = typed('findChannelGroups', () => findChannelGroups(model));
  let stage = groups.error ? 'loaded' : 'analysed';
  const prune = typed(['pruneSparsity', 'pruneNm', 'removeChannels'][mode], () => {
    if (mode === 0) return pruneSparsity(model, { sparsity: x, scope: x < 0.3 ? 'row' : x < 0.6 ? 'layer' : 'global' });
    if (mode === 1) return pruneNm(model, { nm: x < 0.5 ? [2, 4] : [1, 2] });
    return removeChannels(model, { fraction: Math.min(0.9, x), scope: x < 0.5 ? 'layer' : 'global', roundTo: x < 0.25 ? 1 : 2 });
  });
  if (!prune.error) stage = 'pruned';
  const chunks = [];
  const enc = typed('encode', () => model.encode({ location: 'out.onnx.data', sink: (b) => chunks.push(b.slice()) }));
  return { stage, enc, chunks };
}
