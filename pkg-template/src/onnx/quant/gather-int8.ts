// An embedding table (the data input of a Gather on axis 0) in int8 with one scale per row:
//   Gather(table_q int8, ids) ─Cast(float)─▶ Mul( · , Gather(scales [V, 1], ids)) ─▶ output
// Only the gathered rows are widened, never the table (a DequantizeLinear on the whole table would
// dequantize all V rows on every run). onnxruntime's dynamic quantizer treats Gather the same way
// (operators/gather.py: the gather runs on the quantized data, the dequantization after it); its form
// has one scale per tensor, this one a scale per row.
import type { OnnxModel } from '../model.js';
import { int8Tensor, floatTensor, node, insertBefore, dropUnused } from './graph-edit.js';
import type { Names } from '../names.js';
import type { QuantTarget } from './targets.js';
import type { QuantizedView } from './grid.js';

export function writeGatherInt8(model: OnnxModel, names: Names, t: QuantTarget, qv: QuantizedView): void {
  const { w, node: reader } = t;
  const g = model.graph;
  const ids = reader.input[1];
  const out = reader.output[0];
  const qName = names.fresh(`${w.name}_quantized`);
  const sName = names.fresh(`${w.name}_row_scale`);
  g.initializer.push(int8Tensor(qName, w.dims, qv.codes));
  g.initializer.push(floatTensor(sName, [qv.rows, 1], qv.scales));
  const stem = reader.name || out;
  const rows = names.fresh(`${out}_int8`);
  const cast = names.fresh(`${out}_cast`);
  const rowScale = names.fresh(`${out}_row_scale`);
  insertBefore(g, reader, [
    node('Gather', [qName, ids], [rows], names.fresh(`${stem}_int8`), { axis: 0 }),
    node('Cast', [rows], [cast], names.fresh(`${stem}_cast`), { to: 1 }),
    node('Gather', [sName, ids], [rowScale], names.fresh(`${stem}_row_scale`), { axis: 0 }),
    node('Mul', [cast, rowScale], [out], names.fresh(`${stem}_dequant`)),
  ]);
  g.node.splice(g.node.indexOf(reader), 1);
  dropUnused(g, [w.name]);
}
