// What a sweep's capture recomputes later instead of caching (sweep.ts): the cut between segments is
// held for every calibration sample, so each value in it costs its size times the samples (issue
// 40: SmolLM2 at 128 x 512 tokens held the causal mask, RoPE's cos / sin, the residual stream and
// the captured layer input, 2 752 floats a token, 721 MB). A value is left out of the cut when it
// can be computed again from what stays at hand anyway, at the cost of running its nodes again:
//   - from the graph inputs and constants alone, through no node that reads a layer's weight (masks,
//     positions, embeddings): cheap, and held for many segments when cached. Not through a node that
//     reads an initializer larger than one sample of the value: each segment that recomputes it would
//     carry that table (read from the file, encoded into the segment, copied by onnxruntime). On
//     SmolLM2 the causal mask reads Shape(token embeddings), so every block's attention segment held
//     the whole token-embedding table, three times while its session was made (issue 40's transient
//     of array buffers; bench/RESULTS.md): the mask is cut instead, or goes to the cut store;
//   - a layer input captured now, from values the cut holds anyway (cached values still read later,
//     or kept by this capture): a decoder's normalized inputs and MLP product, recomputed from the
//     residual stream. Graph inputs are not such a source: a chain of layers from the inputs would
//     be run again at every capture.
// Either way the values computed are the same (the same nodes on the same inputs), so results do
// not change; only the cut's size and the nodes run do.
import type { GraphIndex } from './graph-cut.js';
import { prod, storedByteSize, toNum, type TensorProto } from '../tensor-data.js';

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
  /** Bytes of one sample's tensor of a value of `keep`. */
  sampleBytes: (v: string) => number;
  /**
   * Default true: layer inputs too (the second kind above). False when the cut has a store to go
   * to (cut-store.ts): a copy out and back is cheaper than running the layers again (a decoder's
   * gate / up projections for its MLP product), and the values of the first kind, held for many
   * segments, are still left out.
   */
  layerInputs?: boolean;
}

/** The values of `keep` to leave out of the cut, and the nodes that compute them (to run again). */
export function recomputable(q: RecomputeQuery): { values: Set<string>; nodes: Set<number> } {
  const { ix } = q;
  const inSegment = new Set(q.nodes);
  const values = new Set<string>(), nodes = new Set<number>();
  /** The nodes of this segment computing `v` back to values where `stop` holds; null where `bad` meets one. */
  const chainOf = (v: string, stop: (x: string) => boolean, bad: (x: string, i?: number) => boolean): { chain: Set<number>; frontier: Set<string> } | null => {
    const chain = new Set<number>(), frontier = new Set<string>();
    const stack = [v];
    while (stack.length) {
      const x = stack.pop()!;
      if (ix.initializers.has(x)) continue;
      if (x !== v && stop(x)) { frontier.add(x); continue; }
      const i = ix.producer.get(x);
      if (i === undefined || !inSegment.has(i)) return null;
      if (bad(x, i)) return null;
      if (chain.has(i)) continue;
      chain.add(i);
      stack.push(...ix.inputs[i]);
    }
    return { chain, frontier };
  };
  const take = (v: string, chain: Set<number>) => { values.add(v); for (const i of chain) nodes.add(i); };

  // From the graph inputs alone, through no layer and no table larger than a sample of the value:
  // small constants are recomputed by segments anyway.
  const biggest = (i: number) => Math.max(0, ...ix.inputs[i].map((x) => { const t = ix.initializers.get(x); return t ? initializerBytes(t) : 0; }));
  for (const v of q.keep) {
    const most = q.sampleBytes(v);
    const c = chainOf(v, (x) => ix.feeds.has(x), (x, i) => q.cached(x) || (i !== undefined && (q.layerNode(i) || biggest(i) > most)));
    if (c) take(v, c.chain);
  }
  if (q.layerInputs === false) return { values, nodes };
  // Layer inputs captured now, from values held anyway.
  const kept = (x: string) => q.keep.has(x) && !values.has(x);
  for (const v of new Set(q.wanted)) {
    if (!kept(v)) continue;
    const c = chainOf(v, (x) => kept(x) || q.cached(x), (x) => ix.feeds.has(x) || values.has(x));
    if (!c) continue;
    // A cached source is held anyway when a node outside this chain still reads it.
    const held = (x: string) => kept(x) || (ix.consumers.get(x) ?? []).some((n) => !c.chain.has(n) && (!q.ran.has(n) || nodes.has(n)));
    if ([...c.frontier].every(held)) take(v, c.chain);
  }
  return { values, nodes };
}

/** Bytes of an initializer's values (a sparse one's stored values); 0 for types without a fixed width. */
function initializerBytes(t: TensorProto): number {
  const v = t.values ?? t;
  return Math.max(0, storedByteSize(v.data_type, prod((v.dims ?? []).map(toNum))));
}
