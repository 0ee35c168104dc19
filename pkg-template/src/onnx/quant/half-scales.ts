// The 4-bit forms' scales (MatMulNBits' and the 4-bit tables') stored as float16 and widened by a
// Cast to float: one scale per 32 weights in float32 is a quarter of a 4-bit file's bytes, and its
// mantissa bits are noise to brotli; float16 halves them. onnxruntime folds a Cast of an initializer
// into a float initializer when the session loads (constant folding), so MatMulNBits still gets float
// scales (the op types its scales as its activations) and prepacks them as before. The scales are
// rounded to float16 before anything is reported or written, so the report's errors, the written
// file and the file read back agree; a layer with a scale outside float16's normal range (a group of
// weights below about 5e-4) keeps float32 scales, since a subnormal half would lose their precision.
import { floatArrayToHalf, halfArrayToFloat } from '../fp16.js';
import { DT, type GraphProto, type NodeProto } from '../tensor-data.js';
import { tensor, floatTensor, node } from './graph-edit.js';
import type { Names } from '../names.js';
import type { QuantizedView } from './grid.js';

const HALF_MIN_NORMAL = 2 ** -14;
const HALF_MAX = 65504;

/** The view with its scales rounded to float16, or undefined when one of them has no normal half. */
export function halfScales(qv: QuantizedView): QuantizedView | undefined {
  for (const s of qv.scales) {
    const a = Math.abs(s);
    if (!(a >= HALF_MIN_NORMAL && a <= HALF_MAX)) return undefined;
  }
  return { ...qv, scales: halfArrayToFloat(floatArrayToHalf(qv.scales)) };
}

/**
 * Adds the scales as an initializer and returns the name of the float tensor the op reads: the
 * initializer itself, or (half) a float16 initializer `NAME_f16` and the Cast node returned in
 * `nodes`, to be inserted before its reader.
 */
export function addScales(g: GraphProto, names: Names, base: string, dims: number[], scales: Float32Array, half: boolean): { name: string; nodes: NodeProto[] } {
  const name = names.fresh(base);
  if (!half) {
    g.initializer.push(floatTensor(name, dims, scales));
    return { name, nodes: [] };
  }
  const h = floatArrayToHalf(scales);
  const stored = names.fresh(`${base}_f16`);
  g.initializer.push(tensor(stored, DT.FLOAT16, dims, new Uint8Array(h.buffer, h.byteOffset, h.byteLength)));
  return { name, nodes: [node('Cast', [stored], [name], names.fresh(`${base}_cast`), { to: DT.FLOAT })] };
}
