// Structured channel removal. Output channels of Conv / Gemm / MatMul producers are followed through
// the graph; every tensor slice that must go with a channel (its filter, bias, BN parameters,
// per-channel constants, the consumers' input slices, a Reshape's channel count) is a member of it.
// Channels tied together (residual Add/Mul, depthwise Conv) merge; a group is a set of channels that
// compete, scored with BlockCoupling norms over all members and ranked with ScopeSpec / ScopeCoupling.
// Removing a channel deletes its slices everywhere, so the file shrinks and the model runs faster.
// Anything not understood keeps its group whole (with the reason): never a broken graph.
import * as sk from 'sparsekit-wasm';
import { OnnxModel, ModelProto, DT, attr, attrInt, attrInts, toNum, type NodeProto, type TensorProto } from './model.js';
import { OnnxError } from './errors.js';
import { checkSparsity, layerReport, type LayerReport, type ProgressFn, type PruneReport } from './prune.js';

/** A tensor slice that goes with one channel: positions [pos, pos + rep) of `axis` of `tensor`. */
export interface Slice {
  tensor: string;
  axis: number;
  pos: number;
  rep: number;
  /**
   * 'weight': float data sliced and scored; 'stat': sliced, not scored (BN running mean / variance:
   * not weights, and their scale would swamp the norms); 'shape': an int shape constant whose entry
   * `axis` counts channels.
   */
  kind: 'weight' | 'stat' | 'shape';
  /** The producer's own filter slice: what 'mask' zeroes (the channel then outputs a constant). */
  filter?: boolean;
  /** A depthwise Conv's slice of the channel (scored: the channel's signal goes through it). */
  dw?: boolean;
  /** A consumer's input slice: the removed channel's constant is folded into that consumer's bias. */
  fold?: Fold;
}

/** Where a removed channel's constant output goes: into the bias of `node` (a Conv / Gemm / MatMul). */
export interface Fold {
  node: NodeProto;
  weight: string;
  /** The weight axis of the consumer's outputs (its bias index). */
  outAxis: number;
  /** Scale of the product (Gemm alpha / beta). */
  scale: number;
  /** The channel's value when its producers' filters are zero; undefined when it cannot be told. */
  value: () => number | undefined;
}

/** The channels a value carries along one axis. */
interface Track {
  ids: number[];
  /** Channel axis: >= 0 when the rank is known, else negative (from the end). */
  axis: number;
  rank?: number;
  /** Channel c spans positions [c·rep, (c+1)·rep) of the axis (after a Flatten); 1 otherwise. */
  rep: number;
  /** Set by Flatten / Reshape(N, -1): rep is resolved by the consumer's K. */
  flat?: boolean;
  /** Channel c's (spatially constant) value when its producers' filters are zero. */
  cv?: (c: number) => number | undefined;
}

/** A member of a group as reported: tensor and axis. */
export interface GroupMember {
  tensor: string;
  axis: number;
  kind: 'weight' | 'stat' | 'shape';
}

/** A dependency group: channels that are removed together, in `channels` competing units. */
export interface ChannelGroup {
  id: number;
  /** The producers whose output channels this group holds. */
  producers: string[];
  channels: number;
  members: GroupMember[];
  prunable: boolean;
  /** Why the group is kept whole (when not prunable). */
  reason?: string;
}

export interface ChannelAnalysis {
  groups: ChannelGroup[];
  /** Channel ids (roots) per group, in order, and their slices: internal to removeChannels. */
  channelsOf: Map<number, { root: number; slices: Slice[] }[]>;
  /** Depthwise Convs and their weight: `group` follows the weight's channel count. */
  depthwise: { node: NodeProto; weight: string }[];
}

export interface ChannelOptions {
  /** Fraction of channels to remove per group (scope 'layer') or over the model ('global'), in [0, 1). */
  fraction: number;
  scope?: 'layer' | 'global';
  /**
   * Kept channels per group rounded to the nearest multiple of this (default 8; 1 = exact). Runtimes
   * block channels by 8 or 16 for SIMD (onnxruntime's NCHWc layout): a Conv left with, say, 33
   * channels falls off that fast path and can run slower than the unpruned model.
   */
  roundTo?: number;
  /** Only groups this accepts are pruned (default: every prunable group). */
  filter?: (group: ChannelGroup) => boolean;
  /**
   * 'remove' (default) deletes the channels and folds their constant output into the consumers' biases;
   * 'mask' does the same folding but zeroes every slice instead of deleting it (shapes kept: the same
   * function as 'remove'); 'constant' only zeroes the producers' filters, so each removed channel outputs
   * the constant that 'remove' folds (equal to 'remove' where the fold is exact).
   */
  apply?: 'remove' | 'mask' | 'constant';
  /** Fold removed channels' constants into the consumers' biases (default true; false: they read zero). */
  fold?: boolean;
  /**
   * The decision, per group id: 1 keeps a channel (as planChannels returns it). Groups without an
   * entry are scored as usual. Calibration decides first, changes the consumers, then removes.
   */
  keep?: Map<number, Uint8Array>;
  /**
   * Scoring weights of the consumers' input slices, per consumer weight name: a factor per position
   * along the slice's axis (e.g. the RMS of that input channel: activation-aware scores).
   */
  inputScale?: Map<string, ArrayLike<number>>;
  /**
   * Added to a consumer's bias with the removal, per consumer weight name: one value per output, in
   * the units of the weight times its input (scaled like the folded constants: Gemm alpha / beta).
   * Calibration puts the measured mean of what the consumer loses there.
   */
  biasShift?: Map<string, ArrayLike<number>>;
  onProgress?: ProgressFn;
}

const UNARY = new Set(['Relu', 'LeakyRelu', 'Sigmoid', 'HardSigmoid', 'HardSwish', 'Tanh', 'Clip', 'Elu', 'Selu',
  'Softplus', 'Softsign', 'Exp', 'Log', 'Abs', 'Neg', 'Sqrt', 'Erf', 'Gelu', 'Mish', 'Identity', 'Dropout', 'Cast',
  'Floor', 'Ceil', 'Round', 'Reciprocal', 'Sin', 'Cos', 'ThresholdedRelu', 'Celu', 'Swish']);
const POOL = new Set(['MaxPool', 'AveragePool', 'GlobalAveragePool', 'GlobalMaxPool', 'LpPool', 'GlobalLpPool']);
const BINARY = new Set(['Add', 'Sub', 'Mul', 'Div', 'Max', 'Min', 'Pow', 'PRelu', 'Sum']);
const prod = (d: number[]) => d.reduce((a, b) => a * b, 1);
const erf = (x: number) => { // Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7)
  const t = 1 / (1 + 0.3275911 * Math.abs(x));
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return x < 0 ? -y : y;
};

/** A string attribute (bytes in the proto). */
function attrStr(n: NodeProto, name: string): string {
  const s = attr(n, name)?.s;
  return s === undefined ? '' : typeof s === 'string' ? s : new TextDecoder().decode(s);
}

/** The scalar function of an elementwise op (for a removed channel's constant), or undefined. */
function unaryFn(n: NodeProto, clip: [number, number]): ((v: number) => number) | undefined {
  const a = (name: string, d: number) => { const x = attr(n, name); return x ? x.f : d; };
  switch (n.op_type) {
    case 'Relu': return (v) => Math.max(0, v);
    case 'LeakyRelu': { const al = a('alpha', 0.01); return (v) => (v < 0 ? al * v : v); }
    case 'Sigmoid': return (v) => 1 / (1 + Math.exp(-v));
    case 'HardSigmoid': { const al = a('alpha', 0.2), be = a('beta', 0.5); return (v) => Math.min(1, Math.max(0, al * v + be)); }
    case 'HardSwish': return (v) => v * Math.min(1, Math.max(0, v / 6 + 0.5));
    case 'Tanh': return Math.tanh;
    case 'Clip': return (v) => Math.min(clip[1], Math.max(clip[0], v));
    case 'Elu': { const al = a('alpha', 1); return (v) => (v < 0 ? al * (Math.exp(v) - 1) : v); }
    case 'Selu': { const al = a('alpha', 1.67326319217681884765625), g = a('gamma', 1.05070102214813232421875); return (v) => g * (v < 0 ? al * (Math.exp(v) - 1) : v); }
    case 'Softplus': return (v) => Math.log1p(Math.exp(v));
    case 'Softsign': return (v) => v / (1 + Math.abs(v));
    case 'Exp': return Math.exp;
    case 'Log': return Math.log;
    case 'Abs': return Math.abs;
    case 'Neg': return (v) => -v;
    case 'Sqrt': return Math.sqrt;
    case 'Erf': return erf;
    case 'Gelu': return (v) => 0.5 * v * (1 + erf(v / Math.SQRT2));
    case 'Mish': return (v) => v * Math.tanh(Math.log1p(Math.exp(v)));
    case 'Identity': case 'Dropout': case 'Cast': return (v) => v;
    case 'Floor': return Math.floor;
    case 'Ceil': return Math.ceil;
    case 'Round': return (v) => { const r = Math.round(v); return Math.abs(v % 1) === 0.5 && r % 2 ? r - 1 : r; };
    case 'Reciprocal': return (v) => 1 / v;
    case 'Sin': return Math.sin;
    case 'Cos': return Math.cos;
    case 'ThresholdedRelu': { const al = a('alpha', 1); return (v) => (v > al ? v : 0); }
    case 'Celu': { const al = a('alpha', 1); return (v) => Math.max(0, v) + Math.min(0, al * (Math.exp(v / al) - 1)); }
    case 'Swish': { const al = a('alpha', 1); return (v) => v / (1 + Math.exp(-al * v)); }
    default: return undefined;
  }
}

function binaryFn(op: string): ((a: number, b: number) => number) | undefined {
  switch (op) {
    case 'Add': case 'Sum': return (a, b) => a + b;
    case 'Sub': return (a, b) => a - b;
    case 'Mul': return (a, b) => a * b;
    case 'Div': return (a, b) => a / b;
    case 'Max': return Math.max;
    case 'Min': return Math.min;
    case 'Pow': return Math.pow;
    case 'PRelu': return (a, b) => (a < 0 ? a * b : a);
    default: return undefined;
  }
}

/** Finds the dependency groups of a model (no change to it). */
export function findChannelGroups(model: OnnxModel): ChannelAnalysis {
  const g = model.graph;
  const consts = model.constants();
  const producerOf = new Map<string, NodeProto>();
  const consumers = new Map<string, NodeProto[]>();
  for (const n of g.node) {
    for (const o of n.output) producerOf.set(o, n);
    for (const i of n.input) if (i) (consumers.get(i) ?? consumers.set(i, []).get(i)!).push(n);
  }
  const nodeName = (n: NodeProto) => n.name || `${n.op_type}(${n.output[0]})`;

  // A constant, looked up through Cast / Identity (float16 weights cast to float).
  const constOf = (name: string): { name: string; t: TensorProto } | undefined => {
    for (let d = 0; d < 3; d++) {
      const c = consts.get(name);
      if (c) return { name, t: c.tensor };
      const p = producerOf.get(name);
      if (!p || (p.op_type !== 'Cast' && p.op_type !== 'Identity')) return undefined;
      name = p.input[0];
    }
    return undefined;
  };
  const dimsOf = (t: TensorProto): number[] => t.dims.map(toNum);

  // Union-find over channel ids; every id belongs to one space (a producer's output).
  const parent: number[] = [];
  const slices: Slice[][] = [];
  const blocked: (string | undefined)[] = [];
  const spaceOf: number[] = [];
  const spaceParent: number[] = [];
  const spaceNames: string[][] = [];
  const find = (x: number): number => { while (parent[x] !== x) { parent[x] = parent[parent[x]]; x = parent[x]; } return x; };
  const findS = (x: number): number => { while (spaceParent[x] !== x) { spaceParent[x] = spaceParent[spaceParent[x]]; x = spaceParent[x]; } return x; };
  const newSpace = (count: number, name: string, block?: string): number[] => {
    const s = spaceParent.length;
    spaceParent.push(s);
    spaceNames.push([name]);
    return Array.from({ length: count }, () => {
      const id = parent.length;
      parent.push(id); slices.push([]); blocked.push(block); spaceOf.push(s);
      return id;
    });
  };
  const union = (a: number, b: number) => {
    const ra = find(a), rb = find(b);
    if (ra !== rb) {
      parent[rb] = ra;
      slices[ra].push(...slices[rb]);
      blocked[ra] ??= blocked[rb];
    }
    const sa = findS(spaceOf[a]), sb = findS(spaceOf[b]);
    if (sa !== sb) { spaceParent[sb] = sa; spaceNames[sa].push(...spaceNames[sb]); }
  };
  const block = (tr: Track | undefined, why: string) => { if (tr) for (const id of tr.ids) blocked[find(id)] ??= why; };
  // The nodes through which each member tensor is used by its groups.
  const memberUses = new Map<string, Set<NodeProto>>();
  let current: NodeProto = null;
  const addSlices = (tr: Track, tensor: string, axis: number, kind: Slice['kind'] = 'weight', rep = tr.rep, extra?: (c: number) => Partial<Slice>) => {
    tr.ids.forEach((id, c) => slices[find(id)].push({ tensor, axis, pos: c * rep, rep, kind, ...extra?.(c) }));
    (memberUses.get(tensor) ?? memberUses.set(tensor, new Set()).get(tensor)!).add(current);
  };

  // Float values of constants, read lazily (for the constants of removed channels).
  const valCache = new Map<string, Float32Array>();
  const vals = (name: string) => valCache.get(name) ?? valCache.set(name, model.readFloat(consts.get(name)!.tensor)).get(name)!;
  const foldInto = (tr: Track, node: NodeProto, weight: string, outAxis: number, scale = 1) =>
    (c: number): Partial<Slice> => ({ fold: { node, weight, outAxis, scale, value: () => tr.cv?.(c) } });
  const tracks = new Map<string, Track>();
  const depthwise: { node: NodeProto; weight: string }[] = [];
  const negAxis = (t: Track) => (t.axis < 0 ? t.axis : t.rank !== undefined ? t.axis - t.rank : undefined);
  const posAxis = (t: Track) => (t.axis >= 0 ? t.axis : t.rank !== undefined ? t.rank + t.axis : undefined);

  for (const n of g.node) {
    current = n;
    const op = n.op_type;
    const ins: (Track | undefined)[] = n.input.map((i: string) => tracks.get(i));
    const x = ins[0];
    const out = n.output[0];
    const why = `${op} ${nodeName(n)} is not handled`;
    const blockAll = (reason = why) => ins.forEach((t) => block(t, reason));
    if (n.domain && n.domain !== 'ai.onnx') { blockAll(`custom op ${n.domain}:${op}`); continue; }

    if (op === 'Conv' || op === 'ConvTranspose') {
      const w = constOf(n.input[1]);
      const b = n.input[2] ? constOf(n.input[2]) : undefined;
      if (!w || (n.input[2] && !b)) { blockAll(`${op} ${nodeName(n)} has a computed weight or bias`); continue; }
      ins.slice(1).forEach((t) => block(t, `${op} ${nodeName(n)} reads it as weight`));
      const wd = dimsOf(w.t);
      const group = attrInt(n, 'group', 1);
      const rank = wd.length;
      const xok = x && !x.flat && posAxis(x) === 1 && x.rep === 1;
      if (x && !xok) block(x, `${op} ${nodeName(n)} reads it along another axis`);
      if (op === 'ConvTranspose') {
        // Weight (C_in, C_out / group, kh, kw): input channels on axis 0, output channels on axis 1.
        if (group !== 1 || attr(n, 'output_shape')) {
          block(x, `ConvTranspose ${nodeName(n)} with groups or an explicit output shape`);
          tracks.set(out, { ids: newSpace(wd[1] * group, nodeName(n), `ConvTranspose ${nodeName(n)} with groups or an explicit output shape`), axis: 1, rank, rep: 1 });
          continue;
        }
        if (xok) {
          if (x!.ids.length === wd[0]) addSlices(x!, w.name, 0, 'weight', 1, foldInto(x!, n, w.name, 1));
          else block(x, `ConvTranspose ${nodeName(n)} expects ${wd[0]} input channels, the graph gives ${x!.ids.length}`);
        }
        const tr: Track = { ids: newSpace(wd[1], nodeName(n)), axis: 1, rank, rep: 1, cv: (c) => (b ? vals(b.name)[c] : 0) };
        addSlices(tr, w.name, 1, 'weight', 1, () => ({ filter: true }));
        if (b) addSlices(tr, b.name, 0);
        tracks.set(out, tr);
        continue;
      }
      if (group === 1) {
        if (xok) {
          if (x!.ids.length === wd[1]) addSlices(x!, w.name, 1, 'weight', 1, foldInto(x!, n, w.name, 0));
          else block(x, `Conv ${nodeName(n)} expects ${wd[1]} input channels, the graph gives ${x!.ids.length}`);
        }
        const tr: Track = { ids: newSpace(wd[0], nodeName(n)), axis: 1, rank, rep: 1, cv: (c) => (b ? vals(b.name)[c] : 0) };
        addSlices(tr, w.name, 0, 'weight', 1, () => ({ filter: true }));
        if (b) addSlices(tr, b.name, 0);
        tracks.set(out, tr);
      } else if (wd[1] === 1 && wd[0] === group && xok && x!.ids.length === group) {
        // Depthwise: output channel c is input channel c.
        depthwise.push({ node: n, weight: w.name });
        const per = prod(wd.slice(1));
        // With zero padding a constant input gives a constant output only away from the borders; on
        // the small maps of late stages every position is near a border, so the channel is no longer
        // a constant there (measured: folding its interior value broke PaddleOCR rec). Not folded.
        const padded = per > 1 && ((attrInts(n, 'pads') ?? []).some((p) => p !== 0) || /^SAME/.test(attrStr(n, 'auto_pad')));
        const tr: Track = {
          ids: x!.ids.slice(), axis: 1, rank, rep: 1,
          cv: (c) => {
            const v = padded ? undefined : x!.cv?.(c);
            if (v === undefined) return undefined;
            let s = 0;
            for (let k = 0; k < per; k++) s += vals(w.name)[c * per + k];
            return v * s + (b ? vals(b.name)[c] : 0);
          },
        };
        addSlices(tr, w.name, 0, 'weight', 1, () => ({ dw: true }));
        if (b) addSlices(tr, b.name, 0);
        tracks.set(out, tr);
      } else {
        block(x, `grouped Conv ${nodeName(n)} (group ${group})`);
        tracks.set(out, { ids: newSpace(wd[0], nodeName(n), `grouped Conv ${nodeName(n)} (group ${group})`), axis: 1, rank, rep: 1 });
      }
      continue;
    }

    if (op === 'Gemm' || op === 'MatMul') {
      const w = constOf(n.input[1]);
      const wd = w ? dimsOf(w.t) : [];
      if (!w || wd.length !== 2 || (op === 'Gemm' && attrInt(n, 'transA', 0))) {
        blockAll(`${op} ${nodeName(n)} without a constant 2-D weight`);
        continue;
      }
      block(ins[1], `${op} ${nodeName(n)} reads it as weight`);
      const transB = op === 'Gemm' && attrInt(n, 'transB', 0) === 1;
      const kAxis = transB ? 1 : 0;
      const K = wd[kAxis], N = wd[1 - kAxis];
      const alpha = op === 'Gemm' ? (attr(n, 'alpha')?.f ?? 1) : 1;
      const beta = op === 'Gemm' ? (attr(n, 'beta')?.f ?? 1) : 1;
      if (x) {
        const lastAxis = negAxis(x) === -1 && (op === 'MatMul' || x.rank === undefined || x.rank === 2);
        if (!lastAxis) block(x, `${op} ${nodeName(n)} reads it along another axis`);
        else if (x.flat && K % x.ids.length === 0) {
          addSlices(x, w.name, kAxis, 'weight', K / x.ids.length, foldInto(x, n, w.name, 1 - kAxis, beta ? alpha / beta : NaN));
        } else if (!x.flat && x.ids.length * x.rep === K) {
          addSlices(x, w.name, kAxis, 'weight', x.rep, foldInto(x, n, w.name, 1 - kAxis, beta ? alpha / beta : NaN));
        } else block(x, `${op} ${nodeName(n)}: ${K} inputs do not match ${x.ids.length} channels`);
      }
      let c: { name: string; t: TensorProto } | undefined;
      if (op === 'Gemm' && n.input[2]) {
        c = constOf(n.input[2]);
        const cd = c ? dimsOf(c.t) : [];
        if (!c || !(cd.length === 1 && cd[0] === N) && !(cd.length === 2 && cd[0] === 1 && cd[1] === N)) {
          block(ins[2], `Gemm ${nodeName(n)} bias`);
          tracks.set(out, { ids: newSpace(N, nodeName(n), `Gemm ${nodeName(n)} has a bias that is not per output`), axis: -1, rank: 2, rep: 1 });
          continue;
        }
      }
      const rank = op === 'Gemm' ? 2 : x?.rank;
      const cvals = c ? c.name : undefined;
      const tr: Track = { ids: newSpace(N, nodeName(n)), axis: rank !== undefined ? rank - 1 : -1, rank, rep: 1, cv: (k) => (cvals ? beta * vals(cvals)[k] : 0) };
      addSlices(tr, w.name, 1 - kAxis, 'weight', 1, () => ({ filter: true }));
      if (c) addSlices(tr, c.name, dimsOf(c.t).length - 1);
      tracks.set(out, tr);
      continue;
    }

    if (op === 'BatchNormalization' || op === 'InstanceNormalization') {
      if (!x || x.flat || posAxis(x) !== 1) { blockAll(); continue; }
      const params = n.input.slice(1).map((p: string) => constOf(p));
      if (params.some((p: { t: TensorProto } | undefined) => !p || dimsOf(p.t).length !== 1 || dimsOf(p.t)[0] !== x.ids.length)) {
        blockAll(`${op} ${nodeName(n)} with computed or mis-shaped parameters`);
        continue;
      }
      const pn = params.map((p: { name: string }) => p.name);
      const eps = attr(n, 'epsilon')?.f ?? 1e-5;
      params.forEach((p: { name: string } | undefined, k: number) => addSlices(x, p!.name, 0, k >= 2 ? 'stat' : 'weight'));
      // A constant channel stays constant: BN maps it, InstanceNormalization sends it to its bias.
      tracks.set(out, { ...x, cv: op === 'InstanceNormalization' ? (c) => vals(pn[1])[c] : (c) => {
        const v = x.cv?.(c);
        return v === undefined ? undefined : ((v - vals(pn[2])[c]) / Math.sqrt(vals(pn[3])[c] + eps)) * vals(pn[0])[c] + vals(pn[1])[c];
      } });
      continue;
    }

    if (UNARY.has(op) || POOL.has(op)) {
      ins.slice(1).forEach((t) => block(t, why));
      if (!x) continue;
      if (POOL.has(op) || op === 'Identity' || op === 'Dropout') { tracks.set(out, x); continue; }
      let clip: [number, number] = [attr(n, 'min')?.f ?? -Infinity, attr(n, 'max')?.f ?? Infinity];
      if (op === 'Clip' && n.input.length > 1) {
        const lo = n.input[1] ? constOf(n.input[1]) : undefined, hi = n.input[2] ? constOf(n.input[2]) : undefined;
        const known = (!n.input[1] || lo) && (!n.input[2] || hi);
        clip = known ? [lo ? model.readFloat(lo.t)[0] : -Infinity, hi ? model.readFloat(hi.t)[0] : Infinity] : [NaN, NaN];
      }
      const f = Number.isNaN(clip[0]) ? undefined : unaryFn(n, clip);
      tracks.set(out, { ...x, cv: (c) => { const v = x.cv?.(c); return v === undefined || !f ? undefined : f(v); } });
      continue;
    }

    if (op === 'Resize' || op === 'Upsample') {
      ins.slice(1).forEach((t) => block(t, why));
      const sizes = op === 'Resize' && n.input[3] ? n.input[3] : undefined;
      if (sizes && x) { block(x, `Resize ${nodeName(n)} with explicit sizes`); continue; }
      if (x) tracks.set(out, x);
      continue;
    }

    if (op === 'Pad') {
      if (!x) continue;
      const pc = n.input[1] ? constOf(n.input[1]) : undefined;
      const pads = pc ? model.readInts(pc.t) : attrInts(n, 'pads');
      const pa = posAxis(x);
      const r = pads ? pads.length / 2 : undefined;
      if (!pads || pa === undefined || n.input[3] || pads[pa] !== 0 || pads[pa + r!] !== 0) {
        block(x, `Pad ${nodeName(n)} may pad the channel axis`);
        continue;
      }
      tracks.set(out, x);
      continue;
    }

    if (BINARY.has(op)) {
      const tracked = ins.filter((t): t is Track => !!t);
      if (!tracked.length) continue;
      if (op === 'Pow' && ins[1]) { blockAll(`Pow ${nodeName(n)} with a channel exponent`); continue; }
      const lead = tracked.reduce((a, b) => (b.ids.length > a.ids.length ? b : a));
      const na = negAxis(lead);
      if (lead.flat || na === undefined) { blockAll(`${op} ${nodeName(n)} on a value of unknown rank`); continue; }
      let ok = true;
      n.input.forEach((name: string, k: number) => {
        const t = ins[k];
        if (t === lead) return;
        if (t) {
          if (t.ids.length === lead.ids.length && negAxis(t) === na && !t.flat) t.ids.forEach((id, c) => union(id, lead.ids[c]));
          else if (t.ids.length === 1) block(t, `${op} ${nodeName(n)} broadcasts a single channel`);
          else { block(t, `${op} ${nodeName(n)} mixes channel layouts`); ok = false; }
          return;
        }
        const c = constOf(name);
        if (!c) { ok = false; return; }
        const cd = dimsOf(c.t);
        const ca = cd.length + na;
        if (ca < 0 || cd[ca] === 1) return;
        if (cd[ca] === lead.ids.length) addSlices(lead, c.name, ca);
        else ok = false;
      });
      if (!ok) { blockAll(`${op} ${nodeName(n)} combines the channels with a value that is not per channel`); continue; }
      // Channel c of each operand: a followed value's constant, or the constant operand at c (or its one value).
      const f = binaryFn(op);
      const operand = n.input.map((name: string, k: number): ((c: number) => number | undefined) => {
        const t = ins[k];
        if (t) return (c) => t.cv?.(c);
        const cn = constOf(name);
        if (!cn) return () => undefined;
        const cd = dimsOf(cn.t);
        const ca = cd.length + na;
        if (prod(cd) === 1) return () => vals(cn.name)[0];
        if (ca >= 0 && cd[ca] === lead.ids.length && prod(cd) === cd[ca]) return (c) => vals(cn.name)[c];
        return () => undefined;
      });
      tracks.set(out, { ...lead, cv: (c) => {
        if (!f) return undefined;
        let acc: number | undefined;
        for (const g of operand) {
          const v = g(c);
          if (v === undefined) return undefined;
          acc = acc === undefined ? v : f(acc, v);
        }
        return acc;
      } });
      continue;
    }

    if (op === 'Concat') {
      const axis = attrInt(n, 'axis', 0);
      if (!x || ins.some((t) => !t || t.flat || t.rep !== 1)) { blockAll(`Concat ${nodeName(n)} with an input whose channels are not followed`); continue; }
      const ax0 = axis < 0 ? negAxis(x) : posAxis(x);
      if (ins.some((t) => (axis < 0 ? negAxis(t!) : posAxis(t!)) !== ax0)) { blockAll(`Concat ${nodeName(n)} of inputs with different channel axes`); continue; }
      if (ax0 === axis) {
        const offs = ins.map((t) => t!.ids.length);
        tracks.set(out, { ids: ins.flatMap((t) => t!.ids), axis: x.axis, rank: x.rank, rep: 1, cv: (c) => {
          for (let k = 0; k < ins.length; k++) { if (c < offs[k]) return ins[k]!.cv?.(c); c -= offs[k]; }
          return undefined;
        } });
      } else {
        // Concatenated along another axis: the inputs share their channels.
        if (ins.some((t) => t!.ids.length !== x.ids.length)) { blockAll(); continue; }
        for (const t of ins.slice(1)) t!.ids.forEach((id, c) => union(id, x.ids[c]));
        tracks.set(out, { ...x, cv: (c) => {
          const v = ins.map((t) => t!.cv?.(c));
          return v.every((y) => y !== undefined && y === v[0]) ? v[0] : undefined;
        } });
      }
      continue;
    }

    if (op === 'Transpose') {
      const perm = attrInts(n, 'perm');
      if (!x) continue;
      const pa = posAxis(x);
      if (!perm || pa === undefined || x.flat) { block(x, `Transpose ${nodeName(n)} without a known permutation of the channel axis`); continue; }
      tracks.set(out, { ...x, axis: perm.indexOf(pa), rank: perm.length });
      continue;
    }

    if (op === 'Flatten' || op === 'Reshape') {
      if (!x) continue;
      const pa = posAxis(x);
      if (op === 'Flatten') {
        if (attrInt(n, 'axis', 1) === 1 && pa === 1 && !x.flat) tracks.set(out, { ids: x.ids, axis: 1, rank: 2, rep: 1, flat: true, cv: x.cv });
        else block(x, `Flatten ${nodeName(n)} across the channel axis`);
        continue;
      }
      const sc = constOf(n.input[1]);
      if (!sc || x.flat) { block(x, `Reshape ${nodeName(n)} with a computed shape`); continue; }
      block(ins[1], why);
      const s = model.readInts(sc.t);
      const C = x.ids.length * x.rep;
      if (pa === 1 && s.length === 2 && s[1] === -1 && x.rep === 1) {
        tracks.set(out, { ids: x.ids, axis: 1, rank: 2, rep: 1, flat: true, cv: x.cv });
      } else if (pa !== undefined && pa < s.length && (s[pa] === 0 || s[pa] === C) && s.slice(0, pa).every((d) => d === 0 || d === 1 || d === -1)) {
        if (s[pa] === C) {
          if ((consumers.get(sc.name) ?? []).length !== 1) { block(x, `Reshape ${nodeName(n)} shares its shape constant`); continue; }
          addSlices(x, sc.name, pa, 'shape');
        }
        tracks.set(out, { ...x, axis: pa, rank: s.length });
      } else {
        block(x, `Reshape ${nodeName(n)} merges or splits the channel axis`);
      }
      continue;
    }

    if (op === 'Shape') continue; // reads the (new) channel count at run time
    blockAll();
  }

  for (const o of g.output) block(tracks.get(o.name), `it reaches graph output "${o.name}", whose shape is kept`);
  // Subgraphs (If / Loop / Scan bodies) may read outer values without listing them as inputs.
  const subgraphReads = (graphs: { node: NodeProto[] }[], acc: Set<string>) => {
    for (const sg of graphs) {
      for (const sn of sg.node) {
        for (const i of sn.input) acc.add(i);
        for (const a of sn.attribute) subgraphReads([...(a.g ? [a.g] : []), ...(a.graphs ?? [])], acc);
      }
    }
    return acc;
  };
  for (const n of g.node) {
    for (const a of n.attribute) {
      if (!a.g && !(a.graphs && a.graphs.length)) continue;
      for (const name of subgraphReads([...(a.g ? [a.g] : []), ...(a.graphs ?? [])], new Set())) {
        block(tracks.get(name), `the subgraph of ${n.op_type} ${nodeName(n)} reads it`);
      }
    }
  }
  // A member tensor with uses outside its channel group would change shape under them.
  // The nodes that finally read a tensor (through Cast / Identity).
  const usesOf = (name: string, acc: NodeProto[] = []): NodeProto[] => {
    for (const c of consumers.get(name) ?? []) {
      if (c.op_type === 'Cast' || c.op_type === 'Identity') usesOf(c.output[0], acc);
      else acc.push(c);
    }
    return acc;
  };
  const outputs = new Set(g.output.map((o: { name: string }) => o.name));
  for (let id = 0; id < parent.length; id++) {
    if (find(id) !== id) continue;
    for (const s of slices[id]) {
      const mine = memberUses.get(s.tensor);
      if (usesOf(s.tensor).some((c) => !mine?.has(c)) || outputs.has(s.tensor)) blocked[id] ??= `tensor "${s.tensor}" has uses outside the group`;
    }
  }

  // Groups: spaces merged through shared channels.
  const bySpace = new Map<number, number[]>();
  for (let id = 0; id < parent.length; id++) {
    const r = find(id);
    if (r !== id) continue;
    const s = findS(spaceOf[id]);
    (bySpace.get(s) ?? bySpace.set(s, []).get(s)!).push(id);
  }
  const groups: ChannelGroup[] = [];
  const channelsOf = new Map<number, { root: number; slices: Slice[] }[]>();
  for (const [s, roots] of bySpace) {
    const reason = roots.map((r) => blocked[r]).find((b) => b !== undefined);
    const seen = new Map<string, GroupMember>();
    for (const r of roots) for (const sl of slices[r]) seen.set(`${sl.tensor}:${sl.axis}`, { tensor: sl.tensor, axis: sl.axis, kind: sl.kind });
    const id = groups.length;
    groups.push({ id, producers: spaceNames[s], channels: roots.length, members: [...seen.values()], prunable: !reason && roots.length > 1, reason: reason ?? (roots.length > 1 ? undefined : 'a single channel') });
    channelsOf.set(id, roots.map((r) => ({ root: r, slices: slices[r] })));
  }
  // A tensor position claimed by two groups (a constant shared by two spaces) cannot be cut safely.
  // Different positions of one axis (a Concat's consumer) are fine.
  const owner = new Map<string, number>();
  for (const gr of groups) {
    for (const ch of channelsOf.get(gr.id)!) {
      for (const sl of ch.slices) {
        for (let p = sl.pos; p < sl.pos + sl.rep; p++) {
          const k = `${sl.tensor}\u0000${sl.axis}\u0000${p}`;
          const o = owner.get(k);
          if (o !== undefined && o !== gr.id) {
            for (const x of [groups[o], gr]) {
              if (x.prunable) { x.prunable = false; x.reason = `tensor "${sl.tensor}" axis ${sl.axis} is shared with another group`; }
            }
          } else owner.set(k, gr.id);
        }
      }
    }
  }
  return { groups, channelsOf, depthwise };
}

interface Drop { axis: number; kind: Slice['kind']; positions: Set<number>; removed: number; filter: boolean }
type Drops = Map<string, Drop>;

/**
 * A removed channel is not a zero channel: with its filter gone it would output a constant (its bias
 * through BN, the activation, ...), which the consumers saw. That constant times the consumer's weight
 * slice (summed over the kernel) is added to the consumer's bias, created when missing (a MatMul gets
 * an Add). Exact for Gemm / MatMul and 1x1 Conv; for a kxk Conv exact away from zero-padded borders.
 * Reads every value from `floatOf` before any tensor changes; updates `floatOf`'s cache and `drops`.
 */
function foldConstants(model: OnnxModel, live: ChannelGroup[], keepOf: Map<number, Uint8Array>,
  channelsOf: ChannelAnalysis['channelsOf'], drops: Drops, floatOf: (name: string) => Float32Array, biasShift?: ChannelOptions['biasShift']) {
  const consts = model.constants();
  const delta = new Map<NodeProto, { fold: Fold; add: Float64Array }>();
  let unknown = 0;
  if (biasShift?.size) {
    const shifted = new Set<string>();
    for (const gr of live) for (const ch of channelsOf.get(gr.id)!) for (const sl of ch.slices) {
      const f = sl.fold;
      const shift = f && biasShift.get(f.weight);
      if (!f || !shift || shifted.has(f.weight)) continue;
      shifted.add(f.weight);
      const n = toNum(consts.get(f.weight)!.tensor.dims[f.outAxis]);
      if (shift.length !== n) throw new OnnxError('unsupported', `biasShift of "${f.weight}" has ${shift.length} values for ${n} outputs`, 'shape_mismatch');
      delta.set(f.node, { fold: f, add: Float64Array.from(shift, (v) => v * f.scale) });
    }
  }
  for (const gr of live) {
    const keep = keepOf.get(gr.id)!;
    channelsOf.get(gr.id)!.forEach((ch, c) => {
      if (keep[c]) return;
      for (const sl of ch.slices) {
        // A consumer given a biasShift has its removed slices zeroed: its shift says what they were worth.
        if (!sl.fold || biasShift?.has(sl.fold.weight)) continue;
        const v = sl.fold.value();
        if (v === undefined || !Number.isFinite(v) || !Number.isFinite(sl.fold.scale)) { unknown++; continue; }
        if (v === 0) continue;
        const f = sl.fold;
        const dims = consts.get(f.weight)!.tensor.dims.map(toNum);
        const w = floatOf(f.weight);
        const d = delta.get(f.node) ?? delta.set(f.node, { fold: f, add: new Float64Array(dims[f.outAxis]) }).get(f.node)!;
        // Sum of the weight over (slice positions, everything but the output axis), per output.
        const inner = prod(dims.slice(sl.axis + 1));
        const outerDims = dims.slice(0, sl.axis);
        const outer = prod(outerDims);
        const outInner = prod(dims.slice(f.outAxis + 1));
        for (let o = 0; o < outer; o++) {
          for (let p = sl.pos; p < sl.pos + sl.rep; p++) {
            const base = (o * dims[sl.axis] + p) * inner;
            for (let i = 0; i < inner; i++) {
              // Index of this element along the output axis.
              const flat = base + i;
              const out = Math.floor(flat / outInner) % dims[f.outAxis];
              d.add[out] += v * f.scale * w[flat];
            }
          }
        }
      }
    });
  }
  const NodeProtoT = ModelProto.root.lookupType('onnx.NodeProto');
  const TensorProtoT = ModelProto.root.lookupType('onnx.TensorProto');
  const names = new Set<string>([...model.graph.node.flatMap((n: NodeProto) => [...n.input, ...n.output]), ...consts.keys()]);
  const fresh = (base: string) => { let k = 0, s = base; while (names.has(s)) s = `${base}_${++k}`; names.add(s); return s; };
  let created = 0;
  for (const [node, { fold: f, add }] of delta) {
    const biasIndex = node.op_type === 'MatMul' ? -1 : 2;
    const existing = biasIndex > 0 && node.input[biasIndex] ? node.input[biasIndex] : undefined;
    // The bias tensor (through a Cast, as the weight may be): its constant's name.
    let bname = existing;
    for (let k = 0; bname && !consts.has(bname) && k < 3; k++) bname = model.graph.node.find((n: NodeProto) => n.output[0] === bname)?.input[0];
    if (existing && bname && consts.has(bname)) {
      const b = floatOf(bname);
      const nb = Float32Array.from(b, (x, i) => x + add[i]);
      b.set(nb); // floatOf's cache now holds the folded bias; it is written below
      const k = `${bname}\u00000`;
      if (!drops.has(k)) drops.set(k, { axis: 0, kind: 'weight', positions: new Set(), removed: 0, filter: false });
      continue;
    }
    // No bias: a new one, in the weight's type when the node reads the weight directly.
    const wt = consts.get(f.weight)!.tensor;
    const direct = node.input[1] === f.weight;
    const name = fresh(`${f.weight}.folded_bias`);
    const t = TensorProtoT.create({ name, dims: [add.length], data_type: direct ? wt.data_type : DT.FLOAT, raw_data: new Uint8Array(0) });
    model.graph.initializer.push(t);
    model.writeFloat(t, Float32Array.from(add));
    created++;
    const outDrop = drops.get(`${f.weight}\u0000${f.outAxis}`);
    if (outDrop) drops.set(`${name}\u00000`, { axis: 0, kind: 'weight', positions: new Set(outDrop.positions), removed: outDrop.positions.size, filter: false });
    if (node.op_type === 'MatMul') {
      const y = node.output[0];
      const mid = fresh(`${y}.before_folded_bias`);
      node.output[0] = mid;
      const at = model.graph.node.indexOf(node);
      model.graph.node.splice(at + 1, 0, NodeProtoT.create({ name: fresh(`${node.name || y}.folded_bias_add`), op_type: 'Add', domain: '', input: [mid, name], output: [y] }));
    } else {
      while (node.input.length < 2) node.input.push('');
      node.input[2] = name;
    }
  }
  return { biases: delta.size, created, unknown };
}

/** The values of one channel's slices of a float tensor, row-major over (slice positions, the rest). */
function gatherSlice(data: Float32Array, dims: number[], axis: number, pos: number, rep: number, scale?: ArrayLike<number>): Float32Array {
  const outer = prod(dims.slice(0, axis));
  const inner = prod(dims.slice(axis + 1));
  const out = new Float32Array(outer * rep * inner);
  let k = 0;
  for (let o = 0; o < outer; o++) {
    const base = (o * dims[axis] + pos) * inner;
    out.set(data.subarray(base, base + rep * inner), k);
    // Position p of the axis weighted by scale[p] (activation-aware scores).
    if (scale) for (let p = 0; p < rep; p++) for (let i = 0; i < inner; i++) out[k + p * inner + i] *= scale[pos + p];
    k += rep * inner;
  }
  return out;
}

/** Deletes the positions `drop` (sorted) of `axis`. */
function deleteAlong(data: Float32Array, dims: number[], axis: number, keep: number[]): Float32Array {
  const outer = prod(dims.slice(0, axis));
  const inner = prod(dims.slice(axis + 1));
  const out = new Float32Array(outer * keep.length * inner);
  let k = 0;
  for (let o = 0; o < outer; o++) {
    for (const p of keep) {
      const base = (o * dims[axis] + p) * inner;
      out.set(data.subarray(base, base + inner), k);
      k += inner;
    }
  }
  return out;
}

/**
 * The channels removeChannels would keep (1) per prunable group id, scored as it scores them (or
 * taken from `opts.keep`), without changing the model.
 */
export function planChannels(model: OnnxModel, opts: ChannelOptions, analysis: ChannelAnalysis = findChannelGroups(model),
  floatOf?: (name: string) => Float32Array): Map<number, Uint8Array> {
  const fraction = checkSparsity(opts.fraction, 'channel fraction');
  const scope = opts.scope ?? 'layer';
  const roundTo = opts.roundTo ?? 8;
  const { groups, channelsOf } = analysis;
  const consts = model.constants();
  if (!floatOf) {
    const cache = new Map<string, Float32Array>();
    floatOf = (name: string) => cache.get(name) ?? cache.set(name, model.readFloat(consts.get(name)!.tensor)).get(name)!;
  }
  const allLive = groups.filter((gr) => gr.prunable && (!opts.filter || opts.filter(gr)));
  // Score: one BlockCoupling per group, one spec per member tensor axis: a (channels, slice) Param.
  const owned: { free(): void }[] = [];
  const keepOf = new Map<number, Uint8Array>();
  const given = opts.keep ?? new Map<number, Uint8Array>();
  for (const gr of allLive) {
    const k = given.get(gr.id);
    if (!k) continue;
    if (k.length !== gr.channels) throw new OnnxError('unsupported', `keep of group ${gr.id} has ${k.length} entries for ${gr.channels} channels`, 'shape_mismatch');
    keepOf.set(gr.id, Uint8Array.from(k, (v) => (v ? 1 : 0)));
  }
  const live = allLive.filter((gr) => !keepOf.has(gr.id));
  try {
    const scopes: sk.ScopeSpec[] = [];
    live.forEach((gr, gi) => {
      const chans = channelsOf.get(gr.id)!;
      // Scored: what carries the channel's signal (filters, depthwise filters, the consumers' input
      // slices). Biases and BN parameters are not: removal keeps their effect (the channel's constant
      // goes into the consumers' biases). Scaling filters by BN's gamma / sqrt(var + eps) was tried
      // and measured worse on PaddleOCR (a near-dead channel has a tiny running variance, which blows
      // its filter up).
      const scored = (sl: Slice) => sl.filter || sl.dw || sl.fold;
      const weightMembers = gr.members.filter((m) => m.kind === 'weight' && chans.some((ch) => ch.slices.some((sl) => sl.tensor === m.tensor && sl.axis === m.axis && scored(sl))));
      const specs = weightMembers.map((m) => {
        const t = consts.get(m.tensor)!.tensor;
        const dims = t.dims.map(toNum);
        const data = floatOf!(m.tensor);
        const rows = chans.map((ch) => {
          const sl = ch.slices.find((s) => s.tensor === m.tensor && s.axis === m.axis);
          return sl ? gatherSlice(data, dims, sl.axis, sl.pos, sl.rep, sl.fold ? opts.inputScale?.get(m.tensor) : undefined) : undefined;
        });
        const width = Math.max(...rows.map((r) => r?.length ?? 0));
        const flat = new Float32Array(chans.length * width);
        rows.forEach((r, c) => r && flat.set(r, c * width));
        const param = sk.Param.fromArray(flat, [chans.length, width]);
        const spec = new sk.BlockSpec(param, [1, -1], `${m.tensor}:${m.axis}`);
        owned.push(spec, param);
        return { spec, param, width };
      });
      const per = specs.reduce((a, s) => a + s.width, 0);
      if (scope === 'global' && per > 0) {
        const f = 1 / Math.sqrt(per);
        for (const s of specs) s.param.set(s.param.toArray().map((v) => v * f));
      }
      const coupling = new sk.BlockCoupling(specs.map((s) => s.spec), undefined, `group ${gr.id}`);
      const sc = new sk.ScopeSpec(coupling, [-1, -1], `group ${gr.id}`);
      owned.push(sc, coupling);
      scopes.push(sc);
      opts.onProgress?.(gi + 1, live.length, `scored group ${gr.id}`);
    });
    const keepFrom = (masks: Map<sk.BlockSpec, Uint8Array>, sc: sk.ScopeSpec): Uint8Array => {
      const spec = (sc.block as sk.BlockCoupling).specs[0];
      const m = masks.get(spec);
      const n = spec.gridShape[0];
      const w = spec.view.shape[1];
      return Uint8Array.from({ length: n }, (_, c) => (m && m[c * w] ? 1 : 0));
    };
    // Kept count of a group: rounded to the nearest multiple of roundTo, at least one (or roundTo).
    const rounded = (k: number, n: number) => {
      if (roundTo <= 1 || n <= roundTo) return Math.max(1, k);
      return Math.min(n, Math.max(roundTo, Math.round(k / roundTo) * roundTo));
    };
    const counts = new Map<number, number>();
    if (scope === 'global' && scopes.length) {
      const coupled = new sk.ScopeCoupling(scopes, undefined, 'model');
      owned.push(coupled);
      const masks = coupled.getMasks({ sparsity: fraction });
      live.forEach((gr, i) => counts.set(gr.id, keepFrom(masks, scopes[i]).reduce((a, b) => a + b, 0)));
    } else {
      live.forEach((gr) => counts.set(gr.id, Math.floor((1 - fraction) * gr.channels + 0.5)));
    }
    live.forEach((gr, i) => {
      const nnz = rounded(counts.get(gr.id)!, gr.channels);
      keepOf.set(gr.id, keepFrom(scopes[i].getMasks({ nnz }), scopes[i]));
    });
  } finally {
    for (const o of owned) o.free();
  }

  return keepOf;
}

/**
 * Removes the fraction `fraction` of channels, by the L2 norm of all their members (per group, or
 * model-wide with each group's norms scaled by 1/sqrt(elements per channel)). At least one channel
 * of every group stays. In place; returns the report (groups kept whole listed with their reason).
 */
export function removeChannels(model: OnnxModel, opts: ChannelOptions): PruneReport & { groups: { removed: object[]; kept: object[] }; folded: { biases: number; created: number; unknown: number } } {
  const fraction = checkSparsity(opts.fraction, 'channel fraction');
  if (fraction >= 1) throw new OnnxError('unsupported', 'the channel fraction must be below 1', 'invalid_sparsity');
  const scope = opts.scope ?? 'layer';
  const roundTo = opts.roundTo ?? 8;
  if (!Number.isInteger(roundTo) || roundTo < 1) throw new OnnxError('unsupported', `roundTo must be a positive integer (got ${roundTo})`, 'invalid_value');
  const { groups, channelsOf, depthwise } = findChannelGroups(model);
  const consts = model.constants();
  const before = model.weights.reduce((a, w) => a + w.numel, 0);
  const shapesBefore = new Map(model.prunable().map((w) => [w.name, w.dims.slice()]));
  const prunableBefore = model.prunable().reduce((a, w) => a + w.numel, 0);
  const cache = new Map<string, Float32Array>();
  const floatOf = (name: string) => cache.get(name) ?? cache.set(name, model.readFloat((consts.get(name) ?? model.constants().get(name)!).tensor)).get(name)!;
  const live = groups.filter((gr) => gr.prunable && (!opts.filter || opts.filter(gr)));

  const keepOf = planChannels(model, opts, { groups, channelsOf, depthwise }, floatOf);

  // Never empty a group; a whole-zero channel scores 0 and goes first, which is the intent.
  const drops: Drops = new Map();
  const removedGroups: object[] = [];
  for (const gr of live) {
    const keep = keepOf.get(gr.id)!;
    if (!keep.some((k) => k)) keep[0] = 1;
    const chans = channelsOf.get(gr.id)!;
    let removed = 0;
    chans.forEach((ch, c) => {
      if (keep[c]) return;
      removed++;
      for (const s of ch.slices) {
        const k = `${s.tensor}\u0000${s.axis}`;
        const d = drops.get(k) ?? drops.set(k, { axis: s.axis, kind: s.kind, positions: new Set(), removed: 0, filter: !!s.filter }).get(k)!;
        for (let p = s.pos; p < s.pos + s.rep; p++) d.positions.add(p);
        d.removed += s.rep;
      }
    });
    if (removed) removedGroups.push({ id: gr.id, producers: gr.producers, channelsBefore: gr.channels, channelsAfter: gr.channels - removed });
  }
  const mask = opts.apply === 'mask' || opts.apply === 'constant';
  const fold = opts.apply === 'constant' || opts.fold === false ? { biases: 0, created: 0, unknown: 0 } : foldConstants(model, live, keepOf, channelsOf, drops, floatOf, opts.biasShift);
  // Apply, one tensor axis at a time (a Conv weight loses output channels and input channels).
  const byTensor = new Map<string, Drop[]>();
  for (const [k, d] of drops) {
    const t = k.split('\u0000')[0];
    (byTensor.get(t) ?? byTensor.set(t, []).get(t)!).push(d);
  }
  for (const [name, ds] of byTensor) {
    const t = model.constants().get(name)?.tensor ?? consts.get(name)!.tensor;
    if (mask) {
      if (ds[0].kind === 'shape') continue;
      const data = floatOf(name).slice();
      const dims = t.dims.map(toNum);
      for (const d of ds) {
        const inner = prod(dims.slice(d.axis + 1));
        const outer = prod(dims.slice(0, d.axis));
        if (opts.apply === 'constant' && !d.filter) continue;
        for (let o = 0; o < outer; o++) for (const p of d.positions) data.fill(0, (o * dims[d.axis] + p) * inner, (o * dims[d.axis] + p + 1) * inner);
      }
      model.writeFloat(t, data);
      continue;
    }
    if (ds[0].kind === 'shape') {
      const s = model.readInts(t);
      for (const d of ds) s[d.axis] -= d.removed;
      model.writeInts(t, s);
      continue;
    }
    let data = floatOf(name);
    let dims = t.dims.map(toNum);
    for (const d of ds) {
      const keep = Array.from({ length: dims[d.axis] }, (_, p) => p).filter((p) => !d.positions.has(p));
      data = deleteAlong(data, dims, d.axis, keep);
      dims = dims.slice();
      dims[d.axis] = keep.length;
    }
    model.writeFloat(t, data, dims);
  }
  if (drops.size && !mask) {
    for (const { node, weight } of depthwise) {
      const a = node.attribute.find((x: { name: string }) => x.name === 'group');
      a.i = toNum(consts.get(weight)!.tensor.dims[0]);
    }
    // Intermediate shapes recorded in the file no longer hold; runtimes infer them again.
    const outs = new Set(model.graph.output.map((o: { name: string }) => o.name));
    model.graph.value_info = model.graph.value_info.filter((v: { name: string }) => outs.has(v.name));
  }
  model.refresh();
  const layers: LayerReport[] = model.prunable().map((w) => layerReport(model, w, shapesBefore.get(w.name) ?? w.dims.slice()));
  const after = model.weights.reduce((a, w) => a + w.numel, 0);
  const prunableAfter = layers.reduce((a, l) => a + l.params, 0);
  const zeros = layers.reduce((a, l) => a + l.zeros, 0);
  return {
    mode: 'channels',
    options: { channels: fraction, scope, roundTo, apply: opts.apply ?? 'remove' },
    folded: fold,
    params: { before, after, prunableBefore, prunableAfter },
    zeros, sparsity: prunableAfter ? zeros / prunableAfter : 0,
    layers,
    groups: {
      removed: removedGroups,
      kept: groups.filter((gr) => !gr.prunable).map((gr) => ({ id: gr.id, producers: gr.producers, channels: gr.channels, reason: gr.reason })),
    },
  };
}

