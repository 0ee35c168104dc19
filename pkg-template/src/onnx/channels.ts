// Structured channel removal. Output channels of Conv / Gemm / MatMul producers are followed through
// the graph; every tensor slice that must go with a channel (its filter, bias, BN parameters,
// per-channel constants, the consumers' input slices, a Reshape's channel count) is a member of it.
// Channels tied together (residual Add/Mul, depthwise Conv) merge; a group is a set of channels that
// compete, scored with BlockCoupling norms over all members and ranked with ScopeSpec / ScopeCoupling.
// Removing a channel deletes its slices everywhere, so the file shrinks and the model runs faster.
// Anything not understood keeps its group whole (with the reason): never a broken graph.
import * as sk from 'sparsekit-wasm';
import { OnnxModel, attr, attrInt, attrInts, toNum, type NodeProto, type TensorProto } from './model.js';
import { OnnxError } from './errors.js';
import { checkSparsity, layerReport, type LayerReport, type ProgressFn, type PruneReport } from './prune.js';

/** A tensor slice that goes with one channel: positions [pos, pos + rep) of `axis` of `tensor`. */
interface Slice {
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
  /** 'remove' (default) deletes the channels; 'mask' zeroes every slice of them and keeps the shapes. */
  apply?: 'remove' | 'mask';
  onProgress?: ProgressFn;
}

const UNARY = new Set(['Relu', 'LeakyRelu', 'Sigmoid', 'HardSigmoid', 'HardSwish', 'Tanh', 'Clip', 'Elu', 'Selu',
  'Softplus', 'Softsign', 'Exp', 'Log', 'Abs', 'Neg', 'Sqrt', 'Erf', 'Gelu', 'Mish', 'Identity', 'Dropout', 'Cast',
  'Floor', 'Ceil', 'Round', 'Reciprocal', 'Sin', 'Cos', 'ThresholdedRelu', 'Celu', 'Swish']);
const POOL = new Set(['MaxPool', 'AveragePool', 'GlobalAveragePool', 'GlobalMaxPool', 'LpPool', 'GlobalLpPool']);
const BINARY = new Set(['Add', 'Sub', 'Mul', 'Div', 'Max', 'Min', 'Pow', 'PRelu', 'Sum']);
const prod = (d: number[]) => d.reduce((a, b) => a * b, 1);

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
  const addSlices = (tr: Track, tensor: string, axis: number, kind: Slice['kind'] = 'weight', rep = tr.rep) => {
    tr.ids.forEach((id, c) => slices[find(id)].push({ tensor, axis, pos: c * rep, rep, kind }));
    (memberUses.get(tensor) ?? memberUses.set(tensor, new Set()).get(tensor)!).add(current);
  };

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
          if (x!.ids.length === wd[0]) addSlices(x!, w.name, 0);
          else block(x, `ConvTranspose ${nodeName(n)} expects ${wd[0]} input channels, the graph gives ${x!.ids.length}`);
        }
        const tr: Track = { ids: newSpace(wd[1], nodeName(n)), axis: 1, rank, rep: 1 };
        addSlices(tr, w.name, 1);
        if (b) addSlices(tr, b.name, 0);
        tracks.set(out, tr);
        continue;
      }
      if (group === 1) {
        if (xok) {
          if (x!.ids.length === wd[1]) addSlices(x!, w.name, 1);
          else block(x, `Conv ${nodeName(n)} expects ${wd[1]} input channels, the graph gives ${x!.ids.length}`);
        }
        const tr: Track = { ids: newSpace(wd[0], nodeName(n)), axis: 1, rank, rep: 1 };
        addSlices(tr, w.name, 0);
        if (b) addSlices(tr, b.name, 0);
        tracks.set(out, tr);
      } else if (wd[1] === 1 && wd[0] === group && xok && x!.ids.length === group) {
        // Depthwise: output channel c is input channel c.
        depthwise.push({ node: n, weight: w.name });
        const tr: Track = { ids: x!.ids.slice(), axis: 1, rank, rep: 1 };
        addSlices(tr, w.name, 0);
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
      if (x) {
        const lastAxis = negAxis(x) === -1 && (op === 'MatMul' || x.rank === undefined || x.rank === 2);
        if (!lastAxis) block(x, `${op} ${nodeName(n)} reads it along another axis`);
        else if (x.flat && K % x.ids.length === 0) {
          addSlices(x, w.name, kAxis, 'weight', K / x.ids.length);
        } else if (!x.flat && x.ids.length * x.rep === K) {
          addSlices(x, w.name, kAxis, 'weight', x.rep);
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
      const tr: Track = { ids: newSpace(N, nodeName(n)), axis: rank !== undefined ? rank - 1 : -1, rank, rep: 1 };
      addSlices(tr, w.name, 1 - kAxis);
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
      params.forEach((p: { name: string } | undefined, k: number) => addSlices(x, p!.name, 0, k >= 2 ? 'stat' : 'weight'));
      tracks.set(out, x);
      continue;
    }

    if (UNARY.has(op) || POOL.has(op)) {
      ins.slice(1).forEach((t) => block(t, why));
      if (x) tracks.set(out, x);
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
      tracks.set(out, lead);
      continue;
    }

    if (op === 'Concat') {
      const axis = attrInt(n, 'axis', 0);
      if (!x || ins.some((t) => !t || t.flat || t.rep !== 1)) { blockAll(`Concat ${nodeName(n)} with an input whose channels are not followed`); continue; }
      const ax0 = axis < 0 ? negAxis(x) : posAxis(x);
      if (ins.some((t) => (axis < 0 ? negAxis(t!) : posAxis(t!)) !== ax0)) { blockAll(`Concat ${nodeName(n)} of inputs with different channel axes`); continue; }
      if (ax0 === axis) {
        tracks.set(out, { ids: ins.flatMap((t) => t!.ids), axis: x.axis, rank: x.rank, rep: 1 });
      } else {
        // Concatenated along another axis: the inputs share their channels.
        if (ins.some((t) => t!.ids.length !== x.ids.length)) { blockAll(); continue; }
        for (const t of ins.slice(1)) t!.ids.forEach((id, c) => union(id, x.ids[c]));
        tracks.set(out, x);
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
        if (attrInt(n, 'axis', 1) === 1 && pa === 1 && !x.flat) tracks.set(out, { ids: x.ids, axis: 1, rank: 2, rep: 1, flat: true });
        else block(x, `Flatten ${nodeName(n)} across the channel axis`);
        continue;
      }
      const sc = constOf(n.input[1]);
      if (!sc || x.flat) { block(x, `Reshape ${nodeName(n)} with a computed shape`); continue; }
      block(ins[1], why);
      const s = model.readInts(sc.t);
      const C = x.ids.length * x.rep;
      if (pa === 1 && s.length === 2 && s[1] === -1 && x.rep === 1) {
        tracks.set(out, { ids: x.ids, axis: 1, rank: 2, rep: 1, flat: true });
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

/** The values of one channel's slices of a float tensor, row-major over (slice positions, the rest). */
function gatherSlice(data: Float32Array, dims: number[], axis: number, pos: number, rep: number): Float32Array {
  const outer = prod(dims.slice(0, axis));
  const inner = prod(dims.slice(axis + 1));
  const out = new Float32Array(outer * rep * inner);
  let k = 0;
  for (let o = 0; o < outer; o++) {
    const base = (o * dims[axis] + pos) * inner;
    out.set(data.subarray(base, base + rep * inner), k);
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
 * Removes the fraction `fraction` of channels, by the L2 norm of all their members (per group, or
 * model-wide with each group's norms scaled by 1/sqrt(elements per channel)). At least one channel
 * of every group stays. In place; returns the report (groups kept whole listed with their reason).
 */
export function removeChannels(model: OnnxModel, opts: ChannelOptions): PruneReport & { groups: { removed: object[]; kept: object[] } } {
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
  const floatOf = (name: string) => cache.get(name) ?? cache.set(name, model.readFloat(consts.get(name)!.tensor)).get(name)!;
  const live = groups.filter((gr) => gr.prunable && (!opts.filter || opts.filter(gr)));

  // Score: one BlockCoupling per group, one spec per member tensor axis: a (channels, slice) Param.
  const owned: { free(): void }[] = [];
  const keepOf = new Map<number, Uint8Array>();
  try {
    const scopes: sk.ScopeSpec[] = [];
    live.forEach((gr, gi) => {
      const chans = channelsOf.get(gr.id)!;
      const weightMembers = gr.members.filter((m) => m.kind === 'weight');
      const specs = weightMembers.map((m) => {
        const t = consts.get(m.tensor)!.tensor;
        const dims = t.dims.map(toNum);
        const data = floatOf(m.tensor);
        const rows = chans.map((ch) => {
          const sl = ch.slices.find((s) => s.tensor === m.tensor && s.axis === m.axis);
          return sl ? gatherSlice(data, dims, sl.axis, sl.pos, sl.rep) : undefined;
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

  // Never empty a group; a whole-zero channel scores 0 and goes first, which is the intent.
  const drops = new Map<string, { axis: number; kind: Slice['kind']; positions: Set<number>; removed: number }>();
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
        const d = drops.get(k) ?? drops.set(k, { axis: s.axis, kind: s.kind, positions: new Set(), removed: 0 }).get(k)!;
        for (let p = s.pos; p < s.pos + s.rep; p++) d.positions.add(p);
        d.removed += s.rep;
      }
    });
    if (removed) removedGroups.push({ id: gr.id, producers: gr.producers, channelsBefore: gr.channels, channelsAfter: gr.channels - removed });
  }
  // Apply, one tensor axis at a time (a Conv weight loses output channels and input channels).
  const byTensor = new Map<string, { axis: number; kind: Slice['kind']; positions: Set<number>; removed: number }[]>();
  for (const [k, d] of drops) {
    const t = k.split('\u0000')[0];
    (byTensor.get(t) ?? byTensor.set(t, []).get(t)!).push(d);
  }
  const mask = opts.apply === 'mask';
  for (const [name, ds] of byTensor) {
    const t = consts.get(name)!.tensor;
    if (mask) {
      if (ds[0].kind === 'shape') continue;
      const data = floatOf(name).slice();
      const dims = t.dims.map(toNum);
      for (const d of ds) {
        const inner = prod(dims.slice(d.axis + 1));
        const outer = prod(dims.slice(0, d.axis));
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
    options: { channels: fraction, scope, roundTo, apply: mask ? 'mask' : 'remove' },
    params: { before, after, prunableBefore, prunableAfter },
    zeros, sparsity: prunableAfter ? zeros / prunableAfter : 0,
    layers,
    groups: {
      removed: removedGroups,
      kept: groups.filter((gr) => !gr.prunable).map((gr) => ({ id: gr.id, producers: gr.producers, channels: gr.channels, reason: gr.reason })),
    },
  };
}

