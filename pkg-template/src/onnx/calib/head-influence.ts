// Attention heads ranked by what removing them does to the model's outputs, measured: each head's
// input slice of its output projection is replaced by its calibration mean (what the removal with its
// mean folded into the bias leaves, before compensation), and the outputs are compared with the
// unablated model's, 1 − cos per output row (the real tokens of padded text only). Local scores (the
// weights' norms, FLAP's fluctuation) rank a head by what its own projection loses; the residual
// stream, the later layers and the pooling decide what that costs at the output, and heads of equal
// fluctuation differ there (Michel et al., "Are Sixteen Heads Really Better than One?", NeurIPS 2019,
// rank heads by their effect on the loss for the same reason). One onnxruntime session serves every
// ablation: each projection's input goes through x · gate + offset, fed per run.
import type { OnnxModel, NodeProto } from '../model.js';
import { OnnxError } from '../errors.js';
import type { InputSample, FeedTensor } from './inputs.js';
import type { ModelRunner, RunOutput } from './ort-runner.js';
import { outputAsFloat } from './evaluate.js';
import { turn } from './cancel.js';
import { rowDistance } from './row-distance.js';
import { Names } from '../names.js';
import { insertBefore, node as makeNode } from '../quant/graph-edit.js';

/**
 * One head: the input positions of each output projection (`node`: its name) that carry it. The
 * projections read float32 (the caller measures only those: a gate of another type would not run).
 */
export interface HeadUnit { consumers: { node: string; input: string; width: number; positions: number[]; mean: Float64Array }[] }

/** Over output rows, real tokens only where the sample's attention mask is [B, S] of an output [B, S, C]. */
function outputDistance(a: ArrayLike<number>, b: ArrayLike<number>, dims: number[], mask?: FeedTensor): [number, number] {
  const perToken = mask && dims.length === 3 && dims[0] === mask.dims[0] && dims[1] === mask.dims[1];
  return rowDistance(a, b, dims[dims.length - 1] || 1, perToken ? (r) => Number(mask.data[r]) === 0 : undefined);
}

/**
 * The samples a head's influence is measured on: the first ones, at most `maxSamples` of them and,
 * where they carry token ids, at most `maxTokens` positions (always at least one sample).
 */
export function influenceSamples(samples: InputSample[], maxSamples: number, maxTokens: number): InputSample[] {
  let tokens = 0, n = 0;
  for (const s of samples) {
    if (n >= maxSamples) break;
    const ids = s.feeds.input_ids;
    tokens += ids ? ids.dims.reduce((a, d) => a * d, 1) : 0;
    if (n > 0 && tokens > maxTokens) break;
    n++;
  }
  return samples.slice(0, n);
}

/**
 * The measured influence of each head of `units` (its index in the array), on `samples`: the mean
 * over the model's float outputs of their mean row distance from the unablated outputs. The model is
 * not changed (its graph is copied into the bytes of one session, then put back).
 */
export async function headInfluence(model: OnnxModel, runner: ModelRunner, samples: InputSample[], units: HeadUnit[],
  opts: { check?: () => void; onSample?: (done: number, total: number) => void } = {}): Promise<Float64Array> {
  const { check = () => {}, onSample = () => {} } = opts;
  if (!samples.length) throw new OnnxError('unsupported', 'head influence needs calibration samples', 'invalid_arguments');
  const g = model.graph;
  const names = new Names(g);
  // per output projection: its input, width, and the graph inputs its gate and offset are fed through
  const consumers = new Map<string, { input: string; width: number; k: number; gate: string; offset: string }>();
  for (const u of units) {
    for (const c of u.consumers) {
      if (consumers.has(c.node)) continue;
      const k = consumers.size;
      consumers.set(c.node, { input: c.input, width: c.width, k, gate: names.fresh(`${c.node}/head_gate`), offset: names.fresh(`${c.node}/head_offset`) });
    }
  }
  const nodes = g.node as NodeProto[];
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const saved = { node: nodes.slice(), input: g.input.length, inputs: new Map<NodeProto, string[]>() };
  let bytes: Uint8Array;
  try {
    for (const [name, c] of consumers) {
      const node = byName.get(name);
      const at = node ? node.input.indexOf(c.input) : -1;
      if (!node || at < 0) throw new OnnxError('unsupported', `head influence: ${name} does not read ${c.input}`, 'invalid_arguments');
      const gated = names.fresh(`${c.input}_gated`), out = names.fresh(`${c.input}_ablated`);
      saved.inputs.set(node, node.input.slice());
      node.input[at] = out;
      insertBefore(g, node, [
        makeNode('Mul', [c.input, c.gate], [gated], names.fresh(`${name}/head_gate_mul`)),
        makeNode('Add', [gated, c.offset], [out], names.fresh(`${name}/head_offset_add`)),
      ]);
      for (const v of [c.gate, c.offset]) g.input.push({ name: v, type: { tensor_type: { elem_type: 1, shape: { dim: [{ dim_value: c.width }] } } } });
    }
    bytes = model.encode();
  } finally {
    g.node = saved.node;
    g.input.length = saved.input;
    for (const [node, inputs] of saved.inputs) node.input = inputs;
  }
  const ones = [...consumers.values()].map((c) => new Float32Array(c.width).fill(1));
  const zeros = [...consumers.values()].map((c) => new Float32Array(c.width));
  const feedsOf = (s: InputSample, unit?: HeadUnit): Record<string, FeedTensor> => {
    const f: Record<string, FeedTensor> = { ...s.feeds };
    const gate = ones.slice(), offset = zeros.slice();
    for (const c of unit?.consumers ?? []) {
      const k = consumers.get(c.node)!.k;
      gate[k] = Float32Array.from(gate[k]);
      offset[k] = Float32Array.from(offset[k]);
      for (const p of c.positions) { gate[k][p] = 0; offset[k][p] = c.mean[p]; }
    }
    for (const c of consumers.values()) {
      f[c.gate] = { type: 'float32', data: gate[c.k], dims: [c.width] };
      f[c.offset] = { type: 'float32', data: offset[c.k], dims: [c.width] };
    }
    return f;
  };
  const distance = (a: Record<string, RunOutput>, b: Record<string, RunOutput>, s: InputSample) => {
    let total = 0, n = 0;
    for (const name of Object.keys(a)) {
      const x = a[name], y = b[name];
      if (!/float/.test(x.type)) continue;
      const [sum, rows] = outputDistance(outputAsFloat(x), outputAsFloat(y), x.dims, s.feeds.attention_mask);
      if (rows) { total += sum / rows; n++; }
    }
    return n ? total / n : 0;
  };
  const out = new Float64Array(units.length);
  const session = await runner.createSession(bytes);
  try {
    for (const [i, s] of samples.entries()) {
      check();
      onSample(i, samples.length);
      const base = await session.run(feedsOf(s));
      for (let u = 0; u < units.length; u++) {
        out[u] += distance(base, await session.run(feedsOf(s, units[u])), s) / samples.length;
        await turn();
      }
    }
  } finally { await session.release(); }
  return out;
}
