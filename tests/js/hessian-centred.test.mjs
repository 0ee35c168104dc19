// Hessian.inputMeans() and Hessian.centered() through the package: the means and the centred
// matrix of row inputs and of a padded Conv input against plain-JS sums, the centred Hessian a new
// object (the original unchanged, both freed on their own), usable by sparseGpt.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as sk from 'sparsekit-wasm';

function rand(n, seed, offset = 0) {
  let s = seed >>> 0 || 1;
  return Float32Array.from({ length: n }, (_, i) => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return (s / 2 ** 32) * 2 - 1 + offset * ((i % 3) - 1); });
}

/** Means and mean((x − μ)(x − μ)ᵀ) of row-major vectors. */
function reference(x, cols) {
  const n = x.length / cols, mu = new Float64Array(cols), c = new Float64Array(cols * cols);
  for (let r = 0; r < n; r++) for (let j = 0; j < cols; j++) mu[j] += x[r * cols + j] / n;
  for (let r = 0; r < n; r++) for (let a = 0; a < cols; a++) for (let b = 0; b < cols; b++) c[a * cols + b] += (x[r * cols + a] - mu[a]) * (x[r * cols + b] - mu[b]) / n;
  return { mu, c };
}

test('rows: inputMeans and centered() against plain sums; the original is unchanged', () => {
  const cols = 6, n = 200, x = rand(n * cols, 9, 2);
  const h = new sk.Hessian(cols);
  h.addRows(x, n);
  const before = h.matrix();
  const { mu, c } = reference(x, cols);
  const means = h.inputMeans();
  assert.ok(means instanceof Float64Array && means.length === cols);
  for (let j = 0; j < cols; j++) assert.ok(Math.abs(means[j] - mu[j]) < 1e-6, `mean ${j}`);
  const hc = h.centered();
  assert.ok(hc instanceof sk.Hessian && hc !== h);
  assert.equal(hc.count, n);
  const m = hc.matrix();
  for (let i = 0; i < cols * cols; i++) assert.ok(Math.abs(m[i] - c[i]) < 1e-4, `element ${i}: ${m[i]} vs ${c[i]}`);
  assert.deepEqual(h.matrix(), before);
  // The centred statistics drive sparseGpt like any Hessian.
  const w = sk.Param.fromArray(rand(4 * cols, 3), [4, cols]);
  const keep = sk.sparseGpt(w, hc, { sparsity: 0.5, refit: 4 });
  assert.equal(keep.length, 4 * cols);
  w.free(); hc.free();
  assert.throws(() => hc.matrix(), (e) => e.code === 'use_after_free');
  assert.equal(h.matrix().length, cols * cols, 'the original outlives the copy');
  h.free();
});

test('a padded Conv: the means are the im2col columns\' (border taps read zeros)', () => {
  const [N, C, H, W] = [1, 2, 4, 4];
  const x = Float32Array.from(rand(N * C * H * W, 5), (v) => v + 3);
  const h = new sk.Hessian(C * 9);
  h.addConv(x, [N, C, H, W], { kernelShape: [3, 3], pads: [1, 1, 1, 1] });
  const means = h.inputMeans();
  // Tap (c, i, j) reads x[c, y + i − 1, x + j − 1] over the 4 x 4 outputs, 0 outside.
  for (let c = 0; c < C; c++) for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) {
    let s = 0;
    for (let y = 0; y < H; y++) for (let q = 0; q < W; q++) {
      const yy = y + i - 1, xx = q + j - 1;
      if (yy >= 0 && yy < H && xx >= 0 && xx < W) s += x[(c * H + yy) * W + xx];
    }
    assert.ok(Math.abs(means[c * 9 + i * 3 + j] - s / (H * W)) < 1e-5, `tap (${c}, ${i}, ${j})`);
  }
  assert.ok(means[0] < means[4] - 0.5, 'the corner tap reads the padding, the centre tap does not');
  h.free();
});
