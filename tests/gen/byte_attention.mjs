#!/usr/bin/env node
// Writes tests/data/models/byte-attention.onnx: a byte-level classifier with one attention layer,
// written the way torch.onnx.export writes such a model with a dynamic batch and sequence (issue
// 38). Deterministic (the file is committed): run `node tests/gen/byte_attention.mjs`.
//
// What it carries, and why each piece:
// - the shape subgraph of an export: Shape -> Gather (batch, sequence) -> Range (positions) ->
//   Unsqueeze / Concat -> ConstantOfShape + Equal + Where (torch's `-1` handling of expand sizes) ->
//   Expand of the positions to the batch; all of it fixed by the input shape, so the training core
//   folds it;
// - token and position embeddings (Gather on a 256-row and a 64-row table);
// - masked attention: MatMul of two activations (q kᵀ), scaled, masked with Equal + Where,
//   Softmax, times v; an FFN with Max(x, 0) as its activation (clamp_min's export);
// - a masked mean (Cast of the mask, ReduceSum, Max, Reciprocal) beside a ReduceMax pooling;
// - a log-softmax written out (ReduceMax, Sub, Exp, ReduceSum, Log, Neg, Add).
// Built with the package-independent protobuf writer (pb.mjs), so it runs before any build.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { f, tensor, node, valueInfo, floats } from './pb.mjs';

const D = 16, VOCAB = 256, MAX_POS = 64, FFN = 32, CLASSES = 6;
const cat = (...p) => p.flat();
const INT64 = 7, FLOAT = 1;

/** The model's bytes. */
export function build() {
  const inits = [];
  let seed = 1;
  const weight = (name, dims, scale) => {
    const n = dims.reduce((a, b) => a * b, 1);
    inits.push(tensor({ name, dims, raw: new Uint8Array(Float32Array.from(floats(n, seed++), (v) => v * scale).buffer) }));
    return name;
  };
  const fconst = (name, dims, values) => { inits.push(tensor({ name, dims, raw: new Uint8Array(Float32Array.from(values).buffer) })); return name; };
  const iconst = (name, dims, values) => { inits.push(tensor({ name, dims, dataType: INT64, raw: new Uint8Array(BigInt64Array.from(values.map(BigInt)).buffer) })); return name; };
  const nodes = [];
  const op = (type, inputs, name, attrs = []) => { const out = `${name}_output_0`; nodes.push(node({ op: type, inputs, outputs: [out], name, attrs })); return out; };

  const ids = 'input_ids', mask = 'attention_mask';
  // the shape subgraph
  const sh = op('Shape', [ids], '/Shape');
  const batch = op('Gather', [sh, iconst('/Constant_0', [], [0])], '/Gather', [{ name: 'axis', i: 0 }]);
  const seq = op('Gather', [sh, iconst('/Constant_1', [], [1])], '/Gather_1', [{ name: 'axis', i: 0 }]);
  const pos = op('Range', [iconst('/Constant_2', [], [0]), seq, iconst('/Constant_3', [], [1])], '/Range');
  const ax0 = iconst('/Constant_4', [1], [0]);
  const pos1 = op('Unsqueeze', [pos, ax0], '/Unsqueeze');
  const bs = op('Concat', [op('Unsqueeze', [batch, ax0], '/Unsqueeze_1'), op('Unsqueeze', [seq, ax0], '/Unsqueeze_2')], '/Concat', [{ name: 'axis', i: 0 }]);
  const ones = op('ConstantOfShape', [op('Shape', [bs], '/Shape_1')], '/ConstantOfShape', [{ name: 'value', t: tensor({ dims: [1], dataType: INT64, raw: new Uint8Array(BigInt64Array.of(1n).buffer) }) }]);
  const sizes = op('Where', [op('Equal', [bs, iconst('/Constant_5', [1], [-1])], '/Equal'), ones, bs], '/Where');
  const posB = op('Expand', [pos1, sizes], '/Expand');
  // embeddings
  const te = op('Gather', [weight('tok_emb.weight', [VOCAB, D], 0.5), ids], '/tok_emb/Gather');
  const pe = op('Gather', [weight('pos_emb.weight', [MAX_POS, D], 0.5), posB], '/pos_emb/Gather');
  const h = op('LayerNormalization', [op('Add', [te, pe], '/Add'), fconst('ln.weight', [D], Array(D).fill(1)), fconst('ln.bias', [D], Array(D).fill(0))], '/ln/LayerNormalization', [{ name: 'axis', i: -1 }, { name: 'epsilon', f: 1e-5 }]);
  const linear = (x, nIn, nOut, name) => op('Add', [op('MatMul', [x, weight(`${name}.weight`, [nIn, nOut], 1 / Math.sqrt(nIn))], `/${name}/MatMul`), weight(`${name}.bias`, [nOut], 0.1)], `/${name}/Add`);
  // masked attention
  const q = linear(h, D, D, 'q'), k = linear(h, D, D, 'k'), v = linear(h, D, D, 'v');
  const scores = op('Mul', [op('MatMul', [q, op('Transpose', [k], '/Transpose', [{ name: 'perm', ints: [0, 2, 1] }])], '/MatMul'), fconst('/Constant_6', [], [1 / Math.sqrt(D)])], '/Mul');
  const masked = op('Equal', [op('Unsqueeze', [mask, iconst('/Constant_7', [1], [1])], '/Unsqueeze_3'), iconst('/Constant_8', [], [0])], '/Equal_1');
  const probs = op('Softmax', [op('Where', [masked, fconst('/Constant_9', [], [-1e4]), scores], '/Where_1')], '/Softmax', [{ name: 'axis', i: -1 }]);
  const attn = linear(op('MatMul', [probs, v], '/MatMul_1'), D, D, 'o');
  const r1 = op('Add', [h, attn], '/Add_1');
  const ffn = linear(op('Max', [linear(r1, D, FFN, 'fc1'), fconst('/Constant_10', [], [0])], '/Max'), FFN, D, 'fc2');
  const r2 = op('Add', [r1, ffn], '/Add_2');
  // masked mean and max pooling
  const m3 = op('Unsqueeze', [op('Cast', [mask], '/Cast', [{ name: 'to', i: FLOAT }]), iconst('/Constant_11', [1], [2])], '/Unsqueeze_4');
  const hm = op('Mul', [r2, m3], '/Mul_1');
  const ax1 = iconst('/Constant_12', [1], [1]);
  const sum = op('ReduceSum', [hm, ax1], '/ReduceSum', [{ name: 'keepdims', i: 0 }]);
  const count = op('Max', [op('ReduceSum', [m3, ax1], '/ReduceSum_1', [{ name: 'keepdims', i: 0 }]), fconst('/Constant_13', [], [1])], '/Max_1');
  const mean = op('Mul', [sum, op('Reciprocal', [count], '/Reciprocal')], '/Mul_2');
  const mx = op('ReduceMax', [hm], '/ReduceMax', [{ name: 'axes', ints: [1] }, { name: 'keepdims', i: 0 }]);
  const feat = op('Concat', [mean, mx], '/Concat_1', [{ name: 'axis', i: 1 }]);
  nodes.push(node({ op: 'Gemm', inputs: [feat, weight('head.weight', [CLASSES, 2 * D], 0.3), weight('head.bias', [CLASSES], 0.1)], outputs: ['logits'], name: '/head/Gemm', attrs: [{ name: 'transB', i: 1 }] }));
  // log-softmax, written out
  const top = op('ReduceMax', ['logits'], '/ReduceMax_1', [{ name: 'axes', ints: [1] }, { name: 'keepdims', i: 1 }]);
  const shifted = op('Sub', ['logits', top], '/Sub');
  const lse = op('Log', [op('ReduceSum', [op('Exp', [shifted], '/Exp'), ax1], '/ReduceSum_2', [{ name: 'keepdims', i: 1 }])], '/Log');
  nodes.push(node({ op: 'Add', inputs: [shifted, op('Neg', [lse], '/Neg')], outputs: ['log_probs'], name: '/Add_3' }));

  const graph = cat(
    nodes.flatMap((n) => f.len(1, n)),
    f.len(2, 'byte_attention'),
    inits.flatMap((t) => f.len(5, t)),
    [valueInfo(ids, ['batch', 'sequence'], INT64), valueInfo(mask, ['batch', 'sequence'], INT64)].flatMap((x) => f.len(11, x)),
    [valueInfo('logits', ['batch', CLASSES]), valueInfo('log_probs', ['batch', CLASSES])].flatMap((x) => f.len(12, x)),
  );
  return Uint8Array.from(cat(f.varint(1, 8), f.len(2, 'sparsekit-wasm tests/gen/byte_attention.mjs'), f.len(7, graph), f.len(8, cat(f.len(1, ''), f.varint(2, 17)))));
}

export const OUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../data/models/byte-attention.onnx');

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  fs.writeFileSync(OUT, build());
  console.log(`wrote ${OUT}`);
}
