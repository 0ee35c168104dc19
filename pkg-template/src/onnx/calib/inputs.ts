// Calibration and held-out input sets for any model, generated from its graph: image inputs
// (N, 1|3, H, W) get document pages or text lines (doc-pages.ts) or the caller's own images; every
// other input gets the generic generator below. Seeded: the same set in a page, a worker and Node.
// The two sets never share a seed, so a held-out score is not measured on calibration data.
import type { OnnxModel, ValueInfo } from '../model.js';
import { floatArrayToHalf } from '../fp16.js';
import { prng } from './prng.js';
import { documentTensor, toTensor, type Normalization, type RgbaImage } from './doc-pages.js';
import { OnnxError } from '../errors.js';
import { ELEM_SIZE, prod } from '../tensor-data.js';
import { integerInputRanges, type IntRange } from './input-ranges.js';

/** One input tensor as onnxruntime takes it (`new ort.Tensor(type, data, dims)`). */
export interface FeedTensor {
  type: string;
  data: Float32Array | Float64Array | Uint16Array | Int32Array | BigInt64Array | Uint8Array | Int8Array;
  dims: number[];
}

/** One model run's inputs, by graph input name, and where they came from. */
export interface InputSample {
  feeds: Record<string, FeedTensor>;
  source: string;
}

/** The bytes of the samples' input tensors (what a training run holds of them in memory). */
export function samplesBytes(samples: readonly InputSample[]): number {
  let bytes = 0;
  for (const s of samples) for (const t of Object.values(s?.feeds ?? {})) bytes += t?.data?.byteLength ?? 0;
  return bytes;
}

/** onnxruntime tensor type names of ONNX element types. */
export const ORT_TYPES: Readonly<Record<number, string>> = Object.freeze({
  1: 'float32', 2: 'uint8', 3: 'int8', 6: 'int32', 7: 'int64', 9: 'bool', 10: 'float16', 11: 'float64',
});

/** Seeds of input i: calibration from 10 000, held-out from 900 000 (disjoint for any count < 890 000). */
export const SEED_BASE = Object.freeze({ calibration: 10_000, heldOut: 900_000 });

export const isImageShape = (shape: number[]): boolean =>
  shape.length === 4 && (shape[1] === 1 || shape[1] === 3) && shape[2] >= 16 && shape[3] >= 16;

/** Whether the model predicts per pixel (a rank-4 output, e.g. a text detector's probability map). */
export const isDensePrediction = (model: OnnxModel): boolean => model.outputs.some((o) => o.dims.length === 4);

/** Image sides are rounded up to this: stride-32 backbones (ResNet, YOLO, DB text detectors) need it to concatenate their feature maps. */
const STRIDE = 32;
const roundUp = (x: number) => Math.max(STRIDE, Math.ceil(x / STRIDE) * STRIDE);

/** Whether a declared dim is a fixed size (a dim_value > 0); a dim_param, '?' or 0 leaves it to the feed. */
export const isFixedDim = (d: number | string | undefined): d is number => typeof d === 'number' && d > 0;

/**
 * Concrete dims for an input whose graph leaves some dynamic: batch 1; images (rank 4, 1 or 3
 * channels) get sizes that common backbones accept:
 * - height and width both dynamic: 320x320 for dense-prediction models (a rank-4 output, e.g. a text
 *   detector's map) and for any model with an output of rank 3 or more (YOLO-style detection heads
 *   (N, 4+C, A), sequence outputs); 48x192 for classifiers (every output of rank <= 2, e.g. a text-line
 *   orientation classifier: global pooling runs at any size, and 48x192 is the text line they expect);
 * - one of them dynamic: the same side for dense-prediction models, else a 1:4 line
 *   (width 4x the height), the dynamic side rounded up to a multiple of 32 (1x3x48x192 for a
 *   recogniser with height 48).
 * Other dynamic dims: 16, or 64 for the last one. The playground shows the choice and lets the user
 * change it; when a run fails there it retries 320x320, then 640x640.
 */
export function resolveInputShape(input: ValueInfo, outputs: ValueInfo[] = []): number[] {
  const dims: (number | null)[] = input.dims.map((d) => (isFixedDim(d) ? d : null));
  const rank = dims.length;
  if (rank === 0) return [];
  if (dims[0] == null) dims[0] = 1;
  if (rank === 4) {
    const dense = outputs.some((o) => o.dims.length === 4);
    const classifier = outputs.length > 0 && outputs.every((o) => o.dims.length <= 2);
    if (dims[1] == null) dims[1] = 3;
    let [h, w] = [dims[2], dims[3]];
    if (h == null && w == null) [h, w] = classifier && !dense ? [48, 192] : [320, 320];
    else if (h == null) h = dense ? w : roundUp(w! / 4);
    else if (w == null) w = dense ? h : roundUp(h * 4);
    dims[2] = h; dims[3] = w;
  }
  return dims.map((d, i) => (d == null ? (i === rank - 1 ? 64 : 16) : d));
}

/** Longest side a PNG sample keeps when a dense-prediction model leaves its size open (PaddleOCR det's default limit). */
export const MAX_PNG_SIDE = 960;
const round32 = (x: number) => Math.max(32, Math.round(x / 32) * 32);

/**
 * The input shape of one PNG sample. A dense-prediction model (a text detector, a segmenter) runs at
 * the size of what it is given, so where its height or width is dynamic the image keeps its own
 * size: scaled down to MAX_PNG_SIDE on its long side, each side rounded to a multiple of 32 (the
 * strides of common backbones). A detector calibrated or recovered on pages squeezed to a default
 * size fits the statistics of text at another scale. Other models (classifiers, recognisers of a
 * fixed height) get the shape resolveInputShape gives them.
 */
export function pngShape(inp: ValueInfo, model: OnnxModel, img: { h: number; w: number }): number[] {
  const shape = resolveInputShape(inp, model.outputs);
  if (!isDensePrediction(model) || shape.length !== 4) return shape;
  const open = (i: number) => !isFixedDim(inp.dims[i]);
  if (!open(2) && !open(3)) return shape;
  const scale = Math.min(1, MAX_PNG_SIDE / Math.max(img.h, img.w));
  if (open(2)) shape[2] = round32(img.h * scale);
  if (open(3)) shape[3] = round32(img.w * scale);
  return shape;
}

/**
 * Elements one generated input tensor may hold (256 MiB of float32). A valid model may declare an
 * input of any size ([2^30, 2^30] loads: input shapes are declarations); generating it would be an
 * out-of-memory abort instead of an error, so a generated or resized input is checked first.
 */
export const MAX_GENERATED_ELEMENTS = 1 << 26;

/** Refuses (typed: `bad_dims`) a shape that is not non-negative integers or holds more than MAX_GENERATED_ELEMENTS elements. */
export function checkGeneratedShape(name: string, shape: readonly number[]): void {
  let n = 1;
  for (const d of shape) {
    if (!Number.isSafeInteger(d) || d < 0) throw new OnnxError('bad_dims', `input "${name}": dim ${d} of [${shape.join(', ')}] is not a non-negative integer`, 'invalid_value');
    n *= d;
  }
  if (n > MAX_GENERATED_ELEMENTS) {
    throw new OnnxError('bad_dims', `input "${name}" of shape [${shape.join(', ')}] holds ${n.toExponential(3)} elements, beyond the ${MAX_GENERATED_ELEMENTS} a generated sample may hold: give your own samples (a calibration directory, or InputSample[]) or a model with a smaller input`, 'invalid_value');
  }
}

/**
 * The generic generator (any input): floats are seeded near-Gaussian values (a centred sum of 4
 * uniforms scaled to unit variance); integers are ids uniform in [0, 1000), or in [0, 4) when the
 * last dim is <= 4 (uint8 / int8: their range), or uniform in `range` when the model's consumers
 * bound them (integerInputRanges: a Gather table's rows, a mask's 0/1); booleans are fair coins.
 */
export function genericTensor(shape: number[], elemType: number, seed: number, range?: IntRange): FeedTensor {
  checkGeneratedShape('generic', shape);
  const n = shape.reduce((a, b) => a * b, 1);
  const rnd = prng(seed);
  const lo = range?.lo ?? 0;
  const hi = range ? range.hi + 1 : shape[shape.length - 1] <= 4 ? 4 : 1000;
  const type = ORT_TYPES[elemType] ?? 'float32';
  const int = () => lo + Math.floor(rnd() * (hi - lo));
  let data: FeedTensor['data'];
  switch (elemType) {
    case 7: data = BigInt64Array.from({ length: n }, () => BigInt(int())); break;
    case 6: data = Int32Array.from({ length: n }, int); break;
    case 2: data = Uint8Array.from({ length: n }, () => (range ? int() : Math.floor(rnd() * 256))); break;
    case 3: data = Int8Array.from({ length: n }, () => (range ? int() : Math.floor(rnd() * 256) - 128)); break;
    case 9: data = Uint8Array.from({ length: n }, () => (rnd() < 0.5 ? 1 : 0)); break;
    default: {
      const f = new Float32Array(n);
      for (let i = 0; i < n; i++) f[i] = (rnd() + rnd() + rnd() + rnd() - 2) * Math.sqrt(3);
      data = floatInput(f, elemType);
    }
  }
  return { type, data, dims: shape };
}

/** float32 values in the element type of a float input (float16 as its bits, as onnxruntime takes it). */
function floatInput(f: Float32Array, elemType: number): FeedTensor['data'] {
  if (elemType === 10) return floatArrayToHalf(f);
  if (elemType === 11) return Float64Array.from(f);
  return f;
}

/** Options of {@link makeInputSet}. */
export interface InputSetOptions {
  /** Model runs in the set. */
  count: number;
  /** Which seeds: 'calibration' (default) or 'heldOut' (disjoint). */
  set?: 'calibration' | 'heldOut';
  /**
   * 'auto' (default): image inputs get document pages (dense-prediction models) or text lines (other
   * models), as PaddleOCR-like models see them; 'generic': the generic generator for every input.
   */
  generator?: 'auto' | 'generic';
  /** Of generated / given images: default 'imagenet' for dense-prediction models, else 'symmetric'. */
  normalization?: Normalization;
  /** The caller's own images at the input size, used first (calibration set only). */
  images?: RgbaImage[];
  /**
   * Bounds of integer inputs by name (inclusive), over what the model's consumers tell
   * (integerInputRanges): a vocabulary the graph does not show, a scalar that must keep its value
   * (`{ lo: 16000, hi: 16000 }`).
   */
  intRanges?: Record<string, { lo: number; hi: number }>;
  /**
   * The most input bytes the set may hold (a training run's bound, JOB_DEFAULTS.maxTrainingBytes): a
   * larger set is refused from its shapes before any sample is made.
   */
  maxBytes?: number;
}

/** `count` model runs of generated inputs (see {@link InputSetOptions}); shapes from resolveInputShape. */
export function makeInputSet(model: OnnxModel, opts: InputSetOptions): InputSample[] {
  const { count, set = 'calibration', generator = 'auto', images = [] } = opts;
  const dense = isDensePrediction(model);
  const normalization = opts.normalization ?? (dense ? 'imagenet' : 'symmetric');
  const specs = model.inputs.map((inp) => ({ inp, shape: resolveInputShape(inp, model.outputs) }));
  for (const { inp, shape } of specs) checkGeneratedShape(inp.name, shape);
  if (opts.maxBytes !== undefined) {
    const each = specs.reduce((a, { inp, shape }) => a + (ELEM_SIZE[inp.elemType] ?? 8) * prod(shape), 0);
    if (each * count > opts.maxBytes) {
      throw new OnnxError('too_large', `${count} generated samples would hold ${(each * count / 2 ** 20).toFixed(1)} MiB of inputs; at most ${(opts.maxBytes / 2 ** 20).toFixed(0)} MiB are allowed (${Math.floor(opts.maxBytes / each)} of these)`, 'invalid_arguments');
    }
  }
  const ranges = integerInputRanges(model);
  for (const [name, r] of Object.entries(opts.intRanges ?? {})) {
    if (!model.inputs.some((i) => i.name === name)) throw new OnnxError('bad_calibration', `intRanges: the model has no input "${name}"`, 'invalid_arguments');
    if (!Number.isSafeInteger(r.lo) || !Number.isSafeInteger(r.hi) || r.lo > r.hi) throw new OnnxError('bad_calibration', `intRanges: "${name}" needs integers lo <= hi, got ${r.lo}..${r.hi}`, 'invalid_arguments');
    ranges.set(name, { lo: r.lo, hi: r.hi, kind: 'index' });
  }
  const out: InputSample[] = [];
  for (let k = 0; k < count; k++) {
    const seed = SEED_BASE[set] + k;
    const feeds: Record<string, FeedTensor> = {};
    let source = generator === 'generic' ? 'generic' : 'generated';
    specs.forEach(({ inp, shape }, i) => {
      const floatImage = isImageShape(shape) && (inp.elemType === 1 || inp.elemType === 10);
      if (generator === 'auto' && floatImage) {
        const user = set === 'calibration' ? images[k] : undefined;
        const data = user ? toTensor(user, shape[1], normalization)
          : documentTensor(shape, seed * 31 + i, { kind: dense ? 'page' : 'line', normalization });
        if (user) source = 'user image';
        feeds[inp.name] = { type: ORT_TYPES[inp.elemType], data: floatInput(data, inp.elemType), dims: shape };
      } else feeds[inp.name] = genericTensor(shape, inp.elemType, seed * 31 + i, ranges.get(inp.name));
    });
    out.push({ feeds, source });
  }
  return out;
}
