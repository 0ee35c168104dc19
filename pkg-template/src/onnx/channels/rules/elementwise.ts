// Elementwise ops: unary ones and pools carry the channels as they are (and map a removed channel's
// constant through their scalar function); binary ones tie the channels of two carrying operands
// (a residual Add, a squeeze-excitation Mul), slice a per-channel constant operand with the channel,
// and let an operand that broadcasts over the channel axis be. Where selects element by element as
// they combine, so it follows the same rule: torch's scaled_dot_product_attention export zeroes the
// attention probabilities of a fully masked row with Where(IsNaN(p), 0, p), and the heads must pass it.
import { attr } from '../../model.js';
import { binaryFunction, unaryFunction } from '../scalar.js';
import { negativeAxis, sameLayout, type Track } from '../track.js';
import type { RuleContext, RuleTable } from '../rule.js';
import { ELEMENTWISE_UNARY, ELEMENTWISE_BINARY } from '../elementwise-ops.js';

const POOL = ['MaxPool', 'AveragePool', 'GlobalAveragePool', 'GlobalMaxPool', 'LpPool', 'GlobalLpPool'];
const prod = (d: number[]) => d.reduce((a, b) => a * b, 1);

function passThrough(ctx: RuleContext) {
  ctx.inputs.slice(1).forEach((t) => ctx.block(t, `${ctx.op} ${ctx.name} is not handled`));
  const x = ctx.inputs[0];
  if (x) ctx.setOutput(0, x);
}

function unary(ctx: RuleContext) {
  const { node, inputs } = ctx;
  inputs.slice(1).forEach((t) => ctx.block(t, `${ctx.op} ${ctx.name} is not handled`));
  const x = inputs[0];
  if (!x) return;
  if (ctx.op === 'Identity' || ctx.op === 'Dropout') { ctx.setOutput(0, x); return; }
  let clip: [number, number] = [attr(node, 'min')?.f ?? -Infinity, attr(node, 'max')?.f ?? Infinity];
  if (ctx.op === 'Clip' && node.input.length > 1) {
    const lo = node.input[1] ? ctx.constant(node.input[1]) : undefined, hi = node.input[2] ? ctx.constant(node.input[2]) : undefined;
    const known = (!node.input[1] || lo) && (!node.input[2] || hi);
    clip = known ? [lo ? ctx.floats(lo.name)[0] : -Infinity, hi ? ctx.floats(hi.name)[0] : Infinity] : [NaN, NaN];
  }
  const f = Number.isNaN(clip[0]) ? undefined : unaryFunction(node, clip);
  ctx.setOutput(0, { ...x, value: (c) => { const v = x.value?.(c); return v === undefined || !f ? undefined : f(v); } });
}

function binary(ctx: RuleContext) {
  const { node, name, op, inputs } = ctx;
  const tracked = inputs.filter((t): t is Track => !!t);
  if (!tracked.length) return;
  if (op === 'Pow' && inputs[1]) { ctx.blockInputs(`Pow ${name} with a channel exponent`); return; }
  const lead = tracked.reduce((a, b) => (b.size > a.size ? b : a));
  const na = negativeAxis(lead);
  if (lead.flat || na === undefined) { ctx.blockInputs(`${op} ${name} on a value of unknown rank`); return; }
  let ok = true;
  node.input.forEach((input: string, k: number) => {
    const t = inputs[k];
    if (t === lead) return;
    if (t) {
      if (negativeAxis(t) === na && sameLayout(t, lead)) ctx.tie(t.ids, lead.ids);
      else if (t.size === 1) ctx.block(t, `${op} ${name} broadcasts a single channel`);
      else { ctx.block(t, `${op} ${name} mixes channel layouts`); ok = false; }
      return;
    }
    const c = ctx.constant(input);
    if (!c) {
      // A computed operand that broadcasts over the channel axis (an attention mask) changes nothing.
      const shape = ctx.shapeOf(input);
      const ca = shape ? shape.length + na : -1;
      if (!shape || (ca >= 0 && shape[ca] !== 1)) ok = false;
      return;
    }
    const ca = c.dims.length + na;
    if (ca < 0 || c.dims[ca] === 1) return;
    if (c.dims[ca] === lead.size && lead.span === 1) ctx.addSlices(lead, c.name, ca);
    else ok = false;
  });
  if (!ok) { ctx.blockInputs(`${op} ${name} combines the channels with a value that is not per channel`); return; }
  // Channel c of each operand: a followed value's constant, or the constant operand at c (or its one value).
  const f = binaryFunction(op);
  const operand = node.input.map((input: string, k: number): ((c: number) => number | undefined) => {
    const t = inputs[k];
    if (t) return (c) => t.value?.(c);
    const cn = ctx.constant(input);
    if (!cn) return () => undefined;
    const ca = cn.dims.length + na;
    if (prod(cn.dims) === 1) return () => ctx.floats(cn.name)[0];
    if (ca >= 0 && cn.dims[ca] === lead.size && prod(cn.dims) === cn.dims[ca]) return (c) => ctx.floats(cn.name)[lead.at[c]];
    return () => undefined;
  });
  ctx.setOutput(0, { ...lead, value: (c) => {
    if (!f) return undefined;
    let acc: number | undefined;
    for (const g of operand) {
      const v = g(c);
      if (v === undefined) return undefined;
      acc = acc === undefined ? v : f(acc, v);
    }
    return acc;
  } });
}

function where(ctx: RuleContext) {
  // A constant condition per channel would have to be sliced as a boolean tensor: kept whole instead.
  const c = ctx.constant(ctx.node.input[0]);
  if (c && prod(c.dims) > 1) { ctx.blockInputs(`Where ${ctx.name} selects by a constant mask`); return; }
  binary(ctx);
}

export const elementwiseRules: RuleTable = Object.fromEntries([
  ...ELEMENTWISE_UNARY.map((op) => [op, unary]),
  ...POOL.map((op) => [op, passThrough]),
  ...ELEMENTWISE_BINARY.map((op) => [op, binary]),
  ['Where', where],
]);
