// The layers the closed-form steps change: Conv and Gemm nodes whose weight and bias are float
// constants of the graph. Each has one output tensor (the one matched with the teacher's of the same
// name) whose channels are along axis 1, and the index of the last such layer upstream of its input,
// so that layers which do not feed each other are captured together.
import { attrInt, attrInts, toNum, type NodeProto, type OnnxModel, type TensorProto } from '../model.js';

export interface FitLayer {
  index: number;
  node: NodeProto;
  op: 'Conv' | 'Gemm';
  /** The tensor the layer multiplies, its output (channels on axis 1), weight and bias names. */
  input: string;
  output: string;
  weight: string;
  bias: string;
  /** Output channels (weight rows: dims[0] of a Conv, the output axis of a Gemm). */
  channels: number;
  /** The highest index of a layer upstream of the input (-1: none). */
  dependsOn: number;
  /** A Conv with a 1×1 kernel, one group, no stride, dilation or pad: a plain matrix over channels (the least-squares fit). */
  pointwise: boolean;
}

const floatTensor = (t: TensorProto | undefined) => !!t && (t.data_type === 1 || t.data_type === 10 || t.data_type === 16 || t.data_type === 11);

/** The Conv / Gemm layers of `model` with a constant weight and bias, in graph order. */
export function fitLayers(model: OnnxModel): FitLayer[] {
  const consts = model.constants();
  const last = new Map<string, number>();
  const out: FitLayer[] = [];
  const seenWeights = new Set<string>();
  for (const node of model.graph.node as NodeProto[]) {
    let dep = -1;
    for (const i of node.input) dep = Math.max(dep, last.get(i) ?? -1);
    const op = node.op_type;
    const w = consts.get(node.input[1])?.tensor, b = consts.get(node.input[2])?.tensor;
    // A weight shared by two nodes would be fitted twice against different targets: left out.
    if ((op === 'Conv' || op === 'Gemm') && floatTensor(w) && floatTensor(b) && !seenWeights.has(node.input[1])) {
      const dims = (w!.dims as unknown[]).map(toNum);
      const transB = op === 'Gemm' ? attrInt(node, 'transB', 0) : 1;
      const channels = op === 'Conv' ? dims[0] : transB ? dims[0] : dims[1];
      const bDims = (b!.dims as unknown[]).map(toNum);
      const biasLen = bDims.reduce((a, x) => a * x, 1);
      const gemmOk = op !== 'Gemm' || (attrInt(node, 'transA', 0) === 0 && dims.length === 2);
      if (biasLen === channels && gemmOk && node.output[0]) {
        seenWeights.add(node.input[1]);
        const ones = (v?: number[]) => !v || v.every((x) => x === 1);
        const zeros = (v?: number[]) => !v || v.every((x) => x === 0);
        const pointwise = op === 'Conv' && dims.length === 4 && dims[2] === 1 && dims[3] === 1 && attrInt(node, 'group', 1) === 1
          && ones(attrInts(node, 'strides')) && ones(attrInts(node, 'dilations')) && zeros(attrInts(node, 'pads'));
        out.push({ index: out.length, node, op, input: node.input[0], output: node.output[0], weight: node.input[1], bias: node.input[2], channels, dependsOn: dep, pointwise });
        dep = out.length - 1;
      }
    }
    for (const o of node.output) last.set(o, dep);
  }
  return out;
}

/** Consecutive runs of layers none of which reads another's output: one capture serves a run. */
export function independentRuns<L extends { index: number; dependsOn: number }>(layers: L[]): L[][] {
  const runs: L[][] = [];
  let cur: L[] = [];
  for (const l of layers) {
    if (cur.length && l.dependsOn >= cur[0].index) { runs.push(cur); cur = []; }
    cur.push(l);
  }
  if (cur.length) runs.push(cur);
  return runs;
}
