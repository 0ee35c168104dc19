// The shapes of values the file does not record, as far as the analysis needs them: the rank, and
// the dimensions that are known numbers (a broadcast 1 above all). Exporters rarely write value_info:
// transformers' BERT reshapes q / k / v with a shape read from Shape(x) of a LayerNormalization output
// (its rank is needed to read that shape), and adds a mask whose head axis is 1 only because the mask
// is built as Expand(…, Where(Equal(shape, -1), 1, shape)). So small integer vectors are evaluated too,
// entry by entry (a known number, a dimension read at run time — never negative — or unknown).
// Anything not understood stays unknown; nothing here is trusted beyond what the ops define.
import { attr, attrInt, attrInts, toNum, type GraphProto, type NodeProto, type OnnxModel } from '../model.js';
import { forEachGraph } from './constants.js';
import type { ModelConstant } from './constants.js';
import { ELEMENTWISE_UNARY, ELEMENTWISE_BINARY, BROADCAST_ONLY, SHAPE_PRESERVING } from './elementwise-ops.js';

export type Dims = (number | undefined)[];
/** An integer vector entry: a known number, 'dim' (read from a shape at run time: >= 0), or unknown. */
type Entry = number | 'dim' | undefined;

/** Largest rank / vector length followed (anything longer is not a shape). */
const MAX_RANK = 64;

const UNARY = new Set<string>([...ELEMENTWISE_UNARY, ...SHAPE_PRESERVING]);
const BROADCAST = new Set<string>([...ELEMENTWISE_BINARY, ...BROADCAST_ONLY]);
/** INT8 … UINT64 (TensorProto data types 2-7, 12, 13). */
const INT_TYPES = new Set([2, 3, 4, 5, 6, 7, 12, 13]);
const INT_OPS: Record<string, (a: number, b: number) => number | undefined> = {
  Add: (a, b) => a + b, Sub: (a, b) => a - b, Mul: (a, b) => a * b,
  Div: (a, b) => (b === 0 ? undefined : Math.trunc(a / b)),
};

/** Multidirectional broadcasting; undefined when the ranks are not known. */
function broadcast(shapes: (Dims | undefined)[]): Dims | undefined {
  if (shapes.some((s) => !s)) return undefined;
  const rank = Math.max(...shapes.map((s) => s!.length));
  const out: Dims = [];
  for (let i = 0; i < rank; i++) {
    const ds = shapes.map((s) => { const k = i - (rank - s!.length); return k < 0 ? 1 : s![k]; });
    // A known dimension above 1 is the result's (a valid model broadcasts the others, 1 or equal, to it).
    const big = ds.find((d) => d !== undefined && d !== 1);
    out.push(big !== undefined ? big : ds.every((d) => d === 1) ? 1 : undefined);
  }
  return out;
}

const normalize = (a: number, rank: number) => (a < 0 ? a + rank : a);

export function inferShapes(model: OnnxModel, constants: Map<string, ModelConstant>, recorded: Map<string, Dims>): Map<string, Dims> {
  const shapes = new Map<string, Dims>(recorded);
  const ints = new Map<string, Entry[]>();
  for (const [name, c] of constants) {
    const dims = c.tensor.dims.map(toNum);
    if (!shapes.has(name)) shapes.set(name, dims);
    if ((c.tensor.data_type === 7 || c.tensor.data_type === 6) && dims.length <= 1 && (dims[0] ?? 1) <= MAX_RANK) {
      try { ints.set(name, model.readInts(c.tensor)); } catch { /* unreadable: unknown */ }
    }
  }
  const known = (e: Entry): number | undefined => (typeof e === 'number' ? e : undefined);
  const asDims = (v: Entry[]): Dims => v.map((e) => { const k = known(e); return k !== undefined && k >= 0 ? k : undefined; });
  const axesOf = (n: NodeProto, k: number): number[] | undefined => {
    const a = attrInts(n, 'axes');
    if (a) return a;
    const v = n.input[k] ? ints.get(n.input[k]) : undefined;
    return v && v.every((e) => typeof e === 'number') ? (v as number[]) : undefined;
  };

  const visit = (n: NodeProto) => {
    const op: string = n.op_type;
    if (n.domain && n.domain !== 'ai.onnx') return;
    const s = (k: number) => (n.input[k] ? shapes.get(n.input[k]) : undefined);
    const v = (k: number) => (n.input[k] ? ints.get(n.input[k]) : undefined);
    const x = s(0);
    let out: Dims | undefined;
    let vals: Entry[] | undefined;
    if (UNARY.has(op)) {
      out = x;
      vals = op === 'Identity' ? v(0) : op === 'Neg' ? v(0)?.map((e) => (known(e) === undefined ? undefined : -known(e)!)) : undefined;
      if (op === 'Cast') {
        // Integer to integer keeps the values; to bool they become 0 / 1; to float they stop being followed.
        const to = attrInt(n, 'to', 0);
        if (INT_TYPES.has(to)) vals = v(0);
        else if (to === 9) vals = v(0)?.map((e) => (known(e) === undefined ? undefined : known(e) !== 0 ? 1 : 0));
      }
    } else if (BROADCAST.has(op)) {
      out = broadcast(n.input.map((_: string, k: number) => s(k)));
      const ins = n.input.map((_: string, k: number) => v(k));
      if (out && out.length <= 1 && ins.every((e: Entry[] | undefined) => e)) {
        const len = out[0] ?? 1;
        const at = (e: Entry[], i: number) => (e.length === 1 ? e[0] : e[i]);
        if (len <= MAX_RANK && ins.every((e: Entry[]) => e.length === 1 || e.length === len)) {
          vals = Array.from({ length: len }, (_, i) => {
            const [a, b, c] = ins.map((e: Entry[]) => at(e, i));
            if (op === 'Where') return known(a) === undefined ? undefined : known(a) ? b : c;
            if (op === 'Equal') {
              // A run-time dimension is never negative.
              if (known(a) !== undefined && known(b) !== undefined) return a === b ? 1 : 0;
              if ((a === 'dim' && known(b)! < 0) || (b === 'dim' && known(a)! < 0)) return 0;
              return undefined;
            }
            const f = INT_OPS[op] as ((a: number, b: number) => number | undefined) | undefined;
            const r = f && known(a) !== undefined && known(b) !== undefined ? f(known(a)!, known(b)!) : undefined;
            return r !== undefined && Number.isSafeInteger(r) ? r : undefined;
          });
        }
      }
    } else {
      switch (op) {
        case 'Shape': {
          if (!x) break;
          const r = x.length;
          const start = Math.min(r, Math.max(0, normalize(attrInt(n, 'start', 0), r)));
          const end = Math.min(r, Math.max(0, normalize(attrInt(n, 'end', r), r)));
          vals = x.slice(start, Math.max(start, end)).map((d) => (d === undefined ? 'dim' : d));
          out = [vals.length];
          break;
        }
        case 'Size': out = []; break;
        case 'Gather': {
          const idx = s(1);
          if (!x || !idx) break;
          const axis = normalize(attrInt(n, 'axis', 0), x.length);
          if (axis < 0 || axis >= x.length) break;
          out = [...x.slice(0, axis), ...idx, ...x.slice(axis + 1)];
          const data = v(0), iv = v(1);
          if (data && iv && x.length === 1 && idx.length <= 1) {
            vals = iv.map((i) => { const k = known(i); return k === undefined ? undefined : data[k < 0 ? k + data.length : k]; });
          }
          break;
        }
        case 'Unsqueeze': case 'Squeeze': {
          const axes = axesOf(n, 1);
          if (!x) break;
          if (op === 'Unsqueeze') {
            if (!axes) break;
            const r = x.length + axes.length;
            const at = new Set(axes.map((a) => normalize(a, r)));
            const rest = [...x];
            out = Array.from({ length: r }, (_, i) => (at.has(i) ? 1 : rest.shift()));
            if (at.size !== axes.length || rest.length) out = undefined;
          } else {
            const at = axes ? new Set(axes.map((a) => normalize(a, x.length))) : undefined;
            if (!at && x.some((d) => d === undefined)) break;
            out = x.filter((d, i) => (at ? !at.has(i) : d !== 1));
          }
          vals = v(0);
          break;
        }
        case 'Reshape': {
          const shape = v(1);
          if (!shape) break;
          const allowZero = attrInt(n, 'allowzero', 0) === 1;
          out = shape.map((e, i) => { const k = known(e); return k === undefined || k < 0 ? undefined : k === 0 && !allowZero ? x?.[i] : k; });
          const inferAt = shape.findIndex((e) => e === -1);
          if (inferAt >= 0 && x && x.every((d) => d !== undefined) && out.every((d, i) => i === inferAt || d !== undefined)) {
            const total = x.reduce((a, b) => a! * b!, 1)!, rest = out.reduce((a: number, d, i) => (i === inferAt ? a : a * d!), 1);
            if (rest > 0 && Number.isSafeInteger(total) && total % rest === 0) out[inferAt] = total / rest;
          }
          vals = v(0);
          break;
        }
        case 'Flatten': {
          if (!x) break;
          const axis = normalize(attrInt(n, 'axis', 1), x.length);
          const prod = (d: Dims) => { const p = d.every((e) => e !== undefined) ? d.reduce((a, b) => a! * b!, 1) : undefined; return p !== undefined && Number.isSafeInteger(p) ? p : undefined; };
          out = [prod(x.slice(0, axis)), prod(x.slice(axis))];
          break;
        }
        case 'Concat': {
          const ins = n.input.map((_: string, k: number) => s(k));
          if (ins.some((d: Dims | undefined) => !d || d.length !== ins[0]!.length) || !ins.length) break;
          const axis = normalize(attrInt(n, 'axis', 0), ins[0]!.length);
          out = ins[0]!.map((_: unknown, i: number) => (i === axis
            ? ins.reduce((a: number | undefined, d: Dims) => (a === undefined || d[i] === undefined ? undefined : a + d[i]!), 0)
            : ins.map((d: Dims) => d[i]).reduce((a: number | undefined, b: number | undefined) => a ?? b)));
          const parts = n.input.map((_: string, k: number) => v(k));
          if (ins[0]!.length === 1 && parts.every((p: Entry[] | undefined) => p)) vals = parts.flat();
          break;
        }
        case 'Transpose': {
          if (!x) break;
          const perm = attrInts(n, 'perm') ?? x.map((_, i) => x.length - 1 - i);
          if (perm.length === x.length) out = perm.map((p) => x[p]);
          break;
        }
        case 'MatMul': {
          const b = s(1);
          if (!x || !b || x.length < 2 || b.length < 2) break;
          const batch = broadcast([x.slice(0, -2), b.slice(0, -2)]);
          out = [...batch!, x[x.length - 2], b[b.length - 1]];
          break;
        }
        case 'Gemm': {
          const b = s(1);
          if (!x || !b || x.length !== 2 || b.length !== 2) break;
          out = [attrInt(n, 'transA', 0) ? x[1] : x[0], attrInt(n, 'transB', 0) ? b[0] : b[1]];
          break;
        }
        case 'Expand': {
          const shape = v(1);
          if (x && shape) out = broadcast([x, asDims(shape)]);
          break;
        }
        case 'ConstantOfShape': {
          const shape = v(0);
          if (!shape) break;
          out = asDims(shape);
          const fill = attr(n, 'value')?.t;
          let f: number | undefined = 0;
          if (fill && (fill.data_type === 7 || fill.data_type === 6)) { try { f = model.readInts(fill)[0]; } catch { f = undefined; } }
          else if (fill) f = undefined;
          if (out.length === 1 && out[0] !== undefined && out[0] <= MAX_RANK) vals = Array.from({ length: out[0] }, () => f);
          break;
        }
        case 'Range': out = [undefined]; break;
        case 'GatherElements': out = s(1); break;
        case 'Split': {
          if (!x) break;
          n.output.forEach((o: string) => { if (o) shapes.set(o, x.map((d, i) => (i === normalize(attrInt(n, 'axis', 0), x.length) ? undefined : d))); });
          return;
        }
        case 'Slice': {
          if (!x) break;
          const axes = n.input[3] ? axesOf(n, 3) : x.map((_, i) => i);
          if (!axes) { out = x.map(() => undefined); break; }
          const cut = new Set(axes.map((a) => normalize(a, x.length)));
          out = x.map((d, i) => (cut.has(i) ? undefined : d));
          const data = v(0), st = v(1), en = v(2);
          if (data && x.length === 1 && st?.length === 1 && en?.length === 1 && (!n.input[4] || v(4)?.[0] === 1)) {
            const L = data.length, c = (e: number) => Math.min(L, Math.max(0, e < 0 ? e + L : e));
            if (known(st[0]) !== undefined && known(en[0]) !== undefined) { vals = data.slice(c(known(st[0])!), c(known(en[0])!)); out = [vals.length]; }
          }
          break;
        }
        case 'Conv': case 'ConvTranspose': case 'MaxPool': case 'AveragePool': case 'LpPool': case 'Resize': case 'Upsample': case 'Pad':
        case 'GlobalAveragePool': case 'GlobalMaxPool': case 'Tile':
          // The rank stays; sizes other than the batch are not computed here.
          if (x) out = x.map((d, i) => (i === 0 ? d : undefined));
          break;
        default: break;
      }
    }
    if (out && out.length <= MAX_RANK && n.output[0]) {
      // A recorded shape wins; its unknown dimensions are filled from what was inferred.
      const rec = shapes.get(n.output[0]);
      shapes.set(n.output[0], rec ? (rec.length === out.length ? rec.map((d, i) => d ?? out![i]) : rec) : out);
    }
    if (vals && vals.length <= MAX_RANK && n.output[0]) ints.set(n.output[0], vals);
  };
  forEachGraph(model, (g: GraphProto) => { for (const n of g.node) visit(n); });
  return shapes;
}
