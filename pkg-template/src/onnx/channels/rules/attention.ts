// Attention heads. A projection's output features split into heads by a Reshape (…, C) -> (…, H, D):
// the D features of head h are tied into one unit, so that a head is what competes and goes. The
// heads then travel on a batch axis through Transpose, the score product Q·Kᵀ (which ties the heads
// of Q and K), Softmax over the keys, the product with V (tying V's heads), and a Reshape that merges
// (…, H, D) back into one axis, where a head is D consecutive rows of the output projection.
import { copiesAxis, useOf, type VectorEntry } from '../int-vectors.js';
import { positiveAxis, negativeAxis, type Track } from '../track.js';
import type { RuleContext } from '../rule.js';
import { tieRepeatedHeads } from './repeat.js';

const isDense = (t: Track) => t.size === t.ids.length && t.at.every((p, c) => p === c);

/**
 * Reshape (…, C) -> (…, H, D) with D a constant: heads. Returns false when the shape is not of that
 * form (the caller then tries its other cases).
 */
export function splitIntoHeads(ctx: RuleContext, x: Track, entries: VectorEntry[]): boolean {
  if (x.flat || x.span !== 1 || negativeAxis(x) !== -1 || !isDense(x) || entries.length < 2) return false;
  const pa = entries.length - 2;
  if (x.rank !== undefined && x.rank !== pa + 1) return false;
  const head = entries[pa], inner = entries[pa + 1];
  if (inner.kind !== 'const' || inner.value <= 1) return false;
  const D = inner.value, C = x.size;
  if (C % D !== 0) return false;
  const H = C / D;
  const inferred = head.kind === 'const' && head.value === -1;
  if (!(head.kind === 'const' && (head.value === H || inferred))) return false;
  // Leading axes copied, or written as the size they have (a fixed-size export folds Shape into constants).
  const declared = ctx.shapeOf(ctx.node.input[0]);
  const keeps = (e: VectorEntry, i: number) => copiesAxis(e, i, !inferred) || (e.kind === 'const' && e.value > 0 && declared?.length === pa + 1 && declared[i] === e.value);
  if (!entries.slice(0, pa).every(keeps)) return false;
  const heads: number[] = [];
  for (let h = 0; h < H; h++) {
    const run = x.ids.slice(h * D, (h + 1) * D);
    ctx.tie(run.map(() => run[0]), run);
    heads.push(run[0]);
  }
  const out: Track = { ids: heads, at: heads.map((_, h) => h), size: H, axis: pa, rank: pa + 2, span: 1 };
  if (head.kind === 'const' && !inferred) ctx.addSlices(out, head.tensor, head.index, 'shape', 1, () => ({ use: useOf(ctx.node, 1, head.via) }));
  ctx.setOutput(0, out);
  return true;
}

/**
 * MatMul of two computed values. Channels on a batch axis (heads) pass when both operands carry the
 * same ones (tied) or the other one broadcasts over that axis; rows of the first or columns of the
 * second pass unchanged. Anything else keeps its channels.
 */
export function activationMatMul(ctx: RuleContext) {
  const { node, name, inputs } = ctx;
  const [a, b] = inputs;
  const rankA = a?.rank ?? ctx.rankOf(node.input[0]);
  const rankB = b?.rank ?? ctx.rankOf(node.input[1]);
  const why = `MatMul ${name} of two computed values mixes the channels`;
  if (!a && !b) return;
  if (rankA === undefined || rankB === undefined || rankA < 2 || rankB < 2) { ctx.blockInputs(why); return; }
  const rank = Math.max(rankA, rankB);
  const place = (t: Track, r: number) => { const p = positiveAxis({ ...t, rank: t.rank ?? r }); return p === undefined ? undefined : p + (rank - r); };
  const pa = a && !a.flat && a.span === 1 ? place(a, rankA) : undefined;
  const pb = b && !b.flat && b.span === 1 ? place(b, rankB) : undefined;
  const batch = (p: number | undefined) => p !== undefined && p < rank - 2;
  // The other operand broadcasts over axis p (aligned from the end) when it lacks it or has it of 1.
  const broadcasts = (input: string, r: number, p: number) => {
    const at = p - (rank - r);
    if (at < 0) return true;
    const shape = ctx.shapeOf(input);
    return !!shape && shape.length === r && shape[at] === 1;
  };
  let out: Track | undefined;
  // Query heads against K/V heads repeated for grouped-query attention (one operand with a span).
  const ga = a && !a.flat ? place(a, rankA) : undefined;
  const gqa = a && b && !b.flat && batch(ga) && ga === place(b, rankB) && a.span !== b.span ? tieRepeatedHeads(ctx, a, b) : undefined;
  if (gqa) {
    out = { ...gqa, axis: ga!, rank };
  } else if (a && b && batch(pa) && pa === pb && a.size === b.size && a.ids.length === b.ids.length && a.at.every((p, c) => p === b.at[c])) {
    ctx.tie(a.ids, b.ids);
    out = { ...a, axis: pa!, rank };
  } else if (a && !b && batch(pa) && broadcasts(node.input[1], rankB, pa!)) {
    out = { ...a, axis: pa!, rank };
  } else if (b && !a && batch(pb) && broadcasts(node.input[0], rankA, pb!)) {
    out = { ...b, axis: pb!, rank };
  } else if (a && !b && pa === rank - 2) {
    out = { ...a, axis: pa, rank };
  } else if (b && !a && pb === rank - 1) {
    out = { ...b, axis: pb, rank };
  }
  if (!out) { ctx.blockInputs(why); return; }
  ctx.setOutput(0, { ...out, value: undefined });
}
