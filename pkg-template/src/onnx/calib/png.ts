// PNG images as calibration inputs without a dependency: the chunk walk, the five scanline filters
// and the colour types, over an inflate function the caller provides (node:zlib's inflateSync in
// Node). Non-interlaced images, bit depths 1-16; the result is 8-bit RGBA.
import { OnnxError } from '../errors.js';
import type { RgbaImage } from './doc-pages.js';

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const bad = (what: string, msg: string) => new OnnxError('bad_calibration', `${what}: ${msg}`, 'invalid_value');

/** Decodes a PNG into RGBA (alpha kept; callers composite it). */
/** Pixels a decoded PNG may hold (8192 × 8192). */
export const MAX_PNG_PIXELS = 1 << 26;

export function decodePng(bytes: Uint8Array, inflate: (z: Uint8Array) => Uint8Array, what = 'png'): RgbaImage {
  if (bytes.length < 8 || SIGNATURE.some((b, i) => bytes[i] !== b)) throw bad(what, 'not a PNG file');
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 8, w = 0, h = 0, depth = 0, ctype = 0, interlace = 0;
  let palette: Uint8Array | undefined, trns: Uint8Array | undefined;
  const idat: Uint8Array[] = [];
  let ended = false;
  while (pos + 8 <= bytes.length) {
    const len = dv.getUint32(pos);
    const type = String.fromCharCode(...bytes.subarray(pos + 4, pos + 8));
    const body = bytes.subarray(pos + 8, pos + 8 + len);
    if (body.length !== len) throw bad(what, `chunk ${type} runs past the end of the file: truncated`);
    if (type === 'IHDR') {
      w = dv.getUint32(pos + 8); h = dv.getUint32(pos + 12);
      depth = body[8]; ctype = body[9]; interlace = body[12];
    } else if (type === 'PLTE') palette = body;
    else if (type === 'tRNS') trns = body;
    else if (type === 'IDAT') idat.push(body);
    else if (type === 'IEND') { ended = true; break; }
    pos += 12 + len;
  }
  if (!ended) throw bad(what, 'the file ends before its IEND chunk: truncated');
  if (!w || !h || !idat.length) throw bad(what, 'no image data (IHDR / IDAT missing)');
  if (interlace) throw bad(what, 'interlaced PNG: save it without interlacing');
  // Checked before anything the size implies is inflated or allocated (a header may claim any size).
  if (w * h > MAX_PNG_PIXELS) throw bad(what, `${w}x${h} pixels is more than the ${MAX_PNG_PIXELS} a sample may hold`);
  const channels = ({ 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as Record<number, number>)[ctype];
  if (!channels || ![1, 2, 4, 8, 16].includes(depth)) throw bad(what, `colour type ${ctype} at ${depth} bits is not a valid PNG format`);
  const joined = new Uint8Array(idat.reduce((a, c) => a + c.length, 0));
  let o = 0;
  for (const c of idat) { joined.set(c, o); o += c.length; }
  let raw: Uint8Array;
  try { raw = inflate(joined); } catch (e) { throw bad(what, `corrupt image data (${(e as Error).message})`); }
  const bpp = Math.max(1, (channels * depth) >> 3); // bytes per pixel for the filters
  const stride = Math.ceil((w * channels * depth) / 8);
  if (raw.length < h * (stride + 1)) throw bad(what, 'image data too short: truncated');
  const px = new Uint8Array(h * stride);
  for (let y = 0; y < h; y++) {
    const f = raw[y * (stride + 1)];
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const row = px.subarray(y * stride, (y + 1) * stride);
    const up = y ? px.subarray((y - 1) * stride, y * stride) : new Uint8Array(stride);
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? row[x - bpp] : 0, b = up[x], c = x >= bpp ? up[x - bpp] : 0;
      let p: number;
      switch (f) {
        case 0: p = 0; break;
        case 1: p = a; break;
        case 2: p = b; break;
        case 3: p = (a + b) >> 1; break;
        case 4: { const q = a + b - c, pa = Math.abs(q - a), pb = Math.abs(q - b), pc = Math.abs(q - c); p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c; break; }
        default: throw bad(what, `unknown scanline filter ${f}`);
      }
      row[x] = (src[x] + p) & 0xff;
    }
  }
  // Sample s of pixel (x, y) scaled to 8 bits.
  const sample = (y: number, i: number): number => {
    if (depth === 8) return px[y * stride + i];
    if (depth === 16) return px[y * stride + 2 * i];
    const bit = i * depth, v = (px[y * stride + (bit >> 3)] >> (8 - depth - (bit & 7))) & ((1 << depth) - 1);
    return ctype === 3 ? v : Math.round((v * 255) / ((1 << depth) - 1));
  };
  const rgba = new Uint8ClampedArray(w * h * 4);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
    const q = (y * w + x) * 4;
    let r: number, g: number, b: number, al = 255;
    if (ctype === 3) {
      const k = sample(y, x);
      if (!palette || 3 * k + 2 >= palette.length) throw bad(what, 'palette index outside the palette');
      [r, g, b] = [palette[3 * k], palette[3 * k + 1], palette[3 * k + 2]];
      if (trns && k < trns.length) al = trns[k];
    } else if (ctype === 0 || ctype === 4) {
      r = g = b = sample(y, x * channels);
      if (ctype === 4) al = sample(y, x * channels + 1);
    } else {
      r = sample(y, x * channels); g = sample(y, x * channels + 1); b = sample(y, x * channels + 2);
      if (ctype === 6) al = sample(y, x * channels + 3);
    }
    rgba[q] = r; rgba[q + 1] = g; rgba[q + 2] = b; rgba[q + 3] = al;
  }
  return { rgba, h, w };
}

/** Bilinear resize to (h, w), alpha composited on white (as the playground draws user images). */
export function resizeRgba(img: RgbaImage, h: number, w: number): RgbaImage {
  const out = new Uint8ClampedArray(w * h * 4);
  const sy = img.h / h, sx = img.w / w;
  for (let y = 0; y < h; y++) {
    const fy = Math.min(img.h - 1, Math.max(0, (y + 0.5) * sy - 0.5)), y0 = Math.floor(fy), y1 = Math.min(img.h - 1, y0 + 1), ty = fy - y0;
    for (let x = 0; x < w; x++) {
      const fx = Math.min(img.w - 1, Math.max(0, (x + 0.5) * sx - 0.5)), x0 = Math.floor(fx), x1 = Math.min(img.w - 1, x0 + 1), tx = fx - x0;
      const at = (yy: number, xx: number, c: number) => {
        const p = (yy * img.w + xx) * 4, a = img.rgba[p + 3] / 255;
        return img.rgba[p + c] * a + 255 * (1 - a);
      };
      for (let c = 0; c < 3; c++) {
        const top = at(y0, x0, c) * (1 - tx) + at(y0, x1, c) * tx;
        const bot = at(y1, x0, c) * (1 - tx) + at(y1, x1, c) * tx;
        out[(y * w + x) * 4 + c] = top * (1 - ty) + bot * ty;
      }
      out[(y * w + x) * 4 + 3] = 255;
    }
  }
  return { rgba: out, h, w };
}
