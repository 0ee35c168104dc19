// Quantized models as input: every quantized weight detect.ts finds becomes a float initializer again
// and its nodes the float op they stand for (MatMul / Conv / Gather), with a record of the scheme so
// that `requantize` writes the same scheme after pruning. A form that cannot be read is refused by
// name before anything changes.
import { OnnxError } from '../errors.js';
import type { OnnxModel, OnnxWeight } from '../model.js';
import { attrInt, type NodeProto } from '../model.js';
import { DT, toNum } from '../tensor-data.js';
import { detectQuantized, type QuantSite, type SiteKind } from './detect.js';
import { unpackNBits } from './pack4.js';
import { floatTensor, node, insertBefore, dropUnused } from './graph-edit.js';
import { Names } from '../names.js';
import { quantizeModel, type QuantReport, type QuantizeOptions } from './quantize.js';
import type { QuantForm } from './forms.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** One dequantized weight: its float name now, and the form `requantize` writes it back in. */
export interface QuantRecordEntry { name: string; form: QuantForm; group: number; source: SiteKind; note?: string }
export interface QuantRecord { layers: QuantRecordEntry[] }

interface Rewrite { entry: QuantRecordEntry; values: Float32Array; dims: number[]; apply: (names: Names, weight: string) => void }

function intValues(model: OnnxModel, t: any): Float32Array {
  const b = model.tensorBytes(t);
  const out = new Float32Array(b.length);
  for (let i = 0; i < b.length; i++) out[i] = t.data_type === DT.INT8 ? (b[i] << 24) >> 24 : b[i];
  return out;
}

/** (q - zp) · s with the scale / zero point indexed along `axis` (one value: per tensor). */
function affine(q: Float32Array, dims: number[], scale: Float32Array, zp: Float32Array | undefined, axis: number, what: string): Float32Array {
  const ax = axis < 0 ? axis + dims.length : axis;
  const len = dims[ax] ?? 1;
  if (scale.length !== 1 && scale.length !== len) throw new OnnxError('unsupported_scheme', `${what}: ${scale.length} scales for axis ${ax} of length ${len}`, 'unsupported_op');
  if (zp && zp.length !== scale.length) throw new OnnxError('unsupported_scheme', `${what}: ${zp.length} zero points for ${scale.length} scales`, 'unsupported_op');
  const inner = dims.slice(ax + 1).reduce((a, b) => a * b, 1);
  const out = new Float32Array(q.length);
  for (let i = 0; i < q.length; i++) {
    const c = scale.length === 1 ? 0 : Math.floor(i / inner) % len;
    out[i] = (q[i] - (zp ? zp[c] : 0)) * scale[c];
  }
  return out;
}

/**
 * Codes of a 4-bit grid in an int8 container (the int4-dq form): zero point 0 and every code in
 * -8..8. Such a weight is written back on the 4-bit grid, not widened to int8.
 */
function fourBitCodes(codes: ArrayLike<number>, zp?: ArrayLike<number>): boolean {
  if (zp && Array.prototype.some.call(zp, (z: number) => z !== 0)) return false;
  for (let i = 0; i < codes.length; i++) if (codes[i] < -8 || codes[i] > 8) return false;
  return codes.length > 0;
}

const baseName = (codes: string) => codes.replace(/_(quantized|Q4|q4)$/, '');

/**
 * The values of `rows` rows of `k` block-quantized codes (row-major, `kb` scales per row, one per
 * block of `bs`): row-major as they are, or transposed to the (K, N) a MatMul reads. `+ 0`: a zero code under
 * a negative scale (onnxruntime's own 4-bit files have them) reads +0, as pruned zeros are.
 */
function blockValues(codes: ArrayLike<number>, scales: Float32Array, rows: number, k: number, bs: number, kb: number, transposed: boolean): Float32Array {
  const values = new Float32Array(rows * k);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < k; c++) {
      const v = codes[r * k + c] * scales[r * kb + Math.floor(c / bs)] + 0;
      values[transposed ? c * rows + r : r * k + c] = v;
    }
  }
  return values;
}

/** Computes one site's float weight and how its nodes are replaced (nothing changed yet). */
function plan(model: OnnxModel, s: QuantSite, inits: Map<string, any>): Rewrite {
  const t = inits.get(s.codes);
  const dims = t.dims.map(toNum);
  const f = (name: string | undefined) => (name ? model.readFloat(inits.get(name)) : undefined);
  const ints = (name: string | undefined) => (name ? intValues(model, inits.get(name)) : undefined);
  const g = model.graph;
  const [n] = s.nodes;
  const what = `${n.op_type} "${n.name || s.output}"`;
  const remove = (nodes: NodeProto[]) => { for (const x of nodes) { const i = g.node.indexOf(x); if (i >= 0) g.node.splice(i, 1); } };
  if (s.kind === 'dq') {
    const codes = intValues(model, t), zp = ints(n.input[2]);
    const values = affine(codes, dims, f(n.input[1])!, zp, attrInt(n, 'axis', 1), what);
    const readers = g.node.filter((x: NodeProto) => x.input.includes(s.output));
    const gather = readers.length === 1 && readers[0].op_type === 'Gather' && readers[0].input[0] === s.output;
    const form = gather ? 'int8-gather' : fourBitCodes(codes, zp) ? 'int4-dq' : 'int8-dq';
    const entry: QuantRecordEntry = { name: '', form, group: 0, source: 'dq' };
    return { entry, values, dims, apply: (_names, w) => {
      remove([n]);
      for (const r of readers) r.input = r.input.map((i: string) => (i === s.output ? w : i));
    } };
  }
  if (s.kind === 'cast') {
    // The scale broadcasts against the weight: one value, or one per channel along a single axis.
    const mul = s.nodes[1];
    const st = inits.get(mul.input.find((i: string) => i !== n.output[0]));
    const sd = st.dims.map(toNum);
    const axes = sd.map((d: number, i: number) => [d, i + dims.length - sd.length]).filter(([d]: number[]) => d !== 1);
    if (axes.length > 1 || sd.length > dims.length) throw new OnnxError('unsupported_scheme', `${what}: a Cast + Mul scale of shape [${sd.join(', ')}] for a weight of shape [${dims.join(', ')}]`, 'unsupported_op');
    const codes = intValues(model, t);
    const values = affine(codes, dims, model.readFloat(st), undefined, axes.length ? axes[0][1] : 0, what);
    const readers = g.node.filter((x: NodeProto) => x.input.includes(s.output));
    const entry: QuantRecordEntry = { name: '', form: fourBitCodes(codes) ? 'int4-dq' : 'int8-dq', group: 0, source: 'cast' };
    return { entry, values, dims, apply: (_names, w) => {
      remove(s.nodes);
      for (const r of readers) r.input = r.input.map((i: string) => (i === s.output ? w : i));
    } };
  }
  if (s.kind === 'integer') {
    const [, cast, mul, scaleMul, dql] = s.nodes;
    const scaleName = scaleMul.input.find((i: string) => i !== dql.output[1] && inits.has(i));
    const conv = n.op_type === 'ConvInteger';
    const scale = f(scaleName)!;
    if (conv && scale.length !== 1) throw new OnnxError('unsupported_scheme', `${what}: ConvInteger with a scale per channel`, 'unsupported_op');
    const values = affine(intValues(model, t), dims, scale, ints(n.input[3]), conv ? 0 : -1, what);
    const entry: QuantRecordEntry = conv
      ? { name: '', form: 'int8-dq', group: 0, source: 'integer', note: 'ConvInteger: requantized as int8 per channel + DequantizeLinear' }
      : { name: '', form: 'int8-dynamic', group: 0, source: 'integer' };
    return { entry, values, dims, apply: (names, w) => {
      const op = conv ? node('Conv', [dql.input[0], w], [mul.output[0]], names.fresh(n.name || `${w}_Conv`)) : node('MatMul', [dql.input[0], w], [mul.output[0]], names.fresh(n.name || `${w}_MatMul`));
      if (conv) op.attribute = n.attribute;
      insertBefore(g, n, [op]);
      remove([n, cast, mul]);
      // The scale product and the activation's quantization may serve other MatMulIntegers.
      const read = (v: string) => g.node.some((x: NodeProto) => x.input.includes(v));
      if (!read(scaleMul.output[0])) remove([scaleMul]);
      if (!dql.output.some(read)) remove([dql]);
    } };
  }
  if (s.kind === 'widened') {
    // The 4-bit values the file stores (codes · block scale), not the int8 weight a session widens
    // them to: requantize writes the same blocks again (int4-dynamic.ts).
    const [, cast, mul, scaleMul, dql] = s.nodes;
    const wd = s.widened!;
    const packed = inits.get(wd.packed);
    const [nn, kb, halfG] = packed.dims.map(toNum);
    const bs = 2 * halfG, k = wd.k;
    if (!(k > (kb - 1) * bs && k <= kb * bs)) throw new OnnxError('unsupported_scheme', `${what}: K ${k} for ${kb} blocks of ${bs}`, 'unsupported_op');
    const scales = model.readFloat(inits.get(wd.blockScales));
    const codes = unpackNBits(model.tensorBytes(packed), nn, k, bs);
    const values = blockValues(codes, scales, nn, k, bs, kb, true);
    const entry: QuantRecordEntry = { name: '', form: 'int4-dynamic', group: bs, source: 'widened' };
    return { entry, values, dims: [k, nn], apply: (names, w) => {
      insertBefore(g, n, [node('MatMul', [dql.input[0], w], [mul.output[0]], names.fresh(n.name || `${w}_MatMul`))]);
      remove([n, cast, mul, ...wd.nodes]);
      const read = (v: string) => g.node.some((x: NodeProto) => x.input.includes(v));
      if (!read(scaleMul.output[0])) remove([scaleMul]);
      if (!dql.output.some(read)) remove([dql]);
    } };
  }
  if (s.kind === 'nbits') {
    const k = attrInt(n, 'K', 0); const nn = attrInt(n, 'N', 0); const bs = attrInt(n, 'block_size', 0);
    if (!(k > 0 && nn > 0 && bs >= 2 && bs % 2 === 0)) throw new OnnxError('unsupported_scheme', `${what}: attributes K ${k}, N ${nn}, block_size ${bs}`, 'unsupported_op');
    const kb = Math.ceil(k / bs);
    // nodes[1]: the Cast of float16 scales (detect.ts), read from its initializer.
    const scales = f(s.nodes[1] ? s.nodes[1].input[0] : n.input[2])!;
    if (scales.length !== nn * kb) throw new OnnxError('unsupported_scheme', `${what}: ${scales.length} scales for N·ceil(K/block) = ${nn * kb}`, 'unsupported_op');
    const zp = n.input[3] ? model.tensorBytes(inits.get(n.input[3])) : undefined;
    const codes = unpackNBits(model.tensorBytes(t), nn, k, bs, zp);
    const values = blockValues(codes, scales, nn, k, bs, kb, true);
    const entry: QuantRecordEntry = { name: '', form: 'int4-nbits', group: bs, source: 'nbits' };
    if (zp) entry.note = 'asymmetric (zero points): requantized symmetric';
    return { entry, values, dims: [k, nn], apply: (names, w) => {
      const bias = n.input[5];
      const mmOut = bias ? names.fresh(`${s.output}_matmul`) : s.output;
      const nodes = [node('MatMul', [n.input[0], w], [mmOut], names.fresh(n.name || `${w}_MatMul`))];
      if (bias) nodes.push(node('Add', [mmOut, bias], [s.output], names.fresh(`${n.name || w}_bias`)));
      insertBefore(g, n, nodes);
      remove(s.nodes);
    } };
  }
  if (s.kind === 'gather4') {
    // The codes · block scale the table stores; a table whose codes all lie in -4..3 is int3-gather's.
    const tb = s.table!;
    const [v, halfRow] = dims;
    const scales = model.readFloat(inits.get(tb.scales));
    const kb = scales.length / v, bs = (2 * halfRow) / kb, k = tb.k;
    const codes = unpackNBits(model.tensorBytes(t), v, k, bs);
    const values = blockValues(codes, scales, v, k, bs, kb, false);
    let three = true;
    for (let i = 0; i < codes.length && three; i++) three = codes[i] >= -4 && codes[i] <= 3;
    const entry: QuantRecordEntry = { name: '', form: three ? 'int3-gather' : 'int4-gather', group: bs, source: 'gather4' };
    return { entry, values, dims: [v, k], apply: (names, w) => {
      insertBefore(g, n, [node('Gather', [w, tb.ids], [s.output], names.fresh(n.name || `${w}_Gather`), { axis: 0 })]);
      remove(s.nodes);
    } };
  }
  // gather (ours: Cast + Mul by a gathered scale per row) or gather-dq (quantize_dynamic: DequantizeLinear per tensor)
  const [gat] = s.nodes;
  let values: Float32Array;
  if (s.kind === 'gather') {
    const sg = s.nodes[3];
    values = affine(intValues(model, t), dims, f(sg.input[0])!, undefined, 0, what);
  } else {
    const dq = s.nodes[1];
    const scale = f(dq.input[1])!;
    if (scale.length !== 1) throw new OnnxError('unsupported_scheme', `${what}: a dequantized Gather with ${scale.length} scales`, 'unsupported_op');
    values = affine(intValues(model, t), dims, scale, ints(dq.input[2]), 0, what);
  }
  const entry: QuantRecordEntry = { name: '', form: 'int8-gather', group: 0, source: s.kind };
  return { entry, values, dims, apply: (names, w) => {
    insertBefore(g, gat, [node('Gather', [w, gat.input[1]], [s.output], names.fresh(gat.name || `${w}_Gather`), { axis: 0 })]);
    remove(s.nodes);
  } };
}

/**
 * Turns every quantized weight back into float (in place) and returns the record `requantize` takes.
 * Throws OnnxError reason unsupported_scheme, naming the form, when any quantized form is not read
 * here, and reason corrupt when a weight reads back as a value that is not finite; the model is
 * unchanged then.
 */
export function dequantizeModel(model: OnnxModel): QuantRecord {
  const { sites, refused } = detectQuantized(model);
  if (refused.length) throw new OnnxError('unsupported_scheme', `cannot read this model's quantization: ${refused.join('; ')}`, 'unsupported_op');
  const inits = new Map<string, any>(model.graph.initializer.map((t: any) => [t.name, t]));
  const rewrites = sites.map((s) => plan(model, s, inits));
  // Every site is read before any is rewritten: a weight whose scales or codes give a value that is not
  // finite is refused while the model is still as it came (quantizing it again would fail half-way).
  rewrites.forEach((r, i) => {
    const at = r.values.findIndex((v) => !Number.isFinite(v));
    if (at >= 0) throw new OnnxError('corrupt', `quantized weight "${sites[i].codes}" reads back as ${r.values[at]} at element ${at}: its scales or codes are not a quantization grid`, 'invalid_value');
  });
  const names = new Names(model.graph);
  const candidates = new Set<string>();
  const layers: QuantRecordEntry[] = [];
  sites.forEach((s, i) => {
    const r = rewrites[i];
    const wanted = baseName(s.codes);
    const w = wanted !== s.codes && !names.has(wanted) ? names.take(wanted) : names.fresh(`${baseName(s.codes)}_float`);
    model.graph.initializer.push(floatTensor(w, r.dims, r.values));
    r.apply(names, w);
    for (const x of s.nodes) for (const inp of x.input) if (inits.has(inp)) candidates.add(inp);
    r.entry.name = w;
    layers.push(r.entry);
  });
  dropUnused(model.graph, candidates);
  model.refresh();
  return { layers };
}

/**
 * The quantizer's options that write `model`'s weights back in the forms `record` read them from
 * (each layer its own form and group); refused when the record names a weight the model lost.
 */
export function requantizeOptions(model: OnnxModel, record: QuantRecord): QuantizeOptions {
  const by = new Map(record.layers.map((l) => [l.name, l]));
  const have = new Set(model.weights.map((w) => w.name));
  const lost = record.layers.filter((l) => !have.has(l.name)).map((l) => l.name);
  if (lost.length) throw new OnnxError('bad_mask', `the record names weights the model no longer has: ${lost.slice(0, 3).join(', ')}${lost.length > 3 ? ', …' : ''}`, 'invalid_arguments');
  const nbits = record.layers.find((l) => l.form === 'int4-nbits' || l.form === 'int4-dynamic');
  const int4 = !!nbits || record.layers.some((l) => l.form === 'int4-dq');
  return {
    scheme: int4 ? 'int4' : 'int8', group: nbits ? nbits.group : undefined,
    layerForm: (w: OnnxWeight) => { const l = by.get(w.name); return l ? { form: l.form, group: l.group } : null; },
  };
}

/**
 * Quantizes the weights a `dequantizeModel` record names in their recorded forms (the other weights
 * stay as they are); `opts` may bring a quantizer. The record's weights must still exist.
 */
export function requantize(model: OnnxModel, record: QuantRecord, opts: Pick<QuantizeOptions, 'quantizer' | 'onProgress'> = {}): QuantReport {
  return quantizeModel(model, { ...requantizeOptions(model, record), ...opts });
}
