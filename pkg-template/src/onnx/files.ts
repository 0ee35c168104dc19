// Models and samples from paths (Node), or models from bytes (anywhere): the file side of the module.
import type { CalibrationDirOptions } from './calib/samples-dir.js';
import type { TransportSizeOptions, TransportSize } from './transport-size.js';
import type { TextModelFiles, TextFileOptions, ResolveOptions } from './text/text-files.js';
import type { SavedFolder } from './text/tjs-folder.js';
import type { TjsOutput } from './text/tjs-layout.js';
import type { TextSampleSet } from './text/text-samples.js';
import type { InputSample } from './calib/inputs.js';
import type { CutStore } from './calib/cut-store.js';
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
 * Node: a cut store in an unlinked scratch file, for calibratePrune's / runJob's `cutStore`: the
 * part of a large calibrated run's cut past its budget waits there instead of in memory.
 */
export async function fileCutStore(): Promise<CutStore> {
  if (!isNode) throw new OnnxError('unsupported', 'a cut store in a file needs Node: leave cutStore out in a browser', 'unsupported_environment');
  const mod: typeof import('./cut-file.js') = await import(/* @vite-ignore */ /* webpackIgnore: true */ new URL('./cut-file.js', import.meta.url).href);
  return new mod.FileCutStore();
}

/**
 * Node: the model written as a graph and a data file in a temporary directory for an onnxruntime
 * session that reads them itself (node-io.ts's sessionFiles); undefined elsewhere, or when the
 * model cannot be written so.
 */
export async function sessionFilesOf(model: OnnxModel): Promise<import('./node-io.js').SessionFiles | undefined> {
  return isNode ? (await nodeIo()).sessionFiles(model) : undefined;
}

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

/**
 * Node only: calibration samples from a directory of `.npy` / `.png` files or one folder per sample
 * (layout in docs/guides/calibration.md), checked against the model's inputs.
 */
export async function readCalibrationDir(dir: string, model: OnnxModel, opts: CalibrationDirOptions = {}): Promise<InputSample[]> {
  if (!isNode) throw new OnnxError('unsupported', 'reading calibration files from a directory needs Node: pass InputSample[] in a browser', 'unsupported_environment');
  const mod: typeof import('./calib/samples-dir.js') = await import(/* @vite-ignore */ /* webpackIgnore: true */ new URL('./calib/samples-dir.js', import.meta.url).href);
  return mod.readCalibrationDir(dir, model, opts);
}

/**
 * Node only: what model files travel as over HTTP (raw, gzip 9, brotli 11), estimated by default
 * (TransportSize.method says how, .tolerance how close) or exact with `{ mode: 'exact' }`.
 */
export async function transportSize(sources: (string | Uint8Array)[], opts: TransportSizeOptions = {}): Promise<TransportSize> {
  if (!isNode) throw new OnnxError('unsupported', 'transport sizes use node:zlib: they need Node', 'unsupported_environment');
  const mod: typeof import('./transport-size.js') = await import(/* @vite-ignore */ /* webpackIgnore: true */ new URL('./transport-size.js', import.meta.url).href);
  return mod.transportSize(sources, opts);
}

const textFiles = (): Promise<typeof import('./text/text-files.js')> =>
  import(/* @vite-ignore */ /* webpackIgnore: true */ new URL('./text/text-files.js', import.meta.url).href);

/**
 * Node only: a `.onnx` path or a transformers.js model folder (config.json, tokenizer.json,
 * onnx/model.onnx, or the variant of `opts.dtype`) as its files.
 */
export async function resolveTextModel(src: string, opts: ResolveOptions = {}): Promise<TextModelFiles> {
  if (!isNode) throw new OnnxError('unsupported', 'resolving a model folder needs Node', 'unsupported_environment');
  return (await textFiles()).resolveTextModel(src, opts);
}

/**
 * Node only: writes the model as a transformers.js model folder `dir` (not existing, or empty), the
 * other files of the transformers.js folder `from` copied, the model under its dtype's name
 * (`output`, a job report's, or read off the model); through a temporary folder renamed at the end.
 */
export async function saveTransformersFolder(model: OnnxModel, dir: string, opts: { from: string; output?: TjsOutput }): Promise<SavedFolder> {
  if (!isNode) throw new OnnxError('unsupported', 'writing a folder needs Node: use model.encode() and the job report output in a browser', 'unsupported_environment');
  const mod: typeof import('./text/tjs-folder.js') = await import(/* @vite-ignore */ /* webpackIgnore: true */ new URL('./text/tjs-folder.js', import.meta.url).href);
  return mod.saveTransformersFolder(model, dir, opts);
}

/** Node only: samples of a `.txt` / `.jsonl` file for a text model (see textSamples); the tokenizer may be a tokenizer.json path. */
export async function readTextSamples(file: string, opts: TextFileOptions): Promise<TextSampleSet> {
  if (!isNode) throw new OnnxError('unsupported', 'reading a text file needs Node: pass the text to textSamples in a browser', 'unsupported_environment');
  return (await textFiles()).readTextSamples(file, opts);
}
