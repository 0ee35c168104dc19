// Fidelity of dense probability maps (DB-style text maps, segmentation): are the same regions found?
// (N, 1, H, W) maps are thresholded; (N, K, H, W) distributions take the per-pixel argmax, one mask
// per class. Regions are 8-connected components, which is what a DB post-process turns into boxes.
import type { DenseMapOptions, KindResult, Pair } from './types.js';
import { squeezeTrailing } from './rows.js';

/** 8-connected components of a mask: a label per pixel (0 = none, 1.. = component) and each one's area. */
export function components(mask: Uint8Array, h: number, w: number): { labels: Int32Array; areas: number[] } {
  const labels = new Int32Array(h * w);
  const areas: number[] = [0];
  const stack = new Int32Array(h * w); // each pixel is pushed at most once
  for (let s = 0; s < h * w; s++) {
    if (!mask[s] || labels[s]) continue;
    const id = areas.length;
    let area = 0, top = 0;
    labels[s] = id;
    stack[top++] = s;
    while (top > 0) {
      const p = stack[--top];
      area++;
      const y = (p / w) | 0, x = p - y * w;
      const y0 = y > 0 ? y - 1 : y, y1 = y < h - 1 ? y + 1 : y, x0 = x > 0 ? x - 1 : x, x1 = x < w - 1 ? x + 1 : x;
      for (let yy = y0; yy <= y1; yy++) {
        for (let xx = x0; xx <= x1; xx++) {
          const q = yy * w + xx;
          if (mask[q] && !labels[q]) { labels[q] = id; stack[top++] = q; }
        }
      }
    }
    areas.push(area);
  }
  return { labels, areas };
}

/** Which components count as regions (DB's post-process keeps the same ones, see denseMapFidelity). */
export interface RegionFilter {
  /** Short side of the bounding box, at least (pixels; default 1: every component). */
  minSide?: number;
  /** Mean map value over the component, at least (needs the maps; default 0: no test). */
  minScore?: number;
  /** The maps the masks were thresholded from (for minScore). */
  probA?: ArrayLike<number>;
  probB?: ArrayLike<number>;
}

/** Per component: kept as a region? (area >= minArea, bounding box's short side >= minSide, mean value >= minScore). */
function keptRegions(c: { labels: Int32Array; areas: number[] }, h: number, w: number, minArea: number, f: RegionFilter, prob?: ArrayLike<number>): boolean[] {
  const n = c.areas.length;
  const minSide = f.minSide ?? 1, minScore = f.minScore ?? 0;
  const x0 = new Int32Array(n).fill(w), x1 = new Int32Array(n).fill(-1), y0 = new Int32Array(n).fill(h), y1 = new Int32Array(n).fill(-1);
  const sum = new Float64Array(n);
  if (minSide > 1 || (minScore > 0 && prob)) {
    for (let p = 0; p < h * w; p++) {
      const l = c.labels[p];
      if (!l) continue;
      const y = (p / w) | 0, x = p - y * w;
      if (x < x0[l]) x0[l] = x;
      if (x > x1[l]) x1[l] = x;
      if (y < y0[l]) y0[l] = y;
      if (y > y1[l]) y1[l] = y;
      if (prob) sum[l] += prob[p];
    }
  }
  return c.areas.map((a, l) => l > 0 && a >= minArea
    && (minSide <= 1 || Math.min(x1[l] - x0[l] + 1, y1[l] - y0[l] + 1) >= minSide)
    && (!(minScore > 0) || !prob || sum[l] / a >= minScore));
}

/**
 * Matches components of two maps one to one at IoU >= 0.5 (greedy, largest IoU first); returns the
 * count and each side's regions: components of at least minArea pixels that pass `filter`.
 */
export function matchComponents(a: Uint8Array, b: Uint8Array, h: number, w: number, minArea: number, filter: RegionFilter = {}): { tp: number; na: number; nb: number } {
  const ca = components(a, h, w), cb = components(b, h, w);
  const ka = keptRegions(ca, h, w, minArea, filter, filter.probA), kb = keptRegions(cb, h, w, minArea, filter, filter.probB);
  const inter = new Map<number, number>();
  const nbl = cb.areas.length;
  for (let p = 0; p < h * w; p++) {
    const la = ca.labels[p], lb = cb.labels[p];
    if (la && lb) inter.set(la * nbl + lb, (inter.get(la * nbl + lb) ?? 0) + 1);
  }
  const cand: [number, number, number][] = [];
  for (const [key, n] of inter) {
    const la = Math.floor(key / nbl), lb = key % nbl;
    if (!ka[la] || !kb[lb]) continue;
    const u = ca.areas[la] + cb.areas[lb] - n;
    if (n / u >= 0.5) cand.push([n / u, la, lb]);
  }
  cand.sort((x, y) => y[0] - x[0]);
  const ua = new Set<number>(), ub = new Set<number>();
  let tp = 0;
  for (const [, la, lb] of cand) if (!ua.has(la) && !ub.has(lb)) { ua.add(la); ub.add(lb); tp++; }
  return { tp, na: ka.filter((x) => x).length, nb: kb.filter((x) => x).length };
}

/**
 * Pixel IoU of the thresholded maps (of each class's argmax mask for K > 1; summed over images and
 * classes), and the F1 of their connected components matched at IoU >= 0.5. Score = component F1:
 * the regions a post-process would report; 1 when neither map has any. Regions are judged as DB's
 * post-process keeps text boxes: a component whose bounding box is thinner than `minSide` pixels
 * (DB's min_size, 3) or, on a single-channel map, whose mean value is below `minScore` (DB's
 * box_thresh, 0.6) is no region, on either side: a 1-pixel sliver the pruned map grows is not a text
 * line the application would see (docs/guides/fidelity.md).
 */
export function denseMapFidelity(pairs: Pair[], opts: DenseMapOptions = {}): KindResult {
  const thr = opts.threshold ?? 0.3, minArea = opts.minArea ?? 4, minSide = opts.minSide ?? 3, minScore = opts.minScore ?? 0.6;
  let inter = 0, union = 0, tp = 0, na = 0, nb = 0, same = 0, pixels = 0, maps = 0, classes = 1;
  for (const { ref, out, dims } of pairs) {
    const d = squeezeTrailing(dims);
    if (d.length < 2) continue;
    const w = d[d.length - 1], h = d[d.length - 2];
    const k = d.length >= 4 ? d[d.length - 3] : 1;
    classes = k;
    const hw = h * w, n = ref.length / (k * hw);
    for (let b = 0; b < n; b++) {
      const base = b * k * hw;
      const lr = new Int32Array(hw), lo = new Int32Array(hw);
      for (let p = 0; p < hw; p++) {
        if (k === 1) { lr[p] = ref[base + p] > thr ? 1 : 0; lo[p] = out[base + p] > thr ? 1 : 0; continue; }
        let br = 0, bo = 0;
        for (let c = 1; c < k; c++) {
          if (ref[base + c * hw + p] > ref[base + br * hw + p]) br = c;
          if (out[base + c * hw + p] > out[base + bo * hw + p]) bo = c;
        }
        lr[p] = br; lo[p] = bo;
      }
      for (let p = 0; p < hw; p++) if (lr[p] === lo[p]) same++;
      pixels += hw;
      const ma = new Uint8Array(hw), mb = new Uint8Array(hw);
      for (let c = k === 1 ? 1 : 0; c < Math.max(k, 2); c++) {
        for (let p = 0; p < hw; p++) {
          ma[p] = lr[p] === c ? 1 : 0; mb[p] = lo[p] === c ? 1 : 0;
          if (ma[p] & mb[p]) inter++;
          if (ma[p] | mb[p]) union++;
        }
        const m = matchComponents(ma, mb, h, w, minArea, k === 1
          ? { minSide, minScore, probA: ref.subarray(base, base + hw), probB: out.subarray(base, base + hw) }
          : { minSide });
        tp += m.tp; na += m.na; nb += m.nb;
      }
      maps++;
    }
  }
  const f1 = na + nb === 0 ? 1 : (2 * tp) / (na + nb);
  const iouAll = union === 0 ? 1 : inter / union;
  return {
    score: f1,
    decisions: na + nb,
    metrics: { componentF1: f1, iou: iouAll, pixelAgreement: pixels ? same / pixels : 1, matched: tp, referenceComponents: na, prunedComponents: nb, maps },
    detail: `${maps} map(s)${classes > 1 ? ` of ${classes} classes (argmax)` : `, threshold ${thr}, regions of mean >= ${minScore}`}, short side >= ${minSide} px; ${tp} of the original's ${na} regions matched (IoU >= 0.5), ${nb} found; pixel IoU ${iouAll.toFixed(4)}`,
  };
}
