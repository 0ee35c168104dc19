// Fidelity of a YOLO-style detection head: are the original's boxes still found? Each anchor holds
// (cx, cy, w, h, [objectness,] class scores...), either channels first (N, 4+C, A: YOLOv8 exports)
// or anchors first (N, A, 5+C: YOLOv5/v7). Both models' boxes go through the same post-processing
// (score threshold, per-class NMS) and the pruned model's are matched to the original's.
import type { DetectionOptions, KindResult, Pair } from './types.js';
import { yoloLayout } from './detect-kind.js';

/** One detection: corners, class, score. */
export interface Box { x1: number; y1: number; x2: number; y2: number; cls: number; score: number }

export function iou(a: Box, b: Box): number {
  const w = Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1), h = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1);
  if (w <= 0 || h <= 0) return 0;
  const inter = w * h;
  const u = (a.x2 - a.x1) * (a.y2 - a.y1) + (b.x2 - b.x1) * (b.y2 - b.y1) - inter;
  return u > 0 ? inter / u : 0;
}

const MAX_BOXES = 300;
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/**
 * The boxes of batch item `b`: each anchor's best class (score x objectness when there is one) at or
 * above the threshold, then greedy NMS per class, at most 300 kept. Scores outside [0, 1] are read as
 * logits (sigmoid).
 */
export function decodeBoxes(v: Float32Array, b: number, layout: { channelsFirst: boolean; anchors: number; k: number }, objectness: boolean, opts: Required<Pick<DetectionOptions, 'scoreThreshold' | 'nmsIou'>>, logits: boolean): Box[] {
  const { channelsFirst, anchors, k } = layout;
  const base = b * k * anchors;
  const at = (a: number, j: number) => v[base + (channelsFirst ? j * anchors + a : a * k + j)];
  const first = objectness ? 5 : 4;
  const boxes: Box[] = [];
  for (let a = 0; a < anchors; a++) {
    const obj = objectness ? (logits ? sigmoid(at(a, 4)) : at(a, 4)) : 1;
    let best = -1, bs = -Infinity;
    for (let j = first; j < k; j++) { const s = logits ? sigmoid(at(a, j)) : at(a, j); if (s > bs) { bs = s; best = j - first; } }
    const score = bs * obj;
    if (!(score >= opts.scoreThreshold)) continue;
    const cx = at(a, 0), cy = at(a, 1), w = at(a, 2), h = at(a, 3);
    boxes.push({ x1: cx - w / 2, y1: cy - h / 2, x2: cx + w / 2, y2: cy + h / 2, cls: best, score });
  }
  boxes.sort((p, q) => q.score - p.score);
  const kept: Box[] = [];
  for (const bx of boxes) {
    if (kept.length >= MAX_BOXES) break;
    if (kept.every((o) => o.cls !== bx.cls || iou(o, bx) <= opts.nmsIou)) kept.push(bx);
  }
  return kept;
}

/** Greedy matching, highest pruned score first, each to the unmatched original box of its class with the largest IoU >= minIou. */
export function matchBoxes(ref: Box[], out: Box[], minIou: number): number {
  const used = new Uint8Array(ref.length);
  let tp = 0;
  for (const o of [...out].sort((p, q) => q.score - p.score)) {
    let bi = -1, bv = minIou;
    ref.forEach((r, i) => {
      if (used[i] || r.cls !== o.cls) return;
      const x = iou(r, o);
      if (x >= bv) { bv = x; bi = i; }
    });
    if (bi >= 0) { used[bi] = 1; tp++; }
  }
  return tp;
}

/**
 * F1 of the pruned model's boxes against the original's (same class, IoU >= 0.5), summed over all
 * images; 1 when neither model finds anything. Also the cosine of the class-score part alone, the
 * part a whole-output cosine lets box pixels hide.
 */
export function detectionFidelity(pairs: Pair[], opts: DetectionOptions = {}): KindResult {
  const o = { scoreThreshold: opts.scoreThreshold ?? 0.25, nmsIou: opts.nmsIou ?? 0.45 };
  const matchIou = opts.matchIou ?? 0.5;
  let nRef = 0, nOut = 0, tp = 0, objectnessUsed = false, logitsUsed = false;
  let dot = 0, nr = 0, no = 0; // cosine of the class-score part
  for (const { ref, out, dims } of pairs) {
    const layout = yoloLayout(dims);
    if (!layout) return { score: 0, metrics: {}, detail: `dims [${dims.join(',')}] are not a YOLO-style head (N, 4+C, A) / (N, A, 4+C) / (N, A, 5+C)` };
    const objectness = opts.objectness ?? !layout.channelsFirst;
    objectnessUsed = objectness;
    let logits = false;
    for (let i = 0; i < ref.length && !logits; i++) {
      const j = layout.channelsFirst ? Math.floor(i / layout.anchors) % layout.k : i % layout.k;
      if (j >= 4 && !(ref[i] >= -1e-4 && ref[i] <= 1 + 1e-4)) logits = true;
    }
    logitsUsed ||= logits;
    const n = ref.length / (layout.k * layout.anchors);
    for (let b = 0; b < n; b++) {
      const rb = decodeBoxes(ref, b, layout, objectness, o, logits), ob = decodeBoxes(out, b, layout, objectness, o, logits);
      nRef += rb.length; nOut += ob.length; tp += matchBoxes(rb, ob, matchIou);
    }
    for (let i = 0; i < ref.length; i++) {
      const j = layout.channelsFirst ? Math.floor(i / layout.anchors) % layout.k : i % layout.k;
      if (j >= 4) { dot += ref[i] * out[i]; nr += ref[i] * ref[i]; no += out[i] * out[i]; }
    }
  }
  const f1 = nRef + nOut === 0 ? 1 : (2 * tp) / (nRef + nOut);
  return {
    score: f1,
    decisions: nRef + nOut,
    metrics: {
      f1, precision: nOut ? tp / nOut : 1, recall: nRef ? tp / nRef : 1, matched: tp, referenceBoxes: nRef, prunedBoxes: nOut,
      scoreCosine: !Number.isFinite(dot + nr + no) ? 0 : nr === 0 && no === 0 ? 1 : nr === 0 || no === 0 ? 0 : dot / Math.sqrt(nr * no),
    },
    detail: `boxes at score >= ${o.scoreThreshold}, NMS ${o.nmsIou}${objectnessUsed ? ', objectness x class' : ''}${logitsUsed ? ', scores as logits' : ''}; ${tp} of the original's ${nRef} matched (IoU >= ${matchIou}), ${nOut} found`,
  };
}
