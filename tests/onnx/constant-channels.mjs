// A model with constant channels, shared by the channel-removal tests that check a removed
// constant is carried exactly by the biases (channels-centred, channels-fluctuation).
import { makeModel, rng } from './graphs.mjs';

/** Two hidden layers whose channels 4..7 are constant (the second's read only the first's). */
export function twoConstantLayers() {
  const r = rng(13);
  const w1 = Float32Array.from({ length: 32 }, (_, i) => ((i % 8) < 4 ? r() : 0));
  const b1 = Float32Array.from({ length: 8 }, (_, c) => (c < 4 ? 0.1 : 3));
  const w2 = Float32Array.from({ length: 64 }, (_, k) => { const i = Math.floor(k / 8), j = k % 8; return j < 4 ? r() : i < 4 ? 0 : 0.2 * Math.abs(r()) + 0.1; });
  const b2 = Float32Array.from({ length: 8 }, (_, c) => (c < 4 ? 0.1 : 5));
  return makeModel({
    inputs: [['x', [1, 12, 4]]], outputs: [['y', [1, 12, 3]]],
    inits: { W1: { dims: [4, 8], data: w1 }, b1: { dims: [8], data: b1 }, W2: { dims: [8, 8], data: w2 }, b2: { dims: [8], data: b2 }, W3: { dims: [8, 3] } },
    nodes: [
      ['MatMul', ['x', 'W1'], ['h']], ['Add', ['h', 'b1'], ['hb']], ['Relu', ['hb'], ['hr']],
      ['MatMul', ['hr', 'W2'], ['g']], ['Add', ['g', 'b2'], ['gb']], ['Relu', ['gb'], ['gr']],
      ['MatMul', ['gr', 'W3'], ['y']],
    ],
  });
}
