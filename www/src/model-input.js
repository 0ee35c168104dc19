// Deterministic inputs for a model and the comparison of two runs. Shared by the page (onnxruntime-web)
// and the tests (onnxruntime-node).

/** mulberry32: a small seeded PRNG, so both runs (and the tests) see exactly the same input. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Resolves the dynamic dims of an input to sensible sizes: batch 1; images (rank 4, 1 or 3 channels)
 * 320x320 for dense-prediction models (rank-4 output, e.g. a text detector) and 48 high, 4x as wide
 * otherwise (a classifier / recogniser, e.g. 1x3x48x192); sequences 16.
 */
export function resolveInputShape(input, outputs = []) {
  const dims = input.dims.map((d) => (typeof d === 'number' && d > 0 ? d : null));
  const rank = dims.length;
  if (rank === 0) return [];
  if (dims[0] == null) dims[0] = 1;
  if (rank === 4) {
    const dense = outputs.some((o) => o.rank === 4);
    if (dims[1] == null) dims[1] = 3;
    let [h, w] = [dims[2], dims[3]];
    if (h == null && w == null) [h, w] = dense ? [320, 320] : [48, 192];
    else if (h == null) h = dense ? w : Math.max(1, Math.round(w / 4));
    else if (w == null) w = dense ? h : h * 4;
    dims[2] = h; dims[3] = w;
  }
  return dims.map((d, i) => (d == null ? (i === rank - 1 ? 64 : 16) : d));
}

/** A deterministic tensor of the given shape: uniform in [-1, 1) for floats, small ints otherwise. */
export function makeInputData(shape, elemType = 1, seed = 1234) {
  const n = shape.reduce((a, b) => a * b, 1);
  const rnd = prng(seed);
  if (elemType === 7) return BigInt64Array.from({ length: n }, () => BigInt(Math.floor(rnd() * 4)));
  if (elemType === 6) return Int32Array.from({ length: n }, () => Math.floor(rnd() * 4));
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = rnd() * 2 - 1;
  return out;
}

export const ORT_TYPES = { 1: 'float32', 6: 'int32', 7: 'int64', 10: 'float16', 9: 'bool' };

/** Cosine similarity and max |a-b| of each output and of all outputs together. */
export function compareOutputs(a, b) {
  let dot = 0, na = 0, nb = 0, maxAbs = 0, n = 0;
  const per = [];
  for (const name of Object.keys(a)) {
    const x = a[name], y = b[name];
    let d = 0, sx = 0, sy = 0, m = 0;
    for (let i = 0; i < x.length; i++) {
      const p = Number(x[i]), q = Number(y[i]);
      d += p * q; sx += p * p; sy += q * q;
      const diff = Math.abs(p - q);
      if (diff > m || Number.isNaN(diff)) m = diff;
    }
    per.push({ name, cosine: cos(d, sx, sy), maxAbs: m, size: x.length });
    dot += d; na += sx; nb += sy; maxAbs = Math.max(maxAbs, m); n += x.length;
  }
  return { cosine: cos(dot, na, nb), maxAbs, size: n, outputs: per };
}

function cos(d, a, b) {
  if (a === 0 && b === 0) return 1;
  if (a === 0 || b === 0) return 0;
  return d / Math.sqrt(a * b);
}
