// The data-path ops of issue 38 in the package's SIMD128 wasm build give the bits of the native
// scalar build: the graph of tests/train_bits.rs (Tile, Einsum, GRU, LSTM, Expand, Where, Gather,
// ReduceMax / ReduceMin, Max, Exp, Neg) from tests/data/train-bits.json, its outputs and the Adam
// second moments after one backward + update hashed as the Rust test hashes them (FNV-1a over
// the f32 bits). The native threaded build is checked against the same hashes by the Rust test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { build } from './build.mjs';

build();
const sk = await import('sparsekit-wasm');

function fnv(values) {
  const words = new Uint32Array(Float32Array.from(values).buffer);
  let h = 0x811c9dc5;
  for (const w of words) h = Math.imul(h ^ w, 16777619) >>> 0;
  return h.toString(16).padStart(8, '0');
}

test('Tile, Einsum, GRU, LSTM and the data-path ops: the SIMD128 build has the native scalar bits', () => {
  const fx = JSON.parse(fs.readFileSync(new URL('../data/train-bits.json', import.meta.url), 'utf8'));
  const initializers = fx.inits.map((t) => ({ name: t.name, dims: t.dims, values: t.floats ? Float32Array.from(t.floats) : Int32Array.from(t.ints) }));
  assert.equal(sk.variant(), 'simd');
  const tr = new sk.Trainer({ ...fx.spec, initializers }, { masked: false });
  try {
    const outs = tr.forward([]);
    assert.deepEqual(outs.map((o) => fnv(o.values)), fx.outputs, 'outputs');
    tr.backward(fx.gouts.map((g) => Float32Array.from(g)));
    tr.update();
    assert.deepEqual(fx.moments.map(([n]) => [n, fnv(tr.secondMoments(n))]), fx.moments, 'second moments (gradients)');
  } finally {
    tr.free();
  }
});
