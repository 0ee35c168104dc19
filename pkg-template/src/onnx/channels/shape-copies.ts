// Private copies of the small integer constants a removal rewrites (Split sizes, Slice bounds, a
// Reshape's shape entries). Exporters share them: torch writes one initializer per distinct Split-size
// list, so two C2f blocks of the same width read the same one, and a shape built by Concat may be read
// by several Reshapes. Each rewritten *use* (the chain of hops from the reading node down to the
// constant, see types.ts Hop) gets the constant to itself: where a value on that chain is read
// elsewhere too, the chain from there down is copied (the constant and the Cast / Unsqueeze / Concat
// … nodes between) and the reader is pointed at the copy; the other readers keep the original values.
// Float weights are never copied: two groups cutting one weight is a real conflict (groups.ts).
import { ModelProto, type GraphProto, type NodeProto, type OnnxModel, type TensorProto } from '../model.js';
import { OnnxError } from '../errors.js';
import { forEachGraph, nodeGraphs } from './constants.js';
import type { ConstantValues } from './values.js';
import type { Hop } from './types.js';
import { Names } from '../names.js';

const nodeIds = new WeakMap<NodeProto, number>();
let nextId = 0;
const idOf = (n: NodeProto): number => {
  let id = nodeIds.get(n);
  if (id === undefined) { id = ++nextId; nodeIds.set(n, id); }
  return id;
};

/** A key telling uses apart (same nodes and inputs, same key). */
export const useKey = (use: Hop[] | undefined): string => (use ? use.map((h) => `${idOf(h.node)}.${h.input}`).join('/') : '');

/** The values a use reads, from the reader's input down to the constant. */
const valuesOf = (use: Hop[]): string[] => use.map((h) => h.node.input[h.input]);

/**
 * Checks that `use` still leads to `tensor` (each hop's node produces the value read one hop up).
 * Called before the removal writes anything: a plan made for another graph is refused whole.
 */
export function checkUse(use: Hop[], tensor: string): void {
  const vals = valuesOf(use);
  const ok = vals.length > 0 && vals[vals.length - 1] === tensor
    && use.slice(1).every((h, i) => h.node.output.length === 1 && h.node.output[0] === vals[i]);
  if (!ok) throw new OnnxError('unsupported', `the plan's use of "${tensor}" no longer matches the graph (analyze the model again)`, 'invalid_arguments');
}

export class ShapeCopies {
  /** How many times each value is read (node inputs of every graph, graph outputs). */
  private readonly reads = new Map<string, number>();
  private readonly names: Names;
  private readonly graphOf: Map<NodeProto, GraphProto>;
  private readonly NodeProtoT = ModelProto.root.lookupType('onnx.NodeProto');
  private readonly TensorProtoT = ModelProto.root.lookupType('onnx.TensorProto');
  private readonly AttributeProtoT = ModelProto.root.lookupType('onnx.AttributeProto');
  copies = 0;

  constructor(private readonly model: OnnxModel, private readonly values: ConstantValues) {
    this.names = new Names(model.graph);
    forEachGraph(model, (g: GraphProto) => {
      for (const n of g.node) for (const i of n.input) if (i) this.reads.set(i, (this.reads.get(i) ?? 0) + 1);
      for (const o of g.output) this.reads.set(o.name, (this.reads.get(o.name) ?? 0) + 1);
    });
    this.graphOf = nodeGraphs(model);
  }

  private fresh(base: string): string {
    return this.names.fresh(`${base}.private`);
  }

  private read(name: string, by: number): void { if (name) this.reads.set(name, (this.reads.get(name) ?? 0) + by); }

  /**
   * One use standing for `uses` that write the same values (Q, K and V Reshapes reading one head
   * shape): their common tail of hops, when every reader of the value above it is one of them.
   * Undefined when they cannot be treated as one (each then gets its own copy where shared).
   */
  commonUse(uses: (Hop[] | undefined)[]): Hop[] | undefined {
    if (uses.length < 2 || uses.some((u) => !u)) return undefined;
    const all = uses as Hop[][];
    const same = (k: number) => all.every((u) => u.length > k && u[u.length - 1 - k].node === all[0][all[0].length - 1 - k].node
      && u[u.length - 1 - k].input === all[0][all[0].length - 1 - k].input);
    let k = 0;
    while (same(k)) k++;
    // No hop in common (two Splits reading one sizes tensor): the constant itself, if only they read it.
    if (k === 0) return this.reads.get(valuesOf(all[0]).pop()!) === all.length ? [] : undefined;
    if (all.some((u) => u.length === k)) return undefined;
    const tail = all[0].slice(all[0].length - k);
    const above = tail[0].node.output[0];
    return this.reads.get(above) === all.length ? tail : undefined;
  }

  /**
   * The tensor that `use` may rewrite: the constant itself when each value from the reader down to
   * it is read once (this use only), else a copy made for this use (values copied from `original`,
   * the constant's values before any rewrite).
   */
  target(tensor: string, use: Hop[] | undefined, original: number[]): TensorProto {
    const t = this.values.tensor(tensor);
    if (!use?.length) return t;
    const vals = valuesOf(use);
    const shared = vals.findIndex((v) => (this.reads.get(v) ?? 0) > 1);
    if (shared < 0) return t;
    // Copy the constant, then each node above it up to the one producing the first shared value.
    const { graph: home } = this.values.constants.get(tensor)!;
    const copy = this.TensorProtoT.create({ name: this.fresh(tensor), dims: t.dims.slice(), data_type: t.data_type, raw_data: new Uint8Array(0) }) as TensorProto;
    this.model.writeInts(copy, original);
    const asNode = home.node.find((n: NodeProto) => n.op_type === 'Constant' && n.output[0] === tensor);
    if (asNode) {
      const c = this.NodeProtoT.create({ name: this.fresh(asNode.name || tensor), op_type: 'Constant', domain: asNode.domain ?? '', output: [copy.name],
        attribute: [this.AttributeProtoT.create({ name: 'value', type: 4, t: copy })] });
      home.node.splice(home.node.indexOf(asNode) + 1, 0, c);
    } else {
      home.initializer.push(copy);
    }
    this.values.constants.set(copy.name, { tensor: copy, graph: home });
    this.copies++;
    let below = copy.name;
    for (let j = vals.length - 1; j > shared; j--) {
      // use[j].node produces vals[j - 1] and reads vals[j] at use[j].input.
      const orig = use[j].node;
      const clone = this.NodeProtoT.decode(this.NodeProtoT.encode(orig).finish()) as NodeProto;
      clone.name = this.fresh(orig.name || orig.output[0]);
      clone.output = [this.fresh(orig.output[0])];
      clone.input[use[j].input] = below;
      for (const i of clone.input) this.read(i, 1);
      const g = this.graphOf.get(orig) ?? this.model.graph;
      g.node.splice(g.node.indexOf(orig) + 1, 0, clone);
      this.graphOf.set(clone, g);
      below = clone.output[0];
    }
    // The node reading the first shared value now reads the private copy.
    this.read(vals[shared], -1);
    use[shared].node.input[use[shared].input] = below;
    return copy;
  }
}
