// The model a command reads: an .onnx file, or a transformers.js model folder (config.json,
// tokenizer.json, onnx/model.onnx), which is what a browser app downloads and what a user has at hand.
import fs from 'node:fs';
import { resolveTextModel, OnnxError } from 'sparsekit-wasm/onnx';
import { UsageError } from './errors.js';

/**
 * The model file behind `src` and the tokenizer.json that goes with it (in the folder, or beside the
 * file), when there is one; `folder` when the model belongs to a transformers.js folder (a drop-in
 * output copies its other files). A folder reads onnx/model.onnx, or its only model*.onnx; another
 * variant is named by its path (FOLDER/onnx/model_quantized.onnx), which still belongs to FOLDER.
 * @param {string} src
 * @returns {Promise<{ model: string, tokenizer?: string, folder?: string, dtype?: string }>}
 */
export async function modelInput(src) {
  let folder = false;
  try { folder = fs.statSync(src).isDirectory(); } catch { /* loadOnnx reports the missing file */ }
  if (!folder && !fs.existsSync(src)) return { model: src };
  let files;
  try { files = await resolveTextModel(src); } catch (e) {
    // several variants and no model.onnx: a usage error naming them
    if (e instanceof OnnxError && e.reason === 'no_file' && folder) throw new UsageError(`${e.message}, or give the file by its path (${src}/onnx/model_quantized.onnx)`);
    throw e;
  }
  return {
    model: files.model, ...(files.tokenizer ? { tokenizer: files.tokenizer } : {}),
    ...(files.folder ? { folder: files.folder } : {}), ...(files.dtype ? { dtype: files.dtype } : {}),
  };
}
