// Node only (loaded through index.ts's computed import, so browser bundles never see node:fs): a
// transformers.js model folder resolved to its files, and text files read into samples.
//   FOLDER/config.json  FOLDER/tokenizer.json  [FOLDER/tokenizer_config.json]
//   FOLDER/onnx/model.onnx  (or FOLDER/model.onnx; transformers.js also ships model_quantized.onnx,
//   model_fp16.onnx...: the full-precision model.onnx is the one read unless a dtype names another,
//   tjs-layout.ts's pickVariant)
import fs from 'node:fs';
import path from 'node:path';
import { OnnxError } from '../errors.js';
import type { ValueInfo } from '../model.js';
import { textFormatOf } from './text-source.js';
import { textSamples, type TextSampleOptions, type TextSampleSet } from './text-samples.js';
import { dtypeOfFile, pickVariant, type TjsDtype } from './tjs-layout.js';

/** The files of a transformers.js model folder. */
export interface TextModelFiles {
  /** The ONNX file to load. */
  model: string;
  /** tokenizer.json, when the folder has one. */
  tokenizer?: string;
  /** tokenizer_config.json, when the folder has one. */
  tokenizerConfig?: string;
  /** config.json's contents (model_type, vocab_size...), when the folder has one. */
  config?: Record<string, unknown>;
  /**
   * The transformers.js folder the model belongs to (given as a folder, or as FOLDER/onnx/model*.onnx
   * beside a FOLDER/config.json): what a drop-in output copies its other files from.
   */
  folder?: string;
  /** The dtype its file name stands for (model_quantized.onnx: q8), when it is in such a folder. */
  dtype?: TjsDtype;
}

/** Options of {@link resolveTextModel}. */
export interface ResolveOptions {
  /** In a folder with several onnx/model*.onnx variants, the one of this transformers.js dtype ('q8': model_quantized.onnx). */
  dtype?: string;
}

const noFile = (msg: string) => new OnnxError('no_file', msg, 'invalid_value');
const bad = (msg: string) => new OnnxError('bad_calibration', msg, 'invalid_value');

function readJson(file: string): Record<string, unknown> {
  let text: string;
  try { text = fs.readFileSync(file, 'utf8'); } catch (e) { throw noFile(`${file}: ${(e as Error).message}`); }
  try { return JSON.parse(text) as Record<string, unknown>; } catch { throw bad(`${file} is not JSON`); }
}

/**
 * `src` as model files: a `.onnx` path as it is (with a tokenizer.json beside it, if any), or a
 * transformers.js folder (its onnx/model.onnx or model.onnx, or the variant of `opts.dtype`;
 * tokenizer.json, config.json).
 */
export function resolveTextModel(src: string, opts: ResolveOptions = {}): TextModelFiles {
  let st: fs.Stats;
  try { st = fs.statSync(src); } catch { throw noFile(`${src}: no such file or directory`); }
  const opt = (f: string) => (fs.existsSync(f) ? f : undefined);
  if (!st.isDirectory()) {
    if (opts.dtype !== undefined) throw noFile(`a dtype chooses among a folder's model files; ${src} is a file`);
    const dir = path.dirname(src);
    // FOLDER/onnx/model_quantized.onnx given by path: still part of FOLDER, whose files a drop-in output copies
    const root = path.basename(dir) === 'onnx' && fs.existsSync(path.join(dir, '..', 'config.json')) ? path.dirname(dir) : fs.existsSync(path.join(dir, 'config.json')) ? dir : undefined;
    const dtype = root ? dtypeOfFile(path.basename(src)) : undefined;
    const tokenizer = opt(path.join(dir, 'tokenizer.json')) ?? (root ? opt(path.join(root, 'tokenizer.json')) : undefined);
    const tokenizerConfig = opt(path.join(dir, 'tokenizer_config.json')) ?? (root ? opt(path.join(root, 'tokenizer_config.json')) : undefined);
    return { model: src, tokenizer, tokenizerConfig, ...(root && dtype ? { folder: root, dtype } : {}) };
  }
  // onnx/ first (transformers.js' layout), the folder itself for a bare model.onnx
  const models = (d: string) => { try { return fs.readdirSync(d).filter((n) => dtypeOfFile(n)); } catch { return []; } };
  const sub = path.join(src, 'onnx');
  const dir = models(sub).length ? sub : src;
  const file = pickVariant(models(dir), src, opts.dtype);
  const cfg = opt(path.join(src, 'config.json'));
  return {
    model: path.join(dir, file),
    tokenizer: opt(path.join(src, 'tokenizer.json')),
    tokenizerConfig: opt(path.join(src, 'tokenizer_config.json')),
    ...(cfg ? { config: readJson(cfg) } : {}),
    folder: src,
    dtype: dtypeOfFile(file),
  };
}

/** Reads a tokenizer.json into the object textSamples takes. */
export function readTokenizerJson(file: string): Record<string, unknown> {
  return readJson(file);
}

/** Options of {@link readTextSamples}: textSamples' options without the text, the tokenizer as a file or object. */
export interface TextFileOptions extends Omit<TextSampleOptions, 'text' | 'lines' | 'format' | 'tokenizer'> {
  tokenizer: TextSampleOptions['tokenizer'] | string;
  inputs: readonly ValueInfo[];
}

/** Samples of a .txt / .jsonl file (the format from its extension) for a text model. */
export function readTextSamples(file: string, opts: TextFileOptions): TextSampleSet {
  const format = textFormatOf(file);
  if (!format) throw bad(`${file}: text is read from .txt or .jsonl files`);
  let text: string;
  try { text = fs.readFileSync(file, 'utf8'); } catch (e) { throw noFile(`${file}: ${(e as Error).message}`); }
  const tokenizer = typeof opts.tokenizer === 'string' ? readTokenizerJson(opts.tokenizer) : opts.tokenizer;
  return textSamples({ ...opts, tokenizer, text, format });
}
