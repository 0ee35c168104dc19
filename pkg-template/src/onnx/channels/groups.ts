// From the walk to the groups: channels that reach a graph output, members with uses outside their
// group and tensor positions claimed by two groups are kept; every merged space becomes a group.
import type { NodeProto, OnnxModel } from '../model.js';
import type { ChannelGroup, GroupChannel, GroupMember, ChannelAnalysis } from './types.js';
import type { WalkResult } from './walk.js';
import { useKey } from './shape-copies.js';
import { positiveAxis } from './track.js';

export function groupsOf(model: OnnxModel, walk: WalkResult): ChannelAnalysis {
  const { sets, tracks, memberUses, consumers } = walk;
  const g = model.graph;
  for (const o of g.output) {
    const t = tracks.get(o.name);
    if (!t) continue;
    // The model's own state (a KV cache): channels that came in through a graph input leave through
    // this output, which the caller feeds back there; both declarations shrink together.
    const axis = positiveAxis(t);
    const state = axis !== undefined && !t.flat && t.ids.every((id) => sets.slices[sets.find(id)].some((s) => s.kind === 'io'));
    if (state) t.ids.forEach((id, c) => sets.addSlice(id, { tensor: o.name, axis, pos: t.at[c] * t.span, rep: t.span, kind: 'io' }));
    else for (const id of t.ids) sets.block(id, `it reaches graph output "${o.name}", whose shape is kept`);
  }
  // A member tensor with uses outside its channel group would change shape under them. The nodes
  // that finally read a tensor are found through Cast / Identity. An integer vector ('shape' member)
  // is exempt: the removal gives each use it rewrites a private copy (shape-copies.ts), the other
  // readers keep the values they read.
  const through = (op: string) => op === 'Cast' || op === 'Identity';
  const usesOf = (name: string, mine: Set<NodeProto> | undefined, acc: NodeProto[] = [], depth = 0): NodeProto[] => {
    for (const c of consumers.get(name) ?? []) {
      if (!mine?.has(c) && through(c.op_type) && depth < 8) usesOf(c.output[0], mine, acc, depth + 1);
      else acc.push(c);
    }
    return acc;
  };
  const outputs = new Set(g.output.map((o: { name: string }) => o.name));
  const foreign = new Map<string, boolean>();
  for (let id = 0; id < sets.size; id++) {
    if (sets.find(id) !== id) continue;
    for (const s of sets.slices[id]) {
      if (s.kind === 'shape' || s.kind === 'io') continue;
      let bad = foreign.get(s.tensor);
      if (bad === undefined) {
        const mine = memberUses.get(s.tensor);
        bad = usesOf(s.tensor, mine).some((c) => !mine?.has(c)) || outputs.has(s.tensor);
        foreign.set(s.tensor, bad);
      }
      if (bad) sets.block(id, `tensor "${s.tensor}" has uses outside the group`);
    }
  }

  const groups: ChannelGroup[] = [];
  const channelsOf = new Map<number, GroupChannel[]>();
  for (const { producers, roots } of sets.spaces()) {
    const reason = roots.map((r) => sets.blocked[r]).find((b) => b !== undefined);
    const seen = new Map<string, GroupMember>();
    for (const r of roots) for (const sl of sets.slices[r]) seen.set(`${sl.tensor}:${sl.axis}`, { tensor: sl.tensor, axis: sl.axis, kind: sl.kind });
    const id = groups.length;
    const runs = runsOf(roots.map((r) => sets.run[r]));
    const uneven = typeof runs === 'string' ? runs : undefined;
    groups.push({
      id, producers, channels: roots.length, members: [...seen.values()],
      prunable: !reason && !uneven && roots.length > 1, reason: reason ?? uneven ?? (roots.length > 1 ? undefined : 'a single channel'),
      ...(typeof runs === 'number' ? { runs } : {}),
    });
    channelsOf.set(id, roots.map((r) => ({ root: r, slices: sets.slices[r], ...(typeof runs === 'number' ? { run: sets.run[r] } : {}) })));
  }
  // A tensor position claimed by two groups (a weight shared by two spaces) cannot be cut safely.
  // Different positions of one axis (a Concat's consumer) are fine, and so are two uses of one
  // integer vector (each use gets its own copy).
  const owner = new Map<string, number>();
  for (const gr of groups) {
    for (const ch of channelsOf.get(gr.id)!) {
      for (const sl of ch.slices) {
        const use = sl.kind === 'shape' ? useKey(sl.use) : '';
        for (let p = sl.pos; p < sl.pos + sl.rep; p++) {
          const k = `${sl.tensor}\u0000${sl.axis}\u0000${p}\u0000${use}`;
          const o = owner.get(k);
          if (o === undefined) { owner.set(k, gr.id); continue; }
          if (o === gr.id) continue;
          for (const x of [groups[o], gr]) {
            if (x.prunable) { x.prunable = false; x.reason = `tensor "${sl.tensor}" axis ${sl.axis} is shared with another group`; }
          }
        }
      }
    }
  }
  return { groups, channelsOf, depthwise: walk.depthwise };
}

/**
 * The KV groups of a group's units (query heads, heads 'query'): their count when every unit has one
 * and each has as many units; undefined when no unit has one; else why the units cannot go.
 */
function runsOf(run: (number | undefined)[]): number | string | undefined {
  if (run.every((r) => r === undefined)) return undefined;
  const size = new Map<number, number>();
  for (const r of run) {
    if (r === undefined) return 'query heads mixed with other channels';
    size.set(r, (size.get(r) ?? 0) + 1);
  }
  const counts = [...size.values()];
  return counts.every((c) => c === counts[0]) ? size.size : 'KV groups with different numbers of query heads';
}
