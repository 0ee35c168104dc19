// Grouped-query attention repeats each K/V head for the n_rep query heads that read it: K (…, Hkv, S, D)
// -> Unsqueeze -> Expand (…, Hkv, n_rep, S, D) -> Reshape (…, Hkv·n_rep, S, D). The Expand leaves the
// head axis as it is (broadcasting cannot change an axis longer than 1); the Reshape merges it with the
// copies after it, so that KV head c covers the n_rep positions [c·n_rep, (c+1)·n_rep) (a track with
// span n_rep); the score and value products then tie query head h to KV head ⌊h / n_rep⌋, so that a
// KV head and its query heads are one unit (removing a KV head removes the query heads that read it,
// and n_rep stays what the Expand writes). With ChannelOptions.heads 'query' the K/V heads stay whole
// and each query head is a unit of its own, marked with its KV group: the scoring then takes the same
// count from every group of the layer (scoreChannels), so that n_rep shrinks by that count and the
// entries that write it (the Expand's copies, the Reshape's merged count, torch's factor) lose it.
import { copiesAxis, useOf, type VectorEntry } from '../int-vectors.js';
import { positiveAxis, sliceTrack, type RepeatSite, type ShapeEntry, type Track } from '../track.js';
import type { RuleContext, RuleTable } from '../rule.js';

const isDense = (t: Track) => t.size === t.ids.length && t.at.every((p, c) => p === c);
const sameIds = (a: Track, b: Track) => a.ids.length === b.ids.length && a.ids.every((id, c) => id === b.ids[c] && a.at[c] === b.at[c]);

/** A run-time dimension that is the channel axis of a value carrying exactly the channels of x. */
function isChannelDim(ctx: RuleContext, e: VectorEntry, x: Track): boolean {
  if (e.kind !== 'dim' && e.kind !== 'scaled') return false;
  const t = ctx.trackOf(e.of);
  return !!t && !t.flat && t.span === x.span && positiveAxis(t) === e.axis && sameIds(t, x);
}

function expand(ctx: RuleContext) {
  const { node, name, inputs } = ctx;
  const x = inputs[0];
  ctx.block(inputs[1], `Expand ${name} reads it as its shape`);
  if (!x) return;
  const rank = x.rank ?? ctx.rankOf(node.input[0]);
  const pa = positiveAxis({ ...x, rank });
  const entries = ctx.vector(node.input[1]);
  if (x.flat || rank === undefined || pa === undefined || !entries) { ctx.block(x, `Expand ${name} with a shape that cannot be followed`); return; }
  // A single channel may be broadcast into copies of itself: its axis is no longer its own.
  if (x.size * x.span === 1) { ctx.block(x, `Expand ${name} may repeat a single channel`); return; }
  const outRank = Math.max(rank, entries.length);
  const at = pa + outRank - rank;
  const e = entries[at - (outRank - entries.length)];
  // The entry after the head axis counts the copies of each head (n_rep), when the Expand repeats.
  const copies = entries[at + 1 - (outRank - entries.length)];
  const repeat: RepeatSite | undefined = copies?.kind === 'const' && copies.value > 1
    ? { copies: [{ tensor: copies.tensor, index: copies.index, use: useOf(node, 1, copies.via) }], merged: [] } : undefined;
  if (e) {
    if (e.kind === 'const' && e.value === x.size * x.span) ctx.addSlices(x, e.tensor, e.index, 'shape', x.span, () => ({ use: useOf(node, 1, e.via) }));
    else if (!(e.kind === 'const' && e.value === 1) && !(e.kind === 'dim' && isChannelDim(ctx, e, x))) {
      ctx.block(x, `Expand ${name} writes a channel count that does not follow the channels`);
      return;
    }
  }
  ctx.setOutput(0, { ...x, axis: at, rank: outRank, repeat });
}

const KV_WHOLE = 'its K/V heads stay whole: query heads are the unit within their groups (heads "query")';

/**
 * Reshape (…, C, n, …) -> (…, C·n, …): channel c becomes n consecutive positions (the K/V repeat). The
 * merged entry is C·n as a constant (rewritten with the removal), a run-time count of the channels
 * times n, or -1 with n recorded. Returns false when the shape is not of that form.
 */
export function mergeRepeat(ctx: RuleContext, x: Track, entries: VectorEntry[]): boolean {
  const rank = x.rank ?? ctx.rankOf(ctx.node.input[0]);
  const pa = positiveAxis({ ...x, rank });
  if (x.flat || x.span !== 1 || !isDense(x) || rank === undefined || pa === undefined || pa + 1 >= rank || entries.length !== rank - 1) return false;
  const declared = ctx.shapeOf(ctx.node.input[0]);
  const kept = entries.slice(0, pa).every((e, i) => copiesAxis(e, i, true) || (e.kind === 'const' && declared?.[i] === e.value));
  if (!kept) return false;
  const m = entries[pa], C = x.size;
  const query = ctx.heads === 'query';
  const site: RepeatSite = { copies: [...(x.repeat?.copies ?? [])], merged: [] };
  let n: number | undefined;
  if (m.kind === 'scaled' && isChannelDim(ctx, m, x)) {
    n = m.factor;
    site.copies.push({ tensor: m.factorAt.tensor, index: m.factorAt.index, use: useOf(ctx.node, 1, m.factorAt.via) });
  } else if (m.kind === 'const' && m.value > C && m.value % C === 0) {
    n = m.value / C;
    const use = useOf(ctx.node, 1, m.via);
    // Query heads as the unit: the merged count is theirs (tieRepeatedHeads), not the KV heads'.
    if (query) site.merged.push({ tensor: m.tensor, index: m.index, use });
    else ctx.addSlices(x, m.tensor, m.index, 'shape', n, () => ({ use }));
  } else if (m.kind === 'const' && m.value === -1) n = declared?.[pa + 1];
  if (n === undefined || n < 1) return false;
  if (query) ctx.block(x, KV_WHOLE);
  ctx.setOutput(0, { ...x, axis: pa, rank: rank - 1, span: n, value: undefined, repeat: site });
  return true;
}

/**
 * A product of query heads a (span 1) with repeated K/V heads b (span n, a.size = b.size · n) along
 * one batch axis: query head h reads KV head ⌊h / n⌋, and they become one unit. The output carries the
 * query heads. Returns undefined when the operands are not of that form.
 *
 * With heads 'query', query head h is marked as one of KV group ⌊h / n⌋ instead. Every query head
 * carries one position of each merged count (Hkv · n_rep loses one per head removed) and the heads
 * of the first group one position of each copies count: every group loses the same number, so
 * n_rep loses what the first group loses.
 */
export function tieRepeatedHeads(ctx: RuleContext, a: Track, b: Track): Track | undefined {
  const [q, kv] = a.span === 1 ? [a, b] : [b, a];
  if (q.span !== 1 || kv.span <= 1 || q.flat || kv.flat || !isDense(q) || !isDense(kv) || q.size !== kv.size * kv.span) return undefined;
  const n = kv.span;
  if (ctx.heads !== 'query') {
    ctx.tie(q.ids, q.ids.map((_, h) => kv.ids[Math.floor(h / n)]));
    return q;
  }
  ctx.block(kv, KV_WHOLE);
  const site = kv.repeat;
  if (!site?.copies.length) {
    ctx.block(q, `the K/V repeat before ${ctx.name} writes n_rep where it cannot be rewritten`);
    return q;
  }
  ctx.setRuns(q.ids, q.ids.map((_, h) => Math.floor(h / n)));
  const add = (t: Track, e: ShapeEntry) => ctx.addSlices(t, e.tensor, e.index, 'shape', 1, () => ({ use: e.use }));
  for (const e of site.merged) add(q, e);
  for (const e of site.copies) add(sliceTrack(q, 0, n), e);
  return q;
}

export const repeatRules: RuleTable = { Expand: expand };
