// Where `prune -o` writes: one .onnx file (external data beside it as OUT.onnx.data), or, when the
// input is a transformers.js model folder and -o ends with a path separator or names an existing
// folder, a transformers.js folder of the same layout (the module's saveTransformersFolder: the
// input's other files copied, the model under the file name of its dtype). Checked before the run,
// so a target that cannot be written costs no pruning.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from './errors.js';

/**
 * @param {string} value the -o value
 * @param {{ model: string, folder?: string }} input
 * @returns {{ folder: boolean, path: string }}
 */
export function outputTarget(value, input) {
  const out = path.resolve(value);
  let isDir = false;
  try { isDir = fs.statSync(out).isDirectory(); } catch { /* not there yet */ }
  const folder = isDir || /[\\/]$/.test(value);
  if (!folder) {
    if (path.resolve(input.model) === out) throw new UsageError('the output must not overwrite the input model');
    return { folder, path: out };
  }
  if (!input.folder) throw new UsageError(`-o ${value} names a folder: a transformers.js model folder is written from one (the input must be a folder with config.json and onnx/model*.onnx, or a model file in one); give -o OUT.onnx for a single file`);
  if (!fs.existsSync(path.join(input.folder, 'config.json'))) throw new UsageError(`-o ${value}: the input folder ${input.folder} has no config.json, which pipeline() reads first`);
  if (isDir && fs.readdirSync(out).length) throw new UsageError(`-o ${value} exists and is not empty: name a new folder (nothing is mixed into or deleted from an existing one)`);
  const from = path.resolve(input.folder);
  if (out === from || out.startsWith(from + path.sep)) throw new UsageError(`-o ${value} is inside the input folder`);
  return { folder, path: out };
}
