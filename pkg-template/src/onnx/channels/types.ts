// The public shapes of channel analysis and removal: what a group is, its members, the slices of a
// tensor that go with one channel, and the options of planChannels / removeChannels.
import type { NodeProto } from '../model.js';
import type { ProgressFn } from '../prune.js';

/**
 * One step from the node that reads an integer vector down to the constant it is built from: the
 * value `node.input[input]`. A chain of hops (reader first, the constant's reader last) is a *use*.
 */
export interface Hop { node: NodeProto; input: number }

/** A tensor slice that goes with one channel: positions [pos, pos + rep) of `axis` of `tensor`. */
export interface Slice {
  tensor: string;
  axis: number;
  pos: number;
  rep: number;
  /**
   * 'weight': float data sliced and scored; 'stat': sliced, not scored (BN running mean / variance:
   * not weights, and their scale would swamp the norms); 'shape': an integer vector whose entry
   * `axis` counts channels (a Reshape shape, Split sizes, Slice bounds): it loses one per removed
   * position, and `pos` only tells the channels apart. 'io': a graph input or output of the model's
   * own state (a KV cache: past_key_values in, present out, fed back by the generation loop) whose
   * declared dimension `axis` loses one per removed position; not scored, no data.
   */
  kind: 'weight' | 'stat' | 'shape' | 'io';
  /** The producer's own filter slice: what 'mask' zeroes (the channel then outputs a constant). */
  filter?: boolean;
  /** A depthwise Conv's slice of the channel (scored: the channel's signal goes through it). */
  depthwise?: boolean;
  /** A consumer's input slice: the removed channel's constant is folded into that consumer's bias. */
  fold?: Fold;
  /**
   * 'shape' only: where the constant is read (the rule's node first). Exporters share one small
   * constant among layers (torch writes one per distinct Split-size list); the removal gives each
   * use it rewrites a private copy, so that two groups never write the same entry.
   */
  use?: Hop[];
}

/** Where a removed channel's constant output goes: into the bias of `node` (a Conv / Gemm / MatMul). */
export interface Fold {
  node: NodeProto;
  weight: string;
  /** The weight axis of the consumer's outputs (its bias index). */
  outAxis: number;
  /** Scale of the product (Gemm alpha / beta). */
  scale: number;
  /** The channel's value when its producers' filters are zero; undefined when it cannot be told. */
  value: () => number | undefined;
}

/**
 * The unit of grouped-query attention, where each K/V head is read by n_rep query heads. 'groups':
 * a KV head with its query heads (n_rep stays). 'query': one query head in every KV group of a layer
 * (each group's weakest first), so that n_rep shrinks by one per unit and the K/V heads stay whole.
 */
export type HeadUnit = 'groups' | 'query';

/** A member of a group as reported: tensor and axis. */
export interface GroupMember {
  tensor: string;
  axis: number;
  kind: Slice['kind'];
}

/** A dependency group: channels that are removed together, in `channels` competing units. */
export interface ChannelGroup {
  id: number;
  /** The producers whose output channels this group holds. */
  producers: string[];
  channels: number;
  members: GroupMember[];
  prunable: boolean;
  /** Why the group is kept whole (when not prunable). */
  reason?: string;
  /**
   * Query heads under grouped-query attention (heads 'query'): the units fall into this many KV
   * groups of equal size (GroupChannel.run), and every KV group keeps the same count.
   */
  runs?: number;
}

/** One competing unit of a group (a channel, an FFN neuron, an attention head) and its slices. */
export interface GroupChannel {
  root: number;
  slices: Slice[];
  /** The KV group of a query head (ChannelGroup.runs). */
  run?: number;
}

export interface ChannelAnalysis {
  groups: ChannelGroup[];
  /** The units of each group, in order, with every slice that goes with them. */
  channelsOf: Map<number, GroupChannel[]>;
  /** Depthwise Convs and their weight: `group` follows the weight's channel count. */
  depthwise: { node: NodeProto; weight: string }[];
}

export interface ChannelOptions {
  /**
   * In [0, 1): the fraction of every group's channels to remove (scope 'layer'), or of the parameters
   * the groups' channels hold, taken over the model where the score per parameter is least ('global').
   */
  fraction: number;
  scope?: 'layer' | 'global';
  /**
   * Kept units per group rounded so that each producer keeps a multiple of this many features (default
   * 8; 1 = exact): channels and FFN neurons to a multiple of 8, attention heads of 32 or 64 features
   * not at all. Runtimes block channels by 8 or 16 for SIMD (onnxruntime's NCHWc layout): a Conv left
   * with, say, 33 channels falls off that fast path and can run slower than the unpruned model.
   */
  roundTo?: number;
  /** The unit of grouped-query attention (default 'groups'; see HeadUnit). */
  heads?: HeadUnit;
  /** Only groups this accepts are pruned (default: every prunable group). */
  filter?: (group: ChannelGroup) => boolean;
  /**
   * 'remove' (default) deletes the channels and folds their constant output into the consumers' biases;
   * 'mask' does the same folding but zeroes every slice instead of deleting it (shapes kept: the same
   * function as 'remove'); 'constant' only zeroes the producers' filters, so each removed channel outputs
   * the constant that 'remove' folds (equal to 'remove' where the fold is exact).
   */
  apply?: 'remove' | 'mask' | 'constant';
  /** Fold removed channels' constants into the consumers' biases (default true; false: they read zero). */
  fold?: boolean;
  /**
   * The decision, per group id: 1 keeps a channel (as planChannels returns it). Groups without an
   * entry are scored as usual. Calibration decides first, changes the consumers, then removes.
   */
  keep?: Map<number, Uint8Array>;
  /**
   * Scoring weights of the consumers' input slices, per consumer weight name: a factor per position
   * along the slice's axis (e.g. the RMS of that input channel: activation-aware scores).
   */
  inputScale?: Map<string, ArrayLike<number>>;
  /**
   * What a channel's score reads: 'all' (default) the producers' filters and the consumers' input
   * slices; 'consumers' only the consumers' input slices (each scaled by `inputScale`), as they are,
   * without the per-element normalization 'all' applies in global scope: with `inputScale` the
   * standard deviation of each input relative to its consumer's output, a channel's squared score is
   * what its removal (its mean folded) adds to its consumers' output variance, and it is comparable
   * across groups.
   */
  scoreSlices?: 'all' | 'consumers';
  /**
   * Added to a consumer's bias with the removal, per consumer weight name: one value per output, in
   * the units of the weight times its input (scaled like the folded constants: Gemm alpha / beta).
   * Calibration puts the measured mean of what the consumer loses there.
   */
  biasShift?: Map<string, ArrayLike<number>>;
  onProgress?: ProgressFn;
}
