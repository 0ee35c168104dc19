// removeChannels: the plan's decision applied to the model (fold, then cut or zero), with the report.
import type { OnnxModel } from '../model.js';
import { OnnxError } from '../errors.js';
import { layerReport, type LayerReport, type PruneReport } from '../prune.js';
import { ChannelPlan } from './plan.js';
import { resolveChannelOptions } from './options.js';
import { foldConstants, type FoldReport } from './fold.js';
import { addDrop, applyDrops, afterRemoval, type Drops } from './surgery.js';
import { checkUse } from './shape-copies.js';
import type { ChannelAnalysis, ChannelOptions } from './types.js';

export interface ChannelReport extends PruneReport {
  groups: { removed: object[]; kept: object[] };
  /**
   * With heads 'query': the removable groups of query heads within KV groups. 0 says the model has no
   * grouped-query attention, so the unit was the head, as with heads 'groups'.
   */
  queryGroups?: number;
  folded: FoldReport;
}

/**
 * Removes the fraction `fraction` of channels, by the L2 norm of all their members (per group, or
 * model-wide with each group's norms scaled by 1/sqrt(elements per channel)). At least one channel
 * of every group stays. In place; returns the report (groups kept whole listed with their reason).
 * `plan`: an analysis of this model made before (calibration changes weights, not the graph).
 */
export function removeChannels(model: OnnxModel, options: ChannelOptions, plan?: ChannelAnalysis): ChannelReport {
  const opts = resolveChannelOptions(options);
  const p = plan ? ChannelPlan.of(model, plan) : ChannelPlan.analyze(model, opts.heads);
  // The groups are the analysis's: a plan made with the other head unit would cut other units.
  if (p.heads !== undefined && p.heads !== opts.heads) {
    throw new OnnxError('unsupported', `the plan was made with heads "${p.heads}" and the options ask for "${opts.heads}" (analyze with the same head unit)`, 'invalid_arguments');
  }
  // Weights may have changed since the analysis (a calibration's compensation): read them again.
  p.values.forget();
  const before = model.weights.reduce((a, w) => a + w.numel, 0);
  const shapesBefore = new Map(model.prunable().map((w) => [w.name, w.dims.slice()]));
  const prunableBefore = model.prunable().reduce((a, w) => a + w.numel, 0);
  const live = p.live(opts);
  const keepOf = p.decide(opts);

  const drops: Drops = new Map();
  const removedGroups: object[] = [];
  for (const gr of live) {
    const keep = keepOf.get(gr.id)!;
    let removed = 0;
    p.channelsOf.get(gr.id)!.forEach((ch, c) => {
      if (keep[c]) return;
      removed++;
      for (const s of ch.slices) addDrop(drops, s);
    });
    if (removed) removedGroups.push({ id: gr.id, producers: gr.producers, channelsBefore: gr.channels, channelsAfter: gr.channels - removed });
  }
  // Every tensor the removal cuts is read before the first write (folding, surgery): one that cannot
  // be read in its kind (an integer bias where a float is cut) refuses the call, the model untouched.
  for (const d of drops.values()) {
    if (d.kind === 'io') continue;
    if (d.kind !== 'shape') p.values.floats(d.tensor);
    else if (opts.apply === 'remove') {
      model.readInts(p.values.tensor(d.tensor));
      if (d.use) checkUse(d.use, d.tensor);
    }
  }
  const folded = opts.apply === 'constant' || !opts.fold
    ? { biases: 0, created: 0, unknown: 0 }
    : foldConstants(model, p, live, keepOf, drops, p.values, opts.biasShift);
  applyDrops(model, drops, p.values, opts.apply);
  if (drops.size && opts.apply === 'remove') afterRemoval(model, p.depthwise, p.values);
  model.refresh();
  const layers: LayerReport[] = model.prunable().map((w) => layerReport(model, w, shapesBefore.get(w.name) ?? w.dims.slice()));
  const after = model.weights.reduce((a, w) => a + w.numel, 0);
  const prunableAfter = layers.reduce((a, l) => a + l.params, 0);
  const zeros = layers.reduce((a, l) => a + l.zeros, 0);
  return {
    mode: 'channels',
    options: { channels: opts.fraction, scope: opts.scope, roundTo: opts.roundTo, apply: opts.apply, heads: opts.heads },
    ...(opts.heads === 'query' ? { queryGroups: live.filter((gr) => gr.runs).length } : {}),
    folded,
    params: { before, after, prunableBefore, prunableAfter },
    zeros, sparsity: prunableAfter ? zeros / prunableAfter : 0,
    layers,
    groups: {
      removed: removedGroups,
      kept: p.groups.filter((gr) => !gr.prunable).map((gr) => ({ id: gr.id, producers: gr.producers, channels: gr.channels, reason: gr.reason })),
    },
  };
}
