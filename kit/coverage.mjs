// Conv output channels of a model (main graph and subgraphs) and the share in prunable channel groups.

/** Output channels of every Conv (main graph and subgraphs), and those in prunable groups. */
export function convCoverage(model, analysis) {
  const byProducer = new Map();
  for (const g of analysis.groups) for (const p of g.producers) byProducer.set(p, g);
  const consts = new Map();
  const visit = (graph) => {
    for (const t of graph.initializer) consts.set(t.name, t);
    for (const n of graph.node) for (const a of n.attribute) for (const sg of [a.g, ...(a.graphs ?? [])]) if (sg) visit(sg);
  };
  visit(model.graph);
  let total = 0, removable = 0;
  const convs = (graph) => {
    for (const n of graph.node) {
      for (const a of n.attribute) for (const sg of [a.g, ...(a.graphs ?? [])]) if (sg) convs(sg);
      if (n.op_type !== 'Conv') continue;
      const w = consts.get(n.input[1]);
      const c = Number(w.dims[0]);
      total += c;
      const g = byProducer.get(n.name || `Conv(${n.output[0]})`);
      if (g?.prunable) removable += c;
    }
  };
  convs(model.graph);
  return { total, removable, fraction: removable / total };
}
