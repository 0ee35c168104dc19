// What a per-op channel rule sees and may do. A rule reads the tracks of its node's inputs (the
// channels each input carries, see track.ts) and says how they flow to the outputs and how the node
// is cut: which slices of its constants go with each channel, which channels must go together, and
// which cannot go at all (with the reason). Rules are registered in one table (rules/index.ts).
import type { GraphProto, NodeProto, TensorProto } from '../model.js';
import type { HeadUnit, Slice } from './types.js';
import type { Track } from './track.js';
import type { IntConstant, VectorEntry } from './int-vectors.js';

export interface ConstantRef {
  name: string;
  tensor: TensorProto;
  dims: number[];
}

export interface RuleContext {
  readonly node: NodeProto;
  /** The node's name for reasons and reports. */
  readonly name: string;
  readonly op: string;
  /** Tracks of the node's inputs (undefined: carries no followed channels). */
  readonly inputs: (Track | undefined)[];
  /** The default ONNX opset of the model. */
  readonly opset: number;
  /** The unit of grouped-query attention (ChannelOptions.heads): a KV group, or one query head per group. */
  readonly heads: HeadUnit;

  /** A constant input (through Cast / Identity, as float16 weights are cast to float), or undefined. */
  constant(name: string): ConstantRef | undefined;
  /** An integer constant's values (with the Cast / Identity hops down to it), or undefined. */
  intConstant(name: string): IntConstant | undefined;
  /** A float constant's values (read once, cached). */
  floats(name: string): Float32Array;
  /** An integer vector computed in the graph (Shape -> Gather -> Concat), entry by entry. */
  vector(name: string): VectorEntry[] | undefined;
  /** The rank of a value, when a track, a constant or the file's recorded shapes tell it. */
  rankOf(name: string): number | undefined;
  /** The recorded shape of a value (graph inputs / outputs / value_info, constants); undefined dims are symbolic. */
  shapeOf(name: string): (number | undefined)[] | undefined;
  /** The track of any value walked so far (a shape entry read from it names its channel axis). */
  trackOf(name: string): Track | undefined;
  /** Is the value an input of the main graph (not a constant)? */
  isGraphInput(name: string): boolean;
  /** How many nodes read the value (in every graph). */
  useCount(name: string): number;

  setOutput(k: number, track: Track | undefined): void;
  /** Every channel of t is kept (t undefined: nothing to do). */
  block(t: Track | undefined, why: string): void;
  /** Every input's channels are kept (the default for an op without a rule). */
  blockInputs(why?: string): void;
  /** `count` new channels produced by this node (blocked from the start with `why`). */
  newChannels(count: number, why?: string): number[];
  /** Channels a.ids[c] and b.ids[c] go together (same layout checked by the caller). */
  tie(a: number[], b: number[]): void;
  /** Channel ids[c] is a query head of KV group runs[c]: its group keeps as many as every other one. */
  setRuns(ids: number[], runs: number[]): void;
  /**
   * Adds, for every channel c of t, the slice [at[c]·span, (at[c]+1)·span) of `axis` of `tensor`. A
   * 'shape' slice says in `extra` where the vector is read (`use`, see int-vectors' useOf).
   */
  addSlices(t: Track, tensor: string, axis: number, kind?: Slice['kind'], span?: number, extra?: (c: number) => Partial<Slice>): void;
  /** The fold of channel c of t into this node's bias (a consumer's input slice). */
  foldInto(t: Track, weight: string, outAxis: number, scale?: number): (c: number) => Partial<Slice>;
  /** Records a depthwise Conv: its `group` attribute follows its weight's channel count. */
  markDepthwise(weight: string): void;
  /**
   * Walks a subgraph (If branch, Loop / Scan body) with `bound` tracks for its formal inputs; outer
   * values it reads keep their tracks. Returns the tracks of its outputs.
   */
  walkSubgraph(graph: GraphProto, bound?: Map<string, Track | undefined>): (Track | undefined)[];
}

export type ChannelRule = (ctx: RuleContext) => void;
export type RuleTable = Record<string, ChannelRule>;
