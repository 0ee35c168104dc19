// Channel cells without a session each. Removing a group's channels changes shapes, so the model
// that would be written needs its own onnxruntime session (~0.8 s to encode and create on PaddleOCR
// det, more than a cell's runs on a small eval set). Masking the same channels ('mask': the same
// choice and bias folding, the slices zeroed instead of deleted) computes the same function with the
// shapes kept, so only tensor values change: those are fed, as weights are for weight cells, to one
// session in which every tensor any cell changes is a graph input. A mask that changes the graph
// itself (a bias added where a consumer had none, a tensor's shape) cannot be fed: that cell falls
// back to a session over the removed model.
import type { OnnxModel } from '../model.js';
import { OnnxModel as Model } from '../model.js';
import { removeChannels } from '../channels.js';
import type { ChannelGroup, HeadUnit } from '../channels.js';
import type { FeedTensor } from '../calib/inputs.js';
import { weightFeed } from './model-runs.js';

/** The tensors a masked cell changes, as feeds; null when the mask changed more than values. */
export type MaskFeeds = Record<string, FeedTensor> | null;

const sameDims = (a: number[], b: number[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * The feeds of one channel cell: `group` masked at `level` in a copy parsed from `bytes`, each float
 * tensor compared with the model's; the ones that differ are returned (values as the session expects).
 */
export function maskFeeds(model: OnnxModel, bytes: Uint8Array, group: ChannelGroup, level: number, roundTo: number | undefined, heads?: HeadUnit): MaskFeeds {
  const m = Model.parse(bytes);
  removeChannels(m, { fraction: level, scope: 'layer', roundTo, heads, apply: 'mask', filter: (x) => x.producers[0] === group.producers[0] });
  if (m.graph.node.length !== model.graph.node.length || m.weights.length !== model.weights.length) return null;
  const before = new Map(model.weights.map((w) => [w.name, w]));
  const feeds: Record<string, FeedTensor> = {};
  for (const w of m.weights) {
    const o = before.get(w.name);
    if (!o || !sameDims(o.dims, w.dims) || o.dtype !== w.dtype) return null;
    const a = model.readFloat(o), b = m.readFloat(w);
    let differs = false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && !(Number.isNaN(a[i]) && Number.isNaN(b[i]))) { differs = true; break; }
    if (differs) feeds[w.name] = weightFeed(o.tensor, b);
  }
  return feeds;
}
