// The walk over the graph: each node's rule (rules/index.ts) is applied in graph order, subgraphs
// when their If / Loop / Scan is reached. What the walk collects (channel sets, slices, the nodes
// through which each member tensor is used) becomes the groups in groups.ts.
import { toNum, type GraphProto, type NodeProto, type OnnxModel } from '../model.js';
import { OnnxError } from '../errors.js';
import { ChannelSets } from './union-find.js';
import { allConstants, subgraphsOf, forEachGraph } from './constants.js';
import { ConstantValues } from './values.js';
import { inferShapes } from './infer-shapes.js';
import { resolveVector, type IntConstant, type VectorEntry } from './int-vectors.js';
import type { Track } from './track.js';
import type { ConstantRef, RuleContext } from './rule.js';
import type { HeadUnit, Hop, Slice } from './types.js';
import { RULES } from './rules/index.js';

export const displayName = (n: NodeProto): string => n.name || `${n.op_type}(${n.output[0]})`;

/** Deepest nesting of subgraphs followed (deeper ones keep what they read whole). */
const MAX_DEPTH = 8;
/**
 * Most channels one producer may declare. Channel ids are allocated per declared channel, before any
 * tensor is read: a weight declaring 2³¹ output channels over 16 bytes must be refused, not looped over.
 */
export const MAX_CHANNELS = 1 << 22;

export interface WalkResult {
  sets: ChannelSets;
  tracks: Map<string, Track>;
  values: ConstantValues;
  /** The nodes through which each member tensor is used by its groups. */
  memberUses: Map<string, Set<NodeProto>>;
  consumers: Map<string, NodeProto[]>;
  depthwise: { node: NodeProto; weight: string }[];
}

export function walkModel(model: OnnxModel, heads: HeadUnit = 'groups'): WalkResult {
  const constants = allConstants(model);
  const values = new ConstantValues(model, constants);
  const sets = new ChannelSets();
  const tracks = new Map<string, Track>();
  const producerOf = new Map<string, NodeProto>();
  const consumers = new Map<string, NodeProto[]>();
  const shapes = new Map<string, (number | undefined)[]>();
  const memberUses = new Map<string, Set<NodeProto>>();
  const depthwise: { node: NodeProto; weight: string }[] = [];
  forEachGraph(model, (g: GraphProto) => {
    for (const n of g.node) {
      for (const o of n.output) if (o) producerOf.set(o, n);
      for (const i of n.input) if (i) (consumers.get(i) ?? consumers.set(i, []).get(i)!).push(n);
    }
    for (const v of [...(g.input ?? []), ...(g.output ?? []), ...(g.value_info ?? [])]) {
      const dims = v.type?.tensor_type?.shape?.dim;
      if (!dims) continue;
      shapes.set(v.name, dims.map((d: { dim_value?: unknown }) => (d.dim_value != null && toNum(d.dim_value) > 0 ? toNum(d.dim_value) : undefined)));
    }
  });
  // Shapes the file does not record (ranks, known dimensions), inferred once.
  for (const [k, v] of inferShapes(model, constants, shapes)) shapes.set(k, v);
  const graphInputs = new Set<string>(model.graph.input.map((v: { name: string }) => v.name).filter((n: string) => !constants.has(n)));
  const opset = Number(model.opsets.find((o) => o.startsWith('ai.onnx:'))?.split(':')[1] ?? 13);

  // A constant reached through Cast / Identity, with the hops taken (for a private copy of it).
  const constantVia = (name: string): (ConstantRef & { via: Hop[] }) | undefined => {
    const via: Hop[] = [];
    for (let d = 0; d < 3 && name; d++) {
      const c = constants.get(name);
      if (c) return { name, tensor: c.tensor, dims: c.tensor.dims.map(toNum), via };
      const p = producerOf.get(name);
      if (!p || (p.op_type !== 'Cast' && p.op_type !== 'Identity')) return undefined;
      via.push({ node: p, input: 0 });
      name = p.input[0];
    }
    return undefined;
  };
  const constant = (name: string): ConstantRef | undefined => constantVia(name);
  const intConstant = (name: string): IntConstant | undefined => {
    const c = constantVia(name);
    if (!c || (c.tensor.data_type !== 7 && c.tensor.data_type !== 6) || c.dims.length > 1 || (c.dims[0] ?? 1) > 64) return undefined;
    return { name: c.name, values: model.readInts(c.tensor), via: c.via };
  };
  const rankOf = (name: string): number | undefined => tracks.get(name)?.rank ?? shapes.get(name)?.length ?? constant(name)?.dims.length;
  const vectorSource = { producerOf: (n: string) => producerOf.get(n), intConstant, rankOf };

  const blockTrack = (t: Track | undefined, why: string) => { if (t) for (const id of t.ids) sets.block(id, why); };

  // Outer values read by a subgraph that is not walked (unknown op, too deep) are kept whole.
  const blockSubgraphReads = (node: NodeProto, why: string) => {
    const visit = (g: GraphProto) => {
      for (const sn of g.node) {
        for (const i of sn.input) blockTrack(tracks.get(i), why);
        for (const s of subgraphsOf(sn)) visit(s.graph);
      }
    };
    for (const s of subgraphsOf(node)) visit(s.graph);
  };

  const walkGraph = (graph: GraphProto, depth: number) => {
    for (const node of graph.node) {
      const op: string = node.op_type;
      const name = displayName(node);
      const inputs = node.input.map((i: string) => (i ? tracks.get(i) : undefined));
      const unhandled = `${op} ${name} is not handled`;
      const ctx: RuleContext = {
        node, name, op, inputs, opset, heads,
        constant, intConstant,
        floats: (n) => values.floats(n),
        vector: (n): VectorEntry[] | undefined => resolveVector(vectorSource, n),
        rankOf,
        shapeOf: (n) => shapes.get(n) ?? constant(n)?.dims,
        trackOf: (n) => tracks.get(n),
        isGraphInput: (n) => graphInputs.has(n),
        useCount: (n) => consumers.get(n)?.length ?? 0,
        setOutput: (k, t) => { if (t && node.output[k]) tracks.set(node.output[k], t); },
        block: blockTrack,
        blockInputs: (why = unhandled) => inputs.forEach((t: Track | undefined) => blockTrack(t, why)),
        newChannels: (count, why) => {
          if (!Number.isSafeInteger(count) || count < 0 || count > MAX_CHANNELS || sets.size + count > 4 * MAX_CHANNELS) {
            throw new OnnxError('corrupt', `${op} ${name} declares ${count} output channels: the file is corrupt or not supported`);
          }
          return sets.newSpace(count, name, why);
        },
        tie: (a, b) => a.forEach((id, c) => sets.union(id, b[c])),
        setRuns: (ids, runs) => ids.forEach((id, c) => sets.setRun(id, runs[c])),
        addSlices: (t, tensor, axis, kind = 'weight', span = t.span, extra) => {
          t.ids.forEach((id, c) => sets.addSlice(id, { tensor, axis, pos: t.at[c] * span, rep: span, kind, ...extra?.(c) } as Slice));
          (memberUses.get(tensor) ?? memberUses.set(tensor, new Set()).get(tensor)!).add(node);
        },
        foldInto: (t, weight, outAxis, scale = 1) => (c) => ({ fold: { node, weight, outAxis, scale, value: () => t.value?.(c) } }),
        markDepthwise: (weight) => depthwise.push({ node, weight }),
        walkSubgraph: (g, bound) => {
          for (const [k, t] of bound ?? []) if (t) tracks.set(k, t);
          if (depth + 1 > MAX_DEPTH) {
            blockSubgraphReads({ attribute: [{ g }] }, `a subgraph of ${op} ${name} is nested too deep`);
            return g.output.map(() => undefined);
          }
          walkGraph(g, depth + 1);
          return g.output.map((o: { name: string }) => tracks.get(o.name));
        },
      };
      if (node.domain && node.domain !== 'ai.onnx') {
        ctx.blockInputs(`custom op ${node.domain}:${op}`);
        blockSubgraphReads(node, `custom op ${node.domain}:${op}`);
        continue;
      }
      const rule = RULES.get(op);
      if (!rule) {
        ctx.blockInputs();
        blockSubgraphReads(node, `the subgraph of ${op} ${name} reads it`);
        continue;
      }
      rule(ctx);
    }
  };
  walkGraph(model.graph, 0);
  return { sets, tracks, values, memberUses, consumers, depthwise };
}
