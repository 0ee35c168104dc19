// Gemm and MatMul with a constant 2-D weight: producers of new channels (the weight's output axis)
// and consumers of the input's last axis (the weight's K axis; after a Flatten a channel is `span`
// consecutive rows). A MatMul of two computed values (attention scores, probabilities times values)
// is the attention rule's.
import { attr, attrInt } from '../../model.js';
import { denseTrack, negativeAxis, positiveAxis, type Track } from '../track.js';
import type { RuleContext, RuleTable } from '../rule.js';
import { activationMatMul } from './attention.js';

function gemm(ctx: RuleContext) {
  const { node, name, op, inputs } = ctx;
  const x = inputs[0];
  const w = ctx.constant(node.input[1]);
  if (op === 'MatMul' && !w) { activationMatMul(ctx); return; }
  const wd = w ? w.dims : [];
  if (!w || wd.length !== 2 || (op === 'Gemm' && attrInt(node, 'transA', 0))) {
    ctx.blockInputs(`${op} ${name} without a constant 2-D weight`);
    return;
  }
  ctx.block(inputs[1], `${op} ${name} reads it as weight`);
  const transB = op === 'Gemm' && attrInt(node, 'transB', 0) === 1;
  const kAxis = transB ? 1 : 0;
  const K = wd[kAxis], N = wd[1 - kAxis];
  const alpha = op === 'Gemm' ? (attr(node, 'alpha')?.f ?? 1) : 1;
  const beta = op === 'Gemm' ? (attr(node, 'beta')?.f ?? 1) : 1;
  const scale = beta ? alpha / beta : NaN;
  if (x) {
    const pa = positiveAxis(x);
    const batchAxis = op === 'MatMul' && !x.flat && x.rank !== undefined && pa !== undefined && pa < x.rank - 2;
    const lastAxis = negativeAxis(x) === -1 && (op === 'MatMul' || x.rank === undefined || x.rank === 2);
    if (batchAxis) {
      // Channels on a batch axis (heads) pass through a product with a shared weight.
      ctx.setOutput(0, { ...x, value: undefined });
      return;
    }
    if (!lastAxis) ctx.block(x, `${op} ${name} reads it along another axis`);
    else if (x.flat && K % x.size === 0) ctx.addSlices(x, w.name, kAxis, 'weight', K / x.size, ctx.foldInto(x, w.name, 1 - kAxis, scale));
    else if (!x.flat && x.size * x.span === K) ctx.addSlices(x, w.name, kAxis, 'weight', x.span, ctx.foldInto(x, w.name, 1 - kAxis, scale));
    else ctx.block(x, `${op} ${name}: ${K} inputs do not match ${x.size} channels`);
  }
  let c: ReturnType<RuleContext['constant']>;
  if (op === 'Gemm' && node.input[2]) {
    c = ctx.constant(node.input[2]);
    const cd = c ? c.dims : [];
    if (!c || !(cd.length === 1 && cd[0] === N) && !(cd.length === 2 && cd[0] === 1 && cd[1] === N)) {
      ctx.block(inputs[2], `Gemm ${name} bias`);
      ctx.setOutput(0, denseTrack(ctx.newChannels(N, `Gemm ${name} has a bias that is not per output`), -1, 2));
      return;
    }
  }
  const rank = op === 'Gemm' ? 2 : (x?.rank ?? ctx.rankOf(node.input[0]));
  const bias = c?.name;
  const out: Track = denseTrack(ctx.newChannels(N), rank !== undefined ? rank - 1 : -1, rank, (k) => (bias ? beta * ctx.floats(bias)[k] : 0));
  ctx.addSlices(out, w.name, 1 - kAxis, 'weight', 1, () => ({ filter: true }));
  if (c) ctx.addSlices(out, c.name, c.dims.length - 1);
  ctx.setOutput(0, out);
}

export const gemmRules: RuleTable = { Gemm: gemm, MatMul: gemm };
