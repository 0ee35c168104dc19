// int8 in onnxruntime's dynamic-quantization form, the graph `onnxruntime.quantization.quantize_dynamic`
// writes for a MatMul (onnxruntime/python/tools/quantization/operators/matmul.py, MatMulInteger):
//   A ─DynamicQuantizeLinear─▶ A_q (uint8), A_scale, A_zp   (once per activation, shared by its readers)
//   MatMulInteger(A_q, W_q int8, A_zp, W_zp) ─Cast(float)─▶ Mul( · , A_scale · W_scale) ─▶ output
// Weights are int8 with one scale per output column (W_zp all zero: symmetric); the product runs in
// integers (onnxruntime's MLAS u8s8 kernels). Only MatMul weights take this form here: Gemm and Conv
// keep the weight-only form (ConvInteger in onnxruntime takes one weight zero point per tensor).
import type { OnnxModel } from '../model.js';
import type { NodeProto } from '../tensor-data.js';
import { int8Tensor, floatTensor, node, insertBefore, dropUnused } from './graph-edit.js';
import type { Names } from '../names.js';
import { toStored, type QuantTarget } from './targets.js';
import type { QuantizedView } from './grid.js';

/** The DynamicQuantizeLinear outputs made for an activation in this pass, by its name. */
export type DqlCache = Map<string, { q: string; scale: string; zp: string }>;

/** Rewrites one MatMul weight (and its node) into the MatMulInteger form. */
export function writeInt8Dynamic(model: OnnxModel, names: Names, t: QuantTarget, qv: QuantizedView, cache: DqlCache): void {
  const g = model.graph;
  const qName = names.fresh(`${t.w.name}_quantized`);
  const sName = names.fresh(`${t.w.name}_scale`);
  g.initializer.push(int8Tensor(qName, t.w.dims, toStored(t.w, qv.codes)));
  g.initializer.push(floatTensor(sName, [qv.rows], qv.scales));
  writeMatMulInteger(model, names, t, { weight: qName, scale: sName, rows: qv.rows }, [], cache);
}

/**
 * Replaces the MatMul of `t` by the MatMulInteger form reading `w.weight` (int8 [K, N], an initializer
 * or the value of `prelude`, nodes that compute it from initializers) with one scale per output
 * column `w.scale` (float [N]); shared by int4-dynamic.ts, whose weight is computed.
 */
export function writeMatMulInteger(model: OnnxModel, names: Names, t: QuantTarget, w: { weight: string; scale: string; rows: number }, prelude: NodeProto[], cache: DqlCache): void {
  const reader = t.node;
  const g = model.graph;
  const a = reader.input[0];
  let dql = cache.get(a);
  const before: NodeProto[] = [];
  if (!dql) {
    dql = { q: names.fresh(`${a}_quantized`), scale: names.fresh(`${a}_scale`), zp: names.fresh(`${a}_zero_point`) };
    // Right after the activation's producer would serve every reader; before the first reader is
    // enough since later readers come after it in topological order.
    before.push(node('DynamicQuantizeLinear', [a], [dql.q, dql.scale, dql.zp], names.fresh(`${a}_QuantizeLinear`)));
    cache.set(a, dql);
  }
  const zName = names.fresh(`${t.w.name}_zero_point`);
  g.initializer.push(int8Tensor(zName, [w.rows], new Int8Array(w.rows)));
  const out = reader.output[0];
  const mmi = names.fresh(`${out}_MatMulInteger_Output`);
  const cast = names.fresh(`${out}_Cast_Output`);
  const scales = names.fresh(`${out}_scales_mul`);
  const stem = reader.name || out;
  const nodes = [
    node('MatMulInteger', [dql.q, w.weight, dql.zp, zName], [mmi], names.fresh(`${stem}_MatMulInteger`)),
    node('Cast', [mmi], [cast], names.fresh(`${stem}_cast`), { to: 1 }),
    node('Mul', [dql.scale, w.scale], [scales], names.fresh(`${stem}_scales_mul`)),
    node('Mul', [cast, scales], [out], names.fresh(`${stem}_output_scale_mul`)),
  ];
  insertBefore(g, reader, [...prelude, ...before, ...nodes]);
  g.node.splice(g.node.indexOf(reader), 1);
  dropUnused(g, [t.w.name]);
}
