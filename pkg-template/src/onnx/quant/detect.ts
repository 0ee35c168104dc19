// Quantized weights in a model as onnxruntime's quantizers and transformers.js files hold them:
//   - `dq`:      DequantizeLinear on an int8 / uint8 initializer (QDQ weights; our int8-dq form);
//   - `integer`: MatMulInteger / ConvInteger on an int8 / uint8 initializer, its activation from a
//                DynamicQuantizeLinear, then Cast and the scale Mul (quantize_dynamic; our int8-dynamic);
//   - `cast`:    an int8 initializer through Cast to float and a Mul by a float scale initializer (our
//                int8-dq form below opset 13, which has no per-axis DequantizeLinear);
//   - `nbits`:   com.microsoft MatMulNBits with bits = 4 (our int4-nbits; transformers.js q4);
//   - `widened`: MatMulInteger as in `integer`, its int8 weight computed from packed 4-bit blocks by
//                the nodes int4-dynamic.ts writes (our int4-dynamic: folded when a session loads);
//   - `gather`:  an int8 / uint8 table gathered, then widened by a scale per row (ours) or by a
//                DequantizeLinear (quantize_dynamic's Gather);
//   - `gather4`: a table of 4-bit (or 3-bit) codes in blocks, gathered and unpacked with plain ops
//                (our int4-gather / int3-gather, gather-int4.ts).
// Anything else that holds quantized weights or runs integer arithmetic is listed as refused, by name.
import type { OnnxModel } from '../model.js';
import { attr, attrInt, type NodeProto } from '../model.js';
import { DT, toNum } from '../tensor-data.js';
import { OnnxError } from '../errors.js';
import { NBITS_ZERO } from './pack4.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

export type SiteKind = 'dq' | 'integer' | 'widened' | 'nbits' | 'gather' | 'gather4' | 'gather-dq' | 'cast';

/** One quantized weight and the nodes that use it. */
export interface QuantSite {
  kind: SiteKind;
  /** The quantized initializer (codes). */
  codes: string;
  /** The nodes of the pattern, the first one the weight's reader. */
  nodes: NodeProto[];
  /** The value the pattern produces (what the float graph computed). */
  output: string;
  /** `widened`: the tensors of the 4-bit blocks (see widenedWeight). */
  widened?: WidenedWeight;
  /** `gather4`: the packed table's tensors (see packedTable). */
  table?: PackedTable;
}

/** The initializers of a 4-bit table (gather-int4.ts). */
export interface PackedTable {
  /** uint8 [V, kb·G/2]: each row packed as MatMulNBits packs an output row. */
  packed: string;
  /** float or float16 [V, kb]: the block scales. */
  scales: string;
  /** The row length, when the blocks run past it (the Slice's end); else kb · G. */
  k: number;
  /** The gathered ids. */
  ids: string;
}

/** The initializers of an int4-dynamic weight (int4-dynamic.ts) and the nodes that widen them. */
export interface WidenedWeight {
  /** uint8 [N, kb, G/2]: MatMulNBits' packing. */
  packed: string;
  /** float or float16 [N, kb, 1]: the block scales. */
  blockScales: string;
  /** The value of the int8 scale per output column [N] (computed from the block scales), which the output's scale Mul reads. */
  scale: string;
  /** K, when the blocks run past it (the Slice's end); else kb · G. */
  k: number;
  nodes: NodeProto[];
}

/**
 * The widening chain int4-dynamic.ts writes, walked back from the MatMulInteger's weight input:
 * Transpose ← [Slice] ← Reshape ← Cast(int8) ← Round ← Mul(codes, ratio); ratio = Div(s, col) with
 * s the block scales [← Cast of float16] and col = Mul(ReduceMax(Abs(s)), ·), read by the Div and
 * by the Reshape that gives the output's scale; codes = Sub(Reshape(Concat(Unsqueeze(lo),
 * Unsqueeze(hi)))) with lo = Sub(Cast(packed), ·). Every other node read by this chain only;
 * undefined when anything differs.
 */
function widenedWeight(b: string, producer: Map<string, NodeProto>, readersOf: (v: string) => NodeProto[], inits: Map<string, any>, readInts: (t: any) => number[]): WidenedWeight | undefined {
  const only = (v: string): NodeProto | undefined => { const r = readersOf(v); return r.length === 1 ? r[0] : undefined; };
  const nodes: NodeProto[] = [];
  const up = (v: string | undefined, op: string): NodeProto | undefined => {
    const p = v === undefined ? undefined : producer.get(v);
    if (!p || p.op_type !== op || (p.domain || '') !== '' || !only(v!)) return undefined;
    nodes.push(p);
    return p;
  };
  const tr = up(b, 'Transpose');
  // A Slice to K when the last block ran past it.
  const sl = tr && producer.get(tr.input[0])?.op_type === 'Slice' ? up(tr.input[0], 'Slice') : undefined;
  const end = sl ? inits.get(sl.input[2]) : undefined;
  if (sl && (end?.data_type !== DT.INT64 || toNum(end.dims[0] ?? 0) !== 1)) return undefined;
  const k = end ? readInts(end)[0] : 0;
  const x = producer.get((sl ?? tr)?.input[0]);
  const rows = up(x?.output[0], 'Reshape');
  const narrow = up(rows?.input[0], 'Cast');
  const round = up(narrow?.input[0], 'Round');
  const mul = up(round?.input[0], 'Mul');
  const ratio = mul && up(mul.input[1], 'Div');
  const codes = mul && up(mul.input[0], 'Sub');
  // col and s have two readers each (see above): taken by hand, their readers checked below
  const col = ratio ? producer.get(ratio.input[1]) : undefined;
  const maxScale = col?.op_type === 'Mul' ? up(col.input[0], 'ReduceMax') : undefined;
  const abs = maxScale && up(maxScale.input[0], 'Abs');
  const half = ratio && !inits.has(ratio.input[0]) ? producer.get(ratio.input[0]) : undefined;
  const blockScales = half ? half.input[0] : ratio?.input[0];
  const scaleOut = col ? readersOf(col.output[0]).find((r) => r.op_type === 'Reshape') : undefined;
  const blocks = codes && up(codes.input[0], 'Reshape');
  const pairs = blocks && up(blocks.input[0], 'Concat');
  const loP = pairs && up(pairs.input[0], 'Unsqueeze');
  const hiP = pairs && up(pairs.input[1], 'Unsqueeze');
  const lo = loP && up(loP.input[0], 'Sub');
  const hi16 = lo && up(lo.input[1], 'Mul');
  const hiNode = hi16 ? producer.get(hi16.input[0]) : undefined; // read by hi16 and hiP only (checked below)
  const div = hiNode?.op_type === 'Floor' ? up(hiNode.input[0], 'Div') : undefined;
  const wide = lo ? producer.get(lo.input[0]) : undefined; // read by lo and div only (checked below)
  if (!tr || !narrow || attrInt(narrow, 'to', 0) !== DT.INT8 || !round || !col || !abs || abs.input[0] !== ratio!.input[0] || !scaleOut
    || readersOf(col.output[0]).length !== 2 || readersOf(ratio!.input[0]).length !== 2
    || readersOf(hiNode?.output[0] ?? '').length !== 2 || readersOf(wide?.output[0] ?? '').length !== 2 || (half && half.op_type !== 'Cast') || !blocks || !loP || !hiP || !hiNode || !div || wide?.op_type !== 'Cast' || hiP.input[0] !== hiNode.output[0] || div.input[0] !== wide.output[0]) return undefined;
  nodes.push(hiNode, wide, col, scaleOut, ...(half ? [half] : []));
  const packed = inits.get(wide.input[0]);
  const bs = inits.get(blockScales);
  if (packed?.data_type !== DT.UINT8 || packed.dims.length !== 3 || !bs || !inits.has(col.input[1])) return undefined;
  const [n, kb, halfG] = packed.dims.map(toNum);
  if (bs.dims.map(toNum).reduce((a: number, d: number) => a * d, 1) !== n * kb) return undefined;
  return { packed: packed.name, blockScales: bs.name, scale: scaleOut.output[0], k: k || kb * halfG * 2, nodes };
}

/** The ops of gather-int4.ts' unpacking. */
const TABLE_OPS = new Set(['Gather', 'Cast', 'Div', 'Floor', 'Mul', 'Sub', 'Shape', 'Concat', 'Reshape', 'Unsqueeze', 'Slice']);

/**
 * The 4-bit table gather-int4.ts writes, found from its packed Gather g0: the bytes' low nibbles
 * (lo = Sub(Cast(bytes), 16 · Floor(· / 16))) lead through Reshape, Concat, Reshape to the codes
 * Sub(·, 8) and their Mul by the gathered block scales (Unsqueeze(Gather(scales, ids))), then the
 * row's Reshape and, when the blocks run past the row, a Slice. Every node that computes the output
 * from the ids and initializers must be of the unpacking's ops and read by that computation only;
 * the two constants that give the codes their meaning (16, 8) are checked.
 */
function packedTable(g0: NodeProto, producer: Map<string, NodeProto>, readersOf: (v: string) => NodeProto[], inits: Map<string, any>, readFloat: (t: any) => Float32Array, readInts: (t: any) => number[]): { table: PackedTable; nodes: NodeProto[]; output: string } | undefined {
  const only = (v: string): NodeProto | undefined => { const r = readersOf(v); return r.length === 1 ? r[0] : undefined; };
  const constant = (v: string, want: number) => { const t = inits.get(v); return !!t && t.data_type === DT.FLOAT && readFloat(t).length === 1 && readFloat(t)[0] === want; };
  const packed = inits.get(g0.input[0]);
  if (packed?.data_type !== DT.UINT8 || packed.dims.length !== 2 || attrInt(g0, 'axis', 0) !== 0) return undefined;
  const ids = g0.input[1];
  const cast = only(g0.output[0]);
  if (cast?.op_type !== 'Cast' || attrInt(cast, 'to', 0) !== DT.FLOAT) return undefined;
  const div = readersOf(cast.output[0]).find((r) => r.op_type === 'Div');
  const lo = readersOf(cast.output[0]).find((r) => r.op_type === 'Sub' && r.input[0] === cast.output[0]);
  if (!div || !lo || !constant(div.input[1], 16)) return undefined;
  const loP = only(lo.output[0]);
  const pairs = loP?.op_type === 'Reshape' ? only(loP.output[0]) : undefined;
  const blocks = pairs?.op_type === 'Concat' ? only(pairs.output[0]) : undefined;
  const codes = blocks?.op_type === 'Reshape' ? only(blocks.output[0]) : undefined;
  const deq = codes?.op_type === 'Sub' && constant(codes.input[1], NBITS_ZERO) ? only(codes.output[0]) : undefined;
  const row = deq?.op_type === 'Mul' ? only(deq.output[0]) : undefined;
  if (row?.op_type !== 'Reshape' || !deq) return undefined;
  const unsq = producer.get(deq.input.find((i: string) => i !== codes!.output[0]) ?? '');
  // the block scales unsqueezed on the last axis (an input from opset 13, an attribute before)
  const lastAxis = unsq?.op_type === 'Unsqueeze' && (unsq.input[1] ? inits.has(unsq.input[1]) && readInts(inits.get(unsq.input[1])).join() === '-1' : attr(unsq, 'axes')?.ints?.map(toNum).join() === '-1');
  const sg = lastAxis ? producer.get(unsq!.input[0]) : undefined;
  if (sg?.op_type !== 'Gather' || sg.input[1] !== ids) return undefined;
  const half = !inits.has(sg.input[0]) ? producer.get(sg.input[0]) : undefined;
  const scales = half ? (half.op_type === 'Cast' && inits.get(half.input[0])?.data_type === DT.FLOAT16 ? half.input[0] : undefined) : sg.input[0];
  if (!scales || !(half || inits.get(scales)?.data_type === DT.FLOAT)) return undefined;
  const slice = only(row.output[0]);
  const cut = slice?.op_type === 'Slice' && slice.input[0] === row.output[0] ? slice : undefined;
  const output = (cut ?? row).output[0];
  // every node computing the output from the ids and the initializers: the unpacking's own
  const nodes: NodeProto[] = [];
  const within = new Set<NodeProto>();
  const stack = [output];
  while (stack.length) {
    const p = producer.get(stack.pop()!);
    if (!p || within.has(p)) continue;
    if (!TABLE_OPS.has(p.op_type) || (p.domain || '') !== '') return undefined;
    within.add(p); nodes.push(p);
    for (const i of p.input) if (i && i !== ids && !inits.has(i)) stack.push(i);
  }
  if (!within.has(g0) || !within.has(sg)) return undefined;
  for (const x of nodes) for (const o of x.output) if (o !== output && readersOf(o).some((r) => !within.has(r))) return undefined;
  const [v, halfRow] = packed.dims.map(toNum);
  const sd = inits.get(scales).dims.map(toNum);
  if (sd.length !== 2 || sd[0] !== v || !(sd[1] > 0) || (2 * halfRow) % sd[1] !== 0) return undefined;
  const bs = (2 * halfRow) / sd[1];
  let k = sd[1] * bs;
  if (cut) {
    const ints = (i: number) => (inits.has(cut.input[i]) ? readInts(inits.get(cut.input[i])) : []);
    const [start, end, axis] = [ints(1), ints(2), ints(3)];
    // the row's first `end` values: starts 0 on the last axis, no step
    if (start.join() !== '0' || axis.join() !== '-1' || cut.input[4] || end.length !== 1 || !(end[0] > (sd[1] - 1) * bs && end[0] <= k)) return undefined;
    k = end[0];
  }
  // g0 first: the weight's reader, where the float Gather goes
  return { table: { packed: packed.name, scales, k, ids }, nodes: [g0, ...nodes.filter((x) => x !== g0)], output };
}

/** Ops that hold quantized weights or integer arithmetic in a form not read here. */
const FOREIGN = new Set([
  'QLinearMatMul', 'QLinearConv', 'QGemm', 'QAttention', 'DynamicQuantizeMatMul', 'MatMulIntegerToFloat',
  'QOrderedMatMul', 'GatherBlockQuantized', 'DynamicQuantizeLSTM', 'QEmbedLayerNormalization', 'MatMulBnb4', 'MatMulFpQ4',
]);

const INT_TYPES = new Set<number>([DT.INT8, DT.UINT8]);

export interface Detected { sites: QuantSite[]; refused: string[] }

/** Finds the quantized weights of the main graph (see the file comment). */
export function detectQuantized(model: OnnxModel): Detected {
  const g = model.graph;
  const inits = new Map<string, any>(g.initializer.map((t: any) => [t.name, t]));
  const producer = new Map<string, NodeProto>();
  const readers = new Map<string, NodeProto[]>();
  for (const n of g.node) {
    for (const o of n.output) producer.set(o, n);
    for (const i of n.input) { if (!readers.has(i)) readers.set(i, []); readers.get(i)!.push(n); }
  }
  const only = (v: string): NodeProto | undefined => { const r = readers.get(v) ?? []; return r.length === 1 ? r[0] : undefined; };
  const isInt = (name: string) => INT_TYPES.has(inits.get(name)?.data_type);
  const sites: QuantSite[] = [];
  const refused: string[] = [];
  const seen = new Set<NodeProto>();
  for (const n of g.node) {
    const op = n.op_type;
    const dom = n.domain || '';
    if (seen.has(n)) continue;
    if (FOREIGN.has(op)) { refused.push(`${op} (node "${n.name}")`); continue; }
    if (op === 'DequantizeLinear' && dom === '') {
      const x = n.input[0];
      const blk = attr(n, 'block_size');
      const xt = inits.get(x);
      if (xt && (xt.data_type === 21 || xt.data_type === 22)) { refused.push(`4-bit DequantizeLinear (opset 21, node "${n.name}")`); continue; }
      if (blk && toNum(blk.i) !== 0) { refused.push(`blockwise DequantizeLinear (block_size ${toNum(blk.i)}, node "${n.name}")`); continue; }
      if (isInt(x)) { sites.push({ kind: 'dq', codes: x, nodes: [n], output: n.output[0] }); continue; }
      const gp = producer.get(x);
      if (gp && gp.op_type === 'Gather' && isInt(gp.input[0]) && only(x) === n) {
        sites.push({ kind: 'gather-dq', codes: gp.input[0], nodes: [gp, n], output: n.output[0] });
        seen.add(n);
      }
      continue; // a DequantizeLinear of an activation (static QDQ) is left as it is
    }
    if ((op === 'MatMulInteger' || op === 'ConvInteger') && dom === '') {
      const dql = producer.get(n.input[0]);
      const cast = only(n.output[0]);
      const mul = cast && cast.op_type === 'Cast' ? only(cast.output[0]) : undefined;
      const scaleIn = mul?.input.find((i: string) => i !== cast?.output[0]);
      const scaleMul = scaleIn ? producer.get(scaleIn) : undefined;
      const widened = op === 'MatMulInteger' && !inits.has(n.input[1]) ? widenedWeight(n.input[1], producer, (v) => readers.get(v) ?? [], inits, (t) => model.readInts(t)) : undefined;
      const ok = (isInt(n.input[1]) || widened) && dql?.op_type === 'DynamicQuantizeLinear' && mul?.op_type === 'Mul' && scaleMul?.op_type === 'Mul'
        && scaleMul.input.includes(dql.output[1]) && scaleMul.input.some((i: string) => (widened ? i === widened.scale : inits.has(i)));
      if (!ok) { refused.push(`${op} outside onnxruntime's dynamic-quantization pattern (node "${n.name}")`); continue; }
      const tail = [n, cast!, mul!, scaleMul!, dql!];
      if (widened) {
        sites.push({ kind: 'widened', codes: widened.packed, nodes: [...tail, ...widened.nodes], output: mul!.output[0], widened });
        for (const x of widened.nodes) seen.add(x);
      } else sites.push({ kind: 'integer', codes: n.input[1], nodes: tail, output: mul!.output[0] });
      seen.add(cast!); seen.add(mul!);
      continue;
    }
    if (op === 'Cast' && dom === '' && inits.get(n.input[0])?.data_type === DT.INT8 && attrInt(n, 'to', 0) === DT.FLOAT) {
      const mul = only(n.output[0]);
      const sIn = mul?.op_type === 'Mul' ? mul.input.find((i: string) => i !== n.output[0]) : undefined;
      if (sIn && inits.get(sIn)?.data_type === DT.FLOAT) {
        sites.push({ kind: 'cast', codes: n.input[0], nodes: [n, mul!], output: mul!.output[0] });
        seen.add(mul!);
      }
      continue;
    }
    if (op === 'MatMulNBits' && dom === 'com.microsoft') {
      const bits = attrInt(n, 'bits', 4);
      const zp = n.input[3] ? inits.get(n.input[3]) : undefined;
      if (bits !== 4) refused.push(`MatMulNBits with bits=${bits} (node "${n.name}")`);
      else if (n.input[4]) refused.push(`MatMulNBits with g_idx (act-order, node "${n.name}")`);
      // Scales stored as float16 behind a Cast (our int4-nbits, quant/half-scales.ts) read as the initializer they are.
      const sCast = !inits.has(n.input[2]) ? producer.get(n.input[2]) : undefined;
      const halfCast = sCast?.op_type === 'Cast' && inits.get(sCast.input[0])?.data_type === DT.FLOAT16 && only(n.input[2]) === n ? sCast : undefined;
      if (!inits.has(n.input[1]) || !(inits.has(n.input[2]) || halfCast) || (n.input[3] && !zp)) refused.push(`MatMulNBits with weights that are not initializers (node "${n.name}")`);
      else if (zp && zp.data_type !== DT.UINT8) refused.push(`MatMulNBits with ${zp.data_type === DT.FLOAT ? 'float' : 'non-uint8'} zero points (node "${n.name}")`);
      else {
        sites.push({ kind: 'nbits', codes: n.input[1], nodes: halfCast ? [n, halfCast] : [n], output: n.output[0] });
        if (halfCast) seen.add(halfCast);
      }
      continue;
    }
    if (op === 'Gather' && dom === '' && isInt(n.input[0])) {
      const cast = only(n.output[0]);
      const mul = cast?.op_type === 'Cast' ? only(cast.output[0]) : undefined;
      const sIn = mul?.op_type === 'Mul' ? mul.input.find((i: string) => i !== cast!.output[0]) : undefined;
      const sg = sIn ? producer.get(sIn) : undefined;
      if (sg?.op_type === 'Gather' && inits.has(sg.input[0]) && sg.input[1] === n.input[1]) {
        sites.push({ kind: 'gather', codes: n.input[0], nodes: [n, cast!, mul!, sg], output: mul!.output[0] });
        seen.add(cast!); seen.add(mul!); seen.add(sg);
        continue;
      }
      const four = packedTable(n, producer, (v) => readers.get(v) ?? [], inits, (t) => model.readFloat(t), (t) => model.readInts(t));
      if (four) {
        sites.push({ kind: 'gather4', codes: four.table.packed, nodes: four.nodes, output: four.output, table: four.table });
        for (const x of four.nodes) seen.add(x);
      }
      continue; // a gather of int8 data read by a DequantizeLinear is found from that node
    }
    if (dom === 'com.microsoft' && /Quant|Int(eger)?$|NBits|Q4|Bnb/.test(op)) refused.push(`${op} (node "${n.name}")`);
  }
  return { sites, refused };
}

/**
 * Throws OnnxError reason `quantized` when the model has no float weight to prune but holds quantized
 * ones: pruning would find nothing and write the model unchanged (a transformers.js q8 file).
 */
export function assertFloatWeights(model: OnnxModel, what: string): void {
  if (model.prunable().length) return;
  const { sites, refused } = detectQuantized(model);
  if (!sites.length && !refused.length) return;
  const forms = [...new Set([...sites.map((s) => SITE_NAMES[s.kind]), ...refused.map((r) => r.replace(/ \(node.*$/, ''))])];
  throw new OnnxError('quantized', `${what}: every weight of this model is quantized (${forms.join(', ')}); dequantizeModel() first and requantize() after`, 'unsupported_op');
}

const SITE_NAMES: Record<SiteKind, string> = {
  dq: 'int8 DequantizeLinear', integer: 'MatMulInteger / ConvInteger (dynamic int8)', widened: '4-bit blocks widened to MatMulInteger', nbits: 'MatMulNBits 4-bit',
  gather: 'int8 Gather', gather4: '4-bit Gather table', 'gather-dq': 'int8 Gather + DequantizeLinear', cast: 'int8 Cast + Mul',
};
