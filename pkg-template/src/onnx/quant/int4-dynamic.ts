// int4 in the file, int8 in the session: a MatMul weight stored as 4-bit codes in blocks of G along
// K (MatMulNBits' packing, pack4.ts; block scales float16 behind a Cast, half-scales.ts) and widened,
// by nodes that read initializers only, into the int8 weight of the MatMulInteger form
// (int8-dynamic.ts):
//   B uint8 [N, kb, G/2] ─nibbles, − 8─▶ codes [N, kb, G]
//   codes · (scales [N, kb, 1] ÷ S [N, 1, 1]) ─Round, Cast(int8)─▶ [N, kb·G] ─Slice to K, Transpose─▶ W8 [K, N]
//   DynamicQuantizeLinear(A) ─▶ MatMulInteger(A_q, W8) ─Cast─▶ · (A_scale · S) ─▶ output
// onnxruntime folds nodes whose inputs are all constant when a session loads (its ConstantFolding
// pass, in onnxruntime-node and -web alike), so the session holds W8 and runs the int8 graph that
// quantize_dynamic writes (fused into DynamicQuantizeMatMul), while the download carries 4 bits.
// Why not MatMulNBits: onnxruntime-web's WASM build has no 4-bit kernel and dequantizes every block
// on every run, 5× slower than the int8 graph on MiniLM (bench/RESULTS.md, "Quantization").
// The price: activations quantized per tensor at run time (as every MatMulInteger file) and a
// second rounding, to S[n] = max_b |scale[n, b]| · (8 / 63) per column (the ±63 range int8-dynamic
// uses), which keeps every code within ±63 and adds at most S/2 per weight. S is computed from the
// block scales in the graph too (ReduceMax, folded), so the file stores nothing but the blocks and
// their scales. `widenInt4` is that arithmetic in float32 as onnxruntime does it, so the report's
// errors are the session's weights.
import type { OnnxModel } from '../model.js';
import { DT, type NodeProto } from '../tensor-data.js';
import { tensor, floatTensor, int64Tensor, node, opsetVersion, unsqueezeLast } from './graph-edit.js';
import type { Names } from '../names.js';
import { packNBits, nibbleNodes, NBITS_ZERO } from './pack4.js';
import { addScales } from './half-scales.js';
import { writeMatMulInteger, type DqlCache } from './int8-dynamic.js';
import type { QuantTarget } from './targets.js';
import { scaleIndex, type QuantizedView } from './grid.js';

/** The int8 range of the widened weight: the MatMulInteger form's reduced range (grid.ts). */
const WIDE_MAX = 63;
/** The largest |code| of the 4-bit grid (its extreme is code -8). */
const FOUR_BIT_MAX = 8;

/** ONNX Round: halves to even. */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** float32(8 / 63): the factor the graph multiplies the largest block scale by. */
const WIDEN = Math.fround(FOUR_BIT_MAX / WIDE_MAX);

/** One int8 scale per output row, float32(max_b |scale| · WIDEN), as the graph computes it. */
function columnScales(qv: QuantizedView): Float32Array {
  const s = new Float32Array(qv.rows);
  for (let r = 0; r < qv.rows; r++) {
    let m = 0;
    for (let b = 0; b < qv.groupsPerRow; b++) m = Math.max(m, Math.abs(qv.scales[r * qv.groupsPerRow + b]));
    s[r] = Math.fround(m * WIDEN);
  }
  return s;
}

/**
 * The int8 weight (per output row, ±63) a session computes from a 4-bit view written in this form,
 * bit for bit: ratio = float32(scale ÷ S), code8 = Round(float32(code · ratio)).
 */
export function widenInt4(qv: QuantizedView): QuantizedView {
  const colScale = columnScales(qv);
  const codes = new Int8Array(qv.codes.length);
  for (let r = 0; r < qv.rows; r++) {
    for (let c = 0; c < qv.cols; c++) {
      const i = r * qv.cols + c;
      const ratio = Math.fround(qv.scales[scaleIndex(qv, r, c)] / colScale[r]);
      codes[i] = roundHalfEven(Math.fround(qv.codes[i] * ratio));
    }
  }
  return { rows: qv.rows, cols: qv.cols, codes, scales: colScale, groupsPerRow: 1, width: qv.cols };
}

/** Rewrites one MatMul (2-D weight) into the form above; `half`: block scales stored as float16. */
export function writeInt4Dynamic(model: OnnxModel, names: Names, t: QuantTarget, qv: QuantizedView, cache: DqlCache, half: boolean): void {
  const { w, node: reader } = t;
  const g = model.graph;
  const [k, n] = w.dims; // stored (K, N)
  const gw = qv.width, kb = qv.groupsPerRow;
  const init = (stem: string, make: (name: string) => unknown) => { const x = names.fresh(`${w.name}_${stem}`); g.initializer.push(make(x)); return x; };
  const packed = init('q4', (x) => tensor(x, DT.UINT8, [n, kb, gw / 2], packNBits(qv)));
  const { name: blockScales, nodes: scaleCast } = addScales(g, names, `${w.name}_block_scales`, [n, kb, 1], qv.scales, half);
  const widen = init('widen', (x) => floatTensor(x, [], Float32Array.of(WIDEN)));
  const sixteen = init('sixteen', (x) => floatTensor(x, [], Float32Array.of(16)));
  const zero = init('nbits_zero', (x) => floatTensor(x, [], Float32Array.of(NBITS_ZERO)));
  const colShape = init('scale_shape', (x) => int64Tensor(x, [n]));
  const blockShape = init('block_shape', (x) => int64Tensor(x, [n, kb, gw]));
  const rowShape = init('row_shape', (x) => int64Tensor(x, [n, kb * gw]));
  const v = (s: string) => names.fresh(`${w.name}_${s}`);
  const nm = (s: string) => names.fresh(`${reader.name || reader.output[0]}_${s}`);
  const [hi, lo, hiP, loP, pairs, blocks, codes, absScales, maxScale, col, scale, ratio, scaled, rounded, narrow, rows, cut, wide] =
    ['hi', 'lo', 'hi_pairs', 'lo_pairs', 'pairs', 'blocks', 'codes', 'abs_scales', 'max_scale', 'scale_col', 'scale', 'ratio', 'scaled', 'rounded', 'int8', 'rows', 'cut', 'int8_kn'].map(v);
  let axis: string | undefined; // one [-1] initializer for both Unsqueezes
  const lastAxis = () => (axis ??= init('last_axis', (a) => int64Tensor(a, [-1])));
  const unsqueeze = (x: string, y: string, s: string) => unsqueezeLast(opsetVersion(model.model, ''), x, y, nm(s), lastAxis);
  // ReduceMax's axes: an attribute before opset 18, an input from 18 on.
  const reduceMax = opsetVersion(model.model, '') >= 18
    ? node('ReduceMax', [absScales, init('block_axes', (a) => int64Tensor(a, [1, 2]))], [maxScale], nm('q4_max_scale'), { keepdims: 1 })
    : node('ReduceMax', [absScales], [maxScale], nm('q4_max_scale'), { axes: [1, 2], keepdims: 1 });
  const padded = kb * gw !== k;
  const prelude: NodeProto[] = [
    ...scaleCast,
    ...nibbleNodes(packed, sixteen, { lo, hi }, v, nm),
    unsqueeze(lo, loP, 'q4_lo_pairs'),
    unsqueeze(hi, hiP, 'q4_hi_pairs'),
    node('Concat', [loP, hiP], [pairs], nm('q4_pairs'), { axis: -1 }),
    node('Reshape', [pairs, blockShape], [blocks], nm('q4_blocks')),
    node('Sub', [blocks, zero], [codes], nm('q4_codes')),
    node('Abs', [blockScales], [absScales], nm('q4_abs_scales')),
    reduceMax,
    node('Mul', [maxScale, widen], [col], nm('q4_scale_col')),
    node('Reshape', [col, colShape], [scale], nm('q4_scale')),
    node('Div', [blockScales, col], [ratio], nm('q4_ratio')),
    node('Mul', [codes, ratio], [scaled], nm('q4_widen')),
    node('Round', [scaled], [rounded], nm('q4_round')),
    node('Cast', [rounded], [narrow], nm('q4_int8'), { to: DT.INT8 }),
    node('Reshape', [narrow, rowShape], [rows], nm('q4_rows')),
  ];
  if (padded) {
    // The last block ran past K: its padding codes are dropped.
    const starts = init('slice_start', (x) => int64Tensor(x, [0]));
    const ends = init('slice_end', (x) => int64Tensor(x, [k]));
    const axes = init('slice_axis', (x) => int64Tensor(x, [1]));
    prelude.push(node('Slice', [rows, starts, ends, axes], [cut], nm('q4_slice')));
  }
  prelude.push(node('Transpose', [padded ? cut : rows], [wide], nm('q4_transpose'), { perm: [1, 0] }));
  writeMatMulInteger(model, names, t, { weight: wide, scale, rows: n }, prelude, cache);
}
