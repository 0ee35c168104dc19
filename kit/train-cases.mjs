// The training-step benches' cases (bench/train/train-step.mjs against PyTorch, train-ab.mjs between two
// builds, train-profile-wasm.mjs per op): a model file and the batch shape of its one float input.
// The OCR models come with npm; smollm2-block is one decoder block of SmolLM2-135M's shapes, hidden
// states in and out, written by `python bench/models/smollm2.py block` (bench only, random weights:
// these benches time steps, the values do not matter).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DET, REC } from './ocr-models.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const TRAIN_CASES = {
  det: { file: DET, shape: [8, 3, 128, 128] },
  rec: { file: REC, shape: [8, 3, 48, 320] },
  'smollm2-block': { file: path.join(ROOT, 'bench/out/smollm2-block/model.onnx'), shape: [4, 256, 576] },
};

/** The benches' batch values: `n` floats uniform in [0, 2) from a xorshift32 seeded with `seed` (0 acts as 1). */
export function caseValues(n, seed) {
  let s = seed >>> 0 || 1;
  return Float32Array.from({ length: n }, () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return (s / 2 ** 32) * 2; });
}
