// IEEE 754 half precision and bfloat16 <-> float32, for weights stored as FLOAT16 / BFLOAT16: the
// pruning works in float32 and the file keeps its own type.
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

export function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24; // zero / subnormal
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

/** Round-to-nearest-even float32 -> half bits (a pruned 0 stays an exact 0, -0 stays -0). */
export function floatToHalf(v: number): number {
  f32[0] = v;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && h & 1)) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && h & 1)) h++; // a carry into the exponent is the right rounding
  return sign | h;
}

export function halfArrayToFloat(u16: Uint16Array): Float32Array {
  const out = new Float32Array(u16.length);
  for (let i = 0; i < u16.length; i++) out[i] = halfToFloat(u16[i]);
  return out;
}

export function floatArrayToHalf(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = floatToHalf(values[i]);
  return out;
}

export function bf16ArrayToFloat(u16: Uint16Array): Float32Array {
  const out = new Float32Array(u16.length);
  const bits = new Uint32Array(out.buffer);
  for (let i = 0; i < u16.length; i++) bits[i] = u16[i] << 16;
  return out;
}

export function floatArrayToBf16(values: ArrayLike<number>): Uint16Array {
  const src = new Uint32Array(Float32Array.from(values).buffer);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const x = src[i];
    if ((x & 0x7f800000) === 0x7f800000 && x & 0x7fffff) {
      out[i] = (x >>> 16) | 0x40; // quiet NaN
      continue;
    }
    out[i] = (x + 0x7fff + ((x >>> 16) & 1)) >>> 16;
  }
  return out;
}
