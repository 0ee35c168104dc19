// Must NOT type-check: a deliberately wrong call (checked by tests/pkg/types.test.mjs).
import { BlockSpec, Param } from 'sparsekit-wasm';
const p = Param.fromArray(new Float32Array(4), [2, 2]);
const spec = new BlockSpec(p, [1, 2]);
spec.hardThreshold('0.5');
