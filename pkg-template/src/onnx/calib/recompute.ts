// What a sweep's capture recomputes later instead of caching (sweep.ts): the cut between segments is
// held for every calibration sample, so each value in it costs its size times the samples (issue
// 40: SmolLM2 at 128 x 512 tokens held the causal mask, RoPE's cos / sin, the residual stream and
// the captured layer input, 2 752 floats a token, 721 MB). A value is left out of the cut when it
// can be computed again from what stays at hand anyway, at the cost of running its nodes again:
//   - from the graph inputs and constants alone, through no node that reads a layer's weight (masks,
//     positions, embeddings): cheap, and held for many segments when cached;
//   - a layer input captured now, from values the cut holds anyway (cached values still read later,
//     or kept by this capture) and from the graph inputs along paths without a layer: a decoder's
//     normalized inputs, attention output and MLP product, recomputed from the residual stream. A
//     path through a layer back to the graph inputs is not allowed: a chain of layers from the
//     inputs would be run again at every capture.
// Either way the values computed are the same (the same nodes on the same inputs), so results do
// not change; only the cut's size and the nodes run do.
import type { GraphIndex } from './graph-cut.js';

export interface RecomputeQuery {
  ix: GraphIndex;
  /** The capture's segment (node indices). */
  nodes: number[];
  /** The values the capture would cache. */
  keep: ReadonlySet<string>;
  /** The values the capture computes for its caller (the layer inputs). */
  wanted: readonly string[];
  /** Values of the cut before this capture. */
  cached: (v: string) => boolean;
  /** Nodes whose outputs are final and read (sweep.ts `ran`, with this segment's nodes). */
  ran: ReadonlySet<number>;
  /** Whether a node reads a layer's weight. */
  layerNode: (i: number) => boolean;
}

/** The values of `keep` to leave out of the cut, and the nodes that compute them (to run again). */
export function recomputable(q: RecomputeQuery): { values: Set<string>; nodes: Set<number> } {
  const { ix } = q;
  const inSegment = new Set(q.nodes);
  const values = new Set<string>(), nodes = new Set<number>();
  const take = (v: string, chain: Set<number>) => { values.add(v); for (const i of chain) nodes.add(i); };

  // From the graph inputs alone, through no layer: the nodes of this segment computing `v` back to
  // the graph inputs (constants are recomputed by segments anyway), or null.
  const fromInputs = (v: string): Set<number> | null => {
    const chain = new Set<number>();
    const stack = [v];
    while (stack.length) {
      const x = stack.pop()!;
      if (ix.initializers.has(x) || ix.feeds.has(x)) continue;
      const i = ix.producer.get(x);
      if (i === undefined || !inSegment.has(i) || q.cached(x) || q.layerNode(i)) return null;
      if (chain.has(i)) continue;
      chain.add(i);
      stack.push(...ix.inputs[i]);
    }
    return chain;
  };
  for (const v of q.keep) {
    const chain = fromInputs(v);
    if (chain) take(v, chain);
  }
  // Layer inputs captured now, from values held anyway: the walk back stops at kept and cached values,
  // and may reach the graph inputs only along paths without a layer (masks, positions), never
  // through one, so that no chain of layers from the inputs is run again at every capture.
  const kept = (x: string) => q.keep.has(x) && !values.has(x);
  for (const v of new Set(q.wanted)) {
    if (!kept(v)) continue;
    const chain = new Set<number>(), frontier = new Set<string>(), seen = new Set<string>();
    const stack: [string, boolean][] = [[v, false]];
    let ok = true;
    while (ok && stack.length) {
      const [x, throughLayer] = stack.pop()!;
      const key = `${throughLayer ? 1 : 0}${x}`;
      if (seen.has(key) || ix.initializers.has(x)) continue;
      seen.add(key);
      if (x !== v && (kept(x) || q.cached(x))) { frontier.add(x); continue; }
      if (ix.feeds.has(x)) { ok = !throughLayer; continue; }
      const i = ix.producer.get(x);
      if (i === undefined || !inSegment.has(i)) { ok = false; continue; }
      chain.add(i);
      const layer = throughLayer || q.layerNode(i);
      for (const y of ix.inputs[i]) stack.push([y, layer]);
    }
    if (!ok) continue;
    // A cached source is held anyway when a node outside this chain still reads it.
    const held = (x: string) => kept(x) || (ix.consumers.get(x) ?? []).some((n) => !chain.has(n) && (!q.ran.has(n) || nodes.has(n)));
    if ([...frontier].every(held)) take(v, chain);
  }
  return { values, nodes };
}
