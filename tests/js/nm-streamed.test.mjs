// The 1-D N:M masks and `fill` through the package on JS arrays larger than one streamed chunk
// (2^18 values): the same bits as a plain-JS reference across chunk boundaries, and wasm memory
// that does not grow with the weight (the values are copied in a chunk at a time).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as sk from 'sparsekit-wasm';
import { memoryBuffer } from '../../pkg/src/runtime.js';

/** xorshift floats in [-2, 2) on a 1/8 grid (many ties), with NaN and -0 sprinkled in. */
function weight(len, seed) {
  const w = new Float32Array(len);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < len; i++) {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    w[i] = Math.round(((s / 2 ** 32) * 4 - 2) * 8) / 8;
  }
  for (let i = 11; i < len; i += 9973) w[i] = NaN;
  for (let i = 5; i < len; i += 7919) w[i] = -0;
  return w;
}

/** Reference keep-mask: in each group of m, the n largest |x| (NaN lowest), ties to the lower index. */
function reference(w, m, n) {
  const out = new Uint8Array(w.length);
  const mag = (x) => (Number.isNaN(x) ? -1 : Math.abs(x));
  for (let g = 0; g < w.length; g += m) {
    for (let i = 0; i < m; i++) {
      let beaten = 0;
      for (let j = 0; j < m; j++) {
        const a = mag(w[g + j]);
        const b = mag(w[g + i]);
        if (a > b || (a === b && j < i)) beaten++;
      }
      out[g + i] = beaten < n ? 1 : 0;
    }
  }
  return out;
}

test('m4n2_1d, mn1dBest and fill across chunk boundaries equal a plain-JS reference', () => {
  // 3 x 174776: two full chunks and a partial one; m = 3 does not divide the chunk.
  const [rows, cols] = [3, 174776];
  const w = weight(rows * cols, 7);
  assert.deepEqual(sk.m4n2_1d(w, [rows, cols]), reference(w, 4, 2));
  const w3 = weight(5 * 123453, 11);
  assert.deepEqual(sk.mn1dBest(w3, [5, 123453], 3, 1), reference(w3, 3, 1));
  const nnz = w.reduce((k, x) => k + (x !== 0 ? 1 : 0), 0);
  assert.equal(sk.fill(w), nnz / w.length);
  // The input is read, never written.
  assert.deepEqual(w, weight(rows * cols, 7));
});

test('a 2:4 mask of a 64 MiB weight does not grow wasm memory by the weight', () => {
  sk.m4n2_1d(weight(1 << 20, 3), [256, 4096]); // the streaming buffers, once
  const before = memoryBuffer().byteLength;
  const w = weight(1 << 24, 5);
  const mask = sk.m4n2_1d(w, [4096, 4096]);
  const grown = memoryBuffer().byteLength - before;
  assert.equal(mask.length, w.length);
  assert.ok(grown < 4 << 20, `wasm memory grew by ${grown} bytes for a ${w.byteLength}-byte weight`);
  assert.equal(mask.reduce((k, x) => k + x, 0), w.length / 2, 'every group keeps 2 of 4');
});

test('an out array receives the mask and is returned; a wrong one is refused before anything is written', () => {
  const w = weight(4 * 65540, 13);
  const out = new Uint8Array(w.length).fill(9);
  assert.equal(sk.m4n2_1d(w, [4, 65540], out), out);
  assert.deepEqual(out, reference(w, 4, 2));
  const out3 = new Uint8Array(w.length);
  assert.equal(sk.mn1dBest(w, [4, 65540], 4, 1, out3), out3);
  assert.deepEqual(out3, reference(w, 4, 1));
  const keep = out.slice();
  assert.throws(() => sk.m4n2_1d(w, [4, 65540], new Uint8Array(w.length - 1)), { code: 'shape_mismatch' });
  assert.throws(() => sk.m4n2_1d(w, [4, 65540], new Float32Array(w.length)), { code: 'invalid_arguments' });
  // Arguments checked before the first byte: a bad shape leaves `out` as it was.
  assert.throws(() => sk.m4n2_1d(w, [2, 131080 + 2], out), { code: 'shape_mismatch' });
  assert.throws(() => sk.mn1dBest(w, [4, 65540], 4, 5, out), { code: 'invalid_nm_pattern' });
  assert.deepEqual(out, keep);
});
