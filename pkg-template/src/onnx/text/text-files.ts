// Node only (loaded through index.ts's computed import, so browser bundles never see node:fs): a
// transformers.js model folder resolved to its files, and text files read into samples.
//   FOLDER/config.json  FOLDER/tokenizer.json  [FOLDER/tokenizer_config.json]
//   FOLDER/onnx/model.onnx  (or FOLDER/model.onnx; transformers.js also ships model_quantized.onnx,
//   model_fp16.onnx...: the full-precision model.onnx is the one to prune)
import fs from 'node:fs';
import path from 'node:path';
import { OnnxError } from '../errors.js';
import type { ValueInfo } from '../model.js';
import { textFormatOf } from './text-source.js';
import { textSamples, type TextSampleOptions, type TextSampleSet } from './text-samples.js';

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
 * transformers.js folder (its onnx/model.onnx or model.onnx, tokenizer.json, config.json).
 */
export function resolveTextModel(src: string): TextModelFiles {
  let st: fs.Stats;
  try { st = fs.statSync(src); } catch { throw noFile(`${src}: no such file or directory`); }
  const opt = (f: string) => (fs.existsSync(f) ? f : undefined);
  if (!st.isDirectory()) {
    const dir = path.dirname(src);
    return { model: src, tokenizer: opt(path.join(dir, 'tokenizer.json')), tokenizerConfig: opt(path.join(dir, 'tokenizer_config.json')) };
  }
  const model = [path.join(src, 'onnx', 'model.onnx'), path.join(src, 'model.onnx')].find((f) => fs.existsSync(f));
  if (!model) throw noFile(`${src} is a folder without onnx/model.onnx or model.onnx (a transformers.js model folder has onnx/model.onnx)`);
  const cfg = opt(path.join(src, 'config.json'));
  return {
    model,
    tokenizer: opt(path.join(src, 'tokenizer.json')),
    tokenizerConfig: opt(path.join(src, 'tokenizer_config.json')),
    ...(cfg ? { config: readJson(cfg) } : {}),
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
