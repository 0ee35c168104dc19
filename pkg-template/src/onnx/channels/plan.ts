// ChannelPlan: the one value carried from the analysis (groups, their units and slices) through the
// scoring (which units stay), a calibration's compensation (what each consumer loses) and the removal.
import { toNum, type OnnxModel } from '../model.js';
import { walkModel } from './walk.js';
import { groupsOf } from './groups.js';
import { ConstantValues } from './values.js';
import { allConstants } from './constants.js';
import { resolveChannelOptions, type ResolvedChannelOptions } from './options.js';
import { filterWidths, scoreChannels } from './score.js';
import type { ChannelAnalysis, ChannelGroup, ChannelOptions, GroupChannel, HeadUnit } from './types.js';
import type { NodeProto } from '../model.js';

/** The positions along the sliced axis (input channels / rows) of a consumer weight that go. */
export interface ConsumerCut { axis: number; positions: Set<number> }

export class ChannelPlan implements ChannelAnalysis {
  readonly groups: ChannelGroup[];
  readonly channelsOf: Map<number, GroupChannel[]>;
  readonly depthwise: { node: NodeProto; weight: string }[];
  /** The constants' values as the analysis read them (shared with scoring and removal). */
  readonly values: ConstantValues;
  /** The decision once made: kept units (1) per group id. */
  keep?: Map<number, Uint8Array>;

  /** Grouped-query attention's unit the analysis was made with (undefined: a caller's plain analysis). */
  heads?: HeadUnit;

  private constructor(readonly model: OnnxModel, analysis: ChannelAnalysis, values: ConstantValues) {
    this.groups = analysis.groups;
    this.channelsOf = analysis.channelsOf;
    this.depthwise = analysis.depthwise;
    this.values = values;
  }

  /** Finds the dependency groups of a model (no change to it), with `heads` as grouped-query attention's unit. */
  static analyze(model: OnnxModel, heads: HeadUnit = 'groups'): ChannelPlan {
    const walk = walkModel(model, heads);
    const plan = new ChannelPlan(model, groupsOf(model, walk), walk.values);
    plan.heads = heads;
    return plan;
  }

  /** A plan over an analysis given by a caller (a plain ChannelAnalysis of this model). */
  static of(model: OnnxModel, analysis: ChannelAnalysis): ChannelPlan {
    if (analysis instanceof ChannelPlan && analysis.model === model) return analysis;
    return new ChannelPlan(model, analysis, new ConstantValues(model, allConstants(model)));
  }

  /** The prunable groups the options accept. */
  live(opts: ResolvedChannelOptions): ChannelGroup[] {
    return this.groups.filter((g) => g.prunable && (!opts.filter || opts.filter(g)));
  }

  /**
   * Whether a group the options accept holds attention heads: units of several features in their
   * producers' filters (a head of q/k/v), where a channel of a Conv or an FFN neuron is one.
   */
  hasHeads(opts: ResolvedChannelOptions): boolean {
    return this.headGroups(opts).length > 0;
  }

  /** The groups of `hasHeads`: those whose units are several features wide in a producer's filter. */
  headGroups(opts: ResolvedChannelOptions): ChannelGroup[] {
    return this.live(opts).filter((g) => {
      const unit = this.channelsOf.get(g.id)?.[0];
      return !!unit && [...filterWidths(unit).values()].some((w) => w > 1);
    });
  }

  /**
   * Scores and decides (or takes `opts.keep`); the decision is kept on the plan. `floats`: where the
   * constants' values are read (default: the plan's cache of the model's).
   */
  decide(options: ChannelOptions, floats: (name: string) => Float32Array = (n) => this.values.floats(n)): Map<number, Uint8Array> {
    const opts = resolveChannelOptions(options);
    this.keep = scoreChannels({
      analysis: this, live: this.live(opts), options: opts, floats,
      dims: (n) => this.values.tensor(n).dims.map(toNum),
    });
    return this.keep;
  }

  /** The weights of the consumers of the accepted groups' channels (where a removed channel folds). */
  consumers(options: ChannelOptions): Set<string> {
    const out = new Set<string>();
    for (const gr of this.live(resolveChannelOptions(options))) {
      for (const ch of this.channelsOf.get(gr.id)!) for (const sl of ch.slices) if (sl.fold) out.add(sl.fold.weight);
    }
    return out;
  }

  /** What each consumer weight loses under `keep`: positions along its sliced axis. */
  cuts(keep: Map<number, Uint8Array>, weights?: Set<string>): Map<string, ConsumerCut> {
    const out = new Map<string, ConsumerCut>();
    for (const [id, k] of keep) {
      this.channelsOf.get(id)?.forEach((ch, c) => {
        if (k[c]) return;
        for (const sl of ch.slices) {
          if (!sl.fold || (weights && !weights.has(sl.fold.weight))) continue;
          const w = sl.fold.weight;
          const cut = out.get(w) ?? out.set(w, { axis: sl.axis, positions: new Set() }).get(w)!;
          for (let p = sl.pos; p < sl.pos + sl.rep; p++) cut.positions.add(p);
        }
      });
    }
    return out;
  }
}
