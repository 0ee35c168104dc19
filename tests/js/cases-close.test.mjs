// The rules of the harness's one `close()` and comparison (tests/support/cases.mjs), which every
// conformance run relies on: infinities must be equal, -0 == 0, NaN passes only where expected.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { close, compare, f32, isCaseFile } from '../support/cases.mjs';

const T = { rtol: 1e-3, atol: 1e-5 };

test('infinities must be equal; NaN only where expected; -0 == 0', () => {
  assert.ok(close(Infinity, Infinity, T) && close(-Infinity, -Infinity, T));
  assert.ok(!close(1e30, Infinity, T), 'a finite value never matches +Inf, whatever rtol');
  assert.ok(!close(Infinity, 1e30, T) && !close(-Infinity, Infinity, T));
  assert.ok(close(NaN, NaN, T) && !close(NaN, 0, T) && !close(0, NaN, T));
  assert.ok(!close(NaN, 1, { rtol: Infinity, atol: Infinity }));
  assert.ok(close(-0, 0, { rtol: 0, atol: 0 }));
  assert.ok(close(1.0009, 1, T) && !close(1.002, 1, T));
});

test('tensors: non-finite strings decode; shapes and values are compared', () => {
  const e = { dtype: 'float32', shape: [2], data: [1.0, 'Infinity'] };
  assert.deepEqual(Array.from(f32({ data: ['NaN', 'Infinity', '-Infinity'] })), [NaN, Infinity, -Infinity]);
  assert.equal(compare('x', Float32Array.of(1, Infinity), e, T), null);
  assert.notEqual(compare('x', Float32Array.of(1, 3e38), e, T), null);
  assert.notEqual(compare('x', { shape: [1, 2], data: [1, Infinity] }, e, T), null);
  assert.notEqual(compare('m', Uint8Array.of(1, 0), { dtype: 'uint8', shape: [2], data: [1, 1] }, T), null);
  assert.ok(isCaseFile('pub-0001-View.info.json') && !isCaseFile('index.json') && !isCaseFile('README.md'));
});
