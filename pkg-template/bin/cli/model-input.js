// The model a command reads: an .onnx file, or a transformers.js model folder (config.json,
// tokenizer.json, onnx/model.onnx), which is what a browser app downloads and what a user has at hand.
import fs from 'node:fs';
import { resolveTextModel, OnnxError } from 'sparsekit-wasm/onnx';
import { UsageError } from './errors.js';

/**
 * The model file behind `src` and the tokenizer.json that goes with it (in the folder, or beside the
 * file), when there is one; `folder` when the model belongs to a transformers.js folder (a drop-in
 * output copies its other files). `dtype` (--dtype) picks among a folder's onnx/model*.onnx.
 * @param {string} src
 * @param {string} [dtype]
 * @returns {Promise<{ model: string, tokenizer?: string, folder?: string, dtype?: string }>}
 */
export async function modelInput(src, dtype) {
  let folder = false;
  try { folder = fs.statSync(src).isDirectory(); } catch { /* loadOnnx reports the missing file */ }
  if (!folder && dtype !== undefined) throw new UsageError(`--dtype chooses among a folder's onnx/model*.onnx files; ${src} is not a folder`);
  if (!folder && !fs.existsSync(src)) return { model: src };
  let files;
  try { files = await resolveTextModel(src, dtype === undefined ? {} : { dtype }); } catch (e) {
    // a dtype the folder does not have, or several variants and no choice: a usage error naming them
    if (e instanceof OnnxError && e.reason === 'no_file' && folder) throw new UsageError(`${e.message}${dtype === undefined ? ' (--dtype)' : ''}`);
    throw e;
  }
  return {
    model: files.model, ...(files.tokenizer ? { tokenizer: files.tokenizer } : {}),
    ...(files.folder ? { folder: files.folder } : {}), ...(files.dtype ? { dtype: files.dtype } : {}),
  };
}
