// The linear layers of an ONNX graph that calibration can prune, each with how its weight is seen as
// rows = outputs x cols = inputs, how its input is turned into Hessian vectors, and which earlier
// layers its input depends on (for sequential pruning).
import { toNum } from '../onnx-model.js';

const attr = (node, name, dflt) => {
  const a = node.attribute.find((x) => x.name === name);
  if (!a) return dflt;
  if (a.ints && a.ints.length) return a.ints.map(toNum);
  if (a.s && a.s.length) return typeof a.s === 'string' ? a.s : new TextDecoder().decode(a.s);
  return a.i != null ? toNum(a.i) : dflt;
};

/**
 * @param model an OnnxModel
 * @returns [{index, name, op, weight, input, rows, cols, transposed, stats: 'conv'|'rows'|'channels'|null,
 *   conv?, group, dependsOn, note}] in graph order. `stats` says how input vectors are taken: 'conv'
 *   (addConv, group 1), 'rows' (addRows over the last axis: Gemm / MatMul), 'grouped' (grouped /
 *   depthwise Conv: one addConv Hessian per group on its C/G channels), null (stays magnitude).
 *   `dependsOn` is the highest index of a layer upstream of this layer's input (-1: none).
 */
export function findLayers(model) {
  const byName = new Map(model.weights.filter((w) => w.prunable).map((w) => [w.name, w]));
  const lastDep = new Map();
  const layers = [];
  for (const node of model.graph.node) {
    let dep = -1;
    for (const i of node.input) dep = Math.max(dep, lastDep.get(i) ?? -1);
    const w = ['Conv', 'Gemm', 'MatMul'].includes(node.op_type) ? byName.get(node.input[1]) : undefined;
    if (w && !layers.some((l) => l.weight === w)) {
      const layer = { index: layers.length, name: w.name, node: node.name || w.name, op: node.op_type, weight: w, input: node.input[0],
        dependsOn: lastDep.get(node.input[0]) ?? -1, group: 1, note: null, stats: null };
      const d = w.dims;
      if (node.op_type === 'Conv') {
        const group = attr(node, 'group', 1);
        const kernelShape = attr(node, 'kernel_shape', d.slice(2));
        const autoPad = attr(node, 'auto_pad', 'NOTSET');
        Object.assign(layer, { rows: d[0], cols: d.slice(1).reduce((a, b) => a * b, 1), transposed: false, group });
        if (d.length !== 4) layer.note = `Conv weight of rank ${d.length}: magnitude only`;
        else if (autoPad !== 'NOTSET' && autoPad !== 'VALID') layer.note = `auto_pad ${autoPad}: magnitude only`;
        else {
          layer.conv = {
            kernelShape, strides: attr(node, 'strides', [1, 1]), dilations: attr(node, 'dilations', [1, 1]),
            pads: autoPad === 'VALID' ? [0, 0, 0, 0] : attr(node, 'pads', [0, 0, 0, 0]),
          };
          if (group === 1) layer.stats = 'conv';
          else {
            layer.stats = 'grouped';
            layer.note = `${d[1] === 1 ? 'depthwise' : 'grouped'} Conv (group ${group})`;
          }
        }
      } else if (node.op_type === 'Gemm') {
        const transA = attr(node, 'transA', 0), transB = attr(node, 'transB', 0);
        const [a, b] = d;
        Object.assign(layer, transB ? { rows: a, cols: b, transposed: false } : { rows: b, cols: a, transposed: true });
        if (transA) layer.note = 'Gemm with transA: magnitude only';
        else layer.stats = 'rows';
      } else {
        if (d.length !== 2) { Object.assign(layer, { rows: d[0], cols: d.slice(1).reduce((a, b) => a * b, 1), transposed: false, note: 'batched MatMul weight: magnitude only' }); }
        else { Object.assign(layer, { rows: d[1], cols: d[0], transposed: true, stats: 'rows' }); }
      }
      layers.push(layer);
      dep = Math.max(dep, layer.index);
    }
    for (const o of node.output) lastDep.set(o, dep);
  }
  return layers;
}

/**
 * Splits layers into consecutive groups whose inputs can be captured in one pass: no member's input
 * depends on a member of the same group. With `sequential` false everything is one group (all
 * statistics from the unpruned model).
 */
export function captureGroups(layers, sequential = true) {
  if (!sequential) return layers.length ? [layers] : [];
  const groups = [];
  let cur = [];
  for (const l of layers) {
    if (cur.length && l.dependsOn >= cur[0].index) { groups.push(cur); cur = []; }
    cur.push(l);
  }
  if (cur.length) groups.push(cur);
  return groups;
}
