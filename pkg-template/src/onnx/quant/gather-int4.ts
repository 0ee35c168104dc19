// An embedding table (the data input of a Gather on axis 0) in 4 bits, blocks of G along each row
// with one scale per block, gathered first and unpacked after, in plain ops onnxruntime runs at
// every opset and in -web (no contrib op: com.microsoft GatherBlockQuantized is not one -web
// documents, and an opset-21 int4 DequantizeLinear of the whole table would widen all V rows on
// every run):
//   Gather(packed uint8 [V, kb·G/2], ids) ─Cast(float)─▶ hi = Floor(x / 16), lo = x - 16·hi
//   ─Concat(lo, hi) per byte, Reshape [.., kb, G]─▶ (codes - 8) · Gather(scales [V, kb], ids)
//   ─Reshape [.., kb·G], Slice to K─▶ output
// The block scales are float16 behind a Cast where they fit (half-scales.ts). A 3-bit table
// (int3-gather) is this form holding codes -4..3.
// The bytes follow MatMulNBits' packing (pack4.ts: even element in the low nibble, code + 8), so a
// row of the table is packed exactly as an output row of a MatMulNBits weight would be.
import type { NodeProto, OnnxModel } from '../model.js';
import { DT } from '../tensor-data.js';
import { valueInfo } from '../value-info.js';
import { tensor, floatTensor, int64Tensor, node, insertBefore, dropUnused, opsetVersion, unsqueezeLast } from './graph-edit.js';
import type { Names } from '../names.js';
import { packNBits, nibbleNodes, NBITS_ZERO } from './pack4.js';
import { addScales } from './half-scales.js';
import type { QuantTarget } from './targets.js';
import type { QuantizedView } from './grid.js';

export function writeGatherInt4(model: OnnxModel, names: Names, t: QuantTarget, qv: QuantizedView, halfScales = false): void {
  const { w, node: reader } = t;
  const g = model.graph;
  const ids = reader.input[1];
  const out = reader.output[0];
  const [v, k] = w.dims;
  const gw = qv.width, kb = qv.groupsPerRow, half = kb * gw / 2;
  const init = (stem: string, make: (n: string) => unknown) => { const n = names.fresh(`${w.name}_${stem}`); g.initializer.push(make(n)); return n; };
  const packed = init('q4', (n) => tensor(n, DT.UINT8, [v, half], packNBits(qv)));
  const { name: scales, nodes: scaleCast } = addScales(g, names, `${w.name}_block_scales`, [v, kb], qv.scales, halfScales);
  const sixteen = init('sixteen', (n) => floatTensor(n, [], Float32Array.of(16)));
  const zero = init('nbits_zero', (n) => floatTensor(n, [], Float32Array.of(NBITS_ZERO)));
  // The ids' rank known (a graph input's, as token ids are): constant shapes whose leading zeros copy
  // the ids' dims. Four fewer nodes run per call, and ONNX shape inference follows the table's output
  // to its [batch, sequence, K] (with a computed shape it loses the dims; onnxruntime's fusions such
  // as SkipLayerNormalization need them, given as value_info). Unknown rank: the shapes are computed.
  const idsRank = rankOf(model, ids);
  const lead = idsRank >= 0 ? new Array<number>(idsRank).fill(0) : [];
  const pairTail = init('pair_shape', (n) => int64Tensor(n, [...lead, half, 1]));
  const blockTail = init('block_shape', (n) => int64Tensor(n, [...lead, kb, gw]));
  const rowTail = init('row_shape', (n) => int64Tensor(n, [...lead, kb * gw]));
  const stem = reader.name || out;
  const o = (s: string) => names.fresh(`${out}_${s}`);
  const nm = (s: string) => names.fresh(`${stem}_${s}`);
  const [bytes, hi, lo, idShape, pairShape, loP, hiP, pairs, blockShape, blocks, codes, s, sCol, deq, rowShape, row] =
    ['bytes', 'hi', 'lo', 'ids_shape', 'pair_shape', 'lo_pairs', 'hi_pairs', 'pairs', 'block_shape', 'blocks', 'codes', 'scales', 'scale_col', 'deq', 'row_shape', 'row'].map(o);
  const padded = kb * gw !== k;
  const unsqueeze = unsqueezeLast(opsetVersion(model.model, ''), s, sCol, nm('q4_scale_col'), () => init('last_axis', (n) => int64Tensor(n, [-1])));
  const nodes = [
    ...scaleCast,
    node('Gather', [packed, ids], [bytes], nm('q4_gather'), { axis: 0 }),
    ...nibbleNodes(bytes, sixteen, { lo, hi }, o, nm),
    ...(idsRank >= 0 ? [] : [
      node('Shape', [ids], [idShape], nm('q4_ids_shape')),
      node('Concat', [idShape, pairTail], [pairShape], nm('q4_pair_shape'), { axis: 0 }),
      node('Concat', [idShape, blockTail], [blockShape], nm('q4_block_shape'), { axis: 0 }),
      node('Concat', [idShape, rowTail], [rowShape], nm('q4_row_shape'), { axis: 0 }),
    ]),
    node('Reshape', [lo, idsRank >= 0 ? pairTail : pairShape], [loP], nm('q4_lo_pairs')),
    node('Reshape', [hi, idsRank >= 0 ? pairTail : pairShape], [hiP], nm('q4_hi_pairs')),
    node('Concat', [loP, hiP], [pairs], nm('q4_pairs'), { axis: -1 }),
    node('Reshape', [pairs, idsRank >= 0 ? blockTail : blockShape], [blocks], nm('q4_blocks')),
    node('Sub', [blocks, zero], [codes], nm('q4_codes')),
    node('Gather', [scales, ids], [s], nm('q4_scales'), { axis: 0 }),
    unsqueeze,
    node('Mul', [codes, sCol], [deq], nm('q4_dequant')),
    node('Reshape', [deq, idsRank >= 0 ? rowTail : rowShape], [padded ? row : out], nm('q4_row')),
  ];
  if (padded) {
    // The last block ran past K: its padding codes are dropped along the last axis.
    const starts = init('slice_start', (n) => int64Tensor(n, [0]));
    const ends = init('slice_end', (n) => int64Tensor(n, [k]));
    const axes = init('slice_axis', (n) => int64Tensor(n, [-1]));
    nodes.push(node('Slice', [row, starts, ends, axes], [out], nm('q4_slice')));
  }
  insertBefore(g, reader, nodes);
  g.node.splice(g.node.indexOf(reader), 1);
  dropUnused(g, [w.name]);
}

/** Ops whose output has their first input's rank (what computes position ids from a stored table). */
const SAME_RANK = new Set(['Slice', 'Cast', 'Identity']);

/**
 * The rank of `v` when the file says it (a graph input, value_info, an initializer or Constant) or
 * it follows from one through rank-keeping ops; -1 otherwise.
 */
function rankOf(model: OnnxModel, v: string, depth = 0): number {
  const g = model.graph;
  const declared = [...model.inputs, ...(g.value_info ?? []).map(valueInfo)].find((x) => x.name === v);
  if (declared) return declared.rank;
  const init = g.initializer.find((t: { name: string }) => t.name === v);
  if (init) return init.dims.length;
  const p = g.node.find((n: NodeProto) => n.output.includes(v));
  if (!p || depth > 8) return -1;
  if (p.op_type === 'Constant') { const t = p.attribute?.find((a: { name: string }) => a.name === 'value')?.t; return t ? t.dims.length : -1; }
  return SAME_RANK.has(p.op_type) && (p.domain || '') === '' ? rankOf(model, p.input[0], depth + 1) : -1;
}
