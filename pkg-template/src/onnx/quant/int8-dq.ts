// int8 weight-only form: the weight becomes an int8 initializer with one scale per output channel
// and a DequantizeLinear (per-axis, opset ≥ 13) feeds the float MatMul / Gemm / Conv unchanged.
// This is the QDQ weight form of onnxruntime's static quantizer (quantize_static with per_channel),
// without the activation Q/DQ pair: the download shrinks 4×, the arithmetic stays float.
// Below opset 13 DequantizeLinear is per tensor only (opset 10) or absent, so the same arithmetic,
// codes × per-channel scale with zero point 0, is written as Cast(int8 → float) then Mul by the
// scales shaped to broadcast along the output axis (ONNX Cast since opset 6, broadcasting Mul since 7):
// the PaddleOCR exports are opset 9 and 11.
import { attrInt, type OnnxModel } from '../model.js';
import { int8Tensor, floatTensor, node, insertBefore, dropUnused, opsetVersion } from './graph-edit.js';
import type { Names } from '../names.js';
import { DT } from '../tensor-data.js';
import { toStored, type QuantTarget } from './targets.js';
import type { QuantizedView } from './grid.js';

/** The axis of the stored weight that indexes its outputs. */
export function outputAxis(t: QuantTarget): number {
  const { w, node: n } = t;
  if (w.op === 'MatMul') return w.dims.length - 1;
  if (w.op === 'Gemm') return attrInt(n, 'transB', 0) ? 0 : 1;
  return 0; // Conv: (O, C/g, k...)
}

/** Rewrites one weight into the int8 + DequantizeLinear form. */
export function writeInt8Dq(model: OnnxModel, names: Names, t: QuantTarget, qv: QuantizedView): void {
  const { w, node: reader } = t;
  const g = model.graph;
  const base = w.name;
  const qName = names.fresh(`${base}_quantized`);
  const sName = names.fresh(`${base}_scale`);
  if (opsetVersion(model.model, '') < 13) {
    const axis = outputAxis(t);
    const cast = names.fresh(`${base}_Cast_Output`), out = names.fresh(`${base}_Dequantized`);
    g.initializer.push(int8Tensor(qName, w.dims, toStored(w, qv.codes)));
    g.initializer.push(floatTensor(sName, w.dims.map((d, i) => (i === axis ? d : 1)), qv.scales));
    insertBefore(g, reader, [
      node('Cast', [qName], [cast], names.fresh(`${base}_Cast`), { to: DT.FLOAT }),
      node('Mul', [cast, sName], [out], names.fresh(`${base}_Mul`)),
    ]);
    reader.input[1] = out;
    dropUnused(g, [base]);
    return;
  }
  const zName = names.fresh(`${base}_zero_point`);
  const out = names.fresh(`${base}_DequantizeLinear_Output`);
  g.initializer.push(int8Tensor(qName, w.dims, toStored(w, qv.codes)));
  g.initializer.push(floatTensor(sName, [qv.rows], qv.scales));
  g.initializer.push(int8Tensor(zName, [qv.rows], new Int8Array(qv.rows)));
  insertBefore(g, reader, [node('DequantizeLinear', [qName, sName, zName], [out], names.fresh(`${base}_DequantizeLinear`), { axis: outputAxis(t) })]);
  reader.input[1] = out;
  dropUnused(g, [base]);
}
