// Names for what a graph edit adds (a bias Add after a MatMul, a private copy of a shared constant, a
// calibration shift, a quantized form's scales), unused anywhere in the model. ONNX keeps node names and
// value names apart, but onnxruntime refuses two nodes of one name as it refuses a value defined twice,
// and an edit made twice (a model cut, then cut again) meets its own earlier names in both: one set
// holds both kinds, over the graph and every subgraph.
import type { GraphProto } from './tensor-data.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

export class Names {
  private readonly used = new Set<string>();

  /** The names `graph` uses: initializers, inputs, outputs, value_info, nodes and the values they read and write, its subgraphs' too. */
  constructor(graph: GraphProto) {
    this.addGraph(graph);
  }

  private addGraph(g: any): void {
    for (const t of g.initializer ?? []) this.used.add(t.name);
    for (const s of g.sparse_initializer ?? []) if (s.values?.name) this.used.add(s.values.name);
    for (const v of [...(g.input ?? []), ...(g.output ?? []), ...(g.value_info ?? [])]) this.used.add(v.name);
    for (const n of g.node ?? []) {
      if (n.name) this.used.add(n.name);
      for (const x of [...n.input, ...n.output]) if (x) this.used.add(x);
      for (const a of n.attribute ?? []) {
        if (a.g) this.addGraph(a.g);
        for (const sg of a.graphs ?? []) this.addGraph(sg);
      }
    }
  }

  has(name: string): boolean { return this.used.has(name); }

  /** Claims a name known to be free (see has). */
  take(name: string): string { this.used.add(name); return name; }

  /** `base` if unused, else the first unused of `base_1`, `base_2`, …; claimed. */
  fresh(base: string): string {
    let name = base;
    for (let i = 1; this.used.has(name); i++) name = `${base}_${i}`;
    this.used.add(name);
    return name;
  }
}
