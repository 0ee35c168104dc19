// The model a command reads: an .onnx file, or a transformers.js model folder (config.json,
// tokenizer.json, onnx/model.onnx), which is what a browser app downloads and what a user has at hand.
import fs from 'node:fs';
import { resolveTextModel } from 'sparsekit-wasm/onnx';

/**
 * The model file behind `src` and the tokenizer.json that goes with it (in the folder, or beside the
 * file), when there is one.
 * @param {string} src
 * @returns {Promise<{ model: string, tokenizer?: string }>}
 */
export async function modelInput(src) {
  let folder = false;
  try { folder = fs.statSync(src).isDirectory(); } catch { /* loadOnnx reports the missing file */ }
  if (!folder) return { model: src };
  const files = await resolveTextModel(src);
  return { model: files.model, ...(files.tokenizer ? { tokenizer: files.tokenizer } : {}) };
}
