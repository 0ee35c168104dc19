// Node only: calibration samples read from a directory (loaded through index.ts's computed import,
// so browser bundles never see node:fs). Layout, sorted by name:
//   DIR/<sample>.npy            one sample of a single-input model (any batch size in the file)
//   DIR/<sample>.png            one image for a single image input (resized to the input, normalised;
//                               for a dense-prediction model with dynamic height / width, at the
//                               image's own size: see pngShape)
//   DIR/<sample>/<input>.npy    one sample of a model with several inputs (or one): a file per input,
//                               named after the input ('/', '\', ':' in the name written as '_')
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { OnnxModel, ValueInfo } from '../model.js';
import { OnnxError } from '../errors.js';
import { parseNpy, npyToFeed } from './npy.js';
import { decodePng, resizeRgba } from './png.js';
import { toTensor, type Normalization } from './doc-pages.js';
import { checkGeneratedShape, isDensePrediction, isImageShape, pngShape, resolveInputShape, type FeedTensor, type InputSample } from './inputs.js';

/** Options of {@link readCalibrationDir}. */
export interface CalibrationDirOptions {
  /** Use at most this many samples (the first by name). */
  limit?: number;
  /** Of PNG images: default 'imagenet' for dense-prediction models, else 'symmetric' (as generated pages). */
  normalization?: Normalization;
}

const bad = (msg: string) => new OnnxError('bad_calibration', msg, 'invalid_value');
const fileName = (input: string) => `${input.replace(/[/\\:]/g, '_')}.npy`;

/** Checks a feed against the input's declared rank and static dims. */
function checkFeed(feed: FeedTensor, inp: ValueInfo, where: string) {
  const want = inp.dims;
  const ok = want.length === 0 || (feed.dims.length === want.length && want.every((d, i) => typeof d !== 'number' || d <= 0 || d === feed.dims[i]));
  if (!ok) throw bad(`${where}: shape [${feed.dims.join(', ')}] does not fit input "${inp.name}" [${want.join(', ')}]`);
}

function npyFeed(file: string, inp: ValueInfo, rel: string): FeedTensor {
  const feed = npyToFeed(parseNpy(fs.readFileSync(file), rel), inp.elemType, rel);
  checkFeed(feed, inp, rel);
  return feed;
}

/** Reads the samples of `dir` for `model` (see the layout above); throws OnnxError('bad_calibration'). */
export function readCalibrationDir(dir: string, model: OnnxModel, opts: CalibrationDirOptions = {}): InputSample[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw bad(`calibration directory "${dir}": ${code === 'ENOENT' ? 'no such directory' : code === 'ENOTDIR' ? 'not a directory' : (e as Error).message}`);
  }
  const inputs = model.inputs;
  if (!inputs.length) throw bad('the model has no graph inputs to feed');
  const normalization = opts.normalization ?? (isDensePrediction(model) ? 'imagenet' : 'symmetric');
  const samples: InputSample[] = [];
  const sorted = entries.filter((e) => !e.name.startsWith('.')).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of sorted) {
    if (opts.limit !== undefined && samples.length >= opts.limit) break;
    const full = path.join(dir, e.name);
    if (e.isDirectory()) {
      const feeds: Record<string, FeedTensor> = {};
      for (const inp of inputs) {
        const f = path.join(full, fileName(inp.name));
        if (!fs.existsSync(f)) throw bad(`${path.join(e.name, fileName(inp.name))} is missing: a sample folder holds one <input>.npy per model input (${inputs.map((i) => fileName(i.name)).join(', ')})`);
        feeds[inp.name] = npyFeed(f, inp, path.join(e.name, fileName(inp.name)));
      }
      samples.push({ feeds, source: e.name });
      continue;
    }
    const ext = path.extname(e.name).toLowerCase();
    if (ext !== '.npy' && ext !== '.png') continue;
    if (inputs.length > 1) throw bad(`${e.name}: the model has ${inputs.length} inputs (${inputs.map((i) => i.name).join(', ')}): put each sample in a folder with one <input>.npy per input`);
    const inp = inputs[0];
    if (ext === '.npy') {
      samples.push({ feeds: { [inp.name]: npyFeed(full, inp, e.name) }, source: e.name });
    } else {
      const resolved = resolveInputShape(inp, model.outputs);
      if (!isImageShape(resolved) || (inp.elemType !== 1)) throw bad(`${e.name}: PNG samples need a float32 image input (N, 1|3, H, W); input "${inp.name}" is [${inp.dims.join(', ')}]`);
      const decoded = decodePng(fs.readFileSync(full), (z) => zlib.inflateSync(z), e.name);
      const shape = pngShape(inp, model, decoded);
      checkGeneratedShape(inp.name, shape);
      const img = resizeRgba(decoded, shape[2], shape[3]);
      samples.push({ feeds: { [inp.name]: { type: 'float32', data: toTensor(img, shape[1], normalization), dims: [1, ...shape.slice(1)] } }, source: e.name });
    }
  }
  if (!samples.length) throw bad(`calibration directory "${dir}" holds no samples (.npy or .png files, or one folder per sample)`);
  return samples;
}
