// Detections of a YOLOv8 export as ultralytics' predict makes them, and the F1 of one model's
// detections against another's (issue 38's "F1 of the original's detections").
//
// Decoding follows ultralytics 8.4 (ultralytics/utils/nms.py non_max_suppression, its predict
// defaults conf 0.25, iou 0.7, max_det 300, multi_label off, agnostic off): the output is
// channels-first [N, 4 + nc, A] with (cx, cy, w, h) in input pixels and per-class sigmoid scores; an
// anchor is a candidate when its best class score is > conf; candidates are sorted by that score
// (at most 30 000 kept), NMS runs per class (torchvision.ops.nms drops a box whose IoU with a kept
// one of its class is > iou), and the first 300 kept are the detections, clipped to the image
// (`clip: [width, height]`; predict's scale_boxes clips them). This differs from the
// package's fidelity kind `detection` (NMS at IoU 0.45, score >= 0.25): the bench reports both.

const MAX_NMS = 30000, MAX_DET = 300;

/** IoU of two [x1, y1, x2, y2] boxes. */
export function iou(a, b) {
  const w = Math.min(a[2], b[2]) - Math.max(a[0], b[0]), h = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  if (w <= 0 || h <= 0) return 0;
  const inter = w * h;
  return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter);
}

/**
 * The detections of batch item `b` of `data` (a flat [N, 4 + nc, A] output): [{ box: [x1, y1, x2, y2], cls, conf }],
 * highest confidence first. Throws on a shape that is not a YOLOv8 head.
 */
export function decodeYolov8(data, dims, { conf = 0.25, iouThreshold = 0.7, b = 0, clip = null } = {}) {
  if (dims.length !== 3 || dims[1] < 5 || dims[2] < dims[1]) throw new Error(`not a YOLOv8 output [N, 4 + nc, anchors]: [${dims.join(', ')}]`);
  const [, k, anchors] = dims;
  const base = b * k * anchors;
  const cand = [];
  for (let a = 0; a < anchors; a++) {
    let best = 0, score = -Infinity;
    for (let j = 4; j < k; j++) { const s = data[base + j * anchors + a]; if (s > score) { score = s; best = j - 4; } }
    if (!(score > conf)) continue;
    const cx = data[base + a], cy = data[base + anchors + a], w = data[base + 2 * anchors + a], h = data[base + 3 * anchors + a];
    cand.push({ box: [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], cls: best, conf: score });
  }
  // Stable sort, highest first, as torch's argsort(descending) then [:max_nms].
  cand.sort((p, q) => q.conf - p.conf);
  const kept = [];
  for (const c of cand.slice(0, MAX_NMS)) {
    if (kept.some((o) => o.cls === c.cls && iou(o.box, c.box) > iouThreshold)) continue;
    kept.push(c);
    if (kept.length >= MAX_DET) break;
  }
  if (clip) for (const d of kept) d.box = d.box.map((v, i) => Math.min(Math.max(v, 0), clip[i % 2]));
  return kept;
}

/**
 * Matches `out` (a model's detections) to `ref` (the original's), greedily, highest `out`
 * confidence first, each to the unmatched `ref` detection of its class with the largest IoU >= minIou.
 * Returns the true positives.
 */
export function matchDetections(ref, out, minIou = 0.5) {
  const used = new Uint8Array(ref.length);
  let tp = 0;
  for (const o of out) {
    let bi = -1, bv = minIou;
    for (let i = 0; i < ref.length; i++) {
      if (used[i] || ref[i].cls !== o.cls) continue;
      const x = iou(ref[i].box, o.box);
      if (x >= bv) { bv = x; bi = i; }
    }
    if (bi >= 0) { used[bi] = 1; tp++; }
  }
  return tp;
}

/**
 * F1 of detections against reference detections over a set of images (summed counts: F1 =
 * 2 TP / (|out| + |ref|)); 1 when neither has any detection.
 * `refs`, `outs`: per image, arrays of detections.
 */
export function detectionF1(refs, outs, minIou = 0.5) {
  if (refs.length !== outs.length) throw new Error(`${refs.length} reference images, ${outs.length} compared`);
  let tp = 0, nRef = 0, nOut = 0;
  for (let i = 0; i < refs.length; i++) {
    tp += matchDetections(refs[i], outs[i], minIou);
    nRef += refs[i].length;
    nOut += outs[i].length;
  }
  const f1 = nRef + nOut === 0 ? 1 : (2 * tp) / (nRef + nOut);
  return { f1, precision: nOut ? tp / nOut : 1, recall: nRef ? tp / nRef : 1, tp, ref: nRef, out: nOut };
}

/** The detections of a model (an onnxruntime session made by the package's runner) on each sample. */
export async function detectAll(session, samples, opts) {
  const all = [];
  for (const s of samples) {
    const t = Object.values(await session.run(s.feeds))[0];
    all.push(decodeYolov8(t.data, t.dims, opts));
  }
  return all;
}
