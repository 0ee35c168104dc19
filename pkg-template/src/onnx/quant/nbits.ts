// int4 as onnxruntime's com.microsoft MatMulNBits (the op of transformers.js' q4 files): a MatMul
// whose 2-D weight becomes B uint8 [N, ceil(K/G), G/2] (pack4.ts), scales float [N · ceil(K/G)]
// (stored float16 behind a Cast where they fit: half-scales.ts), no zero_points input (the default 8 makes the grid symmetric); attributes K, N, bits = 4, block_size = G.
// Layout read from the op schema in onnxruntime/core/graph/contrib_ops/contrib_defs.cc and
// onnxruntime/python/tools/quantization/matmul_4bits_quantizer.py.
import type { OnnxModel } from '../model.js';
import { DT } from '../tensor-data.js';
import { tensor, node, insertBefore, dropUnused, ensureOpset } from './graph-edit.js';
import type { Names } from '../names.js';
import { packNBits } from './pack4.js';
import { addScales } from './half-scales.js';
import type { QuantTarget } from './targets.js';
import type { QuantizedView } from './grid.js';

export const MS_DOMAIN = 'com.microsoft';

/** Rewrites one MatMul (2-D weight) into MatMulNBits; `half`: the scales stored as float16 (half-scales.ts). */
export function writeNBits(model: OnnxModel, names: Names, t: QuantTarget, qv: QuantizedView, half = false): void {
  const { w, node: reader } = t;
  const g = model.graph;
  const [k, n] = w.dims; // stored (K, N)
  const kb = Math.ceil(k / qv.width);
  const bName = names.fresh(`${w.name}_Q4`);
  g.initializer.push(tensor(bName, DT.UINT8, [n, kb, qv.width / 2], packNBits(qv)));
  const { name: sName, nodes } = addScales(g, names, `${w.name}_scales`, [n * kb], qv.scales, half);
  const stem = reader.name || reader.output[0];
  insertBefore(g, reader, [...nodes, node('MatMulNBits', [reader.input[0], bName, sName], [reader.output[0]], names.fresh(`${stem}_Q4`),
    { K: k, N: n, bits: 4, block_size: qv.width }, MS_DOMAIN)]);
  g.node.splice(g.node.indexOf(reader), 1);
  ensureOpset(model.model, MS_DOMAIN, 1);
  dropUnused(g, [w.name]);
}
