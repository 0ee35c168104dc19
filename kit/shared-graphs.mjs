// Test graphs whose layers share inputs, the case shared Hessians (calib/shared-stats.ts) are for:
// a Llama-shaped decoder (RMSNorm, q / k / v from one normed input, attention, o, SwiGLU gate / up
// from one normed input, down; residuals) and a CNN whose 1x1 branches read one feature map while a
// 3x3 branch reads it with another geometry. Deterministic weights (graphs.mjs's makeModel).
import { makeModel } from './graphs.mjs';

/** RMSNorm of `x` (last axis) scaled by `g`, decomposed as exporters write it; returns nodes and the output name. */
function rmsNorm(x, g, out) {
  return [
    ['Mul', [x, x], [`${out}.sq`]],
    ['ReduceMean', [`${out}.sq`], [`${out}.ms`], { axes: [-1], keepdims: 1 }],
    ['Add', [`${out}.ms`, 'eps'], [`${out}.mse`]],
    ['Sqrt', [`${out}.mse`], [`${out}.rms`]],
    ['Div', [x, `${out}.rms`], [`${out}.n`]],
    ['Mul', [`${out}.n`, g], [out]],
  ];
}

/**
 * x (1, tokens, dim) -> `blocks` decoder blocks -> y (1, tokens, dim). Per block b: weights
 * b{b}.q / .k / .v / .o (dim, dim), .gate / .up (dim, ffn), .down (ffn, dim), norms .n1 / .n2.
 * One attention head, no mask or rotary (they change nothing about which layers share an input).
 */
export function llamaBlocks({ blocks = 2, tokens = 12, dim = 16, ffn = 32, seed = 11 } = {}) {
  const inits = { eps: { dims: [1], data: [1e-5] }, scale: { dims: [1], data: [1 / Math.sqrt(dim)] } };
  const nodes = [];
  let x = 'x';
  for (let b = 0; b < blocks; b++) {
    const p = `b${b}`;
    Object.assign(inits, {
      [`${p}.n1`]: { dims: [dim], scale: 0.1, offset: 1 }, [`${p}.n2`]: { dims: [dim], scale: 0.1, offset: 1 },
      [`${p}.q`]: { dims: [dim, dim] }, [`${p}.k`]: { dims: [dim, dim] }, [`${p}.v`]: { dims: [dim, dim] }, [`${p}.o`]: { dims: [dim, dim] },
      [`${p}.gate`]: { dims: [dim, ffn] }, [`${p}.up`]: { dims: [dim, ffn] }, [`${p}.down`]: { dims: [ffn, dim], scale: 0.3 },
    });
    nodes.push(
      ...rmsNorm(x, `${p}.n1`, `${p}.h1`),
      ['MatMul', [`${p}.h1`, `${p}.q`], [`${p}.qx`]],
      ['MatMul', [`${p}.h1`, `${p}.k`], [`${p}.kx`]],
      ['MatMul', [`${p}.h1`, `${p}.v`], [`${p}.vx`]],
      ['Transpose', [`${p}.kx`], [`${p}.kt`], { perm: [0, 2, 1] }],
      ['MatMul', [`${p}.qx`, `${p}.kt`], [`${p}.s`]],
      ['Mul', [`${p}.s`, 'scale'], [`${p}.ss`]],
      ['Softmax', [`${p}.ss`], [`${p}.a`], { axis: -1 }],
      ['MatMul', [`${p}.a`, `${p}.vx`], [`${p}.av`]],
      ['MatMul', [`${p}.av`, `${p}.o`], [`${p}.ox`]],
      ['Add', [x, `${p}.ox`], [`${p}.r1`]],
      ...rmsNorm(`${p}.r1`, `${p}.n2`, `${p}.h2`),
      ['MatMul', [`${p}.h2`, `${p}.gate`], [`${p}.g`]],
      ['MatMul', [`${p}.h2`, `${p}.up`], [`${p}.u`]],
      ['Sigmoid', [`${p}.g`], [`${p}.gs`]],
      ['Mul', [`${p}.g`, `${p}.gs`], [`${p}.silu`]],
      ['Mul', [`${p}.silu`, `${p}.u`], [`${p}.m`]],
      ['MatMul', [`${p}.m`, `${p}.down`], [`${p}.d`]],
      ['Add', [`${p}.r1`, `${p}.d`], [`${p}.r2`]],
    );
    x = `${p}.r2`;
  }
  nodes.push(['Identity', [x], ['y']]);
  return makeModel({ inputs: [['x', [1, tokens, dim]]], outputs: [['y', [1, tokens, dim]]], inits, nodes, seed, opset: 13 });
}

/**
 * x (1, 4, 10, 10) -> conv a 3x3 (16) -> Relu -> r; r -> b1 1x1 (8), r -> b2 1x1 (8), r -> b3 3x3
 * pad 1 (8); y = b1 + b2 + b3 -> conv c 1x1 (4). b1 and b2 share a Hessian; b3 reads r with
 * another geometry and keeps its own.
 */
export function convFanout({ seed = 5 } = {}) {
  const conv = (name, o, c, k) => ({ [`${name}.w`]: { dims: [o, c, k, k] }, [`${name}.b`]: { dims: [o], scale: 0.1 } });
  return makeModel({
    inputs: [['x', [1, 4, 10, 10]]], outputs: [['y', [1, 4, 10, 10]]], seed,
    inits: { ...conv('a', 16, 4, 3), ...conv('b1', 8, 16, 1), ...conv('b2', 8, 16, 1), ...conv('b3', 8, 16, 3), ...conv('c', 4, 8, 1) },
    nodes: [
      ['Conv', ['x', 'a.w', 'a.b'], ['a'], { pads: [1, 1, 1, 1] }],
      ['Relu', ['a'], ['r']],
      ['Conv', ['r', 'b1.w', 'b1.b'], ['b1']],
      ['Conv', ['r', 'b2.w', 'b2.b'], ['b2']],
      ['Conv', ['r', 'b3.w', 'b3.b'], ['b3'], { pads: [1, 1, 1, 1] }],
      ['Add', ['b1', 'b2'], ['s']],
      ['Add', ['s', 'b3'], ['t']],
      ['Conv', ['t', 'c.w', 'c.b'], ['y']],
    ],
  });
}
