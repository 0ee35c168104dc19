// sparsekit-wasm/onnx: read, inspect, prune and write ONNX models (browsers and Node).
export { OnnxModel, MemoryExternalSource, ModelProto, DT, dtypeName, transpose } from './model.js';
export type { OnnxWeight, WeightView, ParseOptions, ExternalSource, SpillStore, ValueInfo, TensorProto } from './model.js';
export { OnnxError } from './errors.js';
export type { OnnxReason } from './errors.js';
export { halfToFloat, floatToHalf, halfArrayToFloat, floatArrayToHalf, bf16ArrayToFloat, floatArrayToBf16 } from './fp16.js';
/** The ONNX schema text (protobufjs), for tools that decode / re-encode models themselves. */
export { ONNX_PROTO } from './schema.js';
export { pruneSparsity, pruneNm, parseNm } from './prune.js';
export type { PruneOptions, PruneReport, LayerReport, Scope, ProgressFn } from './prune.js';
export { findChannelGroups, removeChannels } from './channels.js';
export type { ChannelGroup, ChannelOptions, ChannelAnalysis, GroupMember } from './channels.js';
import { OnnxModel, type ParseOptions } from './model.js';
import { OnnxError } from './errors.js';

/**
 * The Node file helpers, loaded only when a path is used. The specifier is computed so that
 * bundlers (Vite, webpack, esbuild) do not pull node:fs into browser builds.
 */
function nodeIo(): Promise<typeof import('./node-io.js')> {
  return import(/* @vite-ignore */ /* webpackIgnore: true */ new URL('./node-io.js', import.meta.url).href);
}

const isNode = typeof process !== 'undefined' && !!(process as { versions?: { node?: string } }).versions?.node;

/**
 * Loads a model from bytes, or (Node only) from a path whose external data files sit next to it.
 */
export async function loadOnnx(src: string | Uint8Array | ArrayBuffer, opts: ParseOptions = {}): Promise<OnnxModel> {
  if (typeof src !== 'string') return OnnxModel.parse(src, opts);
  if (!isNode) throw new OnnxError('unsupported', 'loading a model from a path needs Node: pass the bytes in a browser', 'unsupported_environment');
  const io = await nodeIo();
  return io.loadOnnxFile(src);
}

/** Node only: writes the model (and its external data as `<file>.data`) via temporary files. */
export async function saveOnnx(model: OnnxModel, file: string) {
  if (!isNode) throw new OnnxError('unsupported', 'saving to a path needs Node: use model.encode() in a browser', 'unsupported_environment');
  const io = await nodeIo();
  return io.saveOnnxFile(model, file);
}
