// Ops that cut or join along an axis. Along the channel axis: Concat puts its inputs' channels at
// offsets (an input carrying no channels keeps its positions), Split and Slice take a range of them
// (their sizes / bounds lose one per removed channel before the range end). Along another axis the
// channels are shared (Concat ties its inputs' channels) or pass (Split, Slice, Gather).
import { attrInt, attrInts } from '../../model.js';
import { isChannelAxis, normalizeAxis, positiveAxis, sliceTrack, sameLayout, type Track } from '../track.js';
import type { RuleContext, RuleTable } from '../rule.js';
import { useOf } from '../int-vectors.js';

/** The channels of t whose position satisfies `keep`, at their original positions. */
function subset(t: Track, keep: (pos: number) => boolean): Track {
  const ids: number[] = [], at: number[] = [];
  t.ids.forEach((id, c) => { if (keep(t.at[c])) { ids.push(id); at.push(t.at[c]); } });
  return { ...t, ids, at, value: undefined };
}

function concat(ctx: RuleContext) {
  const { node, name, inputs } = ctx;
  const axis = attrInt(node, 'axis', 0);
  const tracked = inputs.filter((t): t is Track => !!t);
  if (!tracked.length) return;
  const first = tracked[0];
  if (tracked.some((t) => t.flat || t.span !== 1)) { ctx.blockInputs(`Concat ${name} of an input with merged channels`); return; }
  const onAxis = tracked.map((t) => isChannelAxis(t, axis));
  if (onAxis.some((v) => v === undefined) || onAxis.some((v) => v !== onAxis[0])) { ctx.blockInputs(`Concat ${name} of inputs with different channel axes`); return; }
  if (onAxis[0]) {
    // Sizes along the axis: a carrying input's own, another's from its constant or recorded shape.
    const sizes = node.input.map((input: string, k: number) => {
      const t = inputs[k];
      if (t) return t.size;
      const shape = ctx.shapeOf(input);
      const a = shape ? normalizeAxis(axis, shape.length) : undefined;
      return a === undefined ? undefined : shape![a];
    });
    if (sizes.some((s: number | undefined) => s === undefined)) { ctx.blockInputs(`Concat ${name} with an input whose channels are not followed`); return; }
    const ids: number[] = [], at: number[] = [], from: [number, number][] = [];
    let offset = 0;
    node.input.forEach((_: string, k: number) => {
      const t = inputs[k];
      if (t) t.ids.forEach((id, c) => { ids.push(id); at.push(offset + t.at[c]); from.push([k, c]); });
      offset += sizes[k]!;
    });
    ctx.setOutput(0, { ids, at, size: offset, axis: first.axis, rank: first.rank, span: 1, value: (c) => inputs[from[c][0]]!.value?.(from[c][1]) });
    return;
  }
  // Concatenated along another axis: every input carries the same channels. A graph input of the
  // model's state (a KV cache's past_key_values, concatenated with the new keys along the sequence)
  // carries them too: its declared head count shrinks with them.
  const pf = positiveAxis(first);
  if (tracked.length !== inputs.length && pf !== undefined && !first.flat) {
    const state = node.input.filter((input: string, k: number) => !inputs[k] && ctx.isGraphInput(input) && ctx.shapeOf(input)?.[pf] === first.size * first.span);
    if (state.length === inputs.length - tracked.length) {
      if (tracked.every((t) => sameLayout(t, first))) {
        for (const input of state) ctx.addSlices(first, input, pf, 'io');
        for (const t of tracked.slice(1)) ctx.tie(t.ids, first.ids);
        ctx.setOutput(0, { ...first, value: undefined });
        return;
      }
    }
  }
  if (tracked.length !== inputs.length || tracked.some((t) => !sameLayout(t, first))) { ctx.blockInputs(`Concat ${name} along another axis of inputs with different channels`); return; }
  for (const t of tracked.slice(1)) ctx.tie(t.ids, first.ids);
  ctx.setOutput(0, { ...first, value: (c) => {
    const v = tracked.map((t) => t.value?.(c));
    return v.every((y) => y !== undefined && y === v[0]) ? v[0] : undefined;
  } });
}

function split(ctx: RuleContext) {
  const { node, name, inputs } = ctx;
  const x = inputs[0];
  ctx.block(inputs[1], `Split ${name} reads it as sizes`);
  if (!x) return;
  const axis = attrInt(node, 'axis', 0);
  const on = isChannelAxis(x, axis);
  if (on === undefined) { ctx.block(x, `Split ${name} along an axis that cannot be placed`); return; }
  const outputs: string[] = node.output;
  if (!on) { outputs.forEach((_, k) => ctx.setOutput(k, x)); return; }
  if (x.flat || x.span !== 1) { ctx.block(x, `Split ${name} of merged channels`); return; }
  const given = node.input[1] ? ctx.intConstant(node.input[1]) : undefined;
  if (node.input[1] && !given) { ctx.block(x, `Split ${name} with computed sizes`); return; }
  const attrSizes = attrInts(node, 'split');
  let sizes = given?.values ?? attrSizes;
  const even = !sizes;
  if (!sizes) {
    if (x.size % outputs.length !== 0) { ctx.block(x, `Split ${name} into uneven parts`); return; }
    sizes = outputs.map(() => x.size / outputs.length);
  }
  if (sizes.length !== outputs.length || sizes.some((s) => s < 0) || sizes.reduce((a, b) => a + b, 0) !== x.size) {
    ctx.block(x, `Split ${name}: sizes [${sizes.join(', ')}] do not cover ${x.size} channels`);
    return;
  }
  const pieces: Track[] = [];
  let offset = 0;
  for (const s of sizes) { pieces.push(sliceTrack(x, offset, offset + s)); offset += s; }
  if (even || attrSizes) {
    // Sizes that cannot be rewritten (implicit, or an attribute): the parts lose the same channels.
    if (pieces.some((p) => p.ids.length !== pieces[0].ids.length || p.at.some((q, c) => q !== pieces[0].at[c]))) {
      ctx.block(x, `Split ${name} into parts with different channels and sizes that cannot be rewritten`);
      return;
    }
    for (const p of pieces.slice(1)) ctx.tie(p.ids, pieces[0].ids);
  } else {
    const use = useOf(node, 1, given!.via);
    pieces.forEach((p, k) => ctx.addSlices(p, given!.name, k, 'shape', 1, () => ({ use })));
  }
  pieces.forEach((p, k) => ctx.setOutput(k, p));
}

/** Slice: a range of the channel axis (step 1, non-negative bounds), or a cut along other axes. */
function slice(ctx: RuleContext) {
  const { node, name, inputs } = ctx;
  const x = inputs[0];
  inputs.slice(1).forEach((t) => ctx.block(t, `Slice ${name} reads it as a bound`));
  if (!x) return;
  const legacy = ctx.opset < 10;
  const read = (k: number, attrName: string) => {
    if (legacy) { const a = attrInts(node, attrName); return a ? { name: '', values: a, via: [] } : undefined; }
    return node.input[k] ? ctx.intConstant(node.input[k]) : undefined;
  };
  const starts = read(1, 'starts'), ends = read(2, 'ends');
  const axesIn = read(3, 'axes'), stepsIn = read(4, 'steps');
  const rank = x.rank ?? ctx.rankOf(node.input[0]);
  // Constant axes that miss the channel axis: the bounds may be computed (RoPE's rotate-half cuts the
  // head dimension at Shape(x)[-1] / 2), the channels pass whatever they are.
  if (axesIn && axesIn.values.every((a) => isChannelAxis({ ...x, rank }, a) === false)) { ctx.setOutput(0, x); return; }
  if (!starts || !ends || (!legacy && ((node.input[3] && !axesIn) || (node.input[4] && !stepsIn)))) { ctx.block(x, `Slice ${name} with computed bounds`); return; }
  const axes = axesIn?.values ?? starts.values.map((_, i) => i);
  const i = axes.findIndex((a) => isChannelAxis({ ...x, rank }, a) !== false);
  if (i < 0) { ctx.setOutput(0, x); return; }
  if (isChannelAxis({ ...x, rank }, axes[i]) === undefined) { ctx.block(x, `Slice ${name} along an axis that cannot be placed`); return; }
  const step = stepsIn?.values[i] ?? 1;
  const s0 = starts.values[i], e0 = ends.values[i];
  if (step !== 1 || x.flat || x.span !== 1 || s0 < 0 || e0 < 0) { ctx.block(x, `Slice ${name} of the channel axis with a step or negative bounds`); return; }
  const s = Math.min(s0, x.size), e = Math.min(e0, x.size);
  if (s > 0 || e < x.size) {
    if (legacy || !starts.name || !ends.name) { ctx.block(x, `Slice ${name} with bounds in attributes`); return; }
    // Removing a channel before the range moves both bounds; inside it, the end.
    if (s > 0) ctx.addSlices(subset(x, (p) => p < s), starts.name, i, 'shape', 1, () => ({ use: useOf(node, 1, starts.via) }));
    if (e < x.size) ctx.addSlices(subset(x, (p) => p < e), ends.name, i, 'shape', 1, () => ({ use: useOf(node, 2, ends.via) }));
  }
  ctx.setOutput(0, sliceTrack(x, s, Math.max(s, e)));
}

function gather(ctx: RuleContext) {
  const { node, name, inputs } = ctx;
  const x = inputs[0];
  ctx.block(inputs[1], `Gather ${name} reads it as indices`);
  if (!x) return;
  const rank = x.rank ?? ctx.rankOf(node.input[0]);
  const pa = positiveAxis({ ...x, rank });
  const axis = normalizeAxis(attrInt(node, 'axis', 0), rank);
  const indexRank = ctx.rankOf(node.input[1]);
  if (pa === undefined || axis === undefined || indexRank === undefined || rank === undefined) { ctx.block(x, `Gather ${name} along an axis that cannot be placed`); return; }
  if (axis === pa) { ctx.block(x, `Gather ${name} picks channels`); return; }
  ctx.setOutput(0, { ...x, axis: axis < pa ? pa - 1 + indexRank : pa, rank: rank - 1 + indexRank });
}

export const splitConcatRules: RuleTable = { Concat: concat, Split: split, Slice: slice, Gather: gather };
