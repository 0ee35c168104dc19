// Where the brotli bytes of a quantized ONNX file go, and what other layouts of the same 4-bit codes
// would save (issue 39 item 2: does the ONNX layout hide pruned zeros from brotli?). Per kind of
// tensor (MatMulNBits codes and scales, 4-bit embedding codes and scales, the rest by element type), brotli-9 of the
// kind's bytes concatenated; then for the 4-bit codes:
//   - as stored: MatMulNBits' nibble packing (two codes a byte, code + 8; a pruned zero is nibble 8);
//   - one code a byte (brotli's byte-wise entropy coder then sees the 16 codes as symbols);
//   - a keep-mask (1 bit a weight) + the kept codes nibble-packed, each brotli'd on its own (what a
//     sparsity-aware packing would ship);
//   - the order-0 entropy of the codes (a bound for a coder that sees codes one by one);
// and the float32 scales as float16 (every scale, its bytes brotli'd; files whose scales are already
// float16, quant/half-scales.ts, show the same figure twice).
// Usage: node bench/quant/packing.mjs FILE.onnx [FILE.onnx ...]   (the files of bench/quant/minilm.mjs: bench/out/quant/minilm/*.onnx)
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { OnnxModel } from '#onnx-internal';

const brotli = (b) => (b.length ? zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length } }).length : 0);
const cat = (xs) => { const out = new Uint8Array(xs.reduce((a, x) => a + x.length, 0)); let at = 0; for (const x of xs) { out.set(x, at); at += x.length; } return out; };
const MiB = (n) => (n / 2 ** 20).toFixed(2);

/** float32 bytes -> float16 bytes (round to nearest even; the scales are normal numbers). */
function toHalf(bytes) {
  const f = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const out = new Uint16Array(f.length);
  const u = new Uint32Array(1), fv = new Float32Array(u.buffer);
  for (let i = 0; i < f.length; i++) {
    fv[0] = f[i];
    const x = u[0], sign = (x >>> 16) & 0x8000, e = ((x >>> 23) & 0xff) - 127 + 15;
    let m = x & 0x7fffff;
    if (e <= 0 || e >= 31) { out[i] = sign | (e >= 31 ? 0x7c00 : 0); continue; } // none in practice
    let h = (e << 10) | (m >>> 13);
    m &= 0x1fff;
    if (m > 0x1000 || (m === 0x1000 && (h & 1))) h++;
    out[i] = sign | h;
  }
  return new Uint8Array(out.buffer);
}

function codeLayouts(packed) {
  const n = packed.length * 2;
  const bytePer = new Uint8Array(n);
  for (let i = 0; i < packed.length; i++) { bytePer[2 * i] = packed[i] & 15; bytePer[2 * i + 1] = packed[i] >> 4; }
  const mask = new Uint8Array(Math.ceil(n / 8));
  const kept = [];
  const hist = new Float64Array(16);
  for (let i = 0; i < n; i++) {
    hist[bytePer[i]]++;
    if (bytePer[i] !== 8) { mask[i >> 3] |= 1 << (i & 7); kept.push(bytePer[i]); }
  }
  const keptPacked = new Uint8Array(Math.ceil(kept.length / 2));
  for (let i = 0; i < kept.length; i++) keptPacked[i >> 1] |= kept[i] << ((i & 1) * 4);
  let h = 0;
  for (const c of hist) if (c) h -= c * Math.log2(c / n);
  return { n, zeros: hist[8] / n, stored: brotli(packed), bytePer: brotli(bytePer), maskPlusKept: brotli(mask) + brotli(keptPacked), entropy: h / 8 };
}

const rows = [];
for (const file of process.argv.slice(2)) {
  const bytes = new Uint8Array(fs.readFileSync(file));
  const m = OnnxModel.parse(bytes);
  const g = m.graph;
  const role = new Map(); // initializer name -> kind
  // float16 scales reach their readers through a Cast (quant/half-scales.ts): named by the Cast's input.
  const castOf = new Map(g.node.filter((n) => n.op_type === 'Cast').map((n) => [n.output[0], n.input[0]]));
  const src = (v) => castOf.get(v) ?? v;
  for (const n of g.node) {
    if (n.op_type === 'MatMulNBits') { role.set(n.input[1], 'nbits codes'); role.set(src(n.input[2]), 'nbits scales'); }
    if (n.op_type === 'Gather' && /_q4(_\d+)?$/.test(n.input[0])) role.set(n.input[0], 'table codes');
    if (n.op_type === 'Gather' && /_block_scales(_\d+)?$/.test(n.input[0])) role.set(src(n.input[0]), 'table scales');
  }
  const kinds = {};
  const halfAlready = new Set();
  // the rest split by element type: int8 (the Conv / Gemm codes of the int8 containers, MatMulInteger's),
  // float32 (biases, per-channel scales, weights left float), other (float16 scales, shapes); Constant
  // nodes' tensors (biases of the PaddleOCR exports) count there too
  const REST = { 3: 'rest int8', 1: 'rest float32' };
  const tensors = [...g.initializer, ...g.node.filter((n) => n.op_type === 'Constant').map((n) => n.attribute?.find((a) => a.name === 'value')?.t).filter(Boolean)];
  for (const t of tensors) {
    const k = role.get(t.name) ?? REST[t.data_type] ?? 'rest other';
    (kinds[k] ??= []).push(m.tensorBytes(t));
    if (t.data_type === 10) halfAlready.add(k);
  }
  const row = { file: path.basename(file), raw: bytes.length, brotli: brotli(bytes), kinds: {}, codes: {}, half: {} };
  for (const [k, xs] of Object.entries(kinds)) { const b = cat(xs); row.kinds[k] = { raw: b.length, brotli: brotli(b) }; }
  for (const k of ['nbits codes', 'table codes']) if (kinds[k]) row.codes[k] = codeLayouts(cat(kinds[k]));
  for (const k of ['nbits scales', 'table scales']) if (kinds[k]) row.half[k] = halfAlready.has(k) ? row.kinds[k].brotli : brotli(toHalf(cat(kinds[k])));
  rows.push(row);
  console.error(`${row.file}: ${MiB(row.raw)} MiB, brotli ${MiB(row.brotli)} MiB`);
}

console.log('\n| file | brotli-9 MiB | nbits codes | nbits scales | table codes | table scales | rest int8 | rest float32 | rest other |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
const kb = (r, k) => (r.kinds[k] ? `${MiB(r.kinds[k].brotli)} (${MiB(r.kinds[k].raw)})` : '–');
for (const r of rows) console.log(`| ${r.file} | ${MiB(r.brotli)} | ${kb(r, 'nbits codes')} | ${kb(r, 'nbits scales')} | ${kb(r, 'table codes')} | ${kb(r, 'table scales')} | ${kb(r, 'rest int8')} | ${kb(r, 'rest float32')} | ${kb(r, 'rest other')} |`);
console.log('\nMiB brotli-9 (raw MiB) per kind, each kind\'s tensors concatenated.\n');
console.log('| file | codes | zeros | as stored (nibbles) | one code a byte | keep-mask + kept nibbles | order-0 entropy | scales float32 → float16 |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  for (const [k, c] of Object.entries(r.codes)) {
    const sk = k.replace('codes', 'scales');
    console.log(`| ${r.file} | ${k} | ${(100 * c.zeros).toFixed(1)}% | ${MiB(c.stored)} | ${MiB(c.bytePer)} | ${MiB(c.maskPlusKept)} | ${MiB(c.entropy)} | ${r.kinds[sk] ? `${MiB(r.kinds[sk].brotli)} → ${MiB(r.half[sk])}` : '–'} |`);
  }
}
fs.mkdirSync('bench/out/quant', { recursive: true });
fs.writeFileSync('bench/out/quant/packing.json', JSON.stringify(rows, null, 1));
