// Ops that combine values along axes: Softmax and Reduce*. Along the channel axis every channel feeds
// every output, so its channels are kept; along other axes (attention probabilities over the keys, a
// mean over space) the channels pass, with the axis moved when reduced axes before it are dropped.
import { attrInt } from '../../model.js';
import { normalizeAxis, positiveAxis, negativeAxis } from '../track.js';
import type { RuleContext, RuleTable } from '../rule.js';
import { axesOf } from './layout.js';

function softmax(ctx: RuleContext) {
  const { node, name, op } = ctx;
  const x = ctx.inputs[0];
  if (!x) return;
  const rank = x.rank ?? ctx.rankOf(node.input[0]);
  const pa = positiveAxis({ ...x, rank });
  // Before opset 13 the input is coerced to 2-D at `axis` (default 1): every axis from it on is combined.
  const legacy = ctx.opset < 13;
  const axis = normalizeAxis(attrInt(node, 'axis', legacy ? 1 : -1), rank);
  const na = negativeAxis({ ...x, rank });
  const sameAsLast = !legacy && attrInt(node, 'axis', -1) === -1 && na !== undefined && na !== -1;
  const free = sameAsLast || (axis !== undefined && pa !== undefined && (legacy ? pa < axis : pa !== axis));
  if (!free) { ctx.block(x, `${op} ${name} over the channel axis`); return; }
  ctx.setOutput(0, { ...x, value: undefined });
}

function reduce(ctx: RuleContext) {
  const { node, name, op } = ctx;
  const x = ctx.inputs[0];
  if (!x) return;
  ctx.inputs.slice(1).forEach((t) => ctx.block(t, `${op} ${name} reads it as axes`));
  const axes = axesOf(ctx, 1);
  const keep = attrInt(node, 'keepdims', 1) === 1;
  const rank = x.rank ?? ctx.rankOf(node.input[0]);
  const pa = positiveAxis({ ...x, rank });
  const all = axes === undefined && attrInt(node, 'noop_with_empty_axes', 0) === 0;
  if (axes === 'computed' || all || pa === undefined || rank === undefined) { ctx.block(x, `${op} ${name} over axes that may hold the channels`); return; }
  if (axes === undefined) { ctx.setOutput(0, x); return; }
  const norm = axes.map((a) => normalizeAxis(a, rank));
  if (norm.some((a) => a === undefined || a === pa)) { ctx.block(x, `${op} ${name} over the channel axis`); return; }
  const value = op === 'ReduceMean' || op === 'ReduceMax' || op === 'ReduceMin' ? x.value : undefined;
  ctx.setOutput(0, keep ? { ...x, value } : { ...x, value, axis: pa - norm.filter((a) => a! < pa).length, rank: rank - norm.length });
}

const REDUCE = ['ReduceMean', 'ReduceSum', 'ReduceMax', 'ReduceMin', 'ReduceProd', 'ReduceL1', 'ReduceL2',
  'ReduceLogSum', 'ReduceLogSumExp', 'ReduceSumSquare'];

export const reduceRules: RuleTable = {
  Softmax: softmax, LogSoftmax: softmax, Hardmax: softmax,
  ...Object.fromEntries(REDUCE.map((op) => [op, reduce])),
};
