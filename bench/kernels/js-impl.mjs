// Straightforward JavaScript implementations of the benchmarked operations (ratio (2) of the
// bench): plain loops over a Float32Array, no wasm, no SIMD. Same semantics as the library's
// operations (block L2 norms, top-k per 1xN scope, Adam-conditioned bisection, 2:4 mask), not
// bit-exact.

/** Block geometry of a block name ('4x4', 'T4x4' = transposed view (cols, rows)). */
export function geometry(rows, cols, block) {
  const transposed = block.startsWith('T');
  const [bh, bw] = block.replace('T', '').split('x').map(Number);
  const [vr, vc] = transposed ? [cols, rows] : [rows, cols];
  return { transposed, bh, bw, vr, vc, gr: vr / bh, gc: vc / bw };
}

/** L2 norm of every block (grid row-major). */
export function norms(w, rows, cols, block) {
  const g = geometry(rows, cols, block);
  const out = new Float32Array(g.gr * g.gc);
  if (!g.transposed) {
    for (let i = 0; i < rows; i++) {
      const gi = ((i / g.bh) | 0) * g.gc;
      let o = i * cols;
      for (let jb = 0; jb < g.gc; jb++) {
        let s = 0;
        for (let j = 0; j < g.bw; j++) { const x = w[o++]; s += x * x; }
        out[gi + jb] += s;
      }
    }
  } else {
    // view (i, j) = w[j * cols + i]: walk memory rows (view columns j).
    for (let j = 0; j < rows; j++) {
      const gj = (j / g.bw) | 0;
      let o = j * cols;
      for (let ib = 0; ib < g.gr; ib++) {
        let s = 0;
        for (let i = 0; i < g.bh; i++) { const x = w[o++]; s += x * x; }
        out[ib * g.gc + gj] += s;
      }
    }
  }
  for (let k = 0; k < out.length; k++) out[k] = Math.sqrt(out[k]);
  return out;
}

/** Calls f(offset) for every element of view block (bi, bj), row-major inside the block. */
function blockOffsets(g, cols, bi, bj, f) {
  for (let i = bi * g.bh; i < (bi + 1) * g.bh; i++) {
    for (let j = bj * g.bw; j < (bj + 1) * g.bw; j++) {
      f(g.transposed ? j * cols + i : i * cols + j);
    }
  }
}

function scaleBlocks(w, rows, cols, block, factors) {
  const g = geometry(rows, cols, block);
  for (let bi = 0; bi < g.gr; bi++) {
    for (let bj = 0; bj < g.gc; bj++) {
      const f = factors[bi * g.gc + bj];
      if (f !== 1) blockOffsets(g, cols, bi, bj, (o) => { w[o] *= f; });
    }
  }
}

/** hardThreshold by sparsity in 1xN scopes: keep the top half of every block-grid row. */
export function hardThreshold(w, rows, cols, block, sparsity = 0.5) {
  const g = geometry(rows, cols, block);
  const n = norms(w, rows, cols, block);
  const nnz = Math.round((1 - sparsity) * g.gc);
  const keep = new Float32Array(n.length);
  for (let r = 0; r < g.gr; r++) {
    const row = n.subarray(r * g.gc, (r + 1) * g.gc);
    const idx = Array.from(row.keys()).sort((a, b) => row[b] - row[a] || a - b);
    for (let k = 0; k < nnz; k++) keep[r * g.gc + idx[k]] = 1;
  }
  scaleBlocks(w, rows, cols, block, keep);
}

/** Adam-conditioned soft threshold: per-block bisection on mu, `iters` midpoint steps. */
export function softThreshold(w, h, rows, cols, block, t, iters = 20, eps = 1.1920929e-7) {
  const g = geometry(rows, cols, block);
  const n = g.bh * g.bw;
  const xb = new Float64Array(n), hb = new Float64Array(n), offs = new Int32Array(n);
  for (let bi = 0; bi < g.gr; bi++) {
    for (let bj = 0; bj < g.gc; bj++) {
      let k = 0;
      blockOffsets(g, cols, bi, bj, (o) => { offs[k] = o; xb[k] = w[o]; hb[k] = h[o]; k++; });
      let hx2 = 0, hmin = Infinity, hmax = -Infinity;
      for (let e = 0; e < n; e++) {
        const v = hb[e] * xb[e];
        hx2 += v * v;
        if (hb[e] < hmin) hmin = hb[e];
        if (hb[e] > hmax) hmax = hb[e];
      }
      const d = Math.sqrt(hx2) - t;
      const den = Math.max(d, 0) + eps;
      let lo = Math.max(t * hmin / den, 0), hi = Math.max(t * hmax / den, 0), mu = (lo + hi) / 2;
      for (let it = 0; it < iters; it++) {
        let s = 0;
        for (let e = 0; e < n; e++) { const q = hb[e] * xb[e] / (hb[e] + mu); s += q * q; }
        if (mu * Math.sqrt(s) < t) lo = mu; else hi = mu;
        mu = (lo + hi) / 2;
      }
      for (let e = 0; e < n; e++) w[offs[e]] = d <= 0 ? 0 : (hb[e] / (hb[e] + mu)) * xb[e];
    }
  }
}

/** 2:4 keep-mask: in every group of 4, the 2 largest |x| (ties to the lower index). */
export function nm24(w) {
  const m = new Uint8Array(w.length);
  for (let i = 0; i < w.length; i += 4) {
    const a0 = Math.abs(w[i]), a1 = Math.abs(w[i + 1]), a2 = Math.abs(w[i + 2]), a3 = Math.abs(w[i + 3]);
    const a = [a0, a1, a2, a3];
    for (let e = 0; e < 4; e++) {
      let beaten = 0;
      for (let f = 0; f < 4; f++) if (a[f] > a[e] || (a[f] === a[e] && f < e)) beaten++;
      m[i + e] = beaten < 2 ? 1 : 0;
    }
  }
  return m;
}

/** A case for the JS baseline: weights, a backup and conditioners (deterministic). */
export function makeCase(rows, cols) {
  const n = rows * cols;
  const w = new Float32Array(n), h = new Float32Array(n);
  let s = (n ^ 0x9e3779b9) >>> 0;
  const rnd = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s / 4294967296; };
  for (let i = 0; i < n; i++) { w[i] = 2 * rnd() - 1; h[i] = 0.5 + rnd(); }
  return { rows, cols, w, backup: w.slice(), h };
}

/** Runs one op on a JS case (the caller times it). */
export function runJs(c, op, block) {
  switch (op) {
    case 'norms': return norms(c.w, c.rows, c.cols, block)[0];
    case 'hard': hardThreshold(c.w, c.rows, c.cols, block); return c.w[0];
    case 'soft': {
      const g = geometry(c.rows, c.cols, block);
      softThreshold(c.w, c.h, c.rows, c.cols, block, 0.3 * Math.sqrt(g.bh * g.bw / 3));
      return c.w[0];
    }
    case 'nm24': return nm24(c.w)[0];
    default: throw new Error(`unknown op ${op}`);
  }
}
