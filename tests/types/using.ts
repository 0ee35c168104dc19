// `using` releases a Param at the end of its block (compiled with esnext.disposable in lib, as a
// project that uses `using` has it, then run in Node by tests/pkg/types.test.mjs).
import { Param, SparseKitError } from 'sparsekit-wasm';

let escaped: Param;
{
  using p = Param.fromArray([1, 2, 3], [3]);
  escaped = p;
  if (p.size !== 3) throw new Error('size');
}
try {
  void escaped.size;
  console.log('not freed');
} catch (e) {
  console.log(e instanceof SparseKitError ? e.code : String(e));
}
