// Layout and shape ops: the channels stay, their axis moves (Transpose, Squeeze, Unsqueeze), they
// merge with the axes after them (Flatten, Reshape to (…, -1)), split into heads (attention.ts), or
// the op leaves them alone (Pad elsewhere, Resize, Shape). A Reshape reading a constant channel
// count, directly or through Shape -> Gather -> Concat, gets that constant rewritten with the removal.
import { attrInt, attrInts } from '../../model.js';
import { positiveAxis, negativeAxis, normalizeAxis } from '../track.js';
import type { RuleContext, RuleTable } from '../rule.js';
import { splitIntoHeads } from './attention.js';
import { copiesAxis, useOf } from '../int-vectors.js';
import { mergeRepeat } from './repeat.js';

function transpose(ctx: RuleContext) {
  const x = ctx.inputs[0];
  if (!x) return;
  const perm = attrInts(ctx.node, 'perm');
  const pa = positiveAxis(x);
  if (!perm || pa === undefined || x.flat) { ctx.block(x, `Transpose ${ctx.name} without a known permutation of the channel axis`); return; }
  ctx.setOutput(0, { ...x, axis: perm.indexOf(pa), rank: perm.length });
}

function flatten(ctx: RuleContext) {
  const x = ctx.inputs[0];
  if (!x) return;
  if (attrInt(ctx.node, 'axis', 1) === 1 && positiveAxis(x) === 1 && !x.flat && x.span === 1) ctx.setOutput(0, { ...x, axis: 1, rank: 2, flat: true });
  else ctx.block(x, `Flatten ${ctx.name} across the channel axis`);
}

function reshape(ctx: RuleContext) {
  const { node, name, inputs } = ctx;
  const x = inputs[0];
  ctx.block(inputs[1], `Reshape ${name} reads it as its shape`);
  if (!x) return;
  const entries = ctx.vector(node.input[1]);
  if (!entries || x.flat) { ctx.block(x, `Reshape ${name} with a shape that cannot be followed`); return; }
  if (splitIntoHeads(ctx, x, entries)) return;
  const pa = positiveAxis(x);
  const C = x.size * x.span;
  const declared = ctx.shapeOf(node.input[0]);
  const constValue = (k: number) => { const e = entries[k]; return e?.kind === 'const' ? e.value : undefined; };
  const leadingKept = (end: number, allowInfer: boolean) => entries.slice(0, end).every((e, i) =>
    copiesAxis(e, i, allowInfer) || (e.kind === 'const' && declared !== undefined && declared[i] === e.value));
  if (pa === undefined) { ctx.block(x, `Reshape ${name} of a value of unknown rank`); return; }
  const at = entries[pa];
  // The channel axis stays where it is, with its count.
  if (at && pa < entries.length && leadingKept(pa, true)) {
    if (at.kind === 'dim' && at.of === node.input[0] && at.axis === pa) { ctx.setOutput(0, { ...x, axis: pa, rank: entries.length }); return; }
    if (at.kind === 'const' && (at.value === 0 || at.value === C)) {
      if (at.value === C) ctx.addSlices(x, at.tensor, at.index, 'shape', x.span, () => ({ use: useOf(node, 1, at.via) }));
      ctx.setOutput(0, { ...x, axis: pa, rank: entries.length });
      return;
    }
  }
  // The channel axis inferred (-1), every other axis copied: its size cannot change. Torch's
  // scaled_dot_product_attention export takes this view of its [B, H, S, D] output (the heads on H)
  // before the heads are merged back.
  const rank = x.rank ?? declared?.length;
  if (at?.kind === 'const' && at.value === -1 && entries.length === rank && entries.every((e, i) => i === pa || copiesAxis(e, i, false))) {
    ctx.setOutput(0, { ...x, axis: pa, rank });
    return;
  }
  // The channel axis and every axis after it merge (Flatten written as a Reshape, heads merged back).
  const mergesTail = entries.length === pa + 1 && x.span === 1 && (x.rank === undefined || x.rank > pa + 1);
  const classicFlatten = pa === 1 && entries.length === 2 && constValue(1) === -1;
  if (mergesTail && at.kind === 'const' && at.value === -1 && (classicFlatten || leadingKept(pa, false))) {
    ctx.setOutput(0, { ...x, axis: pa, rank: pa + 1, flat: true });
    return;
  }
  if (mergesTail && at.kind === 'const' && at.value > 0 && at.value % x.size === 0 && leadingKept(pa, true)) {
    const span = at.value / x.size;
    ctx.addSlices(x, at.tensor, at.index, 'shape', span, () => ({ use: useOf(node, 1, at.via) }));
    ctx.setOutput(0, { ...x, axis: pa, rank: pa + 1, span });
    return;
  }
  if (mergeRepeat(ctx, x, entries)) return;
  ctx.block(x, `Reshape ${name} merges or splits the channel axis`);
}

/** The axes of Squeeze / Unsqueeze / Reduce*: an attribute before opset 13 (18 for Reduce*), an input after. */
export function axesOf(ctx: RuleContext, inputIndex: number): number[] | undefined | 'computed' {
  const a = attrInts(ctx.node, 'axes');
  if (a) return a;
  const name = ctx.node.input[inputIndex];
  if (!name) return undefined;
  return ctx.intConstant(name)?.values ?? 'computed';
}

function squeeze(ctx: RuleContext) {
  const x = ctx.inputs[0];
  if (!x) return;
  const axes = axesOf(ctx, 1);
  const rank = x.rank ?? ctx.rankOf(ctx.node.input[0]);
  const pa = positiveAxis({ ...x, rank });
  if (axes === 'computed' || axes === undefined || rank === undefined || pa === undefined) {
    ctx.block(x, `Squeeze ${ctx.name} with axes that cannot be told`);
    return;
  }
  const norm = axes.map((a) => normalizeAxis(a, rank));
  if (norm.some((a) => a === undefined || a === pa)) { ctx.block(x, `Squeeze ${ctx.name} of the channel axis`); return; }
  ctx.setOutput(0, { ...x, axis: pa - norm.filter((a) => a! < pa).length, rank: rank - norm.length });
}

function unsqueeze(ctx: RuleContext) {
  const x = ctx.inputs[0];
  if (!x) return;
  const axes = axesOf(ctx, 1);
  const rank = x.rank ?? ctx.rankOf(ctx.node.input[0]);
  if (axes === 'computed' || axes === undefined || rank === undefined) {
    // Axes counted from the start move a channel axis counted from the end not at all.
    const na = negativeAxis(x);
    if (axes !== 'computed' && axes !== undefined && na !== undefined && axes.every((a) => a >= 0)) { ctx.setOutput(0, { ...x, axis: na, rank: undefined }); return; }
    ctx.block(x, `Unsqueeze ${ctx.name} with axes that cannot be told`);
    return;
  }
  const outRank = rank + axes.length;
  const norm = axes.map((a) => normalizeAxis(a, outRank)).sort((p, q) => p! - q!);
  if (norm.some((a) => a === undefined)) { ctx.block(x, `Unsqueeze ${ctx.name} with axes out of range`); return; }
  let pa = positiveAxis({ ...x, rank })!;
  for (const a of norm) if (a! <= pa) pa++;
  ctx.setOutput(0, { ...x, axis: pa, rank: outRank });
}

function pad(ctx: RuleContext) {
  const x = ctx.inputs[0];
  if (!x) return;
  const node = ctx.node;
  const padsConst = node.input[1] ? ctx.intConstant(node.input[1]) : undefined;
  const pads = padsConst ? padsConst.values : attrInts(node, 'pads');
  const pa = positiveAxis(x);
  const r = pads ? pads.length / 2 : undefined;
  if (!pads || pa === undefined || node.input[3] || pads[pa] !== 0 || pads[pa + r!] !== 0) {
    ctx.block(x, `Pad ${ctx.name} may pad the channel axis`);
    return;
  }
  ctx.setOutput(0, x);
}

function resize(ctx: RuleContext) {
  const { node, inputs } = ctx;
  inputs.slice(1).forEach((t) => ctx.block(t, `${ctx.op} ${ctx.name} is not handled`));
  const x = inputs[0];
  if (!x) return;
  if (ctx.op === 'Resize' && node.input[3]) { ctx.block(x, `Resize ${ctx.name} with explicit sizes`); return; }
  ctx.setOutput(0, x);
}

/** Shape reads the (new) channel count at run time: nothing to follow. */
const shape = () => {};

export const layoutRules: RuleTable = {
  Transpose: transpose, Flatten: flatten, Reshape: reshape, Squeeze: squeeze, Unsqueeze: unsqueeze,
  Pad: pad, Resize: resize, Upsample: resize, Shape: shape,
};
