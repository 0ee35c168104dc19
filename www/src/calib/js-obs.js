// A plain-JS implementation of API.md "Calibration-aware pruning" (Hessian, wandaScores, sparseGpt)
// in f64, used by the pipeline only when the loaded sparsekit-wasm package predates those exports
// (see engine.js). It follows the contract's numbered steps literally; it is the slow path, not an
// optimised kernel. Views are plain objects {data: Float32Array, shape: [rows, cols], stride}.

class CalibError extends Error {
  constructor(code, message) { super(message); this.name = 'SparseKitError'; this.code = code; }
}

/** Mean of x xᵀ over the input vectors added so far, accumulated in f64 (upper triangle). */
export class JsHessian {
  constructor(cols) {
    if (!Number.isInteger(cols) || cols < 1) throw new CalibError('invalid_arguments', `Hessian: cols must be a positive integer, got ${cols}`);
    this.cols = cols;
    this.count = 0;
    this.sum = new Float64Array(cols * cols);
  }

  /** Adds the columns of X, stored column-major as xt[c * p + k] for p vectors. */
  #addTransposed(xt, p) {
    const n = this.cols, s = this.sum;
    for (let a = 0; a < n; a++) {
      const oa = a * p;
      for (let b = a; b < n; b++) {
        const ob = b * p;
        let d = 0;
        for (let k = 0; k < p; k++) d += xt[oa + k] * xt[ob + k];
        s[a * n + b] += d;
      }
    }
    this.count += p;
  }

  addRows(x, n) {
    const c = this.cols;
    if (x.length !== n * c) throw new CalibError('shape_mismatch', `addRows: ${x.length} values for ${n} x ${c}`);
    for (let i = 0; i < x.length; i++) if (!Number.isFinite(x[i])) throw new CalibError('invalid_value', 'addRows: non-finite input');
    const chunk = 256;
    const xt = new Float64Array(c * chunk);
    for (let r0 = 0; r0 < n; r0 += chunk) {
      const p = Math.min(chunk, n - r0);
      for (let k = 0; k < p; k++) for (let j = 0; j < c; j++) xt[j * p + k] = x[(r0 + k) * c + j];
      this.#addTransposed(xt, p);
    }
  }

  addConv(x, [N, C, H, W], conv) {
    const [kh, kw] = conv.kernelShape;
    const [sh, sw] = conv.strides ?? [1, 1];
    const [pt, pl, pb, pr] = conv.pads ?? [0, 0, 0, 0];
    const [dh, dw] = conv.dilations ?? [1, 1];
    if (C * kh * kw !== this.cols) throw new CalibError('shape_mismatch', `addConv: C*kh*kw = ${C * kh * kw}, Hessian has ${this.cols} cols`);
    if (x.length !== N * C * H * W) throw new CalibError('shape_mismatch', `addConv: ${x.length} values for [${N},${C},${H},${W}]`);
    for (let i = 0; i < x.length; i++) if (!Number.isFinite(x[i])) throw new CalibError('invalid_value', 'addConv: non-finite input');
    const OH = Math.floor((H + pt + pb - dh * (kh - 1) - 1) / sh) + 1;
    const OW = Math.floor((W + pl + pr - dw * (kw - 1) - 1) / sw) + 1;
    if (OH < 1 || OW < 1) throw new CalibError('invalid_arguments', 'addConv: the kernel does not fit the padded input');
    const P = OH * OW, chunk = Math.min(P, 512);
    const xt = new Float64Array(this.cols * chunk);
    for (let img = 0; img < N; img++) {
      const base = img * C * H * W;
      for (let p0 = 0; p0 < P; p0 += chunk) {
        const p = Math.min(chunk, P - p0);
        xt.fill(0, 0, this.cols * p);
        for (let k = 0; k < p; k++) {
          const oy = Math.floor((p0 + k) / OW), ox = (p0 + k) % OW;
          let col = 0;
          for (let c = 0; c < C; c++) for (let i = 0; i < kh; i++) for (let j = 0; j < kw; j++, col++) {
            const y = oy * sh - pt + i * dh, xx = ox * sw - pl + j * dw;
            if (y >= 0 && y < H && xx >= 0 && xx < W) xt[col * p + k] = x[base + (c * H + y) * W + xx];
          }
        }
        this.#addTransposed(xt, p);
      }
    }
  }

  matrix() {
    const n = this.cols, out = new Float32Array(n * n), f = this.count ? 1 / this.count : 0;
    for (let a = 0; a < n; a++) for (let b = a; b < n; b++) out[a * n + b] = out[b * n + a] = this.sum[a * n + b] * f;
    return out;
  }

  inputNorms() {
    const n = this.cols, out = new Float32Array(n), f = this.count ? 1 / this.count : 0;
    for (let j = 0; j < n; j++) out[j] = Math.sqrt(this.sum[j * n + j] * f);
    return out;
  }

  free() { this.sum = new Float64Array(0); }
}

const at = (v, r, c) => v.data[r * v.stride[0] + c * v.stride[1]];
const put = (v, r, c, x) => { v.data[r * v.stride[0] + c * v.stride[1]] = x; };

/** |W_ij| * inputNorms_j, view-shaped. */
export function jsWandaScores(v, h) {
  const [rows, cols] = v.shape;
  if (h.cols !== cols) throw new CalibError('shape_mismatch', `wandaScores: Hessian has ${h.cols} cols, the view ${cols}`);
  const norms = h.inputNorms();
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[r * cols + c] = Math.abs(at(v, r, c)) * norms[c];
  return out;
}

/** Lower Cholesky factor of a (n, n) f64 matrix in place (upper part left as is); false if not PD. */
function choleskyLower(a, n) {
  for (let j = 0; j < n; j++) {
    let d = a[j * n + j];
    for (let k = 0; k < j; k++) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0) || !Number.isFinite(d)) return false;
    const l = Math.sqrt(d);
    a[j * n + j] = l;
    for (let i = j + 1; i < n; i++) {
      let s = a[i * n + j];
      for (let k = 0; k < j; k++) s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / l;
    }
  }
  return true;
}

/** Upper Cholesky factor U of H⁻¹ (H⁻¹ = Uᵀ U) for a damped SPD H (f64, n x n); null if singular. */
function upperCholeskyOfInverse(h, n) {
  const L = Float64Array.from(h);
  if (!choleskyLower(L, n)) return null;
  // Linv = L⁻¹ (lower), then H⁻¹ = Linvᵀ Linv.
  const Li = new Float64Array(n * n);
  for (let j = 0; j < n; j++) {
    Li[j * n + j] = 1 / L[j * n + j];
    for (let i = j + 1; i < n; i++) {
      let s = 0;
      for (let k = j; k < i; k++) s -= L[i * n + k] * Li[k * n + j];
      Li[i * n + j] = s / L[i * n + i];
    }
  }
  const inv = new Float64Array(n * n);
  for (let a = 0; a < n; a++) for (let b = a; b < n; b++) {
    let s = 0;
    for (let k = b; k < n; k++) s += Li[k * n + a] * Li[k * n + b];
    inv[a * n + b] = inv[b * n + a] = s;
  }
  if (!choleskyLower(inv, n)) return null;
  const U = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = i; j < n; j++) U[i * n + j] = inv[j * n + i];
  return U;
}

/** SparseGPT as API.md defines it, in place on the view; returns the view-shaped keep-mask. */
export function jsSparseGpt(v, h, opts = {}) {
  const [rows, cols] = v.shape;
  const { sparsity, nm, keep, blockSize = 128, percDamp = 0.01 } = opts;
  const given = [sparsity, nm, keep].filter((x) => x !== undefined).length;
  if (given !== 1) throw new CalibError('invalid_arguments', 'sparseGpt: give exactly one of sparsity, nm, keep');
  if (!Number.isInteger(blockSize) || blockSize < 1) throw new CalibError('invalid_arguments', 'sparseGpt: blockSize must be >= 1');
  if (!(percDamp >= 0) || !Number.isFinite(percDamp)) throw new CalibError('invalid_arguments', 'sparseGpt: percDamp must be finite and >= 0');
  if (h.cols !== cols) throw new CalibError('shape_mismatch', `sparseGpt: Hessian has ${h.cols} cols, the view ${cols}`);
  if (sparsity !== undefined && !(sparsity >= 0 && sparsity <= 1)) throw new CalibError('invalid_sparsity', `sparseGpt: sparsity ${sparsity}`);
  if (nm && (blockSize % nm[1] || cols % nm[1] || !(nm[0] >= 0 && nm[0] <= nm[1]))) throw new CalibError('invalid_nm_shape', `sparseGpt: ${nm[0]}:${nm[1]} needs blockSize and cols multiples of ${nm[1]}`);
  if (keep && keep.length !== rows * cols) throw new CalibError('shape_mismatch', 'sparseGpt: keep has the wrong length');
  const W = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) {
    const x = at(v, r, c);
    if (!Number.isFinite(x)) throw new CalibError('invalid_value', 'sparseGpt: non-finite weight');
    W[r * cols + c] = x;
  }
  const H = Float64Array.from(h.matrix());
  let diagMean = 0;
  for (let j = 0; j < cols; j++) {
    if (H[j * cols + j] === 0) { H[j * cols + j] = 1; for (let r = 0; r < rows; r++) W[r * cols + j] = 0; }
    diagMean += H[j * cols + j] / cols;
  }
  for (let j = 0; j < cols; j++) H[j * cols + j] += percDamp * diagMean;
  const U = upperCholeskyOfInverse(H, cols);
  if (!U) throw new CalibError('singular_hessian', 'sparseGpt: the damped Hessian is not positive definite; raise percDamp');
  const mask = new Uint8Array(rows * cols).fill(1);
  if (keep) mask.set(keep);
  for (let i1 = 0; i1 < cols; i1 += blockSize) {
    const i2 = Math.min(cols, i1 + blockSize), bw = i2 - i1;
    if (sparsity !== undefined) {
      const numel = rows * bw, kept = Math.floor((1 - sparsity) * numel + 0.5);
      const score = new Float64Array(numel);
      for (let r = 0; r < rows; r++) for (let j = 0; j < bw; j++) {
        const d = U[(i1 + j) * cols + i1 + j], w = W[r * cols + i1 + j];
        score[r * bw + j] = (w * w) / (d * d);
      }
      const order = Array.from({ length: numel }, (_, k) => k).sort((a, b) => score[b] - score[a] || a - b);
      for (let k = 0; k < numel; k++) mask[Math.floor(order[k] / bw) * cols + i1 + (order[k] % bw)] = k < kept ? 1 : 0;
    }
    const E = new Float64Array(rows * bw);
    for (let i = i1; i < i2; i++) {
      if (nm && (i - i1) % nm[1] === 0) {
        const [n, m] = nm;
        for (let r = 0; r < rows; r++) {
          const idx = Array.from({ length: m }, (_, k) => k);
          const s = idx.map((k) => { const d = U[(i + k) * cols + i + k], w = W[r * cols + i + k]; return (w * w) / (d * d); });
          idx.sort((a, b) => s[b] - s[a] || a - b);
          for (let k = 0; k < m; k++) mask[r * cols + i + idx[k]] = k < n ? 1 : 0;
        }
      }
      const d = U[i * cols + i];
      for (let r = 0; r < rows; r++) {
        const w = W[r * cols + i], q = mask[r * cols + i] ? w : 0, err = (w - q) / d;
        if (err !== 0) for (let j = i; j < i2; j++) W[r * cols + j] -= err * U[i * cols + j];
        W[r * cols + i] = q;
        E[r * bw + i - i1] = err;
      }
    }
    for (let r = 0; r < rows; r++) for (let k = 0; k < bw; k++) {
      const e = E[r * bw + k];
      if (e === 0) continue;
      const urow = (i1 + k) * cols;
      for (let j = i2; j < cols; j++) W[r * cols + j] -= e * U[urow + j];
    }
  }
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) put(v, r, c, W[r * cols + c]);
  return mask;
}
