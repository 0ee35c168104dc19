// The generated models of tests/data/models (tests/gen/ writes them) and deterministic feeds for them.
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { HERE } from './build.mjs';
import { rng } from './graphs.mjs';

export { MODELS_DIR, modelBytes } from '../../kit/test-models.mjs';
import { modelBytes } from '../../kit/test-models.mjs';

/** Feeds per model; `variant` picks the If branch (if-branches) or the mask pattern (bert-style). */
export function feedsOf(name, variant = 0) {
  const r = rng(41 + variant);
  const floats = (dims) => new ort.Tensor('float32', Float32Array.from({ length: dims.reduce((a, b) => a * b, 1) }, () => r()), dims);
  if (name === 'yolov8-style') return { images: floats([1, 3, 64, 64]) };
  if (name === 'if-branches') return { x: floats([1, 3, 8, 8]), use_then: new ort.Tensor('bool', [variant % 2 === 0], []) };
  if (name === 'bert-style') {
    const [B, S] = [2, 7];
    const ids = BigInt64Array.from({ length: B * S }, () => BigInt(Math.floor((r() + 1) * 50)));
    const mask = BigInt64Array.from({ length: B * S }, (_, i) => (i % S < S - 2 * (i >= S ? 1 : 0) ? 1n : 0n));
    return { input_ids: new ort.Tensor('int64', ids, [B, S]), attention_mask: new ort.Tensor('int64', mask, [B, S]) };
  }
  throw new Error(`no feeds for ${name}`);
}

export async function runModel(bytes, feeds) {
  const s = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 1, logSeverityLevel: 3 });
  try {
    const out = await s.run(feeds);
    return Object.fromEntries(Object.entries(out).map(([k, t]) => [k, { data: t.data, dims: t.dims }]));
  } finally { await s.release?.(); }
}

export { convCoverage } from '../../kit/coverage.mjs';
