// Task metrics of the PaddleOCR models on rendered text (bench/ocr-text.mjs): what "still works" means
// for each model, beyond output cosines.
//   rec: greedy CTC decode (class 0 blank, then ppocr_keys_v1.txt, then space), leading / trailing
//        spaces trimmed -> character error rate (summed edit distance / summed truth length) and
//        exact-line accuracy.
//   cls: accuracy of the 0 / 180 degree label (class 1 = turned).
//   det: probability map > 0.3 -> 4-connected components -> boxes whose mean probability is >= 0.6,
//        grown by PaddleOCR's unclip rule for a rectangle (offset = area * 1.5 / perimeter), matched
//        one to one to the truth's line boxes at IoU >= 0.5 (greedy, best IoU first) -> precision,
//        recall, F1. Line boxes, not word boxes: the detector is trained on lines of text, and on our
//        pages the words of a line are one space apart, so it returns one region per line.
// Preprocessing as PaddleOCR's inference scripts: rec scaled to height 48 keeping the ratio, width
// max(320, scaled width), right-padded with 0 after (x/255 - 0.5) / 0.5; cls the same at 48 x 192 with
// longer crops squeezed to 192; det ImageNet mean / std, sides rounded to multiples of 32.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { decodePng, resizeRgba, toTensor, runSet, compareSets } from '#onnx-internal';
import { loadDictionary } from './ocr-text.mjs';

export const DET_THRESH = 0.3, DET_BOX_THRESH = 0.6, DET_UNCLIP = 1.5, IOU_MATCH = 0.5;

export function readPng(file) {
  return decodePng(fs.readFileSync(file), (z) => zlib.inflateSync(z), path.basename(file));
}

/** The rendered set of `dir`: its truth.json items with their images. */
export function readTextSet(dir) {
  const truth = JSON.parse(fs.readFileSync(path.join(dir, 'truth.json'), 'utf8'));
  return { ...truth, items: truth.items.map((it) => ({ ...it, image: readPng(path.join(dir, it.file)) })) };
}

/** Scales to height h keeping the ratio (width at most maxW when given), pads to padW with 0 after normalising. */
function lineTensor(img, h, padW, maxW = Infinity) {
  const rw = Math.max(1, Math.min(maxW, Math.ceil(h * (img.w / img.h))));
  const w = Math.max(padW, rw);
  const t = toTensor(resizeRgba(img, h, rw), 3, 'symmetric');
  const out = new Float32Array(3 * h * w);                // zeros: the padding
  for (let c = 0; c < 3; c++) for (let y = 0; y < h; y++) out.set(t.subarray((c * h + y) * rw, (c * h + y + 1) * rw), (c * h + y) * w);
  return { type: 'float32', data: out, dims: [1, 3, h, w] };
}

export const recFeed = (img) => ({ x: lineTensor(img, 48, 320) });
export const clsFeed = (img) => ({ x: lineTensor(img, 48, 192, 192) });
export function detFeed(img) {
  const h = Math.max(32, Math.round(img.h / 32) * 32), w = Math.max(32, Math.round(img.w / 32) * 32);
  const src = h === img.h && w === img.w ? img : resizeRgba(img, h, w);
  return { x: { type: 'float32', data: toTensor(src, 3, 'imagenet'), dims: [1, 3, h, w] } };
}

/** Model inputs of a rendered set, as calibration / evaluation samples ({feeds, source}). */
export function textSamples(set, model) {
  const feed = { rec: recFeed, cls: clsFeed, det: detFeed }[model];
  return set.items.map((it) => ({ feeds: feed(it.image), source: it.file }));
}

let dict;
/** Greedy CTC: best class per step, repeats merged, blanks dropped. */
export function ctcDecode(probs, classes) {
  dict ??= loadDictionary();
  if (classes !== dict.length) throw new Error(`rec output has ${classes} classes, the dictionary ${dict.length}`);
  const steps = probs.length / classes;
  let s = '', prev = -1;
  for (let t = 0; t < steps; t++) {
    let best = 0, bv = -Infinity;
    for (let c = 0; c < classes; c++) { const v = probs[t * classes + c]; if (v > bv) { bv = v; best = c; } }
    if (best !== prev && best !== 0) s += dict[best];
    prev = best;
  }
  return s;
}

export function editDistance(a, b) {
  const x = [...a], y = [...b];
  let row = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const next = [i];
    for (let j = 1; j <= y.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
    row = next;
  }
  return row[y.length];
}

export function recMetrics(set, outputs) {
  let dist = 0, len = 0, exact = 0;
  const read = set.items.map((it, i) => {
    const probs = Object.values(outputs[i])[0];
    const got = ctcDecode(probs, 6625).trim();       // the left margin often reads as a space
    dist += editDistance(got, it.text); len += [...it.text].length; exact += got === it.text ? 1 : 0;
    return got;
  });
  return { cer: dist / len, lineAcc: exact / set.items.length, read };
}

export function clsMetrics(set, outputs) {
  let ok = 0;
  set.items.forEach((it, i) => { const p = Object.values(outputs[i])[0]; ok += (p[1] > p[0] ? 1 : 0) === it.label ? 1 : 0; });
  return { acc: ok / set.items.length };
}

/** Boxes [x0, y0, x1, y1] (pixel edges) of the regions of `prob` (h x w) over the threshold. */
export function detBoxes(prob, h, w, { thresh = DET_THRESH, boxThresh = DET_BOX_THRESH, unclip = DET_UNCLIP, minSide = 3 } = {}) {
  const label = new Int32Array(h * w).fill(-1);
  const boxes = [];
  const stack = [];
  for (let s = 0; s < h * w; s++) {
    if (label[s] !== -1 || prob[s] <= thresh) continue;
    let x0 = w, y0 = h, x1 = -1, y1 = -1, sum = 0, n = 0;
    label[s] = boxes.length; stack.push(s);
    while (stack.length) {
      const p = stack.pop(), y = (p / w) | 0, x = p - y * w;
      x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y); sum += prob[p]; n++;
      for (const q of [x > 0 ? p - 1 : -1, x < w - 1 ? p + 1 : -1, y > 0 ? p - w : -1, y < h - 1 ? p + w : -1]) {
        if (q >= 0 && label[q] === -1 && prob[q] > thresh) { label[q] = boxes.length; stack.push(q); }
      }
    }
    boxes.push({ box: [x0, y0, x1 + 1, y1 + 1], score: sum / n });
  }
  return boxes.filter((b) => b.score >= boxThresh && Math.min(b.box[2] - b.box[0], b.box[3] - b.box[1]) >= minSide).map(({ box: [x0, y0, x1, y1] }) => {
    const bw = x1 - x0, bh = y1 - y0, d = (bw * bh * unclip) / (2 * (bw + bh));
    return [Math.max(0, x0 - d), Math.max(0, y0 - d), Math.min(w, x1 + d), Math.min(h, y1 + d)];
  });
}

export function iou(a, b) {
  const iw = Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0])), ih = Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
  const inter = iw * ih, u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return u > 0 ? inter / u : 0;
}

/** One-to-one matches at IoU >= IOU_MATCH, best pairs first. */
export function matchBoxes(pred, truth) {
  const pairs = [];
  pred.forEach((p, i) => truth.forEach((t, j) => { const v = iou(p, t); if (v >= IOU_MATCH) pairs.push([v, i, j]); }));
  pairs.sort((a, b) => b[0] - a[0]);
  const up = new Set(), ut = new Set();
  let m = 0;
  for (const [, i, j] of pairs) if (!up.has(i) && !ut.has(j)) { up.add(i); ut.add(j); m++; }
  return m;
}

export function detMetrics(set, outputs, samples) {
  let tp = 0, np = 0, nt = 0;
  set.items.forEach((it, i) => {
    const [, , h, w] = samples[i].feeds.x.dims;
    const sy = h / it.image.h, sx = w / it.image.w;
    const pred = detBoxes(Object.values(outputs[i])[0], h, w);
    const truth = it.lines.map((l) => [l.box[0] * sx, l.box[1] * sy, l.box[2] * sx, l.box[3] * sy]);
    tp += matchBoxes(pred, truth); np += pred.length; nt += truth.length;
  });
  const precision = np ? tp / np : 0, recall = nt ? tp / nt : 0;
  return { precision, recall, f1: precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0 };
}

/** The task metric of `model` ('det' | 'rec' | 'cls') on `set`, given the model's outputs on `samples`. */
export function taskMetrics(model, set, outputs, samples) {
  return model === 'rec' ? recMetrics(set, outputs) : model === 'cls' ? clsMetrics(set, outputs) : detMetrics(set, outputs, samples);
}

/** Runs `bytes` on the set; task metrics and (when `reference` outputs are given) the output cosine. */
export async function evaluateOcr(runner, bytes, model, set, samples, reference = null) {
  const outputs = await runSet(runner, bytes, samples);
  const metrics = taskMetrics(model, set, outputs, samples);
  return { metrics, outputs, cosine: reference ? compareSets(reference, outputs).cosine : 1 };
}
