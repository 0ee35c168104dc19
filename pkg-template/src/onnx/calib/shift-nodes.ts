// The bias shifts of compensated consumers, in the graph while the calibrated channel removal
// captures. The removal puts each consumer's measured mean of what it lost into its bias only at the
// end; without it in the graph, every later consumer would be captured on a model that lacks the
// earlier consumers' means (on a decoder, the residual stream drifts layer after layer from what the
// written model computes). So each consumer still to compensate is followed by an Add of its shift,
// zero until the consumer is done; restore() puts the graph back as it was, before the removal.
import { DT, ModelProto, type OnnxModel } from '../model.js';
import type { NodeProto, TensorProto } from '../tensor-data.js';
import type { CalibLayer } from './layers.js';
import { Names } from '../names.js';

const NodeProtoT = ModelProto.root.lookupType('onnx.NodeProto');
const TensorProtoT = ModelProto.root.lookupType('onnx.TensorProto');

interface Shift { tensor: TensorProto; scale: number }

export class ShiftNodes {
  private readonly shifts = new Map<string, Shift>();
  private readonly nodes: NodeProto[];
  private readonly initializers: TensorProto[];
  private readonly renamed: { node: NodeProto; output: string }[] = [];

  /**
   * `scaleOf(weight)`: what the consumer multiplies its weight's product by (Gemm's alpha; 1 for
   * MatMul and Conv), as the removal scales the shift into the bias; undefined leaves the consumer
   * without an Add (its later readers are then captured without its shift, as before).
   */
  constructor(private readonly model: OnnxModel, layers: CalibLayer[], scaleOf: (weight: string) => number | undefined) {
    const g = model.graph;
    // The original arrays are kept as they are (restore() puts them back); the graph gets new ones.
    this.nodes = g.node;
    this.initializers = g.initializer;
    const added: TensorProto[] = [];
    const names = new Names(g);
      const after = new Map<NodeProto, NodeProto>();
    for (const l of layers) {
      const scale = scaleOf(l.weight.name);
      const consumer = g.node.find((n: NodeProto) => n.name === l.node && n.input[1] === l.weight.name) ?? g.node.find((n: NodeProto) => n.input[1] === l.weight.name);
      if (scale === undefined || !consumer || after.has(consumer) || !consumer.output[0]) continue;
      // The shift broadcasts over the consumer's output: per output channel (axis 1 of a Conv's
      // output, the last axis of a MatMul / Gemm's).
      const rank = l.weight.dims.length;
      const dims = l.stats === 'conv' ? [l.rows, ...Array(Math.max(0, rank - 2)).fill(1)] : [l.rows];
      const tensor = TensorProtoT.create({ name: names.fresh(`${l.weight.name}_calib_shift`), dims, data_type: DT.FLOAT, raw_data: new Uint8Array(4 * l.rows) }) as TensorProto;
      const output = consumer.output[0];
      const pre = names.fresh(`${output}_before_shift`);
      this.renamed.push({ node: consumer, output });
      consumer.output[0] = pre;
      after.set(consumer, NodeProtoT.create({ name: names.fresh(`${consumer.name || output}_calib_shift`), op_type: 'Add', domain: '', input: [pre, tensor.name], output: [output] }) as NodeProto);
      added.push(tensor);
      this.shifts.set(l.weight.name, { tensor, scale });
    }
    g.node = g.node.flatMap((n: NodeProto) => (after.has(n) ? [n, after.get(n)!] : [n]));
    g.initializer = [...g.initializer, ...added];
  }

  /** The shift tensors' names (weights that change while the captures go on). */
  names(): string[] { return [...this.shifts.values()].map((s) => s.tensor.name); }

  nameOf(weight: string): string | undefined { return this.shifts.get(weight)?.tensor.name; }

  /** The consumer's shift, in the units of its weight times its input (as `biasShift`). */
  set(weight: string, shift: ArrayLike<number>): void {
    const s = this.shifts.get(weight);
    if (s) this.model.writeFloat(s.tensor, Float32Array.from(shift, (v) => v * s.scale));
  }

  /** The graph as it was: the Adds and their tensors gone, the consumers' outputs named back. */
  restore(): void {
    const g = this.model.graph;
    g.node = this.nodes;
    g.initializer = this.initializers;
    for (const { node, output } of this.renamed) node.output[0] = output;
    this.renamed.length = 0;
    this.shifts.clear();
  }
}
