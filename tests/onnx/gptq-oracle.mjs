// A scalar JavaScript reference of gptq (docs/API.md, "Quantization"), written from the contract
// with every float32 step rounded by Math.fround, for comparing the wasm (SIMD128) build bit for bit.
// Valid for at most 64 input vectors (one Gram chunk) and at most 64 inputs (one Cholesky panel:
// below that the blocked factorization is the unblocked one, tests/calib_props.rs), where the
// Hessian and U follow from the contract alone.
const f = Math.fround;

/** Ties to even, like f32::round_ties_even. */
function roundEven(x) {
  const r = Math.round(x);
  return Math.abs(x - Math.trunc(x)) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** The Rust core's dot4: four partial sums, (s0 + s1) + (s2 + s3). */
function dot4(a, ao, b, bo, n) {
  const s = [0, 0, 0, 0];
  for (let t = 0; t < n; t++) s[t % 4] += a[ao + t] * b[bo + t];
  return (s[0] + s[1]) + (s[2] + s[3]);
}

/** mean(x xᵀ) in float64 from one float32 Gram chunk (n <= 64 rows of x). */
export function hessianF64(x, n, cols) {
  if (n > 64) throw new Error('the oracle covers one Gram chunk (<= 64 vectors)');
  const h = new Float64Array(cols * cols);
  const inv = 1 / n;
  for (let a = 0; a < cols; a++) for (let b = a; b < cols; b++) {
    let c = 0;
    for (let p = 0; p < n; p++) c = f(c + f(x[p * cols + a] * x[p * cols + b]));
    h[a * cols + b] = h[b * cols + a] = c * inv;
  }
  return h;
}

/** U (H⁻¹ = Uᵀ U) of the damped H as float32, through the reversed Cholesky factor's inverse. */
export function upperFactorF32(h, cols, percDamp) {
  if (cols > 64) throw new Error('the oracle covers one Cholesky panel (<= 64 inputs)');
  const n = cols, hm = Float64Array.from(h);
  for (let j = 0; j < n; j++) if (hm[j * n + j] === 0) hm[j * n + j] = 1;
  let sum = 0;
  for (let j = 0; j < n; j++) sum += hm[j * n + j];
  const damp = percDamp * sum / n;
  for (let j = 0; j < n; j++) hm[j * n + j] += damp;
  const l = new Float64Array(n * n);
  for (let a = 0; a < n; a++) for (let b = 0; b <= a; b++) l[a * n + b] = hm[(n - 1 - a) * n + (n - 1 - b)];
  for (let j = 0; j < n; j++) {
    for (let k = 0; k < j; k++) l[j * n + k] = (l[j * n + k] - dot4(l, j * n, l, k * n, k)) / l[k * n + k];
    l[j * n + j] = Math.sqrt(l[j * n + j] - dot4(l, j * n, l, j * n, j));
  }
  const x = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    x[i * n + i] = 1;
    for (let k = 0; k < i; k++) {
      const lik = l[i * n + k];
      if (lik !== 0) for (let t = 0; t <= k; t++) x[i * n + t] -= lik * x[k * n + t];
    }
    const inv = 1 / l[i * n + i];
    for (let t = 0; t <= i; t++) x[i * n + t] *= inv;
  }
  const u = new Float32Array(n * n);
  for (let a = 0; a < n; a++) for (let b = 0; b < n; b++) u[a * n + b] = x[(n - 1 - a) * n + (n - 1 - b)];
  return u;
}

/** Scale and zero point of a group's values (fullRange: the extreme, negative on a tie, is code -half). */
function params(vals, bits, sym, fullRange) {
  let lo = 0, hi = 0;
  for (const v of vals) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  const half = 2 ** (bits - 1);
  if (sym && fullRange) {
    const s = f((hi > -lo ? hi : lo) / -half);
    return { scale: s !== 0 && Number.isFinite(s) ? s : 1, zero: 0 };
  }
  if (sym) {
    const s = f(Math.max(hi, -lo) / (half - 1));
    return { scale: s > 0 && Number.isFinite(s) ? s : 1, zero: 0 };
  }
  const steps = 2 ** bits - 1;
  const s0 = f(f(hi - lo) / steps);
  const scale = s0 > 0 && Number.isFinite(s0) ? s0 : 1;
  const zu = Math.min(steps, Math.max(0, roundEven(f(-lo / scale))));
  return { scale, zero: zu - half };
}

/** GPTQ on rows x cols (row-major view values) in sequence; returns { values, codes, scales, zeros }. */
export function gptqOracle(w0, rows, cols, u, { bits, group, sym = true, fullRange = false }) {
  const g = group !== undefined && group < cols ? group : cols, ng = Math.ceil(cols / g);
  const half = 2 ** (bits - 1);
  const w = Float32Array.from(w0), codes = new Int8Array(rows * cols), scales = new Float32Array(rows * ng), zeros = new Int8Array(rows * ng);
  for (let r = 0; r < rows; r++) {
    const row = w.subarray(r * cols, (r + 1) * cols);
    let p = null;
    for (let i = 0; i < cols; i++) {
      if (i % g === 0) {
        p = params(row.subarray(i, Math.min(i + g, cols)), bits, sym, fullRange);
        scales[r * ng + i / g] = p.scale;
        zeros[r * ng + i / g] = p.zero;
      }
      const c = Math.min(half - 1, Math.max(-half, roundEven(f(row[i] / p.scale)) + p.zero));
      const q = f((c - p.zero) * p.scale) + 0; // + 0: the grid's zero is +0 under a negative scale
      codes[r * cols + i] = c;
      const ne = -f(f(row[i] - q) / u[i * cols + i]);
      row[i] = q;
      for (let j = i + 1; j < cols; j++) row[j] = f(row[j] + f(ne * u[i * cols + j]));
    }
  }
  return { values: w, codes, scales, zeros };
}
