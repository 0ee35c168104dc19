// Module worker of the "remove channels" card: finds the channel groups of a model and removes a
// fraction of channels with the package's job (runJob in channels mode, as `prune --channels` runs
// it), off the page's thread (the scoring runs in wasm).
import init from 'sparsekit-wasm';
import { loadOnnx, findChannelGroups, runJob, type ChannelGroup } from 'sparsekit-wasm/onnx';
import { serve } from '../protocol.js';
import type { ChannelsApi, ChannelsReport, GroupSummary } from './api.js';

let ready: Promise<void> | null = null;

const summarize = (groups: ChannelGroup[]): GroupSummary[] => groups.map((g) => ({
  id: g.id, producers: g.producers, channels: g.channels, prunable: g.prunable, reason: g.reason, runs: g.runs,
  members: g.members.map((m) => ({ tensor: m.tensor, axis: m.axis, kind: m.kind })),
}));

serve<ChannelsApi>({
  async groups({ bytes, heads }) {
    await (ready ??= init({ threads: false }));
    return { groups: summarize(findChannelGroups(await loadOnnx(bytes), heads).groups) };
  },
  async remove({ bytes, fraction, scope, roundTo, heads }, ctx) {
    await (ready ??= init({ threads: false }));
    const model = await loadOnnx(bytes);
    const groups = summarize(findChannelGroups(model, heads).groups);
    const t0 = performance.now();
    const { model: pruned, report: job } = await runJob(model, { mode: { kind: 'channels', fraction, scope, roundTo, heads } });
    const report = job.prune!; // a channels job reports its removal
    const out = pruned.encode();
    const ms = performance.now() - t0;
    ctx.transfer.push(out.buffer);
    return { groups, report: JSON.parse(JSON.stringify(report)) as ChannelsReport, bytes: out, ms };
  },
});
