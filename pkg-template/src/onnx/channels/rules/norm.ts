// Normalizations. BatchNormalization / InstanceNormalization are per channel: their parameters go
// with the channel (running statistics are sliced but not scored). LayerNormalization normalizes over
// the channel axis: its input channels are kept (the hidden size of a transformer is one such group)
// and its output carries none, so the FFN neurons and heads read from it stay free.
import { attr, attrInt } from '../../model.js';
import { positiveAxis, isChannelAxis } from '../track.js';
import type { RuleContext, RuleTable } from '../rule.js';

function batchNorm(ctx: RuleContext) {
  const { node, op, name, inputs } = ctx;
  const x = inputs[0];
  if (!x) { ctx.blockInputs(); return; }
  if (x.flat || positiveAxis(x) !== 1 || x.span !== 1) { ctx.blockInputs(`${op} ${name} reads the channels along another axis`); return; }
  const params = node.input.slice(1).map((p: string) => ctx.constant(p));
  if (params.some((p: ReturnType<RuleContext['constant']>) => !p || p.dims.length !== 1 || p.dims[0] !== x.size)) {
    ctx.blockInputs(`${op} ${name} with computed or mis-shaped parameters`);
    return;
  }
  const names: string[] = params.map((p: { name: string }) => p.name);
  const eps = attr(node, 'epsilon')?.f ?? 1e-5;
  names.forEach((p, k) => ctx.addSlices(x, p, 0, k >= 2 ? 'stat' : 'weight'));
  // A constant channel stays constant: BN maps it, InstanceNormalization sends it to its bias.
  const at = (c: number) => x.at[c];
  const value = op === 'InstanceNormalization'
    ? (c: number) => ctx.floats(names[1])[at(c)]
    : (c: number) => {
      const v = x.value?.(c);
      if (v === undefined) return undefined;
      const k = at(c);
      return ((v - ctx.floats(names[2])[k]) / Math.sqrt(ctx.floats(names[3])[k] + eps)) * ctx.floats(names[0])[k] + ctx.floats(names[1])[k];
    };
  ctx.setOutput(0, { ...x, value });
}

function layerNorm(ctx: RuleContext) {
  const { node, op, name, inputs } = ctx;
  inputs.slice(1).forEach((t) => ctx.block(t, `${op} ${name} reads it as a parameter`));
  const x = inputs[0];
  if (!x) return;
  const axis = attrInt(node, 'axis', -1);
  const rank = x.rank ?? ctx.rankOf(node.input[0]);
  const pa = positiveAxis({ ...x, rank });
  const first = axis < 0 && rank !== undefined ? axis + rank : axis;
  // Normalized: every axis from `axis` on. A channel axis before it passes untouched.
  if (pa !== undefined && rank !== undefined && first >= 0 && pa < first) { ctx.setOutput(0, { ...x, value: undefined }); return; }
  const on = pa !== undefined && rank !== undefined ? pa >= first : isChannelAxis(x, -1) !== false;
  ctx.block(x, on ? `${op} ${name} normalizes over the channel axis` : `${op} ${name} over axes that cannot be told`);
}

export const normRules: RuleTable = {
  BatchNormalization: batchNorm, InstanceNormalization: batchNorm,
  LayerNormalization: layerNorm, SimplifiedLayerNormalization: layerNorm, RMSNormalization: layerNorm,
};
