// A wasm32 module addresses 4 GiB; an allocation beyond it aborts inside the module (a trap, not an
// error Rust can return). The package reports that trap as `out_of_memory` in the user's terms, not as
// an internal error to report: here a real one, four 1 GiB tensors held by one forward pass of the
// training core (about 3 GiB of RSS for a few seconds). All four are graph outputs: the forward lets
// go of a value no backward reads once its last reader has run, so a chain whose intermediates are
// not outputs would hold only two of them at a time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as sk from 'sparsekit-wasm';

test('a forward pass that outgrows the 4 GiB of wasm32 memory fails with out_of_memory', () => {
  const n = 2 ** 28; // the largest tensor the core allows: 1 GiB of f32
  const t = new sk.Trainer({
    nodes: [
      { opType: 'Expand', inputs: ['x', 'sh'], outputs: ['a'] },
      { opType: 'Neg', inputs: ['a'], outputs: ['b'] },
      { opType: 'Neg', inputs: ['b'], outputs: ['c'] },
      { opType: 'Neg', inputs: ['c'], outputs: ['d'] },
    ],
    inputs: ['x'], outputs: ['a', 'b', 'c', 'd'],
    initializers: [{ name: 'sh', dims: [1], values: Float64Array.from([n]) }],
  });
  assert.throws(() => t.forward([{ values: new Float32Array([1]), shape: [1] }]), (e) => e instanceof sk.SparseKitError && e.code === 'out_of_memory' && /4\.00 GiB a wasm32 module can address/.test(e.message));
  // the trainer the trapped call had borrowed: free() does not replace that error with its own
  t.free();
});
