// A Llama-style decoder block written with plain ONNX ops, the layout a hand-built or non-torch export
// has (no Shape arithmetic: every shape a constant): grouped-query attention (`heads` query heads over
// `kvHeads` K/V heads, the K/V repeat as Unsqueeze -> Expand -> Reshape), interleaved RoPE (pairs
// (x[2i], x[2i+1]) rotated: Reshape (…, D/2, 2) -> Split -> Squeeze, the rotation, Unsqueeze ->
// Concat -> Reshape back), and optionally a KV cache: past_key / past_value (1, kvHeads, past, D) in,
// present_key / present_value (1, kvHeads, past + tokens, D) out, as exports for generation have.
// Deterministic weights (graphs.mjs's makeModel); `zeroHeads` zeroes the q/k/v/o slices of the given
// KV groups (a KV head and its query heads), the case whose removal must leave the outputs unchanged.
import { makeModel } from './graphs.mjs';

export function gqaDecoder({ heads = 4, kvHeads = 2, headDim = 4, dim = 16, ffn = 24, tokens = 5, past = 0, seed = 13, zeroHeads = [] } = {}) {
  const D = headDim, rep = heads / kvHeads, T = past + tokens, half = D / 2;
  if (!Number.isInteger(rep) || D % 2) throw new Error('heads must be a multiple of kvHeads and headDim even');
  const ints = (v) => ({ dims: [v.length], int64: v });
  const inits = {
    'q.w': { dims: [dim, heads * D] }, 'k.w': { dims: [dim, kvHeads * D] }, 'v.w': { dims: [dim, kvHeads * D] }, 'o.w': { dims: [heads * D, dim] },
    'gate.w': { dims: [dim, ffn] }, 'up.w': { dims: [dim, ffn] }, 'down.w': { dims: [ffn, dim], scale: 0.3 },
    scale: { dims: [], data: [1 / Math.sqrt(D)] },
    'shape.q': ints([1, tokens, heads, D]), 'shape.kv': ints([1, tokens, kvHeads, D]),
    'shape.q2': ints([1, heads, tokens, half, 2]), 'shape.k2': ints([1, kvHeads, tokens, half, 2]),
    'shape.q4': ints([1, heads, tokens, D]), 'shape.k4': ints([1, kvHeads, tokens, D]),
    'shape.expand': ints([1, kvHeads, rep, T, D]), 'shape.rep': ints([1, heads, T, D]),
    'shape.out': ints([1, tokens, heads * D]), 'axis.last': ints([-1]), 'axis.2': ints([2]),
  };
  const nodes = [
    ['MatMul', ['x', 'q.w'], ['q']], ['MatMul', ['x', 'k.w'], ['k']], ['MatMul', ['x', 'v.w'], ['v']],
    ['Reshape', ['q', 'shape.q'], ['q4']], ['Transpose', ['q4'], ['qt'], { perm: [0, 2, 1, 3] }],
    ['Reshape', ['k', 'shape.kv'], ['k4']], ['Transpose', ['k4'], ['kt'], { perm: [0, 2, 1, 3] }],
    ['Reshape', ['v', 'shape.kv'], ['v4']], ['Transpose', ['v4'], ['vt'], { perm: [0, 2, 1, 3] }],
  ];
  // Interleaved RoPE: out[2i] = x[2i]·cos - x[2i+1]·sin, out[2i+1] = x[2i]·sin + x[2i+1]·cos.
  const rope = (x, pairs, back, out) => nodes.push(
    ['Reshape', [x, pairs], [`${out}.p`]],
    ['Split', [`${out}.p`], [`${out}.a5`, `${out}.b5`], { axis: -1 }],
    ['Squeeze', [`${out}.a5`, 'axis.last'], [`${out}.a`]], ['Squeeze', [`${out}.b5`, 'axis.last'], [`${out}.b`]],
    ['Mul', [`${out}.a`, 'cos'], [`${out}.ac`]], ['Mul', [`${out}.b`, 'sin'], [`${out}.bs`]], ['Sub', [`${out}.ac`, `${out}.bs`], [`${out}.r0`]],
    ['Mul', [`${out}.a`, 'sin'], [`${out}.as`]], ['Mul', [`${out}.b`, 'cos'], [`${out}.bc`]], ['Add', [`${out}.as`, `${out}.bc`], [`${out}.r1`]],
    ['Unsqueeze', [`${out}.r0`, 'axis.last'], [`${out}.u0`]], ['Unsqueeze', [`${out}.r1`, 'axis.last'], [`${out}.u1`]],
    ['Concat', [`${out}.u0`, `${out}.u1`], [`${out}.c`], { axis: -1 }],
    ['Reshape', [`${out}.c`, back], [out]],
  );
  rope('qt', 'shape.q2', 'shape.q4', 'qr');
  rope('kt', 'shape.k2', 'shape.k4', 'kr');
  let [kAll, vAll] = ['kr', 'vt'];
  if (past) {
    nodes.push(['Concat', ['past_key', 'kr'], ['present_key'], { axis: 2 }], ['Concat', ['past_value', 'vt'], ['present_value'], { axis: 2 }]);
    [kAll, vAll] = ['present_key', 'present_value'];
  }
  // The K/V repeat of grouped-query attention.
  const repeat = (x, out) => nodes.push(
    ['Unsqueeze', [x, 'axis.2'], [`${out}.u`]], ['Expand', [`${out}.u`, 'shape.expand'], [`${out}.e`]], ['Reshape', [`${out}.e`, 'shape.rep'], [out]],
  );
  repeat(kAll, 'krep');
  repeat(vAll, 'vrep');
  nodes.push(
    ['Transpose', ['krep'], ['kT'], { perm: [0, 1, 3, 2] }],
    ['MatMul', ['qr', 'kT'], ['s']], ['Mul', ['s', 'scale'], ['ss']], ['Softmax', ['ss'], ['a'], { axis: -1 }],
    ['MatMul', ['a', 'vrep'], ['av']], ['Transpose', ['av'], ['avt'], { perm: [0, 2, 1, 3] }],
    ['Reshape', ['avt', 'shape.out'], ['att']], ['MatMul', ['att', 'o.w'], ['o']], ['Add', ['x', 'o'], ['r1']],
    ['MatMul', ['r1', 'gate.w'], ['g']], ['MatMul', ['r1', 'up.w'], ['u']], ['Sigmoid', ['g'], ['gs']], ['Mul', ['g', 'gs'], ['silu']],
    ['Mul', ['silu', 'u'], ['m']], ['MatMul', ['m', 'down.w'], ['d']], ['Add', ['r1', 'd'], ['y']],
  );
  const inputs = [['x', [1, tokens, dim]], ['cos', [1, 1, tokens, half]], ['sin', [1, 1, tokens, half]]];
  const outputs = [['y', [1, tokens, dim]]];
  if (past) {
    inputs.push(['past_key', [1, kvHeads, past, D]], ['past_value', [1, kvHeads, past, D]]);
    outputs.push(['present_key', [1, kvHeads, T, D]], ['present_value', [1, kvHeads, T, D]]);
  }
  if (zeroHeads.length) zeroGroups(inits, { heads, kvHeads, D, dim, seed, zeroHeads });
  return makeModel({ inputs, outputs, inits, nodes, seed, opset: 13 });
}

/** Gives q/k/v/o explicit data with the columns (rows of o) of the KV groups `zeroHeads` zero. */
function zeroGroups(inits, { heads, kvHeads, D, dim, seed, zeroHeads }) {
  const rep = heads / kvHeads;
  let s = seed * 7919 + 1;
  const rand = () => { s = (s * 48271) % 2147483647; return (s / 2147483647 - 0.5); };
  const matrix = (rows, cols, zero) => Array.from({ length: rows * cols }, (_, i) => (zero(Math.floor(i / cols), i % cols) ? 0 : rand()));
  const qHead = (c) => Math.floor(Math.floor(c / D) / rep), kvHead = (c) => Math.floor(c / D);
  inits['q.w'] = { dims: [dim, heads * D], data: matrix(dim, heads * D, (_, c) => zeroHeads.includes(qHead(c))) };
  inits['k.w'] = { dims: [dim, kvHeads * D], data: matrix(dim, kvHeads * D, (_, c) => zeroHeads.includes(kvHead(c))) };
  inits['v.w'] = { dims: [dim, kvHeads * D], data: matrix(dim, kvHeads * D, (_, c) => zeroHeads.includes(kvHead(c))) };
  inits['o.w'] = { dims: [heads * D, dim], data: matrix(heads * D, dim, (r) => zeroHeads.includes(qHead(r))) };
}
