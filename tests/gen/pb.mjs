// A minimal protobuf writer for ONNX messages, independent of the package: the hostile corpus and
// the fuzzer need bytes no well-behaved encoder produces (negative or huge dims, lengths that run
// past the file, overlong varints), so they are written field by field here.

/** A varint of a non-negative number or bigint; negative values as 10-byte two's complement. */
export function varint(v) {
  let x = BigInt(v);
  if (x < 0n) x += 1n << 64n;
  const out = [];
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x) b |= 0x80;
    out.push(b);
  } while (x);
  return out;
}

const bytesOf = (x) => (typeof x === 'string' ? [...new TextEncoder().encode(x)] : [...x]);

/** Field helpers: each returns a byte array. */
export const f = {
  varint: (no, v) => [...varint(no * 8), ...varint(v)],
  len: (no, payload) => { const p = bytesOf(payload); return [...varint(no * 8 + 2), ...varint(p.length), ...p]; },
  fixed32: (no, bytes4) => [...varint(no * 8 + 5), ...bytes4],
  /** A packed run of varints. */
  packed: (no, values) => f.len(no, values.flatMap((v) => varint(v))),
  packedFloats: (no, values) => f.len(no, [...new Uint8Array(Float32Array.from(values).buffer)]),
};

const cat = (...parts) => parts.flat();

export function tensor({ name, dims = [], dataType = 1, raw, floatData, int64Data, int32Data, external, dataLocation, packedDims = true }) {
  return cat(
    packedDims ? (dims.length ? f.packed(1, dims) : []) : dims.flatMap((d) => f.varint(1, d)),
    f.varint(2, dataType),
    floatData ? f.packedFloats(4, floatData) : [],
    int32Data ? f.packed(5, int32Data) : [],
    int64Data ? f.packed(7, int64Data) : [],
    name !== undefined ? f.len(8, name) : [],
    raw ? f.len(9, raw) : [],
    (external ?? []).flatMap(([k, v]) => f.len(13, cat(f.len(1, k), f.len(2, v)))),
    dataLocation !== undefined ? f.varint(14, dataLocation) : (external ? f.varint(14, 1) : []),
  );
}

/** An attribute: {name, i} | {name, ints} | {name, f} | {name, t: tensorBytes} | {name, g: graphBytes} | {name, graphs}. */
export function attribute(a) {
  return cat(
    f.len(1, a.name),
    a.f !== undefined ? f.fixed32(2, [...new Uint8Array(Float32Array.of(a.f).buffer)]) : [],
    a.i !== undefined ? f.varint(3, a.i) : [],
    a.t ? f.len(5, a.t) : [],
    a.g ? f.len(6, a.g) : [],
    a.ints ? f.packed(8, a.ints) : [],
    (a.graphs ?? []).flatMap((g) => f.len(11, g)),
    f.varint(20, a.type ?? (a.g ? 5 : a.graphs ? 10 : a.t ? 4 : a.ints ? 7 : a.f !== undefined ? 1 : 2)),
  );
}

export function node({ op, inputs = [], outputs = [], name, attrs = [], domain }) {
  return cat(
    inputs.flatMap((i) => f.len(1, i)),
    outputs.flatMap((o) => f.len(2, o)),
    name !== undefined ? f.len(3, name) : [],
    op !== undefined ? f.len(4, op) : [],
    attrs.flatMap((a) => f.len(5, attribute(a))),
    domain !== undefined ? f.len(7, domain) : [],
  );
}

/** A TypeProto of a float tensor of the given dims (numbers or symbolic names). */
export function tensorType(dims, elemType = 1) {
  const shape = dims.flatMap((d) => f.len(1, typeof d === 'string' ? f.len(2, d) : f.varint(1, d)));
  return f.len(1, cat(f.varint(1, elemType), f.len(2, shape)));
}

export const valueInfo = (name, dims, elemType = 1) => cat(f.len(1, name), f.len(2, tensorType(dims, elemType)));

export function graph({ nodes = [], inits = [], inputs = [], outputs = [], name = 'g', extra = [] }) {
  return cat(
    nodes.flatMap((n) => f.len(1, n)),
    f.len(2, name),
    inits.flatMap((t) => f.len(5, t)),
    inputs.flatMap((v) => f.len(11, v)),
    outputs.flatMap((v) => f.len(12, v)),
    extra,
  );
}

export function model({ graph: g, ir = 8, opset = 13, extra = [] }) {
  return Uint8Array.from(cat(
    f.varint(1, ir),
    f.len(2, 'sparsekit-wasm hostile'),
    f.len(7, g),
    f.len(8, cat(f.len(1, ''), f.varint(2, opset))),
    extra,
  ));
}

/** Deterministic float values in [-1, 1). */
export function floats(n, seed = 1) {
  let s = seed >>> 0 || 1;
  return Array.from({ length: n }, () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return s / 2 ** 31 - 1;
  });
}

export const rawFloats = (n, seed) => new Uint8Array(Float32Array.from(floats(n, seed)).buffer);
