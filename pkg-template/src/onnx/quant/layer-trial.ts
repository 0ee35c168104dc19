// One weight quantized on trial, for the search's sensitivity table: the float values its codes
// dequantize to (to feed in place of the weight) and the bytes of the tensors its form would store
// (codes, packed as the writer packs them; scales, float16 where the 4-bit forms store them so;
// zero points), so that a cell's bytes are what the written file will hold. Round-to-nearest: the
// table only ranks options; the written model gets GPTQ's codes where the job has samples.
import type { OnnxModel } from '../model.js';
import { transpose } from '../model.js';
import { opsetVersion } from './graph-edit.js';
import { rtnQuantize, dequantizeView, positiveScales, type QuantizedView } from './grid.js';
import { gridOf, isPacked4, type QuantForm } from './forms.js';
import { widenInt4 } from './int4-dynamic.js';
import { halfScales } from './half-scales.js';
import { packNBits } from './pack4.js';
import { toStored, type QuantTarget } from './targets.js';
import { floatArrayToHalf } from '../fp16.js';

export interface LayerTrial {
  /** The dequantized values, in the weight's stored layout. */
  values: Float32Array;
  /** The tensors the form stores for this weight, as bytes. */
  tensors: Uint8Array[];
}

const bytesOf = (a: Int8Array | Float32Array | Uint16Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** Quantizes `stored` (the weight's float values in its stored layout, pruned or not) in `form` (see the file comment). */
export function trialQuantize(model: OnnxModel, t: QuantTarget, form: QuantForm, group: number, stored: Float32Array): LayerTrial {
  const { w } = t;
  const embedding = t.role === 'embedding';
  const rows = embedding ? w.dims[0] : w.view!.rows;
  const cols = stored.length / rows;
  const view = !embedding && w.view!.transposed ? transpose(stored, w.view!.cols, w.view!.rows) : stored;
  const q0 = rtnQuantize(view, rows, cols, gridOf(form, group));
  const four = isPacked4(form);
  const half = four ? halfScales(q0) : undefined;
  const qv: QuantizedView = half ?? (form === 'int4-dq' ? positiveScales(q0) : q0);
  const deq = dequantizeView(form === 'int4-dynamic' ? widenInt4(qv) : qv);
  const values = embedding ? deq : toStored(w, deq);
  const scales = half ? bytesOf(floatArrayToHalf(qv.scales)) : bytesOf(qv.scales);
  if (form === 'int4-dynamic') return { values, tensors: [packNBits(qv), scales, new Uint8Array(qv.rows)] };
  if (four) return { values, tensors: [packNBits(qv), scales] };
  if (form === 'int8-gather') return { values, tensors: [bytesOf(qv.codes), scales] };
  // int8-dynamic and int8-dq (int4-dq in its int8 container): codes in the stored layout, scales, and
  // the int8 zero points, which the Cast + Mul form below opset 13 does not write
  const zeros = form === 'int8-dynamic' || opsetVersion(model.model, '') >= 13 ? [new Uint8Array(qv.rows)] : [];
  return { values, tensors: [bytesOf(toStored(w, qv.codes)), scales, ...zeros] };
}
