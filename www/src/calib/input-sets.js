// Calibration and held-out input sets for a model. Image inputs (N, 1|3, H, W) get generated
// document pages (doc-pages.js) or the user's own images; other inputs get the documented generator
// below. The two sets never share a seed, so the held-out score is not measured on calibration data.
import { prng, resolveInputShape, ORT_TYPES } from '../model-input.js';
import { documentTensor, toTensor } from './doc-pages.js';

/** Seeds of input i: calibration from 10 000, held-out from 900 000 (disjoint for any count < 890 000). */
export const SEED_BASE = Object.freeze({ calibration: 10_000, heldOut: 900_000 });

export const isImageInput = (shape) => shape.length === 4 && (shape[1] === 1 || shape[1] === 3) && shape[2] >= 16 && shape[3] >= 16;

/**
 * Non-image inputs, the documented generator: float tensors hold seeded near-Gaussian values (a
 * centred sum of 4 uniforms scaled to unit variance); int tensors hold ids uniform in [0, 1000), or
 * in [0, 4) when the last dim is <= 4.
 */
function genericTensor(shape, elemType, seed) {
  const n = shape.reduce((a, b) => a * b, 1);
  const rnd = prng(seed);
  const hi = shape[shape.length - 1] <= 4 ? 4 : 1000;
  if (elemType === 7) return BigInt64Array.from({ length: n }, () => BigInt(Math.floor(rnd() * hi)));
  if (elemType === 6) return Int32Array.from({ length: n }, () => Math.floor(rnd() * hi));
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (rnd() + rnd() + rnd() + rnd() - 2) * Math.sqrt(3);
  return out;
}

/**
 * @param model an OnnxModel (its inputs and outputs decide shapes: model-input.js resolveInputShape)
 * @param opts {count, set: 'calibration'|'heldOut', normalization, images?: [{rgba, w, h}] already
 *   resized to the input size (user-images.js), used first, before generated pages}
 * @returns [{feeds: {name: {type, data, dims}}, source}] one entry per model run
 */
export function makeInputSet(model, { count, set = 'calibration', normalization = 'symmetric', images = [] } = {}) {
  const dense = model.outputs.some((o) => o.rank === 4);
  const specs = model.inputs.map((inp) => ({ inp, shape: resolveInputShape(inp, model.outputs) }));
  const out = [];
  for (let k = 0; k < count; k++) {
    const seed = SEED_BASE[set] + k;
    const feeds = {};
    let source = 'generated';
    specs.forEach(({ inp, shape }, i) => {
      let data;
      if (isImageInput(shape) && inp.elemType === 1) {
        const user = set === 'calibration' ? images[k] : undefined;
        if (user) { data = toTensor(user, shape[1], normalization); source = 'user image'; }
        else data = documentTensor(shape, seed * 31 + i, { kind: dense ? 'page' : 'line', normalization });
      } else data = genericTensor(shape, inp.elemType, seed * 31 + i);
      feeds[inp.name] = { type: ORT_TYPES[inp.elemType] ?? 'float32', data, dims: shape };
    });
    out.push({ feeds, source });
  }
  return out;
}
