// The forward comparisons the training benches share (bench/train/train-coverage.mjs,
// bench/train/forward-trace.mjs): the coverage table's relative error, and a model's final
// activation (a Sigmoid or Softmax producing a graph output) with the same activation in float64,
// so that what an engine's activation rounds can be told from what its input already carried.

/**
 * max |a − b| / max |b| over the whole tensor (b the reference): a norm-wise relative error, which
 * scales with the tensor's largest value. Right for logits and features; on a probability map its
 * denominator is at most 1, so it reads as an absolute error there.
 */
export function relMax(a, b) {
  let num = 0, den = 0;
  for (let i = 0; i < b.length; i++) {
    num = Math.max(num, Math.abs(Number(a[i]) - Number(b[i])));
    den = Math.max(den, Math.abs(Number(b[i])));
  }
  return num / (den || 1);
}

/** max |a − b|. */
export function absMax(a, b) {
  let m = 0;
  for (let i = 0; i < b.length; i++) m = Math.max(m, Math.abs(Number(a[i]) - Number(b[i])));
  return m;
}

/**
 * The graph outputs a Sigmoid or Softmax produces, each with the activation's input tensor and
 * its Softmax axis. Below opset 13 a Softmax normalizes over every dimension from `axis` on
 * (default 1; the ONNX operator's history), from 13 over `axis` alone (default −1).
 */
export function finalActivations(model) {
  const v = model.opsets.find((o) => o.startsWith('ai.onnx:'));
  const opset = v ? Number(v.split(':')[1]) : 13;
  const byOut = new Map(model.graph.node.flatMap((n) => n.output.map((t) => [t, n])));
  return model.outputs.flatMap((o) => {
    const n = byOut.get(o.name);
    if (!n || (n.op_type !== 'Sigmoid' && n.op_type !== 'Softmax')) return [];
    const ax = n.attribute.find((a) => a.name === 'axis');
    const flatten = opset < 13;
    return [{ op: n.op_type, input: n.input[0], output: o.name, axis: ax ? Number(ax.i) : flatten ? 1 : -1, flatten }];
  });
}

/** The activation of a float32 tensor computed in float64 (the exact value, to ~1e-16). */
export function activation64(act, x, shape) {
  const y = new Float64Array(x.length);
  if (act.op === 'Sigmoid') {
    for (let i = 0; i < x.length; i++) y[i] = 1 / (1 + Math.exp(-x[i]));
    return y;
  }
  const ax = act.axis < 0 ? act.axis + shape.length : act.axis;
  const prod = (dims) => dims.reduce((p, v) => p * v, 1);
  const d = act.flatten ? prod(shape.slice(ax)) : shape[ax], inner = act.flatten ? 1 : prod(shape.slice(ax + 1)), outer = x.length / (d * inner);
  for (let a = 0; a < outer; a++) {
    for (let b = 0; b < inner; b++) {
      const at = (i) => (a * d + i) * inner + b;
      let mx = -Infinity;
      for (let i = 0; i < d; i++) mx = Math.max(mx, x[at(i)]);
      let s = 0;
      for (let i = 0; i < d; i++) { y[at(i)] = Math.exp(x[at(i)] - mx); s += y[at(i)]; }
      for (let i = 0; i < d; i++) y[at(i)] /= s;
    }
  }
  return y;
}
