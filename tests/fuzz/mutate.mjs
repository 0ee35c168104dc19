// The fuzzer's inputs: byte-level mutations of seed models, structure-aware mutations (decode,
// bend one field, re-encode) and generated protobufs. Deterministic for a given PRNG.
import { f, varint, tensor, node, graph, model, valueInfo, rawFloats } from '../gen/pb.mjs';

/** xorshift32 PRNG: next() in [0, 1), int(n) in [0, n). */
export function prng(seed) {
  let s = seed >>> 0 || 0x9e3779b9;
  const next = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s / 2 ** 32; };
  return { next, int: (n) => Math.floor(next() * n), pick: (a) => a[Math.floor(next() * a.length)] };
}

/** Values that sit on the edges of the checks. */
const INTERESTING = [0, 1, -1, 2, 3, 4, 7, 8, 16, 255, 256, 2 ** 16, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 40, 2 ** 53 - 1, 2 ** 53, 2 ** 53 + 2, -(2 ** 31), (1n << 63n) - 1n, -(1n << 63n)];
const OPS = ['Conv', 'ConvTranspose', 'Gemm', 'MatMul', 'Relu', 'Add', 'Mul', 'Concat', 'Split', 'Slice', 'Reshape', 'Flatten',
  'Transpose', 'Gather', 'BatchNormalization', 'GlobalAveragePool', 'Sigmoid', 'HardSwish', 'Identity', 'Cast', 'Squeeze',
  'Unsqueeze', 'Resize', 'MaxPool', 'Softmax', 'If', 'Loop', 'Constant', 'Pad', 'ReduceMean', 'LayerNormalization'];

/** Byte-level mutation of `b` (a Uint8Array); `other` is a second seed for splicing. */
export function mutateBytes(r, b, other) {
  const a = Array.from(b);
  const rounds = 1 + r.int(4);
  for (let k = 0; k < rounds; k++) {
    const at = a.length ? r.int(a.length) : 0;
    switch (r.int(9)) {
      case 0: if (a.length) a[at] ^= 1 << r.int(8); break;
      case 1: if (a.length) a[at] = r.pick([0, 0x7f, 0x80, 0xff, 0x01, 0x08, 0x0a, 0x12, 0x3a]); break;
      case 2: a.splice(at, 1 + r.int(Math.min(64, a.length - at || 1))); break;
      case 3: { const len = 1 + r.int(Math.min(32, a.length || 1)); a.splice(r.int(a.length + 1), 0, ...a.slice(at, at + len)); break; }
      case 4: a.length = r.int(a.length + 1); break;
      case 5: { // overwrite with a varint of an interesting value (shifts what follows)
        const v = varint(r.pick(INTERESTING));
        a.splice(at, 1 + r.int(3), ...v);
        break;
      }
      case 6: if (other?.length) { const o = Array.from(other); const cut = r.int(o.length); a.splice(at, a.length - at, ...o.slice(cut)); } break;
      case 7: a.splice(at, 0, ...Array.from({ length: 1 + r.int(8) }, () => r.int(256))); break;
      default: if (a.length > 1) { const j = r.int(a.length); [a[at], a[j]] = [a[j], a[at]]; }
    }
    if (a.length > 1 << 20) a.length = 1 << 20;
  }
  return Uint8Array.from(a);
}

const allGraphs = (g, out = []) => {
  out.push(g);
  for (const n of g.node) for (const a of n.attribute) { if (a.g) allGraphs(a.g, out); for (const s of a.graphs ?? []) allGraphs(s, out); }
  return out;
};

/**
 * Structure-aware mutation: decodes `b` with `ModelProto`, bends one thing a model promises
 * (dims, data length, names, order, attributes, external references, nesting) and re-encodes.
 * Returns undefined when `b` does not decode.
 */
export function mutateModel(r, b, ModelProto) {
  let m;
  try { m = ModelProto.toObject(ModelProto.decode(b), { longs: String, bytes: Array, defaults: false, arrays: true }); } catch { return undefined; }
  if (!m.graph) return undefined;
  const gs = allGraphs(m.graph.node ? m.graph : { ...m.graph, node: [] });
  const g = r.pick(gs);
  g.node ??= []; g.initializer ??= []; g.input ??= []; g.output ??= [];
  const names = [...new Set([...g.node.flatMap((n) => [...(n.input ?? []), ...(n.output ?? [])]), ...g.initializer.map((t) => t.name)])];
  const t = g.initializer.length ? r.pick(g.initializer) : undefined;
  const n = g.node.length ? r.pick(g.node) : undefined;
  const iv = () => String(r.pick(INTERESTING));
  switch (r.int(14)) {
    case 0: if (t) { t.dims = (t.dims ?? []).map(String); if (t.dims.length) t.dims[r.int(t.dims.length)] = iv(); else t.dims = [iv()]; } break;
    case 1: if (t) { if (r.next() < 0.5) (t.dims ??= []).push(String(r.pick([1, 2, 0, 3]))); else t.dims?.pop(); } break;
    case 2: if (t?.raw_data) { const d = r.int(9) - 4; t.raw_data = d < 0 ? t.raw_data.slice(0, Math.max(0, t.raw_data.length + d)) : [...t.raw_data, ...new Array(d).fill(0)]; } break;
    case 3: if (t) t.data_type = r.pick([1, 10, 16, 11, 7, 6, 0, 8, 99, 14, 21]); break;
    case 4: if (n?.input?.length && names.length) n.input[r.int(n.input.length)] = r.next() < 0.8 ? r.pick(names) : 'ghost'; break;
    case 5: if (n?.output?.length && names.length) n.output[r.int(n.output.length)] = r.pick(names); break;
    case 6: if (g.node.length > 1) { const i = r.int(g.node.length), j = r.int(g.node.length); [g.node[i], g.node[j]] = [g.node[j], g.node[i]]; } break;
    case 7: if (n) {
      const name = r.pick(['group', 'axis', 'perm', 'pads', 'kernel_shape', 'strides', 'transB', 'split', 'num_outputs', 'keepdims', 'axes', 'to']);
      (n.attribute ??= []).push(r.next() < 0.5 ? { name, type: 2, i: iv() } : { name, type: 7, ints: Array.from({ length: r.int(5) }, iv) });
      break;
    }
    case 8: if (n) n.op_type = r.pick(OPS); break;
    case 9: if (t) {
      t.data_location = 1;
      t.external_data = [{ key: 'location', value: r.pick(['w.bin', '', '../x', 'model.onnx']) }, { key: 'offset', value: iv() }, { key: 'length', value: iv() }];
      break;
    }
    case 10: { // the graph becomes the then-branch of an If whose else-branch is a copy
      const body = { ...m.graph, name: 'then' };
      const outs = (m.graph.output ?? []).map((o) => o.name);
      m.graph = {
        name: 'wrapped', input: [...(m.graph.input ?? []), { name: 'cond' }], output: m.graph.output,
        node: [{ op_type: 'If', input: ['cond'], output: outs, attribute: [{ name: 'then_branch', type: 5, g: body }, { name: 'else_branch', type: 5, g: { ...body, name: 'else' } }] }],
      };
      break;
    }
    case 11: if (g.node.length) g.node.splice(r.int(g.node.length), 1); break;
    case 12: if (t) g.initializer.push({ ...t }); break;
    default: if (n) (n.input ??= []).push(r.pick(names.length ? names : ['x']));
  }
  try { return ModelProto.encode(ModelProto.fromObject(m)).finish(); } catch { return undefined; }
}

/** A random small model written field by field: random ops over a small pool of names and tensors. */
export function generateModel(r) {
  const pool = ['x', 'a', 'b', 'c', 'd', 'e', 'W', 'B', 'S', 'y'];
  const nInits = r.int(4);
  const inits = [];
  for (let i = 0; i < nInits; i++) {
    const dims = Array.from({ length: r.int(5) }, () => (r.next() < 0.9 ? 1 + r.int(6) : r.pick(INTERESTING)));
    const numel = dims.reduce((p, d) => p * Number(d), 1);
    const dataType = r.pick([1, 1, 1, 10, 7, 6]);
    const esz = { 1: 4, 10: 2, 7: 8, 6: 4 }[dataType];
    const ok = Number.isSafeInteger(numel) && numel >= 0 && numel * esz < 4096;
    const len = ok && r.next() < 0.9 ? numel * esz : r.int(64);
    inits.push(tensor({ name: pool[6 + (i % 3)], dims, dataType, raw: rawFloats(Math.ceil(len / 4) || 0, i + 1).subarray(0, len) }));
  }
  const nodes = Array.from({ length: 1 + r.int(6) }, (_, i) => {
    const op = r.pick(OPS);
    const attrs = r.next() < 0.4 ? [{ name: r.pick(['group', 'axis', 'perm', 'transB', 'split']), ...(r.next() < 0.5 ? { i: r.pick(INTERESTING) } : { ints: [r.int(4), r.int(4)] }) }] : [];
    return node({ op, name: `n${i}`, inputs: Array.from({ length: 1 + r.int(3) }, () => r.pick(pool)), outputs: [r.next() < 0.8 ? pool[1 + i] ?? 'y' : r.pick(pool)], attrs });
  });
  const extra = r.next() < 0.2 ? f.len(1, node({ op: 'Relu', inputs: ['y'], outputs: ['z'] })) : [];
  return model({ graph: graph({ nodes, inits, inputs: [valueInfo('x', [1, 2, 4, 4])], outputs: [valueInfo(r.pick(pool), [1])], extra }) });
}
