// sparsekit-wasm/onnx quantization (quant/): int8 and int4 models that run in onnxruntime-node and
// stay close to the float model, codes and scales that round-trip, pruned zeros that survive, q8
// models (ours and onnxruntime's dynamic form) read, pruned and requantized, refusals by name, and
// no half-written model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import ort from 'onnxruntime-node';
import { build } from './build.mjs';
import { modelBytes, feedsOf, runModel } from './models.mjs';

build();
const O = await import('#onnx-internal');
const { OnnxModel, OnnxError, quantizeModel, dequantizeModel, requantize, detectQuantized, rtnQuantize, dequantizeView, packNBits, unpackNBits, pruneSparsity, pruneNm, widenInt4, halfScales, transformersDtype } = O;
const G = await import('./graphs.mjs');

const mlpFeeds = () => G.feedsFor(null, { x: [1, 10, 16] });
const kinds = (m) => detectQuantized(m).sites.map((s) => s.kind).sort();
const opsOf = (m) => m.graph.node.map((n) => n.op_type);

async function closeTo(bytesA, bytesB, feeds, minCos) {
  const [a, b] = [await runModel(bytesA, feeds), await runModel(bytesB, feeds)];
  for (const k of Object.keys(a)) {
    const c = G.cosine(a[k].data, b[k].data);
    assert.ok(c >= minCos, `output ${k}: cosine ${c} < ${minCos}`);
  }
  return { a, b };
}

test('int8: MatMul weights in the MatMulInteger form run in onnxruntime and stay close', async () => {
  const float = G.mlp();
  const m = OnnxModel.parse(float);
  const r = quantizeModel(m, { scheme: 'int8' });
  assert.deepEqual(r.layers.map((l) => [l.name, l.form]), [['W1', 'int8-dynamic'], ['W2', 'int8-dynamic']]);
  assert.ok(opsOf(m).includes('MatMulInteger') && opsOf(m).includes('DynamicQuantizeLinear'));
  assert.equal(m.prunable().length, 0);
  // int8 codes, a float scale and an int8 zero point per output column.
  const cols = { W1: 32, W2: 8 };
  for (const l of r.layers) assert.equal(l.bytesAfter, l.params + 5 * cols[l.name], l.name);
  assert.ok(r.layers.every((l) => l.bits === 7), 'the MatMulInteger form writes 7-bit codes');
  await closeTo(float, m.encode(), mlpFeeds(), 0.999);
});

test('int8 weight-only DequantizeLinear form: MatMul, Conv and Gemm (transB 0 and 1)', async () => {
  const mlp = G.mlp();
  const m = OnnxModel.parse(mlp);
  quantizeModel(m, { scheme: 'int8', int8MatMul: 'dq' });
  assert.deepEqual(kinds(m), ['dq', 'dq']);
  await closeTo(mlp, m.encode(), mlpFeeds(), 0.9995);
  for (const [g, shape] of [[G.residual(), [1, 4, 8, 8]], [G.flattenGemm(), [1, 3, 4, 4]]]) {
    const q = OnnxModel.parse(g);
    const rep = quantizeModel(q, { scheme: 'int8' });
    assert.ok(rep.layers.every((l) => l.form === 'int8-dq'));
    await closeTo(g, q.encode(), G.feedsFor(null, { x: shape }), 0.999);
  }
});

test('a BERT export: int8 (embeddings per row) and int4 MatMulNBits run close to float', async () => {
  const float = modelBytes('bert-torch');
  const feeds = feedsOf('bert-style');
  const m8 = OnnxModel.parse(float);
  const r8 = quantizeModel(m8, { scheme: 'int8' });
  assert.ok(r8.layers.some((l) => l.form === 'int8-gather'), 'the embedding tables are quantized');
  await closeTo(float, m8.encode(), feeds, 0.995);
  const m4 = OnnxModel.parse(float);
  const r4 = quantizeModel(m4, { scheme: 'int4', group: 32 });
  const nb = r4.layers.filter((l) => l.form === 'int4-nbits');
  assert.ok(nb.length >= 12, `${nb.length} MatMulNBits layers`);
  assert.ok(opsOf(m4).includes('MatMulNBits'));
  assert.ok(m4.opsets.includes('com.microsoft:1'));
  for (const l of nb) assert.ok(l.bytesAfter < l.bytesBefore / 6, `${l.name}: ${l.bytesAfter} of ${l.bytesBefore}`);
  await closeTo(float, m4.encode(), feeds, 0.97);
  assert.ok(r4.bytesAfter < r8.bytesAfter, 'int4 is smaller than int8');
});

test('int4 scales in float16 behind a Cast: half the scale bytes, the same run, read back exactly; out-of-range scales stay float32', async () => {
  const float = modelBytes('bert-torch');
  const feeds = feedsOf('bert-style');
  const m = OnnxModel.parse(float);
  const r = quantizeModel(m, { scheme: 'int4', group: 32 });
  const four = r.layers.filter((l) => l.form === 'int4-nbits' || l.form === 'int4-gather');
  assert.ok(four.length >= 12 && four.every((l) => l.scales === 'float16'), 'every 4-bit layer of this export has float16 scales');
  const byName = new Map(m.graph.initializer.map((t) => [t.name, t]));
  const producer = new Map(m.graph.node.flatMap((n) => n.output.map((o) => [o, n])));
  for (const n of m.graph.node.filter((x) => x.op_type === 'MatMulNBits')) {
    const cast = producer.get(n.input[2]);
    assert.equal(cast?.op_type, 'Cast', `${n.name}: scales from a Cast`);
    assert.equal(byName.get(cast.input[0]).data_type, 10, `${n.name}: float16 scales stored`);
    // K, N, block 32: the codes take N·K/2 bytes, the scales N·K/32 · 2.
    const k = n.attribute.find((a) => a.name === 'K').i, nn = n.attribute.find((a) => a.name === 'N').i;
    const l = r.layers.find((x) => x.form === 'int4-nbits' && x.params === Number(k) * Number(nn) && x.bytesAfter === (Number(k) * Number(nn)) / 2 + (Number(nn) * Math.ceil(Number(k) / 32)) * 2);
    assert.ok(l, `${n.name}: bytesAfter counts 2-byte scales`);
  }
  const bytes = m.encode();
  await closeTo(float, bytes, feeds, 0.97);
  // The same codes with float32 scales (the rounded values): onnxruntime computes the same outputs,
  // so the Cast costs nothing but is folded at load.
  const m32 = OnnxModel.parse(bytes);
  for (const n of m32.graph.node.filter((x) => x.op_type === 'Cast' && byName.get(x.input[0])?.data_type === 10)) {
    const t = m32.graph.initializer.find((x) => x.name === n.input[0]);
    const v = m32.readFloat(t);
    t.name = n.output[0];
    m32.writeFloat(t, v);
    t.data_type = 1;
    m32.writeFloat(t, v);
  }
  m32.graph.node = m32.graph.node.filter((x) => !(x.op_type === 'Cast' && x.output.some((o) => m32.graph.initializer.some((t) => t.name === o))));
  const [a, b] = [await runModel(bytes, feeds), await runModel(m32.encode(), feeds)];
  for (const key of Object.keys(a)) assert.ok(a[key].data.every((x, i) => x === b[key].data[i]), `${key}: float16 scales widened = float32 scales`);
  // Read back: MatMulNBits with Cast scales is a site; the float weights are codes × the half scales.
  const back = OnnxModel.parse(bytes);
  const rec = dequantizeModel(back);
  assert.ok(rec.layers.filter((l) => l.form === 'int4-nbits').length >= 12);
  // (the 4-bit tables are not read back: their block scales' Casts stay)
  assert.ok(!back.graph.node.some((x) => x.op_type === 'Cast' && x.input.some((i) => /_scales_f16/.test(i) && !/block_scales/.test(i))), 'the scale Casts of the MatMuls are gone');
  assert.ok(!back.graph.initializer.some((t) => /_scales_f16/.test(t.name) && !/block_scales/.test(t.name)), 'and their float16 scales');
  requantize(back, rec);
  const again = quantizeModel(OnnxModel.parse(float), { scheme: 'int4', group: 32 });
  assert.deepEqual(again.layers.map((l) => l.maxAbsError), r.layers.map((l) => l.maxAbsError), 'deterministic');
  await closeTo(bytes, back.encode(), feeds, 0.9999);
  // A weight of tiny values (scales below float16's normal range) keeps float32 scales.
  const tiny = OnnxModel.parse(G.mlp());
  const w = tiny.weight('W1');
  tiny.writeFloat(w, tiny.readFloat(w).map((x) => x * 1e-5));
  const rt = quantizeModel(tiny, { scheme: 'int4', group: 16 });
  assert.equal(rt.layers.find((l) => l.name === 'W1').scales, undefined);
  assert.equal(rt.layers.find((l) => l.name === 'W2').scales, 'float16');
  const nb = tiny.graph.node.filter((x) => x.op_type === 'MatMulNBits');
  assert.ok(nb.some((n) => tiny.graph.initializer.find((t) => t.name === n.input[2])?.data_type === 1), 'W1 reads float32 scales directly');
  await runModel(tiny.encode(), mlpFeeds());
});

test('int4 widened at load (int4-dynamic): 4-bit bytes in the file, folded by onnxruntime into the MatMulInteger graph, the int8 weights widenInt4 computes; read back and written again', async () => {
  const float = modelBytes('bert-torch');
  const feeds = feedsOf('bert-style');
  // group 128 runs past K = 64 (the Slice) and fills K = 256 in two blocks
  for (const group of [32, 128]) {
    const m = OnnxModel.parse(float);
    const r = quantizeModel(m, { scheme: 'int4', group, int4MatMul: 'dynamic' });
    const wide = r.layers.filter((l) => l.form === 'int4-dynamic');
    assert.ok(wide.length >= 12 && wide.every((l) => l.scales === 'float16'), `${wide.length} widened layers`);
    assert.ok(!opsOf(m).includes('MatMulNBits') && opsOf(m).includes('MatMulInteger') && !m.opsets.includes('com.microsoft:1'));
    const slices = (x) => opsOf(x).filter((op) => op === 'Slice').length;
    assert.equal(slices(m) > slices(OnnxModel.parse(float)), group === 128, 'a Slice to K where the blocks run past it');
    // The file holds 4 bits: no int8 weight initializer, only packed bytes (half a byte per weight).
    const int8Inits = m.graph.initializer.filter((t) => t.data_type === 3 && t.dims.length === 2);
    assert.equal(int8Inits.length, 0, 'no int8 weight is stored');
    const dims = new Map(OnnxModel.parse(float).prunable().map((w) => [w.name, w.dims]));
    for (const l of wide) {
      // packed blocks, float16 block scales, an int8 zero point per column (the column scales are computed)
      const [k, n] = dims.get(l.name), kb = Math.ceil(k / group);
      assert.equal(l.bytesAfter, n * kb * group / 2 + 2 * n * kb + n, l.name);
    }
    const bytes = m.encode();
    await closeTo(float, bytes, feeds, 0.97);
    // The same model written directly in the int8 MatMulInteger form with the codes widenInt4 predicts
    // gives the same outputs bit for bit: the session's weights are widenInt4's.
    const ref = OnnxModel.parse(float);
    const widen = (values, rows, cols) => widenInt4(halfScales(rtnQuantize(values, rows, cols, { bits: 4, group })));
    const linear = new Set(ref.prunable().map((w) => w.name));
    const rr = quantizeModel(ref, { scheme: 'int4', group, layerBits: (w) => (linear.has(w.name) ? 'int8' : undefined), quantizer: (v, rows, cols, grid) => (grid.bits === 8 ? widen(v, rows, cols) : rtnQuantize(v, rows, cols, grid)) });
    assert.ok(rr.layers.filter((l) => l.form === 'int8-dynamic').length === wide.length);
    assert.deepEqual(rr.layers.filter((l) => l.form === 'int8-dynamic').map((l) => l.maxAbsError), wide.map((l) => l.maxAbsError), 'the report measures the widened weights');
    const [a, b] = [await runModel(bytes, feeds), await runModel(ref.encode(), feeds)];
    for (const key of Object.keys(a)) assert.ok(a[key].data.every((x, i) => x === b[key].data[i]), `${key}: int4-dynamic = int8 with the widened codes`);
    // onnxruntime folds the widening at load: its optimized graph has no Round or Floor left.
    const opt = path.join(os.tmpdir(), `sparsekit-int4-dynamic-${process.pid}-${group}.onnx`);
    try {
      const s = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 1, logSeverityLevel: 3, graphOptimizationLevel: 'basic', optimizedModelFilePath: opt });
      await s.release?.();
      const folded = OnnxModel.parse(new Uint8Array(fs.readFileSync(opt)));
      // (a 4-bit table's Floor stays: it unpacks the rows a run gathers)
      const count = (op) => folded.graph.node.filter((n) => n.op_type === op).length;
      assert.equal(count('Round'), 0, 'every widening folded');
      assert.equal(count('Floor'), r.layers.filter((l) => l.form === 'int4-gather').length, 'only the tables\' unpacking runs');
    } finally { fs.rmSync(opt, { force: true }); }
    assert.equal(transformersDtype(m), 'q4');
    // A chain some other node also reads is not ours to remove: refused by name, nothing changed.
    const shared = OnnxModel.parse(bytes);
    const wideCast = shared.graph.node.find((x) => x.op_type === 'Cast' && shared.graph.initializer.some((t) => t.name === x.input[0] && t.data_type === 2 && t.dims.length === 3));
    shared.graph.node.push({ ...wideCast, op_type: 'Identity', name: 'extra_reader', input: [wideCast.output[0]], output: ['extra_out'], attribute: [] });
    const before = shared.encode();
    assert.equal(kinds(shared).filter((k) => k === 'widened').length, wide.length - 1);
    assert.throws(() => dequantizeModel(shared), (e) => e instanceof OnnxError && e.reason === 'unsupported_scheme');
    assert.deepEqual(shared.encode(), before);
    // Read back: the 4-bit values (codes x block scales), written again as int4-dynamic.
    const back = OnnxModel.parse(bytes);
    assert.ok(kinds(back).filter((k) => k === 'widened').length === wide.length);
    const rec = dequantizeModel(back);
    assert.ok(!opsOf(back).includes('MatMulInteger') && !opsOf(back).includes('Round'), 'every widening chain is gone');
    assert.ok(rec.layers.filter((l) => l.form === 'int4-dynamic' && l.group === group).length === wide.length);
    requantize(back, rec);
    await closeTo(bytes, back.encode(), feeds, 0.9999);
  }
  // Unsqueeze's axes (an input from opset 13) and ReduceMax's (from 18) in each spelling; below
  // opset 11 (no MatMulInteger, no Round) MatMulNBits, said per layer.
  for (const v of [11, 13, 18]) {
    const m = OnnxModel.parse(G.mlp());
    m.model.opset_import.find((o) => !o.domain).version = v;
    quantizeModel(m, { scheme: 'int4', group: 16, int4MatMul: 'dynamic' });
    const bytes = m.encode();
    await closeTo(G.mlp(), bytes, mlpFeeds(), 0.99);
    assert.deepEqual(dequantizeModel(OnnxModel.parse(bytes)).layers.map((l) => l.form), ['int4-dynamic', 'int4-dynamic'], `opset ${v}`);
  }
  const old = OnnxModel.parse(G.mlp());
  old.model.opset_import.find((o) => !o.domain).version = 10;
  const r10 = quantizeModel(old, { scheme: 'int4', group: 16, int4MatMul: 'dynamic' });
  assert.ok(r10.layers.every((l) => l.form === 'int4-nbits' && /opset 11/.test(l.note)), JSON.stringify(r10.layers.map((l) => [l.form, l.note])));
});

test("4-bit tables keep the ids' shape known: constant shapes when the ids' rank is (no Shape read per run), computed when not; the same values", async () => {
  const float = modelBytes('bert-torch');
  const feeds = feedsOf('bert-style');
  const known = OnnxModel.parse(float);
  // the same model with its token ids through an op whose output rank is not followed (Abs of ids >= 0)
  const hidden = OnnxModel.parse(float);
  const word = hidden.graph.node.find((n) => n.op_type === 'Gather' && hidden.graph.input.some((v) => v.name === n.input[1]));
  hidden.graph.node.unshift({ op_type: 'Abs', name: 'ids_abs', input: [word.input[1]], output: ['ids_abs_out'], attribute: [], domain: '' });
  word.input[1] = 'ids_abs_out';
  for (const m of [known, hidden]) quantizeModel(m, { scheme: 'int4', group: 32 });
  // (this export's token type ids come through Expand, whose rank is not followed: computed there)
  const shapes = (m) => m.graph.node.filter((n) => n.op_type === 'Shape' && n.name.startsWith(`${word.name}_q4_`)).length;
  assert.equal(shapes(known), 0, 'no shape computed for the token table');
  assert.equal(shapes(hidden), 1, 'the token table behind Abs computes its shapes');
  const reshapes = known.graph.node.filter((n) => n.op_type === 'Reshape' && n.name.startsWith(`${word.name}_q4_`));
  assert.ok(reshapes.length > 0 && reshapes.every((n) => known.graph.initializer.some((t) => t.name === n.input[1])));
  const [a, b] = [await runModel(known.encode(), feeds), await runModel(hidden.encode(), feeds)];
  for (const key of Object.keys(a)) assert.ok(a[key].data.every((x, i) => x === b[key].data[i]), key);
  await closeTo(float, known.encode(), feeds, 0.95);
  assert.equal(kinds(OnnxModel.parse(known.encode())).filter((k) => k === 'gather4').length, kinds(OnnxModel.parse(hidden.encode())).filter((k) => k === 'gather4').length);
});

test('int3 tables: 8 levels in the 4-bit table form, fewer bytes after brotli, still close to float; 4- and 3-bit tables read back and written again', async () => {
  const float = modelBytes('bert-torch');
  const feeds = feedsOf('bert-style');
  const sizes = {};
  for (const embeddings of ['int4', 'int3']) {
    const m = OnnxModel.parse(float);
    const r = quantizeModel(m, { scheme: 'int4', group: 32, embeddings });
    const tables = r.layers.filter((l) => l.op === 'Gather');
    assert.ok(tables.length >= 2 && tables.every((l) => l.form === `${embeddings}-gather` && l.bits === (embeddings === 'int3' ? 3 : 4)), JSON.stringify(tables.map((l) => [l.form, l.bits])));
    // the stored codes: every nibble of a 3-bit table is in -4..3 (+8)
    const packed = m.graph.initializer.filter((t) => t.data_type === 2 && t.dims.length === 2);
    assert.equal(packed.length, tables.length);
    const nibbles = packed.flatMap((t) => Array.from(m.tensorBytes(t)).flatMap((b) => [(b & 15) - 8, (b >> 4) - 8]));
    const [lo, hi] = [Math.min(...nibbles), Math.max(...nibbles)];
    assert.deepEqual([lo, hi], embeddings === 'int3' ? [-4, 3] : [-8, 7]);
    sizes[embeddings] = zlib.brotliCompressSync(Buffer.concat(packed.map((t) => m.tensorBytes(t)))).length;
    const bytes = m.encode();
    await closeTo(float, bytes, feeds, 0.95);
    // read back (detect.ts' gather4): the stored values (codes x block scales) in a float Gather, the
    // form by the codes' range; written again, the same packed bytes
    const back = OnnxModel.parse(bytes);
    assert.equal(kinds(back).filter((k) => k === 'gather4').length, tables.length);
    const rec = dequantizeModel(back);
    assert.deepEqual(rec.layers.filter((l) => l.source === 'gather4').map((l) => [l.form, l.group]), tables.map(() => [`${embeddings}-gather`, 32]));
    assert.ok(!opsOf(back).includes('Floor'), 'every unpacking is gone');
    await closeTo(bytes, back.encode(), feeds, 0.99999);
    requantize(back, rec);
    const again = back.graph.initializer.filter((t) => t.data_type === 2 && t.dims.length === 2);
    assert.deepEqual(again.map((t) => Buffer.from(back.tensorBytes(t)).toString('base64')).sort(), packed.map((t) => Buffer.from(m.tensorBytes(t)).toString('base64')).sort(), 'the same codes written again');
    await closeTo(bytes, back.encode(), feeds, 0.99999);
  }
  assert.ok(sizes.int3 < 0.85 * sizes.int4, `3-bit tables ${sizes.int3} B after brotli against 4-bit ${sizes.int4} B`);
  // blocks of 128 past rows of 64 (the Slice): read back at the rows' length, the same bytes again
  const wide = OnnxModel.parse(float);
  quantizeModel(wide, { scheme: 'int4', group: 128 });
  assert.ok(opsOf(wide).includes('Slice'));
  const wideBytes = wide.encode();
  const wb = OnnxModel.parse(wideBytes);
  const wr = dequantizeModel(wb);
  const tableEntries = wr.layers.filter((l) => l.source === 'gather4');
  assert.ok(tableEntries.length >= 2 && tableEntries.every((l) => l.form === 'int4-gather' && l.group === 128));
  assert.ok(tableEntries.every((l) => wb.weights.find((w) => w.name === l.name).dims[1] === 64), 'rows at their own length');
  await closeTo(wideBytes, wb.encode(), feeds, 0.99999);
  requantize(wb, wr);
  const packedOf = (m) => m.graph.initializer.filter((t) => t.data_type === 2 && t.dims.length === 2).map((t) => Buffer.from(m.tensorBytes(t)).toString('base64')).sort();
  assert.deepEqual(packedOf(wb), packedOf(wide));
  // a Slice that does not keep the row's start is not this form: the table is left as it is
  const odd = OnnxModel.parse(wideBytes);
  const sl = odd.graph.node.find((n) => n.op_type === 'Slice' && /q4_slice/.test(n.name));
  const starts = odd.graph.initializer.find((t) => t.name === sl.input[1]);
  odd.writeInts(starts, [1]);
  assert.ok(!kinds(odd).includes('gather4') || kinds(odd).filter((k) => k === 'gather4').length < kinds(OnnxModel.parse(wideBytes)).filter((k) => k === 'gather4').length);
  assert.throws(() => quantizeModel(OnnxModel.parse(float), { scheme: 'int4', embeddings: 'int2' }), (e) => e instanceof OnnxError && /int3/.test(e.message));
  assert.throws(() => quantizeModel(OnnxModel.parse(float), { scheme: 'int4', int4MatMul: 'int8' }), (e) => e instanceof OnnxError && /int4MatMul/.test(e.message));
});

test('codes and scales round-trip: RTN error within half a step, 4-bit packing both ways', () => {
  const r = G.rng(5);
  const rows = 6, cols = 80; // 80 = 2.5 blocks of 32: the last block is padded
  const v = Float32Array.from({ length: rows * cols }, () => r());
  for (const grid of [{ bits: 8, group: 0 }, { bits: 4, group: 32 }, { bits: 4, group: 16 }]) {
    const qv = rtnQuantize(v, rows, cols, grid);
    const back = dequantizeView(qv);
    for (let i = 0; i < v.length; i++) {
      const s = Math.abs(qv.scales[Math.floor(i / cols) * qv.groupsPerRow + Math.floor((i % cols) / qv.width)]);
      // int4's top step on the side opposite the extreme is clamped to code 7: up to one step there.
      const tol = qv.codes[i] === 7 && grid.bits === 4 ? s : s / 2;
      assert.ok(Math.abs(back[i] - v[i]) <= tol + 1e-6, `grid ${JSON.stringify(grid)} element ${i}`);
    }
    if (grid.bits === 4) {
      const packed = packNBits(qv);
      assert.equal(packed.length, rows * Math.ceil(cols / grid.group) * grid.group / 2);
      assert.deepEqual(Array.from(unpackNBits(packed, rows, cols, grid.group)), Array.from(qv.codes));
      const again = rtnQuantize(back, rows, cols, grid);
      assert.deepEqual(Array.from(again.codes), Array.from(qv.codes), 'quantizing dequantized values gives the same codes');
    }
  }
  assert.throws(() => rtnQuantize(v, rows, cols, { bits: 4, group: 24 }), (e) => e instanceof OnnxError && /power of two/.test(e.message));
});

test("int4 uses onnxruntime's 16-level grid: a group's extreme is code -8 exactly, the scale's sign following it", () => {
  // range2scale in onnxruntime/core/mlas/lib/q4_dq.cpp (MatMulNBitsQuantizer, symmetric): scale = e / -8
  // for the value e of largest magnitude (the negative one on a tie). The 15-level grid (max|w| / 7,
  // codes ±7) gives other scales and never code -8.
  const v = Float32Array.of(
    0.8, -0.3, 0.7, 0, 0.05, -0.79, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.65, -0.1, -0.2, 0.75, // e = 0.8
    -0.8, 0.3, 0.7, 0, 0.05, 0.79, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.65, -0.1, -0.2, 0.75, // e = -0.8
    0.5, -0.5, 0.25, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, //  a tie: e = -0.5
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0); // all zeros: scale 1
  const qv = rtnQuantize(v, 1, 64, { bits: 4, group: 16 });
  assert.deepEqual(Array.from(qv.scales), [Math.fround(0.8) / -8, Math.fround(0.8) / 8, Math.fround(0.5) / 8, 1].map(Math.fround));
  assert.deepEqual([qv.codes[0], qv.codes[16], qv.codes[33]], [-8, -8, -8], 'the extremes');
  assert.equal(qv.codes[5], 7, '-0.79 against e = 0.8: past the last step, clamped to 7');
  assert.equal(qv.codes[21], 7);
  assert.equal(qv.codes[32], 7, 'the tie makes -0.5 the extreme: 0.5 is past the last step');
  const back = dequantizeView(qv);
  assert.equal(back[0], Math.fround(0.8));
  assert.equal(back[16], Math.fround(-0.8));
  for (const i of [3, 48, 63]) assert.ok(Object.is(back[i], 0), `element ${i} is +0`);
  // Negative scales and code -8 pack and unpack as any others (stored 0 under the zero point 8).
  assert.deepEqual(Array.from(unpackNBits(packNBits(qv), 1, 64, 16)), Array.from(qv.codes));
});

test('zeros of a pruned model survive int8 and int4 exactly', () => {
  for (const scheme of ['int8', 'int4']) {
    const m = OnnxModel.parse(modelBytes('bert-torch'));
    pruneSparsity(m, { sparsity: 0.5 });
    const zerosBefore = new Map(m.prunable().map((w) => [w.name, m.readFloat(w).map((x) => (x === 0 ? 1 : 0))]));
    const rep = quantizeModel(m, { scheme, group: scheme === 'int4' ? 32 : undefined });
    for (const l of rep.layers) if (zerosBefore.has(l.name)) assert.ok(l.zeros >= l.params * 0.5 - 1, `${l.name}: ${l.zeros} zeros`);
    dequantizeModel(m);
    for (const [name, z] of zerosBefore) {
      const back = m.readFloat(m.weight(name));
      for (let i = 0; i < z.length; i++) if (z[i]) assert.equal(back[i], 0, `${scheme} ${name}[${i}] was pruned, reads ${back[i]}`);
    }
  }
});

test('pruning a model whose weights are all quantized throws (reason quantized), not "0 prunable weights"', () => {
  const m = OnnxModel.parse(G.mlp());
  quantizeModel(m, { scheme: 'int8' });
  const before = m.encode();
  assert.throws(() => pruneSparsity(m, { sparsity: 0.5 }), (e) => e instanceof OnnxError && e.reason === 'quantized' && /MatMulInteger/.test(e.message));
  assert.throws(() => pruneNm(m, { nm: [2, 4] }), (e) => e instanceof OnnxError && e.reason === 'quantized');
  assert.deepEqual(m.encode(), before);
});

test('our q8 file: read back, pruned and requantized in the same scheme', async () => {
  const float = modelBytes('bert-torch');
  const feeds = feedsOf('bert-style');
  const q = OnnxModel.parse(float);
  quantizeModel(q, { scheme: 'int8' });
  const q8 = OnnxModel.parse(q.encode());
  const formsBefore = kinds(q8);
  const record = dequantizeModel(q8);
  assert.equal(detectQuantized(q8).sites.length, 0);
  assert.ok(record.layers.some((l) => l.form === 'int8-dynamic') && record.layers.some((l) => l.form === 'int8-gather'));
  const pr = pruneSparsity(q8, { sparsity: 0.5 });
  assert.ok(pr.sparsity > 0.49);
  const rep = requantize(q8, record);
  assert.deepEqual(kinds(q8), formsBefore);
  assert.equal(rep.layers.filter((l) => l.form !== 'float').length, record.layers.length);
  const out = await runModel(q8.encode(), feeds);
  assert.ok(Object.values(out).every((o) => o.data.every(Number.isFinite)));
  // int4 the same way
  const q4 = OnnxModel.parse(float);
  quantizeModel(q4, { scheme: 'int4', group: 16 });
  const m4 = OnnxModel.parse(q4.encode());
  const rec4 = dequantizeModel(m4);
  assert.ok(rec4.layers.some((l) => l.form === 'int4-nbits' && l.group === 16));
  pruneNm(m4, { nm: [2, 4] });
  requantize(m4, rec4);
  assert.ok(opsOf(m4).includes('MatMulNBits'));
  await runModel(m4.encode(), feeds);
});

test("onnxruntime's quantize_dynamic file (tests/gen/quantize_dynamic.py) is read, pruned and requantized", async () => {
  const bytes = modelBytes('bert-torch-q8dyn');
  const feeds = feedsOf('bert-style');
  const m = OnnxModel.parse(bytes);
  assert.ok(kinds(m).includes('integer'));
  assert.throws(() => pruneSparsity(m, { sparsity: 0.5 }), (e) => e.reason === 'quantized');
  const ref = await runModel(bytes, feeds);
  const record = dequantizeModel(m);
  // Dequantized, the float graph computes what the q8 file computed up to activation rounding.
  const deq = await runModel(m.encode(), feeds);
  for (const k of Object.keys(ref)) assert.ok(G.cosine(ref[k].data, deq[k].data) > 0.99, k);
  pruneSparsity(m, { sparsity: 0.5 });
  requantize(m, record);
  assert.ok(kinds(m).includes('integer'));
  const out = await runModel(m.encode(), feeds);
  for (const k of Object.keys(ref)) assert.ok(G.cosine(ref[k].data, out[k].data) > 0.5, `${k} after pruning`);
});

test('a scheme that cannot be read is refused by name, the model unchanged', () => {
  // MatMulNBits at 2 bits, and a statically quantized QLinearMatMul: forms this module does not read.
  const q4 = OnnxModel.parse(G.mlp());
  quantizeModel(q4, { scheme: 'int4', group: 16 });
  q4.graph.node.find((n) => n.op_type === 'MatMulNBits').attribute.find((a) => a.name === 'bits').i = 2;
  const q8 = OnnxModel.parse(G.mlp());
  quantizeModel(q8, { scheme: 'int8' });
  q8.graph.node.find((n) => n.op_type === 'MatMulInteger').op_type = 'QLinearMatMul';
  for (const [m, name] of [[OnnxModel.parse(q4.encode()), /MatMulNBits with bits=2/], [OnnxModel.parse(q8.encode()), /QLinearMatMul/]]) {
    const before = m.encode();
    assert.throws(() => dequantizeModel(m), (e) => e instanceof OnnxError && e.reason === 'unsupported_scheme' && name.test(e.message));
    assert.deepEqual(m.encode(), before);
  }
  assert.throws(() => quantizeModel(OnnxModel.parse(G.mlp()), { scheme: 'int3' }), (e) => e instanceof OnnxError && /int8 or int4/.test(e.message));
});

test('a quantized weight that reads back as a value that is not finite is refused, the model unchanged', () => {
  for (const bad of [Infinity, NaN]) {
    const q8 = OnnxModel.parse(G.mlp());
    quantizeModel(q8, { scheme: 'int8' });
    const m = OnnxModel.parse(q8.encode());
    const t = m.graph.initializer.find((x) => x.name === 'W2_scale');
    const v = m.readFloat(t);
    v[3] = bad;
    m.writeFloat(t, v);
    const before = m.encode();
    assert.throws(() => dequantizeModel(m), (e) => e instanceof OnnxError && e.reason === 'corrupt' && e.code === 'invalid_value' && /W2_quantized/.test(e.message));
    assert.deepEqual(m.encode(), before);
  }
});

test('below opset 13 and weights in Constant nodes (Paddle2ONNX exports): int8 as Cast + Mul per channel, close to float', async () => {
  // Opset 9 (no MatMulInteger either), 11 (MatMulInteger, no per-axis DequantizeLinear); weights as
  // initializers and as Constant nodes; a Conv, a MatMul and a Gemm with transB 1 (three output axes).
  for (const opset of [9, 11]) {
    for (const store of ['raw', 'constant']) {
      const bytes = G.makeModel({
        inputs: [['x', [1, 3, 6, 6]]], outputs: [['y', [1, 4]]], opset, store,
        inits: { cw: { dims: [5, 3, 3, 3] }, shape: { dims: [2], int64: [1, 80] }, W: { dims: [80, 8] }, fc: { dims: [4, 8] }, b: { dims: [4] } },
        nodes: [['Conv', ['x', 'cw'], ['c']], ['Reshape', ['c', 'shape'], ['f']], ['MatMul', ['f', 'W'], ['h']], ['Gemm', ['h', 'fc', 'b'], ['y'], { transB: 1 }]],
      });
      const m = OnnxModel.parse(bytes);
      const r = quantizeModel(m, { scheme: 'int8' });
      const tag = `opset ${opset}, ${store}`;
      const forms = Object.fromEntries(r.layers.map((l) => [l.name, l.form]));
      assert.deepEqual(forms, { cw: 'int8-dq', W: opset >= 11 ? 'int8-dynamic' : 'int8-dq', fc: 'int8-dq' }, tag);
      assert.ok(r.layers.filter((l) => l.form === 'int8-dq').every((l) => /Cast \+ Mul/.test(l.note)), tag);
      const ops = opsOf(m);
      // Cast + Mul before the Conv and the Gemm (and the MatMul at opset 9; at 11 its Cast is the MatMulInteger form's).
      assert.ok(!ops.includes('DequantizeLinear') && ops.includes('MatMulInteger') === (opset >= 11), `${tag}: ${ops}`);
      for (const reader of ['Conv', 'Gemm', ...(opset < 11 ? ['MatMul'] : [])]) {
        const n = m.graph.node.find((x) => x.op_type === reader);
        const mul = m.graph.node.find((x) => x.output[0] === n.input[1]);
        assert.equal(mul?.op_type, 'Mul', `${tag}: ${reader}`);
        assert.equal(m.graph.node.find((x) => x.output[0] === mul.input[0])?.op_type, 'Cast', `${tag}: ${reader}`);
      }
      const consts = m.graph.node.filter((n) => n.op_type === 'Constant').map((n) => n.output[0]).sort();
      assert.deepEqual(consts, store === 'constant' ? ['b', 'shape'] : [], `${tag}: the quantized weights' float Constants are gone`);
      assert.equal(m.prunable().length, 0, tag);
      await closeTo(bytes, m.encode(), G.feedsFor(null, { x: [1, 3, 6, 6] }), 0.999);
      // Read back: the Cast + Mul weights are found, made float again (the codes times their scales),
      // pruned, and written in the same form.
      const q = OnnxModel.parse(m.encode());
      assert.deepEqual(kinds(q), opset >= 11 ? ['cast', 'cast', 'integer'] : ['cast', 'cast', 'cast'], tag);
      const record = dequantizeModel(q);
      const back = Object.fromEntries(q.weights.filter((w) => ['cw', 'W', 'fc'].includes(w.name)).map((w) => [w.name, q.readFloat(w)]));
      const orig = OnnxModel.parse(bytes);
      for (const name of ['cw', 'W', 'fc']) {
        const a = orig.readFloat(orig.weight(name)), b = back[name], l = r.layers.find((x) => x.name === name);
        assert.equal(b.length, a.length, `${tag} ${name}`);
        let d = 0;
        for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
        assert.ok(Math.abs(d - l.maxAbsError) < 1e-6, `${tag} ${name}: read back ${d}, written ${l.maxAbsError}`);
      }
      pruneSparsity(q, { sparsity: 0.5 });
      const rq = requantize(q, record);
      assert.deepEqual(rq.layers.map((l) => l.form).sort(), record.layers.map((l) => l.form).sort(), tag);
      assert.equal(q.prunable().length, 0, tag);
      await runModel(q.encode(), G.feedsFor(null, { x: [1, 3, 6, 6] }));
    }
  }
});

test('int4 on Conv and Gemm: 4-bit codes per output channel in an int8 container (DequantizeLinear, or Cast + Mul below opset 13), read back as 4-bit, GPTQ-compensated in the job', async () => {
  for (const opset of [11, 13]) {
    const bytes = G.makeModel({
      inputs: [['x', [1, 3, 6, 6]]], outputs: [['y', [1, 4]]], opset,
      inits: { cw: { dims: [6, 3, 3, 3] }, shape: { dims: [2], int64: [1, 96] }, fc: { dims: [4, 96] }, b: { dims: [4] } },
      nodes: [['Conv', ['x', 'cw'], ['c']], ['Reshape', ['c', 'shape'], ['f']], ['Gemm', ['f', 'fc', 'b'], ['y'], { transB: 1 }]],
    });
    const tag = `opset ${opset}`;
    const m = OnnxModel.parse(bytes);
    const r = quantizeModel(m, { scheme: 'int4' });
    assert.deepEqual(r.layers.map((l) => [l.name, l.form, l.bits]), [['cw', 'int4-dq', 4], ['fc', 'int4-dq', 4]], tag);
    assert.ok(r.layers.every((l) => /4-bit codes per output channel/.test(l.note)), tag);
    // The container: int8 codes within -8..8 and a positive scale per output channel; each weight
    // within one step of its float value (the step: the channel's largest magnitude / 8; half a step
    // but on the side opposite the extreme, whose top code is 7 on onnxruntime's grid).
    const q = OnnxModel.parse(m.encode());
    const orig = OnnxModel.parse(bytes);
    assert.deepEqual(kinds(q), opset >= 13 ? ['dq', 'dq'] : ['cast', 'cast'], tag);
    const record = dequantizeModel(q);
    assert.deepEqual(record.layers.map((l) => l.form), ['int4-dq', 'int4-dq'], `${tag}: read back as 4-bit`);
    for (const name of ['cw', 'fc']) {
      const a = orig.readView(orig.weight(name)), b = q.readView(q.weight(name));
      const { rows, cols } = orig.weight(name).view;
      for (let i = 0; i < rows; i++) {
        let mx = 0;
        for (let j = 0; j < cols; j++) mx = Math.max(mx, Math.abs(a[i * cols + j]));
        const levels = new Set();
        for (let j = 0; j < cols; j++) {
          assert.ok(Math.abs(a[i * cols + j] - b[i * cols + j]) <= mx / 8 + 1e-6, `${tag} ${name}[${i}, ${j}]`);
          levels.add(Math.round((b[i * cols + j] / mx) * 8));
        }
        assert.ok(levels.size <= 16, `${tag} ${name} row ${i}: ${levels.size} levels`);
      }
    }
    await closeTo(bytes, m.encode(), G.feedsFor(null, { x: [1, 3, 6, 6] }), 0.98);
    // Pruned and written back in the same form.
    pruneSparsity(q, { sparsity: 0.5 });
    const rq = requantize(q, record);
    assert.equal(rq.scheme, 'int4', tag);
    assert.deepEqual(rq.layers.map((l) => l.form), ['int4-dq', 'int4-dq'], tag);
    // The job with calibration: GPTQ on the per-channel 4-bit grid, the same container.
    const j = OnnxModel.parse(bytes);
    const samples = O.makeInputSet(j, { count: 4 * 96, generator: 'generic' }); // the Gemm needs 4 vectors per input for a compensated solve
    const { report } = await O.runJob(j, { mode: { kind: 'sparsity', sparsity: 0 }, calibration: { samples }, quantize: { scheme: 'int4' } }, { ort: (await import('onnxruntime-node')).default, sessionOptions: { logSeverityLevel: 3 } });
    assert.deepEqual(report.quantize.layers.map((l) => [l.name, l.form, l.method]), [['cw', 'int4-dq', 'gptq'], ['fc', 'int4-dq', 'gptq']], tag);
    const codes = OnnxModel.parse(j.encode()).graph.initializer.filter((t) => t.data_type === 3 && t.dims.length > 1); // not the zero points
    assert.equal(codes.length, 2, tag);
    for (const t of codes) assert.ok(Array.from(t.raw_data, (v) => (v << 24) >> 24).every((v) => v >= -8 && v <= 8), `${tag} ${t.name}: codes in -8..8`);
  }
});

test('never half-written: a refusal or a failing quantizer leaves the model as it was', () => {
  const m2 = OnnxModel.parse(G.mlp());
  const b2 = m2.encode();
  let calls = 0;
  const failing = (v, rows, cols, grid) => { if (++calls === 2) throw new Error('solver failed'); return rtnQuantize(v, rows, cols, grid); };
  assert.throws(() => quantizeModel(m2, { scheme: 'int8', quantizer: failing }), /solver failed/);
  assert.deepEqual(m2.encode(), b2);
  // A quantizer that moves a pruned zero off the grid's zero is refused.
  const m3 = OnnxModel.parse(G.mlp());
  pruneSparsity(m3, { sparsity: 0.5 });
  const b3 = m3.encode();
  const shifty = (v, rows, cols, grid) => { const q = rtnQuantize(v, rows, cols, grid); q.codes[v.indexOf(0)] = 1; return q; };
  assert.throws(() => quantizeModel(m3, { scheme: 'int8', quantizer: shifty }), /zero/);
  assert.deepEqual(m3.encode(), b3);
});
