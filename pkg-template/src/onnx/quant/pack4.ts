// 4-bit codes in the layout of onnxruntime's com.microsoft MatMulNBits (contrib op schema,
// onnxruntime/core/graph/contrib_ops/contrib_defs.cc; the packing of its matmul_4bits_quantizer.py):
// B is uint8 [N, ceil(K / G), G / 2], the codes of one output row's block in order along K, two per
// byte, the even element in the low nibble; codes are stored unsigned as code + 8 (the op's default
// zero point when no zero_points input is given, which makes the grid symmetric). A last block that
// runs past K is padded with code 0 (stored 8), which the op multiplies by nothing.
import { OnnxError } from '../errors.js';
import type { QuantizedView } from './grid.js';
import { node } from './graph-edit.js';
import { DT, type NodeProto } from '../tensor-data.js';

/** The op's zero point when the zero_points input is absent: 2^(bits-1). */
export const NBITS_ZERO = 8;

/** Packs a 4-bit quantized view (rows = N outputs, cols = K inputs, blocks of `width`) into B. */
export function packNBits(qv: QuantizedView): Uint8Array {
  const { rows: n, cols: k, width: g } = qv;
  if (g % 2 || g < 2) throw new OnnxError('unsupported', `a 4-bit block of ${g} inputs does not fill whole bytes`, 'invalid_arguments');
  const kb = Math.ceil(k / g);
  const out = new Uint8Array(n * kb * (g / 2)).fill(NBITS_ZERO | (NBITS_ZERO << 4));
  for (let r = 0; r < n; r++) {
    const row = r * kb * (g / 2);
    for (let c = 0; c < k; c++) {
      const v = (qv.codes[r * k + c] + NBITS_ZERO) & 0x0f;
      const at = row + (c >> 1); // block b starts at b * g / 2 bytes = c / 2 when c = b * g
      out[at] = c & 1 ? (out[at] & 0x0f) | (v << 4) : (out[at] & 0xf0) | v;
    }
  }
  return out;
}

/**
 * The signed codes of a packed B (N × K, blocks of G) with the zero point of each block: `zeros`
 * is MatMulNBits' optional zero_points input (uint8 [N, ceil(kb / 2)], two per byte, low nibble
 * first), absent = 8 everywhere. Returns codes relative to their block's zero point.
 */
export function unpackNBits(b: Uint8Array, n: number, k: number, g: number, zeros?: Uint8Array): Int16Array {
  const kb = Math.ceil(k / g);
  if (b.length !== n * kb * (g / 2)) throw new OnnxError('corrupt', `MatMulNBits B holds ${b.length} bytes, not N·ceil(K/G)·G/2 = ${n * kb * (g / 2)}`, 'shape_mismatch');
  const zpRow = Math.ceil(kb / 2);
  if (zeros && zeros.length !== n * zpRow) throw new OnnxError('corrupt', `MatMulNBits zero_points holds ${zeros.length} bytes, not ${n * zpRow}`, 'shape_mismatch');
  const out = new Int16Array(n * k);
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < k; c++) {
      const byte = b[r * kb * (g / 2) + (c >> 1)];
      const v = c & 1 ? byte >> 4 : byte & 0x0f;
      const blk = Math.floor(c / g);
      const zb = zeros ? zeros[r * zpRow + (blk >> 1)] : 0;
      const zp = zeros ? (blk & 1 ? zb >> 4 : zb & 0x0f) : NBITS_ZERO;
      out[r * k + c] = v - zp;
    }
  }
  return out;
}

/**
 * The nodes that split packed bytes into their two nibbles in plain float ops (no bitwise op, which
 * needs opset 18): x = Cast(bytes), hi = Floor(x / 16), lo = x - 16 · hi. Both outputs are the
 * stored unsigned codes (code + 8); `sixteen` names a float scalar 16.
 */
export function nibbleNodes(bytes: string, sixteen: string, out: { lo: string; hi: string }, fresh: (s: string) => string, nodeName: (s: string) => string): NodeProto[] {
  const [wide, div, hi16] = ['wide', 'div16', 'hi16'].map(fresh);
  return [
    node('Cast', [bytes], [wide], nodeName('q4_cast'), { to: DT.FLOAT }),
    node('Div', [wide, sixteen], [div], nodeName('q4_div')),
    node('Floor', [div], [out.hi], nodeName('q4_hi')),
    node('Mul', [out.hi, sixteen], [hi16], nodeName('q4_hi16')),
    node('Sub', [wide, hi16], [out.lo], nodeName('q4_lo')),
  ];
}
