// Pruning one layer by a criterion, given its input statistics: magnitude, Wanda or SparseGPT, at an
// unstructured sparsity or N:M along the view's columns (the inputs: C*kh*kw of a Conv, K of a MatMul).

/** The rows x cols view of a stored weight as a fresh array (a MatMul (K, N) weight is transposed). */
export function viewValues(stored, { rows, cols, transposed }) {
  if (!transposed) return Float32Array.from(stored);
  const out = new Float32Array(rows * cols);
  for (let k = 0; k < cols; k++) for (let n = 0; n < rows; n++) out[n * cols + k] = stored[k * rows + n];
  return out;
}

function toStored(view, { rows, cols, transposed }) {
  if (!transposed) return view;
  const out = new Float32Array(rows * cols);
  for (let k = 0; k < cols; k++) for (let n = 0; n < rows; n++) out[k * rows + n] = view[n * cols + k];
  return out;
}

/** Keeps the k largest scores among idx (ties keep the lower index). */
function keepTop(scores, idx, k, keep) {
  idx.sort((a, b) => scores[b] - scores[a] || a - b);
  for (let i = 0; i < idx.length; i++) keep[idx[i]] = i < k ? 1 : 0;
}

/**
 * Keep-mask from view-shaped scores: N:M keeps n of every m consecutive columns of each row;
 * unstructured keeps floor((1 - s) * count + 0.5) per row (`perRow`, Wanda) or per layer (magnitude).
 */
export function maskFromScores(scores, rows, cols, target, perRow) {
  const keep = new Uint8Array(rows * cols);
  if (target.nm) {
    const [n, m] = target.nm;
    for (let r = 0; r < rows; r++) for (let g = 0; g < cols; g += m) {
      keepTop(scores, Array.from({ length: m }, (_, k) => r * cols + g + k), n, keep);
    }
  } else if (perRow) {
    const k = Math.floor((1 - target.sparsity) * cols + 0.5);
    for (let r = 0; r < rows; r++) keepTop(scores, Array.from({ length: cols }, (_, j) => r * cols + j), k, keep);
  } else {
    keepTop(scores, Array.from({ length: rows * cols }, (_, i) => i), Math.floor((1 - target.sparsity) * rows * cols + 0.5), keep);
  }
  return keep;
}

/** Whether the layer can take N:M along its columns (and, for a Conv, along its channels per group). */
export function allowsNm(layer, m) {
  if (layer.cols % m) return false;
  return layer.op !== 'Conv' || layer.weight.dims[1] % m === 0;
}

/** tr(D H Dᵀ) and tr(W H Wᵀ) with D = W - Ŵ, from the undamped H (API.md step 5 is sqrt(num / den)). */
export function reconstructionTerms(w0, w1, h, rows, cols) {
  let num = 0, den = 0;
  const d = new Float64Array(cols);
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    for (let j = 0; j < cols; j++) d[j] = w0[o + j] - w1[o + j];
    for (let a = 0; a < cols; a++) {
      const ha = a * cols;
      let sd = 0, sw = 0;
      for (let b = 0; b < cols; b++) { sd += h[ha + b] * d[b]; sw += h[ha + b] * w0[o + b]; }
      num += d[a] * sd; den += w0[o + a] * sw;
    }
  }
  return { num: Math.max(0, num), den };
}

/** One 2-D linear map (rows, cols; stored transposed or not) pruned by `used` with Hessian h (or none). */
function pruneMatrix(engine, stored, shape, h, used, target, blockSize, percDamp) {
  const { rows, cols, transposed } = shape;
  if (used === 'sparsegpt') {
    // N:M needs blockSize % m == 0: round the block down to a multiple of m.
    const bs = target.nm ? Math.max(target.nm[1], blockSize - (blockSize % target.nm[1])) : blockSize;
    const opts = target.nm ? { nm: target.nm, blockSize: bs, percDamp } : { sparsity: target.sparsity, blockSize: bs, percDamp };
    return engine.withView(stored, rows, cols, transposed, (v) => engine.sparseGpt(v, h, opts)).data;
  }
  const w0 = viewValues(stored, shape);
  const scores = used === 'wanda' ? engine.withView(stored, rows, cols, transposed, (v) => engine.wandaScores(v, h)).result : Float32Array.from(w0, Math.abs);
  const keep = maskFromScores(scores, rows, cols, target, used === 'wanda');
  return toStored(Float32Array.from(w0, (x, i) => (keep[i] ? x : 0)), shape);
}

/**
 * SparseGPT's update solves a least-squares problem in the layer's inputs: with fewer calibration
 * vectors than inputs (a 1x1 Conv after global pooling sees one vector per image) it fits the
 * calibration set, not the data, and the held-out output gets worse than with no update at all.
 * Below this many vectors per input a layer asked for SparseGPT gets Wanda (said in its notes).
 */
export const MIN_VECTORS_PER_INPUT = 4;

/**
 * Prunes one layer's weight.
 * @param p {engine, layer, stored: Float32Array (storage layout), stats: {h?} | {groups: [h per group]},
 *   criterion: 'magnitude'|'wanda'|'sparsegpt', target: {sparsity} | {nm: [n, m]}, blockSize, percDamp}
 *   A grouped Conv is G independent linear maps: each group's rows get their own Hessian (groups).
 * @returns {data (storage layout), used (the criterion applied), notes, relError (null without H), sparsity}
 */
export function pruneLayer({ engine, layer, stored, stats = {}, criterion, target, blockSize = 128, percDamp = 0.01, minVectors = MIN_VECTORS_PER_INPUT }) {
  const notes = [];
  if (target.nm && !allowsNm(layer, target.nm[1])) {
    return { data: stored, used: 'dense', notes: [`${target.nm.join(':')} needs ${layer.op === 'Conv' ? 'channels per group and ' : ''}columns in multiples of ${target.nm[1]}: stays dense`], relError: 0, sparsity: sparsityOf(stored) };
  }
  const hs = stats.groups ?? (stats.h ? [stats.h] : null);
  let used = criterion;
  if (criterion !== 'magnitude' && !hs) { used = 'magnitude'; notes.push(`${layer.note ?? 'no input statistics'}: magnitude instead of ${criterion}`); }
  if (used === 'sparsegpt' && hs.some((h) => h.count < minVectors * layer.cols)) {
    used = 'wanda';
    notes.push(`${hs[0].count} calibration vectors for ${layer.cols} inputs: too few to fit SparseGPT's update (needs ${minVectors}× the inputs); Wanda instead`);
  }
  if (stats.groups && used !== 'magnitude') notes.push(`${layer.note}: ${stats.groups.length} Hessians of ${layer.cols} inputs, one per group`);
  let data;
  if (used === 'magnitude' || hs.length === 1) {
    data = pruneMatrix(engine, stored, layer, hs?.[0], used, target, blockSize, percDamp);
  } else {
    // Group g owns the contiguous rows [g * O/G, (g + 1) * O/G) of the (O, C/G * kh * kw) weight.
    const per = layer.rows / hs.length, n = per * layer.cols;
    data = new Float32Array(stored.length);
    hs.forEach((h, g) => data.set(pruneMatrix(engine, stored.subarray(g * n, (g + 1) * n), { rows: per, cols: layer.cols, transposed: false }, h, used, target, blockSize, percDamp), g * n));
  }
  let relError = null;
  if (hs) {
    const per = layer.rows / hs.length, n = per * layer.cols;
    let num = 0, den = 0;
    hs.forEach((h, g) => {
      const shape = { rows: per, cols: layer.cols, transposed: layer.transposed };
      const t = reconstructionTerms(viewValues(stored.subarray(g * n, (g + 1) * n), shape), viewValues(data.subarray(g * n, (g + 1) * n), shape), h.matrix(), per, layer.cols);
      num += t.num; den += t.den;
    });
    relError = den > 0 ? Math.sqrt(num / den) : 0;
  }
  if (target.nm && layer.op === 'Conv' && layer.cols !== layer.weight.dims[1]) notes.push(`${target.nm.join(':')} groups run along (c, i, j) of the ${layer.weight.dims.slice(1).join('x')} kernel`);
  return { data, used, notes, relError, sparsity: sparsityOf(data) };
}

function sparsityOf(a) { let z = 0; for (let i = 0; i < a.length; i++) if (a[i] === 0) z++; return a.length ? z / a.length : 0; }
