// Structured channel removal. Output channels of Conv / Gemm / MatMul producers are followed through
// the graph by per-op rules (rules/); every tensor slice that must go with a channel (its filter,
// bias, BN parameters, per-channel constants, the consumers' input slices, a shape's channel count) is
// a member of it. Channels tied together (residual Add/Mul, depthwise Conv, an attention head) merge;
// a group is a set of channels that compete, scored with BlockCoupling norms over all members and
// ranked with ScopeSpec / ScopeCoupling. Removing a channel deletes its slices everywhere, so the file
// shrinks and the model runs faster. Anything not understood keeps its group whole (with the reason).
import type { OnnxModel } from '../model.js';
import { ChannelPlan } from './plan.js';
import type { ChannelAnalysis, ChannelOptions, HeadUnit } from './types.js';

export type { HeadUnit, Slice, Fold, GroupMember, ChannelGroup, GroupChannel, ChannelAnalysis, ChannelOptions } from './types.js';
export { ChannelPlan, type ConsumerCut } from './plan.js';
export { resolveChannelOptions, type ResolvedChannelOptions } from './options.js';
export { removeChannels, type ChannelReport } from './remove.js';

/**
 * Finds the dependency groups of a model (no change to it): a ChannelPlan, not yet decided. `heads`:
 * the unit of grouped-query attention (HeadUnit; default 'groups').
 */
export function findChannelGroups(model: OnnxModel, heads: HeadUnit = 'groups'): ChannelPlan {
  return ChannelPlan.analyze(model, heads);
}

/**
 * The channels removeChannels would keep (1) per prunable group id, scored as it scores them (or
 * taken from `opts.keep`), without changing the model. `floatOf` (optional) overrides where the
 * constants' values are read.
 */
export function planChannels(model: OnnxModel, opts: ChannelOptions, analysis: ChannelAnalysis = findChannelGroups(model),
  floatOf?: (name: string) => Float32Array): Map<number, Uint8Array> {
  const plan = ChannelPlan.of(model, analysis);
  return floatOf ? plan.decide(opts, floatOf) : plan.decide(opts);
}
