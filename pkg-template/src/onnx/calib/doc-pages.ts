// Document-like calibration images drawn in plain JS (no DOM canvas), so that a page, a worker and
// Node produce bit-identical inputs for the same seed. Calibration statistics are only as good as the
// inputs: an OCR model calibrated on noise learns nothing about the strokes it must keep.
import { prng } from './prng.js';

type Rnd = () => number;
type Stroke = [number, number, number, number];
interface Font { glyphs: { strokes: Stroke[]; width: number }[]; aspect: number; weight: number; slant: number; spacing: number }

/**
 * A "font": a procedural alphabet (glyphs made of strokes on a small grid) with a stroke width, a
 * slant and a letter spacing. Different seeds give visibly different type styles.
 */
function makeFont(rnd: Rnd): Font {
  const gw = 4 + Math.floor(rnd() * 3);           // grid 4..6 wide
  const gh = 6 + Math.floor(rnd() * 3);           // 6..8 high
  const glyphs = [];
  for (let g = 0; g < 40; g++) {
    const strokes: Stroke[] = [];
    const count = 2 + Math.floor(rnd() * 3);
    for (let s = 0; s < count; s++) {
      const kind = rnd();
      if (kind < 0.35) {                           // vertical stem
        const x = Math.floor(rnd() * (gw + 1)) / gw;
        const y0 = rnd() < 0.7 ? 0 : 0.4;
        strokes.push([x, y0, x, 1]);
      } else if (kind < 0.7) {                     // horizontal bar
        const y = Math.floor(rnd() * (gh + 1)) / gh;
        strokes.push([0, y, 0.6 + 0.4 * rnd(), y]);
      } else if (kind < 0.9) {                     // diagonal
        strokes.push(rnd() < 0.5 ? [0, 1, 1, 0.3 * rnd()] : [0, 0.3 * rnd(), 1, 1]);
      } else {                                     // a bowl: four short segments
        const cx = 0.5, cy = 0.6 + 0.2 * rnd(), r = 0.35;
        for (let k = 0; k < 4; k++) {
          const a0 = (k * Math.PI) / 2, a1 = ((k + 1) * Math.PI) / 2;
          strokes.push([cx + r * Math.cos(a0), cy + r * Math.sin(a0), cx + r * Math.cos(a1), cy + r * Math.sin(a1)]);
        }
      }
    }
    glyphs.push({ strokes, width: 0.55 + 0.45 * rnd() });
  }
  return {
    glyphs,
    aspect: gw / gh,
    weight: 0.07 + rnd() * 0.1,                    // stroke width as a fraction of the glyph height
    slant: rnd() < 0.3 ? 0.15 + rnd() * 0.15 : 0,  // italic shear
    spacing: 0.1 + rnd() * 0.25,
  };
}

/** A grey-level canvas in [0, 1] (0 = ink) with an anti-aliased thick-segment primitive. */
class Raster {
  readonly px: Float32Array;
  constructor(readonly w: number, readonly h: number, paper: number) { this.px = new Float32Array(w * h).fill(paper); }

  /** Darkens toward `ink` by coverage of a segment of half-width r (distance-based anti-aliasing). */
  segment(x0: number, y0: number, x1: number, y1: number, r: number, ink: number): void {
    const { w, h, px } = this;
    const xa = Math.max(0, Math.floor(Math.min(x0, x1) - r - 1)), xb = Math.min(w - 1, Math.ceil(Math.max(x0, x1) + r + 1));
    const ya = Math.max(0, Math.floor(Math.min(y0, y1) - r - 1)), yb = Math.min(h - 1, Math.ceil(Math.max(y0, y1) + r + 1));
    const dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy || 1e-9;
    for (let y = ya; y <= yb; y++) {
      for (let x = xa; x <= xb; x++) {
        const px0 = x + 0.5 - x0, py0 = y + 0.5 - y0;
        const t = Math.max(0, Math.min(1, (px0 * dx + py0 * dy) / len2));
        const ex = px0 - t * dx, ey = py0 - t * dy;
        const cov = Math.max(0, Math.min(1, r + 0.5 - Math.sqrt(ex * ex + ey * ey)));
        if (cov > 0) { const i = y * w + x; px[i] += (ink - px[i]) * cov; }
      }
    }
  }

  rect(x0: number, y0: number, x1: number, y1: number, v: number): void {
    for (let y = Math.max(0, y0 | 0); y < Math.min(this.h, y1); y++) {
      for (let x = Math.max(0, x0 | 0); x < Math.min(this.w, x1); x++) this.px[y * this.w + x] = v;
    }
  }
}

/** Draws one word at (x, baseline-top y) with glyph height size; returns the x after it. */
function drawWord(r: Raster, font: Font, rnd: Rnd, x: number, y: number, size: number, letters: number, ink: number): number {
  const gwPx = size * font.aspect;
  const half = Math.max(0.5, (font.weight * size) / 2);
  for (let l = 0; l < letters; l++) {
    const g = font.glyphs[Math.floor(rnd() * font.glyphs.length)];
    const w = gwPx * g.width;
    for (const [a, b, c, d] of g.strokes) {
      const sx = (u: number, v: number) => x + u * w + font.slant * (1 - v) * size;
      r.segment(sx(a, b), y + b * size, sx(c, d), y + d * size, half, ink);
    }
    x += w + font.spacing * gwPx + half * 2;
  }
  return x;
}

/** A run of words from x0 to at most x1 on one line; returns the x where it stopped. */
function drawLine(r: Raster, font: Font, rnd: Rnd, x0: number, x1: number, y: number, size: number, ink: number, fill = 0.6 + 0.4 * rnd()): number {
  let x = x0;
  const stop = x0 + (x1 - x0) * fill;
  while (x < stop) {
    const letters = 1 + Math.floor(rnd() * 8);
    const wordW = letters * size * font.aspect * (0.8 + font.spacing);
    if (x + wordW > x1) break;
    x = drawWord(r, font, rnd, x, y, size, letters, ink) + size * (0.35 + 0.3 * rnd());
  }
  return x;
}

/** Layouts of a full page (for detection-like models): each fills the raster differently. */
type Layout = (r: Raster, fonts: Font[], rnd: Rnd, ink: number) => void;
const LAYOUTS: Record<string, Layout> = {
  paragraphs(r, fonts, rnd, ink) {
    const font = fonts[0];
    const size = r.h * (0.025 + rnd() * 0.05);
    const margin = r.w * (0.04 + rnd() * 0.08);
    let y = margin;
    while (y + size < r.h - margin) {
      const indent = rnd() < 0.15 ? size * 2 : 0;
      drawLine(r, font, rnd, margin + indent, r.w - margin, y, size, ink, rnd() < 0.2 ? 0.3 + 0.4 * rnd() : 0.95);
      y += size * (1.4 + rnd() * 0.8);
      if (rnd() < 0.12) y += size * 1.5;             // paragraph break
    }
  },
  columns(r, fonts, rnd, ink) {
    const cols = 2 + Math.floor(rnd() * 2);
    const margin = r.w * 0.04, gap = r.w * 0.04;
    const cw = (r.w - 2 * margin - (cols - 1) * gap) / cols;
    const size = Math.min(cw / 6, r.h * (0.02 + rnd() * 0.035));
    for (let c = 0; c < cols; c++) {
      let y = margin + rnd() * size * 2;
      const font = fonts[c % fonts.length];
      while (y + size < r.h - margin) {
        drawLine(r, font, rnd, margin + c * (cw + gap), margin + c * (cw + gap) + cw, y, size, ink, 0.9);
        y += size * (1.5 + rnd() * 0.5);
      }
    }
  },
  headed(r, fonts, rnd, ink) {
    const big = r.h * (0.06 + rnd() * 0.06);
    const margin = r.w * 0.06;
    let y = margin;
    drawLine(r, fonts[1 % fonts.length], rnd, margin, r.w - margin, y, big, ink, 0.5 + 0.4 * rnd());
    y += big * 1.8;
    const size = r.h * (0.025 + rnd() * 0.03);
    while (y + size < r.h - margin) {
      if (rnd() < 0.1) {                              // a sub-heading
        const sub = size * 1.6;
        drawLine(r, fonts[1 % fonts.length], rnd, margin, r.w - margin, y, sub, ink, 0.4);
        y += sub * 1.7;
        continue;
      }
      drawLine(r, fonts[0], rnd, margin, r.w - margin, y, size, ink, 0.95);
      y += size * 1.6;
    }
  },
  table(r, fonts, rnd, ink) {
    const rows = 5 + Math.floor(rnd() * 8), cols = 2 + Math.floor(rnd() * 4);
    const margin = r.w * 0.05;
    const cw = (r.w - 2 * margin) / cols, rh = (r.h - 2 * margin) / rows;
    const size = Math.min(rh * 0.5, cw / 5);
    const lw = Math.max(0.5, r.h / 400);
    for (let i = 0; i <= rows; i++) r.segment(margin, margin + i * rh, r.w - margin, margin + i * rh, lw, ink);
    for (let j = 0; j <= cols; j++) r.segment(margin + j * cw, margin, margin + j * cw, r.h - margin, lw, ink);
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) {
      if (rnd() < 0.15) continue;
      drawLine(r, fonts[(i === 0 ? 1 : 0) % fonts.length], rnd, margin + j * cw + size * 0.4, margin + (j + 1) * cw - size * 0.4,
        margin + i * rh + (rh - size) / 2, size, ink, 0.3 + 0.6 * rnd());
    }
  },
  receipt(r, fonts, rnd, ink) {
    const width = r.w * (0.4 + rnd() * 0.3);
    const x0 = (r.w - width) / 2;
    r.rect(x0 - 4, 0, x0 + width + 4, r.h, Math.min(1, r.px[0] + 0.05));
    const size = r.h * (0.02 + rnd() * 0.025);
    for (let y = size; y + size < r.h - size; y += size * 1.5) {
      const end = drawLine(r, fonts[0], rnd, x0, x0 + width * 0.6, y, size, ink, 0.4 + 0.5 * rnd());
      if (rnd() < 0.7) drawLine(r, fonts[0], rnd, Math.max(end, x0 + width * 0.75), x0 + width, y, size, ink, 1);
    }
  },
};
export const PAGE_LAYOUTS = Object.freeze(Object.keys(LAYOUTS));

/**
 * One page as an (h, w) grey raster in [0, 1] plus a colour tint: random layout, 1-3 fonts, paper
 * and ink levels, light noise. Deterministic in `seed`.
 */
export function renderPage(h: number, w: number, seed: number, kind: 'page' | 'line' = 'page'): RenderedPage {
  const rnd = prng(seed);
  const paper = 0.82 + rnd() * 0.18, ink = rnd() * 0.3;
  const r = new Raster(w, h, paper);
  const fonts = [makeFont(rnd), makeFont(rnd), makeFont(rnd)];
  if (kind === 'line') {
    // A text-line crop as recognisers and orientation classifiers see it: one line filling most of
    // the height, starting near the left edge; sometimes upside down (the classifier's other class).
    const size = h * (0.5 + rnd() * 0.3);
    const y = (h - size) * (0.3 + 0.4 * rnd());
    drawLine(r, fonts[0], rnd, h * 0.1 * rnd() + 1, w - 2, y, size, ink, 0.5 + 0.5 * rnd());
    if (rnd() < 0.5) r.px.reverse();
  } else {
    const name = PAGE_LAYOUTS[Math.floor(rnd() * PAGE_LAYOUTS.length)];
    LAYOUTS[name](r, fonts, rnd, ink);
  }
  for (let i = 0; i < r.px.length; i++) r.px[i] = Math.min(1, Math.max(0, r.px[i] + (rnd() - 0.5) * 0.06));
  const tint = [1 - rnd() * 0.12, 1 - rnd() * 0.12, 1 - rnd() * 0.12];
  return { gray: r.px, tint, h, w };
}

/** A generated page: grey levels in [0, 1] (h x w) and an RGB tint. */
export interface RenderedPage { gray: Float32Array; tint: number[]; h: number; w: number }

/** An RGBA image (e.g. a decoded PNG or canvas pixels), already at the model's input size. */
export interface RgbaImage { rgba: Uint8Array | Uint8ClampedArray; h: number; w: number }

export type Normalization = 'symmetric' | 'imagenet';

/** Per-channel normalisations of RGB in [0, 1]: 'symmetric' (x - 0.5) / 0.5; 'imagenet' mean/std. */
export const NORMALIZATIONS: Readonly<Record<Normalization, { mean: number[]; std: number[] }>> = Object.freeze({
  symmetric: { mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5] },
  imagenet: { mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225] },
});

/** Packs an RGB-in-[0,1] source (gray * tint, or an RGBA image) into a (1, C, H, W) float tensor. */
export function toTensor(src: RenderedPage | RgbaImage, channels: number, normalization: Normalization = 'symmetric'): Float32Array {
  const { mean, std } = NORMALIZATIONS[normalization] ?? NORMALIZATIONS.symmetric;
  const { h, w } = src;
  const out = new Float32Array(channels * h * w);
  for (let c = 0; c < channels; c++) {
    const m = channels === 1 ? 0.5 : mean[c], s = channels === 1 ? 0.5 : std[c];
    for (let i = 0; i < h * w; i++) {
      const v = 'rgba' in src ? src.rgba[i * 4 + c] / 255 : src.gray[i] * src.tint[channels === 1 ? 0 : c];
      out[c * h * w + i] = (v - m) / s;
    }
  }
  return out;
}

/** A (1, C, H, W) document page tensor: 'page' for dense prediction, 'line' for text-line models. */
export function documentTensor([, c, h, w]: number[], seed: number, { kind = 'page', normalization = 'symmetric' }: { kind?: 'page' | 'line'; normalization?: Normalization } = {}): Float32Array {
  return toTensor(renderPage(h, w, seed, kind), c, normalization);
}
