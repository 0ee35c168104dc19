// Node only (loaded through files.ts's computed import): a model written as a transformers.js model
// folder that `pipeline()` of @huggingface/transformers loads unchanged: the input folder's other
// files copied, config.json told the written dtype, the model under the name of that dtype
// (tjs-layout.ts). Everything goes to a temporary folder beside the target, renamed at the end, so
// a failed run leaves no half-written folder.
import fs from 'node:fs';
import path from 'node:path';
import type { OnnxModel } from '../model.js';
import { OnnxError } from '../errors.js';
import { writeAll } from '../node-io.js';
import { tjsConfig, tjsLayout, type TjsOutput } from './tjs-layout.js';

/** What saveTransformersFolder wrote. */
export interface SavedFolder {
  /** The folder. */
  dir: string;
  /** How the model is laid out in it: dtype, file, external data. */
  output: TjsOutput;
  /** The model file and its external data (absolute), and their sizes. */
  model: string;
  modelBytes: number;
  data?: string;
  dataBytes: number;
  /** The input folder's files copied, relative to the folder (config.json with transformers.js_config set). */
  copied: string[];
}

/** Model files and their external data: never copied (the written model replaces them all). */
const MODEL_FILE = /\.onnx$|\.onnx[._]data(_\d+)?$/;

const refuse = (msg: string) => new OnnxError('no_file', msg, 'invalid_value');

/**
 * The input folder's files other than models, relative to it (sub-folders included, links not
 * followed; hidden entries such as a clone's .git left out).
 */
function otherFiles(from: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(from, rel), { withFileTypes: true })) {
    if (e.name.startsWith('.')) continue;
    const r = path.join(rel, e.name);
    if (e.isDirectory()) out.push(...otherFiles(from, r));
    else if (e.isFile() && !MODEL_FILE.test(e.name)) out.push(r);
  }
  return out.sort();
}

/**
 * Writes `model` into the folder `dir` in transformers.js' layout, with the other files of the
 * transformers.js folder `from` (config.json required: transformers.js reads it first). `dir` must
 * not exist or be empty. `output` (a job report's `output`) must describe this model; without it,
 * it is read off the model.
 */
export function saveTransformersFolder(model: OnnxModel, dir: string, opts: { from: string; output?: TjsOutput }): SavedFolder {
  const target = path.resolve(dir);
  const from = path.resolve(opts.from);
  if (!fs.existsSync(path.join(from, 'config.json'))) throw refuse(`${opts.from} has no config.json: a transformers.js folder is written from one (it is what pipeline() reads first)`);
  if (fs.existsSync(target)) {
    if (!fs.statSync(target).isDirectory()) throw refuse(`${dir} exists and is not a folder`);
    if (fs.readdirSync(target).length) throw refuse(`${dir} exists and is not empty: name a new folder (nothing is mixed into or deleted from an existing one)`);
  }
  if (target === from || target.startsWith(from + path.sep)) throw refuse(`${dir} is inside the input folder ${opts.from}`);
  const output = opts.output ?? tjsLayout(model);
  const fresh = tjsLayout(model);
  if (fresh.dtype !== output.dtype || fresh.file !== output.file || fresh.data !== output.data) {
    throw new OnnxError('unsupported', `the layout given (${output.file}) is not this model's (${fresh.file})`, 'invalid_arguments');
  }
  const tmp = path.join(path.dirname(target), `.${path.basename(target)}.tmp-${process.pid}-${Date.now().toString(36)}`);
  let fd = -1, modelFd = -1;
  try {
    fs.mkdirSync(path.join(tmp, 'onnx'), { recursive: true });
    const copied = otherFiles(from);
    for (const rel of copied) {
      fs.mkdirSync(path.dirname(path.join(tmp, rel)), { recursive: true });
      if (rel === 'config.json') {
        let config: Record<string, unknown>;
        try { config = JSON.parse(fs.readFileSync(path.join(from, rel), 'utf8')) as Record<string, unknown>; } catch { throw new OnnxError('bad_calibration', `${path.join(opts.from, rel)} is not JSON`, 'invalid_value'); }
        fs.writeFileSync(path.join(tmp, rel), JSON.stringify(tjsConfig(config, output), null, 2) + '\n');
      } else {
        fs.copyFileSync(path.join(from, rel), path.join(tmp, rel));
      }
    }
    let dataBytes = 0;
    if (output.data) fd = fs.openSync(path.join(tmp, output.data), 'w');
    modelFd = fs.openSync(path.join(tmp, output.file), 'w');
    // In pieces (model.encodeTo): the weights are written from where they are held, not re-encoded
    // into one buffer. The data file's location inside the model is the bare file name: onnxruntime
    // resolves it beside the model.
    const modelBytes = model.encodeTo((b) => writeAll(modelFd, b), output.data
      ? { location: path.basename(output.data), sink: (b) => { writeAll(fd, b); dataBytes += b.length; } }
      : {});
    for (const f of [fd, modelFd]) if (f >= 0) fs.closeSync(f);
    fd = modelFd = -1;
    if (fs.existsSync(target)) fs.rmdirSync(target); // empty (checked above)
    fs.renameSync(tmp, target);
    return {
      dir: target, output, model: path.join(target, output.file), modelBytes,
      ...(output.data ? { data: path.join(target, output.data) } : {}), dataBytes, copied,
    };
  } finally {
    for (const f of [fd, modelFd]) if (f >= 0) fs.closeSync(f);
    if (fs.existsSync(tmp)) fs.rmSync(tmp, { recursive: true, force: true });
  }
}
