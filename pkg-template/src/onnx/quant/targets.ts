// Which weights of a model can be quantized and in which role: the weight input of a MatMul /
// Gemm / Conv (the pruning's 2-D view, rows = outputs), or the table of a Gather (an embedding, one
// row per token), stored as an initializer or a Constant node. A weight read by anything else too, or through a Cast (float16 files), is left
// float with the reason, since rewriting it would change what the other readers see.
import type { OnnxModel, OnnxWeight } from '../model.js';
import { attrInt, DT, type NodeProto } from '../model.js';

/** A weight and the one node that reads it. */
export interface QuantTarget {
  w: OnnxWeight;
  node: NodeProto;
  role: 'linear' | 'embedding';
}

/** Where a weight stays float and why. */
export interface Skipped { w: OnnxWeight; reason: string }

/** The node that reads `name` as input `index` with op `op` (first match). */
export function readerOf(model: OnnxModel, name: string, op: string, index: number): NodeProto | undefined {
  return model.graph.node.find((n: NodeProto) => n.op_type === op && (n.domain || '') === '' && n.input[index] === name);
}

/** The quantizable weights and the float weights left out (with reasons). */
export function findTargets(model: OnnxModel): { targets: QuantTarget[]; skipped: Skipped[] } {
  const targets: QuantTarget[] = [];
  const skipped: Skipped[] = [];
  for (const w of model.weights) {
    // A Constant node's value is quantized like an initializer (the forms write new initializers and
    // drop the Constant once nothing reads it): exporters such as Paddle2ONNX hold every weight in one.
    // The forms write float32 scales and dequantize to float32: the reader must compute in float32.
    if (w.dtype !== DT.FLOAT) { if (w.op || w.consumers.includes('Gather#0')) skipped.push({ w, reason: `${w.dtypeName} weight: the quantized forms here compute in float32` }); continue; }
    if (w.consumers.length === 1 && w.consumers[0] === 'Gather#0' && w.dims.length === 2) {
      const node = readerOf(model, w.name, 'Gather', 0);
      if (node && attrInt(node, 'axis', 0) === 0) { targets.push({ w, node, role: 'embedding' }); continue; }
    }
    if (!w.prunable || !w.view) continue;
    const direct = `${w.op}#1`;
    if (w.consumers.length !== 1 || w.consumers[0] !== direct) {
      skipped.push({ w, reason: w.consumers.includes(direct) ? `read by ${w.consumers.join(', ')}: shared` : 'read through a Cast (float16 weight)' });
      continue;
    }
    if (w.op === 'ConvTranspose') { skipped.push({ w, reason: 'ConvTranspose: no per-output-channel DequantizeLinear axis for its grouped (C, O/g, k) layout' }); continue; }
    const node = readerOf(model, w.name, w.op, 1);
    if (node) targets.push({ w, node, role: 'linear' });
  }
  return { targets, skipped };
}

/** Codes in the 2-D view layout (rows × cols) put back into the stored layout of the weight. */
export function toStored<T extends Int8Array | Float32Array>(w: OnnxWeight, view: T): T {
  const v = w.view;
  if (!v?.transposed) return view;
  const out = new (view.constructor as new (n: number) => T)(view.length);
  for (let r = 0; r < v.rows; r++) for (let c = 0; c < v.cols; c++) out[c * v.rows + r] = view[r * v.cols + c];
  return out;
}
