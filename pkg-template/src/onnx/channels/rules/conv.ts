// Conv and ConvTranspose: producers of new channels (the filter's output axis) and consumers of the
// input's channels (the filter's input axis, where a removed channel's constant is folded into the
// bias). A depthwise Conv carries its input channels through: channel c in is channel c out.
import { attr, attrInt, attrInts } from '../../model.js';
import { attrString } from '../scalar.js';
import { denseTrack, positiveAxis, type Track } from '../track.js';
import type { RuleContext, RuleTable } from '../rule.js';

const prod = (d: number[]) => d.reduce((a, b) => a * b, 1);

/** The input is read along axis 1, one position per channel. */
const readsChannels = (x: Track | undefined): x is Track => !!x && !x.flat && positiveAxis(x) === 1 && x.span === 1;

function conv(ctx: RuleContext) {
  const { node, name, op, inputs } = ctx;
  const x = inputs[0];
  const w = ctx.constant(node.input[1]);
  const b = node.input[2] ? ctx.constant(node.input[2]) : undefined;
  if (!w || (node.input[2] && !b)) { ctx.blockInputs(`${op} ${name} has a computed weight or bias`); return; }
  inputs.slice(1).forEach((t) => ctx.block(t, `${op} ${name} reads it as weight`));
  const wd = w.dims;
  const group = attrInt(node, 'group', 1);
  const rank = wd.length;
  const xok = readsChannels(x);
  if (x && !xok) ctx.block(x, `${op} ${name} reads it along another axis`);
  const bias = (c: number) => (b ? ctx.floats(b.name)[c] : 0);
  if (op === 'ConvTranspose') {
    // Weight (C_in, C_out / group, kh, kw): input channels on axis 0, output channels on axis 1.
    if (group !== 1 || attr(node, 'output_shape')) {
      const why = `ConvTranspose ${name} with groups or an explicit output shape`;
      ctx.block(x, why);
      ctx.setOutput(0, denseTrack(ctx.newChannels(wd[1] * group, why), 1, rank));
      return;
    }
    if (xok) {
      if (x.size === wd[0]) ctx.addSlices(x, w.name, 0, 'weight', 1, ctx.foldInto(x, w.name, 1));
      else ctx.block(x, `ConvTranspose ${name} expects ${wd[0]} input channels, the graph gives ${x.size}`);
    }
    const out = denseTrack(ctx.newChannels(wd[1]), 1, rank, bias);
    ctx.addSlices(out, w.name, 1, 'weight', 1, () => ({ filter: true }));
    if (b) ctx.addSlices(out, b.name, 0);
    ctx.setOutput(0, out);
    return;
  }
  if (group === 1) {
    if (xok) {
      if (x.size === wd[1]) ctx.addSlices(x, w.name, 1, 'weight', 1, ctx.foldInto(x, w.name, 0));
      else ctx.block(x, `Conv ${name} expects ${wd[1]} input channels, the graph gives ${x.size}`);
    }
    const out = denseTrack(ctx.newChannels(wd[0]), 1, rank, bias);
    ctx.addSlices(out, w.name, 0, 'weight', 1, () => ({ filter: true }));
    if (b) ctx.addSlices(out, b.name, 0);
    ctx.setOutput(0, out);
    return;
  }
  if (wd[1] === 1 && wd[0] === group && xok && x.size === group) {
    ctx.markDepthwise(w.name);
    const per = prod(wd.slice(1));
    // With zero padding a constant input gives a constant output only away from the borders; on
    // the small maps of late stages every position is near a border, so the channel is no longer
    // a constant there (measured: folding its interior value broke PaddleOCR rec). Not folded.
    const padded = per > 1 && ((attrInts(node, 'pads') ?? []).some((p) => p !== 0) || /^SAME/.test(attrString(node, 'auto_pad')));
    const value = (c: number) => {
      const v = padded ? undefined : x.value?.(c);
      if (v === undefined) return undefined;
      const weights = ctx.floats(w.name);
      const at = x.at[c];
      let s = 0;
      for (let k = 0; k < per; k++) s += weights[at * per + k];
      return v * s + bias(at);
    };
    const out: Track = { ...x, rank, value };
    ctx.addSlices(out, w.name, 0, 'weight', 1, () => ({ depthwise: true }));
    if (b) ctx.addSlices(out, b.name, 0);
    ctx.setOutput(0, out);
    return;
  }
  const why = `grouped Conv ${name} (group ${group})`;
  ctx.block(x, why);
  ctx.setOutput(0, denseTrack(ctx.newChannels(wd[0], why), 1, rank));
}

export const convRules: RuleTable = { Conv: conv, ConvTranspose: conv };
