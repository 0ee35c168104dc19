// Whole transformer blocks, as ShortGPT removes them. A residual unit is an Add(x, f(x)) of two computed
// values where x is an ancestor of the other operand (the branch f: attention, or the MLP), followed by
// its LayerNormalization in a post-norm encoder; the residual stream is the chain of such units, each
// reading (through Cast / Identity) the previous one's output. A block is an attention unit (its
// branch has a Softmax) with the unit after it, or a unit alone when no branch has a Softmax.
// Removing a block gives its output's readers its input instead (the block becomes the identity,
// which is what a block of low influence nearly is) and drops the nodes and constants nothing reads
// any more.
import type { NodeProto, OnnxModel } from './model.js';
import { OnnxError } from './errors.js';

export interface ResidualBlock {
  index: number;
  /** The stream value the block reads (its first unit's x). */
  input: string;
  /** The stream value it writes (its last unit's Add output; in a post-norm encoder, the norm's after it). */
  output: string;
  /** The residual Adds of its units, in order. */
  adds: string[];
  /**
   * False when the block cannot go (then `why` says why): its output is a graph output, which its
   * removal would take away. The choice of blocks skips it; removeResidualBlocks refuses it by name.
   */
  removable: boolean;
  why?: string;
}

interface Unit { add: NodeProto; x: string; out: string; softmax: boolean }

/** The residual blocks of the main graph, in graph order. */
export function findResidualBlocks(model: OnnxModel): ResidualBlock[] {
  const g = model.graph;
  const producer = new Map<string, NodeProto>();
  for (const n of g.node) for (const o of n.output) if (o) producer.set(o, n);
  const constants = new Set<string>(g.initializer.map((t: { name: string }) => t.name));
  for (const n of g.node) if (n.op_type === 'Constant') constants.add(n.output[0]);
  /** Nodes between `from` (excluded) and `to`, walking up from `to`; undefined when `from` is not reached. */
  const branch = (to: string, from: string): NodeProto[] | undefined => {
    const seen = new Set<string>([to]);
    const stack = [to];
    const nodes: NodeProto[] = [];
    let reached = false;
    while (stack.length) {
      const v = stack.pop()!;
      if (v === from) { reached = true; continue; }
      const p = producer.get(v);
      if (!p) continue;
      nodes.push(p);
      for (const i of p.input) if (i && !seen.has(i)) { seen.add(i); stack.push(i); }
    }
    return reached ? nodes : undefined;
  };
  const units: Unit[] = [];
  for (const n of g.node) {
    if (n.op_type !== 'Add' || n.domain || n.input.length !== 2 || n.input.some((i: string) => constants.has(i))) continue;
    for (const [x, y] of [[n.input[0], n.input[1]], [n.input[1], n.input[0]]]) {
      const nodes = branch(y, x);
      if (!nodes) continue;
      units.push({ add: n, x, out: n.output[0], softmax: nodes.some((b) => b.op_type === 'Softmax') });
      break;
    }
  }
  // The stream: each unit reads the previous unit's output, through Cast / Identity.
  const streamOf = (v: string): string => {
    for (let d = 0; d < 4; d++) {
      const p = producer.get(v);
      if (!p || (p.op_type !== 'Cast' && p.op_type !== 'Identity')) return v;
      v = p.input[0];
    }
    return v;
  };
  // The unit that reads each stream value (the first, in graph order): the same whichever way units end.
  const after = new Map<string, Unit>();
  for (const u of units) if (!after.has(streamOf(u.x))) after.set(streamOf(u.x), u);
  // The longest chain when each unit ends at `end(u)` (an Add of two related values outside the
  // stream, in a mask's arithmetic, is a chain of its own).
  const chainOf = (end: (u: Unit) => string): Unit[] => {
    const ends = new Set(units.map(end));
    let chain: Unit[] = [];
    for (const start of units.filter((u) => !ends.has(streamOf(u.x)))) {
      const c = [start];
      for (let u = after.get(end(start)); u && c.length <= units.length; u = after.get(end(u))) c.push(u);
      if (c.length > chain.length) chain = c;
    }
    return chain;
  };
  // Post-norm (BERT, MiniLM): each unit's Add is read by one LayerNormalization alone and the stream
  // runs through it, so there a unit ends at its norm (its removal skips the Add and the norm). Taken
  // only when that makes a longer chain of such units: a pre-norm decoder reads each Add twice (the
  // next norm and the next Add), and its final norm after the last Add stays outside every block.
  const readers = new Map<string, NodeProto[]>();
  for (const n of g.node) {
    for (const i of n.input) {
      if (!i) continue;
      const r = readers.get(i);
      if (r) r.push(n);
      else readers.set(i, [n]);
    }
  }
  const normAfter = (u: Unit): string | undefined => {
    const r = readers.get(u.out);
    return r?.length === 1 && r[0].op_type === 'LayerNormalization' && !r[0].domain ? r[0].output[0] : undefined;
  };
  const plain = chainOf((u) => u.out);
  const post = chainOf((u) => normAfter(u) ?? u.out);
  const postNorm = post.length > plain.length && post.every((u) => normAfter(u) !== undefined);
  const chain = postNorm ? post : plain;
  const endOf = (u: Unit) => (postNorm ? normAfter(u)! : u.out);
  const pairs = chain.some((u) => u.softmax);
  const outputs = new Set<string>(g.output.map((o: { name: string }) => o.name));
  const blocks: ResidualBlock[] = [];
  for (let k = 0; k < chain.length; k++) {
    const u = chain[k];
    const unit = pairs && u.softmax && k + 1 < chain.length && !chain[k + 1].softmax ? [u, chain[++k]] : [u];
    const output = endOf(unit[unit.length - 1]);
    const fixed = outputs.has(output) ? { removable: false, why: `writes graph output "${output}"` } : { removable: true };
    blocks.push({ index: blocks.length, input: unit[0].x, output, adds: unit.map((v) => v.add.name || v.out), ...fixed });
  }
  return blocks;
}

/**
 * Removes the blocks `indices` (of findResidualBlocks): readers of a block's output read its input, and
 * the nodes, initializers and recorded shapes nothing needs any more go. In place.
 */
export function removeResidualBlocks(model: OnnxModel, indices: number[], blocks = findResidualBlocks(model)): { removed: number[]; nodesBefore: number; nodesAfter: number } {
  const g = model.graph;
  for (const i of indices) {
    if (!Number.isInteger(i) || !blocks[i]) throw new OnnxError('unsupported', `block ${i} is not one of the model's ${blocks.length} residual blocks`, 'invalid_arguments');
  }
  // A removed block's input may be an earlier removed block's output: the renames chain.
  const rename = new Map<string, string>();
  const resolve = (v: string) => { while (rename.has(v)) v = rename.get(v)!; return v; };
  for (const i of [...new Set(indices)].sort((a, b) => a - b)) {
    const b = blocks[i];
    if (!b.removable) throw new OnnxError('unsupported', `block ${i} ${b.why ?? 'is marked not removable'}: it cannot be removed`, 'invalid_arguments');
    rename.set(b.output, b.input);
  }
  for (const n of g.node) n.input = n.input.map((v: string) => (v ? resolve(v) : v));
  const nodesBefore = g.node.length;
  // Dead nodes: nothing reads their outputs and they write no graph output (subgraph reads count).
  const outputs = new Set<string>(g.output.map((o: { name: string }) => o.name));
  for (;;) {
    const read = new Set<string>(outputs);
    const visit = (nodes: NodeProto[]) => {
      for (const n of nodes) {
        for (const v of n.input) if (v) read.add(v);
        for (const a of n.attribute ?? []) {
          if (a.g) visit(a.g.node);
          for (const sg of a.graphs ?? []) visit(sg.node);
        }
      }
    };
    visit(g.node);
    const live = g.node.filter((n: NodeProto) => n.output.some((o: string) => o && read.has(o)));
    if (live.length === g.node.length) {
      g.initializer = g.initializer.filter((t: { name: string }) => read.has(t.name));
      break;
    }
    g.node = live;
  }
  const kept = new Set<string>(g.node.flatMap((n: NodeProto) => n.output));
  g.value_info = (g.value_info ?? []).filter((v: { name: string }) => kept.has(v.name));
  model.refresh();
  return { removed: [...new Set(indices)].sort((a, b) => a - b), nodesBefore, nodesAfter: g.node.length };
}
