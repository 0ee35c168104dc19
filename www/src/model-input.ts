// Deterministic inputs for a model and the comparison of two runs. Shared by the page (onnxruntime-web)
// and the tests (onnxruntime-node). The seeded generator and input shapes are the package's.
import { prng } from 'sparsekit-wasm/onnx';

/**
 * A deterministic tensor of the given shape. Float images (N, 1 or 3, H, W) with H, W >= 16 get a
 * synthetic document: lines of dark glyph-like strokes on a light background, normalised to [-1, 1]
 * like an OCR / vision model's input. (On white noise an image model's outputs can be almost all zero,
 * e.g. a text detector's probability map, and the comparison of two runs then measures nothing.)
 * Other floats: uniform in [-1, 1); ints: small values.
 */
export function makeInputData(shape: readonly number[], elemType = 1, seed = 1234): Float32Array | Int32Array | BigInt64Array {
  const n = shape.reduce((a, b) => a * b, 1);
  const rnd = prng(seed);
  if (elemType === 7) return BigInt64Array.from({ length: n }, () => BigInt(Math.floor(rnd() * 4)));
  if (elemType === 6) return Int32Array.from({ length: n }, () => Math.floor(rnd() * 4));
  if (shape.length === 4 && (shape[1] === 1 || shape[1] === 3) && shape[2] >= 16 && shape[3] >= 16) {
    return syntheticDocument(shape, rnd);
  }
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = rnd() * 2 - 1;
  return out;
}

/** Lines of "words" made of random 5x7 stroke glyphs, dark on a light, slightly noisy background. */
function syntheticDocument([batch, ch, h, w]: readonly number[], rnd: () => number): Float32Array {
  const img = new Float32Array(h * w).fill(1);
  const lineH = Math.max(8, Math.min(32, Math.floor(h * 0.6)));     // glyph height in pixels
  const scale = Math.max(1, Math.floor(lineH / 8));
  const gw = 5 * scale, gh = 7 * scale;
  for (let y0 = Math.floor((h - gh) / 2) % Math.floor(gh * 1.8); y0 + gh <= h; y0 += Math.floor(gh * 1.8)) {
    let x = 2 + Math.floor(rnd() * gw);
    while (x + gw <= w - 2) {
      const letters = 2 + Math.floor(rnd() * 6);
      for (let l = 0; l < letters && x + gw <= w - 2; l++, x += gw + scale) {
        // a glyph: a few horizontal / vertical strokes on the 5x7 grid
        const bits = new Uint8Array(35);
        const strokes = 2 + Math.floor(rnd() * 3);
        for (let s = 0; s < strokes; s++) {
          if (rnd() < 0.5) { const r = Math.floor(rnd() * 7); for (let c = 0; c < 5; c++) bits[r * 5 + c] = 1; }
          else { const c = Math.floor(rnd() * 5); const a = Math.floor(rnd() * 3); for (let r = a; r < 7; r++) bits[r * 5 + c] = 1; }
        }
        for (let r = 0; r < 7; r++) for (let c = 0; c < 5; c++) {
          if (!bits[r * 5 + c]) continue;
          for (let dy = 0; dy < scale; dy++) for (let dx = 0; dx < scale; dx++) img[(y0 + r * scale + dy) * w + x + c * scale + dx] = -1;
        }
      }
      x += gw * 2;                                  // a space between words
    }
  }
  const out = new Float32Array(batch * ch * h * w);
  for (let i = 0; i < out.length; i++) out[i] = img[i % (h * w)] * 0.9 + (rnd() - 0.5) * 0.1;
  return out;
}

/** The comparison of one output (or of all together). */
export interface OutputDiff { name: string; cosine: number; maxAbs: number; size: number }

type Values = ArrayLike<number | bigint>;

/** Cosine similarity and max |a-b| of each output and of all outputs together. */
export function compareOutputs(a: Record<string, Values>, b: Record<string, Values>): { cosine: number; maxAbs: number; size: number; outputs: OutputDiff[] } {
  let dot = 0, na = 0, nb = 0, maxAbs = 0, n = 0;
  const per: OutputDiff[] = [];
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

function cos(d: number, a: number, b: number): number {
  if (a === 0 && b === 0) return 1;
  if (a === 0 || b === 0) return 0;
  return d / Math.sqrt(a * b);
}
